import Logging
import NotificatablePostgres
import PostgresNIO

func recordOrder(
    _ order: OrderPlaced, connection: PostgresConnection, transport: DurablePostgresNotificationTransport,
    logger: Logger
) async throws {
    try await connection.withTransaction(logger: logger) { connection in
        try await connection.query(
            "INSERT INTO orders (id, total) VALUES (\(order.orderID), \(order.total))", logger: logger)
        try await transport.post(order, on: Notificatable.orderPlaced, in: connection)
    }
}
