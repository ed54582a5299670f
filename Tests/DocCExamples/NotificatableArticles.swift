// The ```swift blocks of the Notificatable catalog's articles, verbatim (see DocCExamples.swift).

import Foundation
import Notificatable
import NotificatableSystem

// MARK: - Notificatable.md (the landing page)

func landingPageExample() {
    struct User: Codable, Sendable { var name: String }

    let userDidLogin = Notificatable<User>.name("UserDidLogin")

    let subscription = userDidLogin.subscribe { note in
        print("Welcome,", note.userInfo.name)
    }
    userDidLogin.post(User(name: "Ada"))
    subscription.dispose()
}

// MARK: - GettingStarted.md

let gettingStartedManifest = DocsPackage(
    name: "MyApp",
    // Package.swift
    dependencies: [.package(url: "https://github.com/notificatable/Notificatable.git", from: "0.1.0")],
    targets: [
        .target(name: "MyApp", dependencies: [.product(name: "Notificatable", package: "Notificatable")]),
        .testTarget(
            name: "MyAppTests",
            dependencies: ["MyApp", .product(name: "NotificatableTesting", package: "Notificatable")]
        ),
    ]
)

let gettingStartedPathManifest = DocsPackage(
    name: "MyApp",
    // Package.swift, with the package checked out in ../Notificatable-main
    dependencies: [.package(path: "../Notificatable-main")],
    targets: [
        .target(name: "MyApp", dependencies: [.product(name: "Notificatable", package: "Notificatable-main")])
    ]
)

@MainActor final class WelcomeViewModel {
    var greeting = ""
    private let bag = DisposeBag()

    init(center: NotificationCenter = .default) {
        Notificatable.userDidLogin.subscribeOnMainActor(center: center) { [weak self] user in
            self?.greeting = "Welcome, \(user.name)"
        }
        .store(in: bag)
    }
}

struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

extension Notificatable where Info == User {
    static let userDidLogin = Notificatable.name("UserDidLogin")
}

let didLogout = Notificatable.withoutPayload("UserDidLogout")  // Notificatable<Never>: no payload

func gettingStartedPost(user: User, session: Session, center: NotificationCenter) {
    Notificatable.userDidLogin.post(User(id: 1, name: "Ada"))
    Notificatable.userDidLogin.post(user, object: session, center: center)
    didLogout.post()
}

func gettingStartedSubscribe(session: Session, center: NotificationCenter) -> [Disposable] {
    let all = Notificatable.userDidLogin.subscribe(center: center) { note in
        print(note.userInfo.name, "from", note.object as Any)
    }
    let mine = Notificatable.userDidLogin.subscribe(object: session, center: center) { user in
        print("this session logged in", user.name)
    }
    let bye = didLogout.subscribe(center: center) { object in
        print("logged out by", object as Any)
    }
    return [all, mine, bye]
}

final class ProfileViewModel: Sendable {
    private let bag = DisposeBag()

    init(center: NotificationCenter = .default) {
        Notificatable.userDidLogin.subscribe(center: center) { [weak self] note in
            self?.show(note.userInfo)
        }
        .store(in: bag)
    }

    func show(_ user: User) {}
}

func gettingStartedFailureHandler() {
    NotificationDecodingFailure.handler = { failure in
        logger.error("\(failure)")  // UserDidLogin: cannot produce MyApp.User (decodingFailed at id): …
    }
}

// MARK: - BridgingLegacyAndSystemNotifications.md

func bridgingWrapAName(bag: DisposeBag) {
    struct KeyboardInfo: Decodable, Sendable {
        var frameBegin: CGRect
        var frameEnd: CGRect
        var animationDuration: Double
        var animationCurve: Int
        var isLocal: Bool?
    }

    let decoder = UserInfoDecoder()
    decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")

    let keyboardWillChangeFrame = Notification.Name("UIKeyboardWillChangeFrameNotification")
        .notificatable(userInfoType: KeyboardInfo.self, decoder: decoder)

    keyboardWillChangeFrame.subscribe(queue: .main) { note in
        animate(to: note.userInfo.frameEnd, duration: note.userInfo.animationDuration)
    }
    .store(in: bag)  // the owner's DisposeBag: the subscription ends with it
}

func bridgingConverter() -> Notificatable<some Sendable> {
    enum Theme: String { case light, dark }

    let themeDidChange = Notificatable<Theme>.name("ThemeDidChange")
        .addingConverter { userInfo in
            (userInfo?["theme"] as? String).flatMap(Theme.init(rawValue:))
        }
    return themeDidChange
}

struct KeyboardFrameChange: Decodable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool?
}

func readKeyboardChange() {
    // What UIKit posts for keyboardWillChangeFrameNotification (it boxes with NSValue(cgRect:)).
    let userInfo: [AnyHashable: Any] = [
        "UIKeyboardFrameBeginUserInfoKey": NSValue(rect: CGRect(x: 0, y: 844, width: 390, height: 336)),
        "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336)),
        "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
        "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7),
        "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
    ]
    let decoder = UserInfoDecoder()
    decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    do {
        let change = try decoder.decode(KeyboardFrameChange.self, from: userInfo)
        print("keyboard moves to y =", change.frameEnd.minY, "in", change.animationDuration, "s")
    } catch {
        print(error)  // a DecodingError whose codingPath leads to the bad value
    }
}

func bridgingDecodeByHand(center: NotificationCenter, name: Notification.Name, decoder: UserInfoDecoder)
    -> any NSObjectProtocol
{
    center.addObserver(forName: name, object: nil, queue: nil) { note in
        do {
            let info = try decoder.decode(KeyboardInfo.self, from: note.userInfo)
            animate(to: info.frameEnd, duration: info.animationDuration)
        } catch {
            print(error)  // a DecodingError whose codingPath leads to the bad value
        }
    }
}

func bridgingPassthrough() {
    struct SaveFailed: Decodable {
        @UserInfoPassthrough var error: NSError
        var attempt: Int
    }
    _ = SaveFailed.self
}

func bridgingLegacyObservers(center: NotificationCenter) {
    struct OrderPlaced: Codable, Sendable {
        var orderID: Int
        var total: Decimal
        var receipt: URL
        var placedAt: Date
        var isGift: Bool
    }

    let orderPlaced = Notificatable<OrderPlaced>.name("OrderPlaced").postingPlainKeys()

    // An observer written before the migration keeps reading the post as it read the old one:
    let observer = center.addObserver(forName: orderPlaced.name, object: nil, queue: nil) { note in
        let orderID = note.userInfo?["orderID"] as? Int64  // an NSNumber, as the old code's @(orderID)
        let total = note.userInfo?["total"] as? NSDecimalNumber  // exact
        let receipt = note.userInfo?["receipt"] as? URL
        let isGift = note.userInfo?["isGift"] as? Bool
        print(orderID as Any, total as Any, receipt as Any, isGift as Any)
    }
    let receipt = URL(fileURLWithPath: "/receipts/7.pdf")
    orderPlaced.post(
        OrderPlaced(orderID: 7, total: Decimal(string: "19.99") ?? 0, receipt: receipt, placedAt: Date(), isGift: true),
        center: center)
    center.removeObserver(observer)
}

func bridgingSystemCatalogue(center: NotificationCenter, bag: DisposeBag) {
    SystemNotifications.keyboardWillChangeFrame.subscribe(center: center) { note in
        let keyboard = note.userInfo  // KeyboardNotificationInfo
        print(keyboard.frameEnd, keyboard.animationDuration, keyboard.animationCurve)
    }
    .store(in: bag)
}

// MARK: - ThreadingDeliveryAndDisposal.md

/// Starts observing now; the caller posts, then awaits.
func nextLogins(center: NotificationCenter) -> NotificationSequence<String>.Iterator {
    userDidLogin.payloads(center: center).makeAsyncIterator()  // subscribed from this line on
}

func logInAndWait(center: NotificationCenter) async -> String? {
    var logins = nextLogins(center: center)
    userDidLogin.post("ada", center: center)  // not missed: the iterator already observes
    return await logins.next()
}

final class Dashboard {
    private var subscriptions = Set<Disposable>()

    init(center: NotificationCenter) {
        userDidLogin.subscribe(center: center) { note in print(note.userInfo) }.store(in: &subscriptions)
    }

    deinit {
        subscriptions.forEach { $0.dispose() }  // a Set does not end them by itself
    }
}

func threadingNextToRxSwift(center: NotificationCenter) {
    let bag = NotificatableDisposeBag()  // or Notificatable::DisposeBag()
    userDidLogin.subscribe(center: center) { note in print(note.userInfo) }.store(in: bag)
}

func threadingOrder(center: NotificationCenter, bag: DisposeBag) {
    userDidLogin.subscribe(center: center) { _ in print("first") }.store(in: bag)
    userDidLogin.subscribe(center: center) { _ in print("second") }.store(in: bag)
    userDidLogin.post("ada", center: center)  // "first", then "second", on Linux too
}

final class SessionController: Sendable {
    private let bag = DisposeBag()

    init(center: NotificationCenter) {
        didLogout.subscribe(center: center) { [weak self] _ in self?.reset() }.store(in: bag)
        userDidLogin.subscribe(center: center) { [weak self] note in self?.greet(note.userInfo) }.store(in: bag)
    }

    func reset() {}
    func greet(_ name: String) {}
}

func threadingAsyncSequence(center: NotificationCenter) {
    let task = Task {
        for await name in userDidLogin.payloads(center: center) {
            print("logged in:", name)
        }
    }
    // …
    task.cancel()  // removes the observer and ends the loop
}

func threadingPostAsync(summary: CatalogSummary, store: CatalogStore, center: NotificationCenter) {
    catalogDidSync.postAsync(summary, object: store, center: center, priority: .utility)
}

func threadingTracing() {
    #if DEBUG
    NotificationTracing.tracer = { event in print("traced:", event) }
    #endif
}

// MARK: - ThreadingDeliveryAndDisposal.md: main actor, weak targets, observers, isActive

@MainActor final class GreetingLabel {
    var text = ""
    private let bag = DisposeBag()

    init(center: NotificationCenter) {
        userDidLogin.subscribeOnMainActor(center: center) { [weak self] name in
            self?.text = "Hello, \(name)"
        }.store(in: bag)
    }
}

final class WelcomeBanner {
    var message = ""

    init(center: NotificationCenter) {
        userDidLogin.subscribe(self, center: center) { banner, name in
            banner.message = "Welcome back, \(name)"
        }
    }
}

protocol DownloadObserver: AnyObject {
    func downloadDidProgress(_ fraction: Double)
}

let downloadObservers = ObserverRegistry<any DownloadObserver>()

final class ProgressBar: DownloadObserver {
    var fraction = 0.0

    init() {
        downloadObservers.register(self)
    }

    func downloadDidProgress(_ fraction: Double) {
        self.fraction = fraction
    }
}

func reportProgress(_ fraction: Double) {
    downloadObservers.notify { $0.downloadDidProgress(fraction) }
}

func checkSubscription(center: NotificationCenter) {
    let subscription = didLogout.subscribe(center: center) { _ in print("bye") }
    print(subscription.isActive)  // true
    subscription.dispose()
    print(subscription.isActive)  // false
}
