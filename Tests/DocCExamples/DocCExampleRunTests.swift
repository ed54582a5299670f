import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// A few of the articles' examples, run on private centers: the compile check above them says they build, these
/// say they do what the articles claim. The fixture tests of *Testing with Fixtures* run on their own.
@Suite struct DocCExampleRunTests {
    @Test func theManifestSnippetsNameTheLibraries() {
        #expect(gettingStartedManifest.dependencies.map(\.version) == ["0.1.0"])
        #expect(gettingStartedManifest.targets.map(\.name) == ["MyApp", "MyAppTests"])
        #expect(testingManifestTargets.map(\.isTest) == [true])
    }

    @Test func gettingStartedSubscriptionsReceiveTypedPostsUntilDisposed() {
        let center = NotificationCenter()
        let session = Session()
        let recorder = NotificationRecorder(center: center, recording: Notificatable<User>.userDidLogin)
        let subscriptions = gettingStartedSubscribe(session: session, center: center)
        #expect(subscriptions.allSatisfy { $0.isActive })
        Notificatable.userDidLogin.post(User(id: 2, name: "Grace"), object: session, center: center)
        #expect(recorder.payloads(of: Notificatable<User>.userDidLogin) == [User(id: 2, name: "Grace")])
        subscriptions.forEach { $0.dispose() }
        #expect(subscriptions.allSatisfy { !$0.isActive })
    }

    @Test func theOrderExampleAndTheSessionControllerRunOnAPrivateCenter() {
        let center = NotificationCenter()
        let bag = DisposeBag()
        threadingOrder(center: center, bag: bag)
        var controller: SessionController? = SessionController(center: center)
        weak let released = controller
        controller = nil
        #expect(released == nil, "the controller's handlers capture it weakly, so it is released")
        userDidLogin.post("ada", center: center)
        didLogout.post(center: center)
        bag.dispose()
    }
}
