import Logging
import NotificatablePostgres
import PostgresNIO

func placeOrder(
    _ orderID: Int, total: Int, client: PostgresClient, publisher: DurableNotificationPublisher, logger: Logger
) async throws {
    try await client.withTransaction(logger: logger) { connection in
        try await connection.query("INSERT INTO orders (id, total) VALUES (\(orderID), \(total))", logger: logger)
        try await publisher.post(
            OrderPlaced(orderID: orderID, total: total), on: Notificatable.orderPlaced, in: connection)
    }
}
