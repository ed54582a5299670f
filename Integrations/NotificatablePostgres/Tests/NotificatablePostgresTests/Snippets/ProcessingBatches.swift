import Logging
import NotificatablePostgres
import PostgresNIO

func invoiceOrdersInBatches(notifications: PostgresNotificationService, logger: Logger) {
    // Up to 100 orders per transaction: one commit for all of them and their acknowledgements.
    notifications.processTransactionally(Notificatable.orderPlaced, maximumBatchSize: 100) { deliveries, connection in
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(deliveries.map(\.payload.orderID))
        bindings.append(deliveries.map(\.payload.total))
        try await connection.query(
            PostgresQuery(
                unsafeSQL: "INSERT INTO invoices (order_id, total) SELECT * FROM unnest($1::int8[], $2::int8[])",
                binds: bindings),
            logger: logger)
    }
}
