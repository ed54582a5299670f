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

    @Test func theThreadingExamplesDeliverWhatTheArticleSays() async {
        let center = NotificationCenter()
        let banner = WelcomeBanner(center: center)
        userDidLogin.post("ada", center: center)
        #expect(banner.message == "Welcome back, ada")

        let bar = ProgressBar()
        reportProgress(0.5)
        #expect(bar.fraction == 0.5)

        checkSubscription(center: center)

        let label = await GreetingLabel(center: center)
        await MainActor.run { userDidLogin.post("grace", center: center) }
        #expect(await label.text == "Hello, grace")
    }

    @Test func theRecorderExampleSeesTheLoginServicePost() {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center, recording: userDidLogin)
        let service = LoginService(center: center)
        service.logIn("ada")
        #expect(recorder.payloads(of: userDidLogin) == ["ada"])
        let object = recorder.objects(of: userDidLogin).first ?? nil
        #expect((object as? LoginService) === service)
    }

    @Test func theKeyboardDictionaryOfTheBridgingArticleDecodes() throws {
        readKeyboardChange()  // prints; the decode below is the one it makes
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        let change = try decoder.decode(
            KeyboardFrameChange.self,
            from: [
                "UIKeyboardFrameBeginUserInfoKey": NSValue(rect: CGRect(x: 0, y: 844, width: 390, height: 336)),
                "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336)),
                "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
                "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7),
                "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
            ]
        )
        #expect(change.frameEnd.minY == 508)
        #expect(change.animationCurve == 7)
        #expect(change.isLocal == true)
    }
}
