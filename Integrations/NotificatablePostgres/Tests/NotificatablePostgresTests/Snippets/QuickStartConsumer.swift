import Logging
import NotificatablePostgres
import PostgresNIO
import ServiceLifecycle

func runBilling(app: some Service, client: PostgresClient, logger: Logger) async throws {
    let notifications = try PostgresNotificationService(
        configuration: .init(client: client, consumer: "billing"), logger: logger)
    notifications.process(Notificatable.orderPlaced) { order, delivery in
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "INSERT INTO invoices (order_id, total) VALUES (\(order.orderID), \(order.total))", logger: logger)
            try await delivery.acknowledge(in: connection)  // the invoice and the acknowledgement commit together
        }
    }
    let group = ServiceGroup(
        services: [client, notifications, app], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
}
