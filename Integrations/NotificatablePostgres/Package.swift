// swift-tools-version:6.2
import PackageDescription

/// A separate package so that the root package keeps zero dependencies: a `NotificationTransport` over PostgreSQL
/// LISTEN/NOTIFY through PostgresNIO, its integration tests against a real server, and a benchmark. Run the tests
/// and the benchmark through `scripts/postgres.sh` at the root, which starts a throwaway server.
/// Every target builds in Swift 6 mode with all warnings treated as errors.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "NotificatablePostgres",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "NotificatablePostgres", targets: ["NotificatablePostgres"]),
        // The operator's command line: status, dead letters, schema versions (see the Operating article).
        .executable(name: "notificatable-pg", targets: ["notificatable-pg"]),
    ],
    dependencies: [
        .package(name: "Notificatable", path: "../.."),
        // The floor, read from postgres-nio's tagged sources: the code needs 1.31.0, which added
        // `listen(on:consume:)` (#619, used by notificatable-pg-peer); the transport alone needs 1.18.0
        // (`PostgresConnection.defaultEventLoopGroup`, `connect` without an event loop) and 1.14.0 (public `PSQLError`
        // with `code` and `serverInfo`). The floor is 1.32.2 all the same: before it, a LISTEN the server refuses
        // (a hot standby refuses every LISTEN) ends in a `fatalError` of its ListenStateMachine, because
        // `addListener`, which the transport uses, cancels a listener whose start failed (fixed by #637). CI
        // builds and tests against 1.33.2, the copy on the build machine; the releases below it were not built.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.32.2"),
        // HMACMessageAuthenticator, in a package of its own (swift-crypto only) so that users of other transports
        // can authenticate without postgres-nio; this package re-exports it, so `import NotificatablePostgres` is enough.
        .package(name: "NotificatableAuthentication", path: "../NotificatableAuthentication"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        // Used directly (PostgresNIO brings them too): every event is logged through swift-log at its severity, and
        // the tests record log entries with its InMemoryLogging (1.16.2 has it; the floor is the release tested).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Counters and gauges per consumer and channel (see NotificationMetrics); the tests check them with its
        // MetricsTestKit.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The operator's command line `notificatable-pg` only; the library does not depend on it.
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Distributed tracing: a post carries the current ServiceContext (W3C traceparent with the default
        // propagators) and each handler runs in a consumer span whose parent is the post's; the tests record spans
        // with its InMemoryTracing (the floor is the release tested).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "NotificatablePostgres",
            dependencies: [
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NotificatableAuthentication", package: "NotificatableAuthentication"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        // Shared by the tests, the peer process and the benchmark; not a product.
        .target(
            name: "NotificatablePostgresFixtures",
            dependencies: [
                "NotificatablePostgres", .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
            ],
            swiftSettings: strict
        ),
        // The second OS process of the integration tests and the receiving side of the benchmark.
        .executableTarget(
            name: "notificatable-pg-peer",
            dependencies: [
                "NotificatablePostgres", "NotificatablePostgresFixtures",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "notificatable-pg-bench",
            dependencies: [
                "NotificatablePostgres", "NotificatablePostgresFixtures",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        // The operator's command line: a thin layer over PostgresNotificationAdministration.
        .executableTarget(
            name: "notificatable-pg",
            dependencies: [
                "NotificatablePostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // Checks that the default event handlers log in the configuration it is built in; scripts/postgres.sh
        // builds it with -c release and runs it.
        .executableTarget(
            name: "notificatable-pg-release-check",
            dependencies: [
                "NotificatablePostgres",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotificatablePostgresTests",
            dependencies: [
                "NotificatablePostgres", "NotificatablePostgresFixtures",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
