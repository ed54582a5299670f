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
// The README is a front door: a typed handle, a legacy notification, a fixture test, a relay and durable delivery.
// Everything else (the subscription forms, system notifications, the recorder, fixtures from the device, Combine)
// is in the DocC articles, whose blocks are compiled by the DocCExamples target (Tests/DocCExamples).
//
// One escape hatch, for a block that cannot compile here: an HTML comment on the line right before its ```swift fence,
//     <!-- readme-example: path/from/the/package/root.swift -->
// names the file that holds that block instead of this one, and the test looks for the block there. It is used
// once, for the durable-delivery block: the root package has no dependency on PostgreSQL, so that block lives in
// Integrations/NotificatablePostgres/Tests/NotificatablePostgresTests/ReadmeDurableExample.swift, which the
// integration package's build (`scripts/postgres.sh`) compiles (`swift test` here only checks that the text
// matches). Don't use it for anything that can compile in this file.
//
// To change an example: edit it in README.md, paste the block here unchanged, and run `swift test --filter Readme`.
// The `.package(...)` snippet is Package.swift code, which a test cannot import; it compiles against the small
// PackageDescription look-alike at the bottom of this file, which mirrors only the calls the README uses.
// The ```sh blocks are the two commands that `.ci/run` runs.

import Foundation
import Notificatable
import NotificatableRelay
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

// MARK: - A legacy notification, decoded

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

// MARK: - A fixture test
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

// MARK: - Across processes

func join(warehouse: NotificationCenter, storefront: NotificationCenter, bag: DisposeBag) -> [NotificationRelay] {
    let bus = LoopbackNotificationBus()  // in production: PostgresNotificationTransport, or your own transport
    let relays = [warehouse, storefront].map { center in
        NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: center)
    }
    for relay in relays { relay.forward(Notificatable.orderDidShip) }

    Notificatable.orderDidShip.subscribe(center: storefront) { note in
        print("storefront heard of order", note.userInfo.id)
    }.store(in: bag)  // ends when the bag goes
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
