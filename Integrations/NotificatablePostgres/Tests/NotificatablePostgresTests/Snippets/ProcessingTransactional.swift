import Logging
import NotificatablePostgres
import PostgresNIO

func invoiceOrders(transport: DurablePostgresNotificationTransport, logger: Logger) async throws {
    try await transport.processTransactionally(Notificatable.orderPlaced) { delivery, connection in
        try await connection.query(
            "INSERT INTO invoices (order_id, total) VALUES (\(delivery.payload.orderID), \(delivery.payload.total))",
            logger: logger)
    }
}
