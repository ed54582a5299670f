import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// Every public call form, pinned so that an overload change that makes one ambiguous breaks the build. The
/// subscriptions are made on a private center and disposed; posting is not the point here.
@Suite struct HandleCallFormTests {
    @Test func declaringForms() {
        let userDidLogin = Notificatable<User>.name("UserDidLogin")
        let didLogout = Notificatable.withoutPayload("UserDidLogout")
        let keyboard = Notification.Name("UIKeyboardWillChangeFrameNotification")
            .notificatable(userInfoType: User.self)
        let boxed = Notification.Name("Boxed").notificatable(userInfoType: OpaqueBox.self)
        let ping = Notification.Name("Ping").notificatable()
        let decoded = Notificatable<User>.name("Decoded", decoder: UserInfoDecoder())
        let wrapped = Notification.Name("Wrapped").notificatable(userInfoType: User.self, decoder: UserInfoDecoder())

        let _: Notificatable<User> = userDidLogin
        let _: Notificatable<Never> = didLogout
        let _: Notificatable<User> = keyboard
        let _: Notificatable<OpaqueBox> = boxed
        let _: Notificatable<Never> = ping
        let _: Notificatable<User> = decoded.decoding(with: UserInfoDecoder()).postingPlainKeys()
        let _: Notificatable<User> = wrapped.postingPlainKeys(encoder: UserInfoEncoder())
        let _: Notificatable<OpaqueBox> = boxed.addingConverter { _ in nil }
        #expect(userDidLogin.name == Notification.Name("UserDidLogin"))
        #expect(didLogout.name.rawValue == "UserDidLogout")
        #expect(NotificatableUserInfoKey == "Notificatable.payload")
    }

    @Test func postingForms() throws {
        let center = NotificationCenter()
        let sender = Sender()
        let userDidLogin = Notificatable<User>.name(uniqueName())
        let didLogout = Notificatable.withoutPayload(uniqueName())
        let user = User(name: "Ada", age: 36)

        userDidLogin.post(user, object: sender, center: center)
        userDidLogin.post(user, center: center)
        didLogout.post(object: sender, center: center)
        didLogout.post(center: center)
        let note: Notification = userDidLogin.makeNotification(user, object: sender)
        let same: User = try userDidLogin.payload(from: note)
        #expect(same == user)
        #expect(didLogout.makeNotification(object: sender).userInfo == nil)
    }

    @Test func payloadSubscribeForms() {
        let center = NotificationCenter()
        let sender = Sender()
        let handle = Notificatable<User>.name(uniqueName())
        let operationQueue = OperationQueue()
        let dispatchQueue = DispatchQueue(label: "forms")
        let failures = FailureRecorder()
        var all: [Disposable] = []

        all.append(handle.subscribe(center: center, queue: nil) { note in _ = (note.userInfo.name, note.object) })
        all.append(handle.subscribe(center: center) { _ in })
        all.append(handle.subscribe(center: center) { print($0.userInfo) })
        all.append(handle.subscribe(center: center, onFailure: failures.handler) { _ in })
        all.append(handle.subscribe(center: center, queue: operationQueue) { note in _ = note.userInfo })
        all.append(handle.subscribe(center: center, queue: dispatchQueue) { note in _ = note.userInfo })
        all.append(handle.subscribe(center: center, queue: dispatchQueue, onFailure: failures.handler) { _ in })
        all.append(handle.subscribe(object: sender, center: center, queue: nil) { user in _ = user.age })
        all.append(handle.subscribe(object: sender, center: center) { user in _ = user.age })
        all.append(handle.subscribe(object: sender, center: center, onFailure: failures.handler) { _ in })
        all.append(handle.subscribe(object: sender, center: center, queue: operationQueue) { user in _ = user })
        all.append(handle.subscribe(object: sender, center: center, queue: dispatchQueue) { user in _ = user })

        // Non-Sendable payloads have the synchronous forms.
        let boxed = Notificatable<OpaqueBox>.name(uniqueName())
        all.append(boxed.subscribe(center: center) { note in note.userInfo.value += 1 })
        all.append(boxed.subscribe(object: sender, center: center) { box in box.value += 1 })

        for disposable in all { disposable.dispose() }
        #expect(all.allSatisfy { $0.isDisposed })
    }

    @Test func neverSubscribeForms() {
        let center = NotificationCenter()
        let sender = Sender()
        let didLogout = Notificatable.withoutPayload(uniqueName())
        let operationQueue = OperationQueue()
        let dispatchQueue = DispatchQueue(label: "forms")
        var all: [Disposable] = []

        all.append(didLogout.subscribe(center: center, queue: nil) { object in _ = object })
        all.append(didLogout.subscribe(center: center) { _ in })
        all.append(didLogout.subscribe(center: center) { print($0 as Any) })
        all.append(didLogout.subscribe(center: center, queue: operationQueue) { object in _ = object })
        all.append(didLogout.subscribe(center: center, queue: dispatchQueue) { object in _ = object })
        all.append(didLogout.subscribe(center: center, queue: dispatchQueue) { _ in })
        all.append(didLogout.subscribe(object: sender, center: center, queue: nil) {})
        all.append(didLogout.subscribe(object: sender, center: center) {})
        all.append(didLogout.subscribe(object: sender, center: center, queue: operationQueue) {})
        all.append(didLogout.subscribe(object: sender, center: center, queue: dispatchQueue) {})

        for disposable in all { disposable.dispose() }
        #expect(all.allSatisfy { $0.isDisposed })
    }

    /// Compile-only: the default-center forms and `.main` for both kinds of handle. The closure is never called;
    /// `HandleDefaultCenterTests.mainMeansOperationQueueMain` checks which queue `.main` picks.
    @Test func defaultCenterAndMainQueueFormsCompile() {
        let pin: @Sendable () -> Void = {
            let handle = Notificatable<User>.name("Pin")
            let never = Notificatable.withoutPayload("PinNever")
            let sender = Sender()
            let a = handle.subscribe(queue: .main) { _ in }
            let b = handle.subscribe(object: sender, queue: .main) { _ in }
            let c = never.subscribe(queue: .main) { _ in }
            let d = never.subscribe(object: sender, queue: .main) {}
            let e = handle.subscribe { _ = $0.userInfo.name }
            let f = never.subscribe { object in _ = object }
            handle.post(User(name: "", age: 0))
            never.post()
            _ = (a, b, c, d, e, f)
        }
        _ = pin
    }

    @Test func disposalForms() {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName())
        let bag = DisposeBag()
        let d = handle.subscribe(center: center) { _ in }
        d.store(in: bag)
        bag.insert(handle.subscribe(center: center) { _ in })
        #expect(d.isActive)
        d.dispose()
        d.dispose()
        #expect(d.isDisposed)
        bag.dispose()
        #expect(bag.isDisposed)
        let custom = Disposable {}
        custom.dispose()
        #expect(!custom.isActive)
    }

    @Test func handlesAreHashableByName() {
        let a = Notificatable<User>.name("Same")
        let b = Notificatable<User>.name("Same").postingPlainKeys()
        let c = Notificatable<User>.name("Other")
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        let sendable: any Sendable = a
        _ = sendable
    }
}
