import Logging
import NotificatablePostgres
import PostgresNIO
import ServiceLifecycle

func runBilling(app: some Service, client: PostgresClient, logger: Logger) async throws {
    let notifications = try PostgresNotificationService(
        configuration: .init(client: client, consumer: "billing"), logger: logger)
    // The invoice and the acknowledgement commit in one transaction: each order invoiced exactly once.
    notifications.processTransactionally(Notificatable.orderPlaced) { order, delivery, connection in
        try await connection.query(
            "INSERT INTO invoices (order_id, total) VALUES (\(order.orderID), \(order.total))", logger: logger)
    }
    let group = ServiceGroup(
        services: [client, notifications, app], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
}
