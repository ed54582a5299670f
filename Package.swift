// swift-tools-version:6.2
import PackageDescription

/// Every target builds in Swift 6 mode with all warnings treated as errors, so `swift build` and `swift test`
/// are the warnings-as-errors build. SwiftPM ignores warning control for packages used as dependencies.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Notificatable",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Notificatable", targets: ["Notificatable"]),
        .library(name: "NotificatableRelay", targets: ["NotificatableRelay"]),
        .library(name: "NotificatableTesting", targets: ["NotificatableTesting"]),
        .library(name: "NotificatableSystem", targets: ["NotificatableSystem"]),
        .executable(name: "notificatable-demo", targets: ["notificatable-demo"]),
        .executable(name: "notificatable-bench", targets: ["notificatable-bench"]),
        .executable(name: "notificatable-leakcheck", targets: ["notificatable-leakcheck"]),
        .executable(name: "notificatable-fixtures", targets: ["notificatable-fixtures"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "Notificatable", swiftSettings: strict),
        // Across processes: the relay, the transport protocol, the wire format, the loopback and macOS transports.
        .target(name: "NotificatableRelay", dependencies: ["Notificatable"], swiftSettings: strict),
        .target(name: "NotificatableTesting", dependencies: ["Notificatable"], swiftSettings: strict),
        .target(name: "NotificatableSystem", dependencies: ["Notificatable"], swiftSettings: strict),
        .executableTarget(
            name: "notificatable-demo",
            dependencies: ["Notificatable", "NotificatableRelay", "NotificatableTesting"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "notificatable-bench", dependencies: ["Notificatable", "NotificatableRelay"], swiftSettings: strict),
        // The workload that scripts/leaks.sh runs under Valgrind.
        .executableTarget(name: "notificatable-leakcheck", dependencies: ["Notificatable"], swiftSettings: strict),
        // Checks, shows and scaffolds fixture files; the work is in NotificatableTesting's FixtureCommandLine.
        .executableTarget(
            name: "notificatable-fixtures", dependencies: ["NotificatableTesting"], swiftSettings: strict),
        .testTarget(
            name: "NotificatableTests",
            dependencies: ["Notificatable", "NotificatableRelay", "NotificatableTesting", "NotificatableSystem"],
            swiftSettings: strict
        ),
        // Every ```swift block of the DocC articles, compiled in a module of its own so the articles' names cannot
        // clash with the tests' (see Tests/DocCExamples/DocCExamples.swift).
        .testTarget(
            name: "DocCExamples",
            dependencies: ["Notificatable", "NotificatableRelay", "NotificatableTesting", "NotificatableSystem"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
