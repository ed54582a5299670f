// The package README's "Server-side quick start" blocks, verbatim (imports aside), so that this package's build
// (`scripts/postgres.sh`) compiles them; `QuickStartReadmeTests` checks that every ```swift block of that section
// appears here (indentation aside). The manifest snippet compiles against the PackageDescription look-alike at the
// bottom, which mirrors only the calls it uses.
//
// Compiled, not run: `OperationsTests` runs the same calls against a real server.

import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import PostgresNIO
import ServiceLifecycle

func quickStartManifest() -> QuickStartPackage {
    QuickStartPackage(
        // Package.swift of your app
        dependencies: [
            .package(path: "../Notificatable/Integrations/NotificatablePostgres"),
            .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.32.2"),
            .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
            .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        ],
        targets: [
            .target(
                name: "Billing",
                dependencies: [
                    .product(name: "NotificatablePostgres", package: "NotificatablePostgres"),
                    .product(name: "PostgresNIO", package: "postgres-nio"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            )
        ]
    )
}

struct OrderPlaced: Codable, Sendable {
    var orderID: Int
    var total: Int
}

extension Notificatable where Info == OrderPlaced {
    static let orderPlaced = Notificatable.name("Orders.OrderPlaced")
}

func placeOrder(
    _ orderID: Int, total: Int, client: PostgresClient, publisher: DurableNotificationPublisher, logger: Logger
) async throws {
    try await client.withTransaction(logger: logger) { connection in
        try await connection.query("INSERT INTO orders (id, total) VALUES (\(orderID), \(total))", logger: logger)
        try await publisher.post(
            OrderPlaced(orderID: orderID, total: total), on: Notificatable.orderPlaced, in: connection)
    }
}

func runBilling(app: some Service, client: PostgresClient, logger: Logger) async throws {
    let notifications = try PostgresNotificationService(
        configuration: .init(client: client, consumer: "billing"), logger: logger)
    notifications.receive(Notificatable.orderPlaced) { order in
        logger.info("charging order \(order.orderID)")  // awaited: the position passes it once this returns
    }
    let group = ServiceGroup(
        services: [client, notifications, app], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
}

// MARK: - A PackageDescription look-alike for the manifest snippet

struct QuickStartPackage {
    var dependencies: [QuickStartDependency]
    var targets: [QuickStartTarget]
}

struct QuickStartDependency {
    var location: String
    var version: String?

    static func package(path: String) -> QuickStartDependency { QuickStartDependency(location: path, version: nil) }

    static func package(url: String, from version: String) -> QuickStartDependency {
        QuickStartDependency(location: url, version: version)
    }
}

struct QuickStartTarget {
    var name: String
    var dependencies: [QuickStartProduct]

    static func target(name: String, dependencies: [QuickStartProduct]) -> QuickStartTarget {
        QuickStartTarget(name: name, dependencies: dependencies)
    }
}

struct QuickStartProduct {
    var name: String
    var package: String

    static func product(name: String, package: String) -> QuickStartProduct {
        QuickStartProduct(name: name, package: package)
    }
}
