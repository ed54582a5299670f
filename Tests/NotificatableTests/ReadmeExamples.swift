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
// To change an example: edit it in README.md, paste the block here unchanged, and run `swift test --filter Readme`.
// The `.package(...)` snippet is Package.swift code, which a test cannot import; it compiles against the small
// PackageDescription look-alike at the bottom of this file, which mirrors only the calls the README uses.
// The ```sh blocks are the two commands that `.ci/run` runs, and the benchmark command.

import Foundation
import Notificatable
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
            .dispose(by: bag)
        userDidLogout.subscribe(center: center) { [weak self] _ in self?.record("logout") }
            .dispose(by: bag)
    }

    func record(_ event: String) {
        print(event)
    }
}

// MARK: - Testing with fixtures

struct StatusBarFrameChange: Decodable, Equatable {
    var frame: CGRect
}

/// The package's top-level Fixtures/ folder. Outside every target, it needs no `resources:` or `exclude:`.
let fixturesFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // Tests/MyAppTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // the package
    .appendingPathComponent("Fixtures")

@Test(arguments: try fixtures(in: fixturesFolder).filter { $0.typeName == "StatusBarFrameChange" })
func statusBarFrameChange(_ fixture: UserInfoFixture) {
    #expect(fixture.check(StatusBarFrameChange.self) == nil)
}

// MARK: - The manifest snippet

func docsReadmeManifest() -> DocsReadmePackage {
    DocsReadmePackage(
        dependencies: [.package(url: "https://github.com/notificatable/Notificatable.git", from: "0.1.0")],
        targets: [
            .target(name: "MyApp", dependencies: ["Notificatable"]),
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
