// README examples, compiled.
//
// Every ```swift block of README.md appears in this file, verbatim, so that the examples cannot rot:
// - this file is part of the test target, so `swift build` / `swift test` compile every example (warnings are errors);
// - `ReadmeExamplesTests.everyReadmeBlockIsCompiledHere` reads README.md and fails, naming the block, if any
//   ```swift block does not appear here as a contiguous run of lines. Two normalisations keep this simple: `import`
//   lines are ignored (the imports live once, at the top of this file), and a block may be indented as a whole (the
//   manifest snippet sits inside a call). Blank lines match blank lines.
// - the examples also run, against private centers, in `ReadmeExamplesTests.examplesRun`.
//
// One escape hatch, for a block that cannot compile here: an HTML comment on the line right before its ```swift fence,
//     <!-- readme-example: path/from/the/package/root.swift -->
// names the file that holds that block instead of this one, and the test looks for the block there. It is used
// once, for the Combine block: Linux has no Combine, so that block lives in
// Tests/CombineCheck/Tests/NotificatableCombineCheckTests/ReadmeCombineExample.swift, which `scripts/check-combine.sh`
// compiles against OpenCombine (`swift test` here only checks that the text matches). Don't use it for anything that
// can compile in this file.
//
// To change an example: edit it in README.md, paste the block here unchanged, and run `swift test --filter Readme`.
// The `.package(...)` snippet is Package.swift code, which a test cannot import; it compiles against the small
// PackageDescription look-alike at the bottom of this file, which mirrors only the calls the README uses.
// The ```sh blocks are the two commands that `.ci/run` runs, and the benchmark command.

import Foundation
import Notificatable
import NotificatableRelay
import NotificatableSystem
import NotificatableTesting
import Testing

// MARK: - A typed handle

struct Order: Codable, Sendable {
    var id: Int
    var total: Decimal
}

extension Notificatable where Info == Order {
    static let orderDidShip = Notificatable.name("OrderDidShip")
}

func shipOrder(center: NotificationCenter = .default) {
    let subscription = Notificatable.orderDidShip.subscribe(center: center) { note in
        print("order", note.userInfo.id, "shipped, total", note.userInfo.total)
    }
    Notificatable.orderDidShip.post(Order(id: 42, total: 99.5), center: center)
    subscription.dispose()
}

// MARK: - Wrapping a legacy name

struct ThemeChange: Decodable, Sendable {
    var theme: String
    var animated: Bool?
}

let themeDidChange = Notification.Name("ThemeDidChange").notificatable(userInfoType: ThemeChange.self)

func observeThemes(center: NotificationCenter = .default) -> Disposable {
    let report: NotificationDecodingFailure.Handler = { failure in print(failure) }
    return themeDidChange.subscribe(center: center, onFailure: report) { note in
        print("theme:", note.userInfo.theme, "animated:", note.userInfo.animated ?? false)
    }
}

func legacyPoster(center: NotificationCenter = .default) {
    // Untouched Objective-C-era code:
    center.post(name: Notification.Name("ThemeDidChange"), object: nil, userInfo: ["theme": "dark", "animated": 1])
}

// MARK: - Decoding a system userInfo

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

// MARK: - A dispose bag

let userDidLogin = Notificatable<String>.name("UserDidLogin")
let userDidLogout = Notificatable.name("UserDidLogout")  // Notificatable<Never>

final class SessionLog: Sendable {
    private let bag = DisposeBag()

    init(center: NotificationCenter = .default) {
        userDidLogin.subscribe(center: center) { [weak self] note in self?.record("login \(note.userInfo)") }
            .store(in: bag)
        userDidLogout.subscribe(center: center) { [weak self] _ in self?.record("logout") }
            .store(in: bag)
    }

    func record(_ event: String) {
        print(event)
    }
}

// MARK: - Typed system notifications

func followKeyboard(center: NotificationCenter = .default) -> Disposable {
    SystemNotifications.keyboardWillChangeFrame.subscribe(center: center) { note in
        let keyboard = note.userInfo  // KeyboardNotificationInfo
        print("keyboard ends at", keyboard.frameEnd, "curve", keyboard.animationCurve, "in", keyboard.animationDuration)
    }
}

// MARK: - Testing with fixtures
// (Its fixtures, and a test of what they contain, are in Fixtures/Examples and SystemFixtureExampleTests.swift.)

struct DownloadFinished: Codable, Equatable {
    var url: URL
    var byteCount: Int
}

/// The package's top-level Fixtures/ folder. Outside every target, it needs no `resources:` or `exclude:`.
let fixturesFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // Tests/MyAppTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // the package
    .appendingPathComponent("Fixtures")

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Examples")))
func downloadFinishedDecodes(_ fixture: UserInfoFixture) throws {
    var registry = UserInfoFixtureRegistry()
    registry.register(DownloadFinished.self)
    try registry.verify(fixture)
}

// MARK: - Testing what your code posts

final class LoginService {
    private let center: NotificationCenter

    init(center: NotificationCenter = .default) {
        self.center = center
    }

    func logIn(_ name: String) {
        userDidLogin.post(name, object: self, center: center)
    }
}

@Test func loggingInPostsOnce() {
    let center = NotificationCenter()  // private to this test
    let recorder = NotificationRecorder(center: center, recording: userDidLogin, userDidLogout)
    LoginService(center: center).logIn("ada")
    #expect(recorder.payloads(of: userDidLogin) == ["ada"])
    #expect(recorder.count(of: userDidLogout) == 0)
    #expect(recorder.failures.isEmpty)
}

// MARK: - From the device to a test

#if DEBUG
/// Records the keyboard and audio-session notifications this run receives into the app's temporary folder.
func recordSystemFixtures() throws -> FixtureRecorder {
    try FixtureRecorder(
        names: [
            Notification.Name("UIKeyboardWillShowNotification"),
            Notification.Name("AVAudioSessionInterruptionNotification"),
        ],
        folder: FileManager.default.temporaryDirectory.appendingPathComponent("Fixtures"),
        filePrefix: "system-")
}
#endif

// Scaffolded by notificatable-fixtures from UIKeyboardWillShowNotification: check each type before you rely on it.
// The keys share the prefix "UIKeyboard" and the suffix "UserInfoKey", as UIKit's do. Decoding with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
// makes the CodingKeys below unnecessary: delete them when you do.

struct KeyboardWillShow: Codable, Equatable {
    var animationCurve: Int
    var animationDuration: Double
    var centerBegin: CGPoint
    var centerEnd: CGPoint
    var frameBegin: CGRect
    var frameEnd: CGRect
    var isLocal: Bool

    enum CodingKeys: String, CodingKey {
        case animationCurve = "UIKeyboardAnimationCurveUserInfoKey"
        case animationDuration = "UIKeyboardAnimationDurationUserInfoKey"
        case centerBegin = "UIKeyboardCenterBeginUserInfoKey"
        case centerEnd = "UIKeyboardCenterEndUserInfoKey"
        case frameBegin = "UIKeyboardFrameBeginUserInfoKey"
        case frameEnd = "UIKeyboardFrameEndUserInfoKey"
        case isLocal = "UIKeyboardIsLocalUserInfoKey"
    }
}

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Device")))
func deviceFixturesDecode(_ fixture: UserInfoFixture) throws {
    var registry = UserInfoFixtureRegistry()
    registry.register(KeyboardWillShow.self)
    try registry.verify(fixture)
}

// MARK: - More: async sequences

func watchLogins(center: NotificationCenter) -> Task<Void, Never> {
    Task {
        for await name in userDidLogin.payloads(center: center, bufferingPolicy: .bufferingNewest(10)) {
            print("logged in:", name)
        }
    }
}

// MARK: - More: main-actor delivery

@MainActor final class GreetingLabel {
    var text = ""
    private let bag = DisposeBag()

    init(center: NotificationCenter) {
        userDidLogin.subscribeOnMainActor(center: center) { [weak self] name in
            self?.text = "Hello, \(name)"
        }.store(in: bag)
    }
}

// MARK: - More: Combine
// Not here: see the escape hatch at the top of this file (ReadmeCombineExample.swift, compiled by check-combine.sh).

// MARK: - More: weak targets

final class WelcomeBanner {
    var message = ""

    init(center: NotificationCenter) {
        userDidLogin.subscribe(self, center: center) { banner, name in
            banner.message = "Welcome back, \(name)"
        }
    }
}

// MARK: - More: protocol observers

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

// MARK: - More: removing all of an owner's subscriptions

final class ChatScreen {
    private let subscriptions = DisposeBag()  // one bag per owner

    init(center: NotificationCenter) {
        userDidLogin.subscribe(center: center) { note in print("joined:", note.userInfo) }
            .store(in: subscriptions)
        userDidLogout.subscribe(center: center) { _ in print("left") }
            .store(in: subscriptions)
    }

    func close() {
        subscriptions.dispose()  // ends every subscription of this screen
    }
}

// MARK: - More: posting with a priority

func announceLogin(_ name: String, center: NotificationCenter) {
    userDidLogin.postAsync(name, center: center, priority: .utility)  // returns at once
}

// MARK: - More: tracing

func traceNotificationsInDebugBuilds() {
    #if DEBUG
    NotificationTracing.tracer = { event in print("traced:", event) }
    #endif
}

// MARK: - More: is a subscription active?

func checkSubscription(center: NotificationCenter) {
    let subscription = userDidLogout.subscribe(center: center) { _ in print("bye") }
    print(subscription.isActive)  // true
    subscription.dispose()
    print(subscription.isActive)  // false
}

// MARK: - More: delivery order

func deliveryOrder(center: NotificationCenter) {
    let bag = DisposeBag()
    userDidLogin.subscribe(center: center) { _ in print("first") }.store(in: bag)
    userDidLogin.subscribe(center: center) { _ in print("second") }.store(in: bag)
    userDidLogin.post("ada", center: center)  // "first", then "second", on every platform
}

// MARK: - Across processes

func join(warehouse: NotificationCenter, storefront: NotificationCenter) -> [NotificationRelay] {
    let bus = LoopbackNotificationBus()  // in production: PostgresNotificationTransport, or your own transport
    let relays = [warehouse, storefront].map { center in
        NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: center)
    }
    for relay in relays { relay.forward(Notificatable.orderDidShip) }

    Notificatable.orderDidShip.subscribe(center: storefront) { note in
        print("storefront heard of order", note.userInfo.id)
    }
    Notificatable.orderDidShip.post(Order(id: 17, total: 9.5), center: warehouse)
    return relays  // relays.forEach { $0.stop() } sends what was posted, then stops the transports
}

// MARK: - The manifest snippet

func docsReadmeManifest() -> DocsReadmePackage {
    DocsReadmePackage(
        dependencies: [.package(url: "https://github.com/notificatable/Notificatable.git", from: "0.1.0")],
        targets: [
            .target(
                name: "MyApp",
                dependencies: [
                    .product(name: "Notificatable", package: "Notificatable"),
                    .product(name: "NotificatableSystem", package: "Notificatable"),
                ]
            ),
            .testTarget(
                name: "MyAppTests",
                dependencies: ["MyApp", .product(name: "NotificatableTesting", package: "Notificatable")]
            ),
        ]
    )
}

/// Mirrors the part of PackageDescription that the README's manifest snippet uses.
struct DocsReadmePackage {
    var dependencies: [DocsReadmePackageDependency]
    var targets: [DocsReadmeTarget]
}

struct DocsReadmePackageDependency {
    var url: String
    var version: String

    static func package(url: String, from version: String) -> DocsReadmePackageDependency {
        DocsReadmePackageDependency(url: url, version: version)
    }
}

struct DocsReadmeTarget {
    var name: String
    var dependencies: [DocsReadmeTargetDependency]
    var isTest: Bool

    static func target(name: String, dependencies: [DocsReadmeTargetDependency] = []) -> DocsReadmeTarget {
        DocsReadmeTarget(name: name, dependencies: dependencies, isTest: false)
    }

    static func testTarget(name: String, dependencies: [DocsReadmeTargetDependency] = []) -> DocsReadmeTarget {
        DocsReadmeTarget(name: name, dependencies: dependencies, isTest: true)
    }
}

enum DocsReadmeTargetDependency: ExpressibleByStringLiteral {
    case target(String)
    case product(name: String, package: String)

    init(stringLiteral value: String) {
        self = .target(value)
    }
}
