import Foundation
import Logging
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle
import Testing

@testable import NotificatablePostgres

/// A handler's own error, to tell apart from anything PostgresNIO wraps around it.
private struct BillingDeclined: Error, Equatable {
    let index: Int
}

extension PostgresIntegrationTests.Processing {
    /// The service's exactly-once form: the handler's insert and the acknowledgement in one transaction, a throwing
    /// handler rolled back and retried, each effect stored once.
    @Test func theServiceProcessesTransactionallyEachEffectOnce() async throws {
        let schema = freshSchema("service_tx")
        let count = 40
        try await publishItems(schema, count: count)
        try sql("CREATE TABLE \(schema).effects (index int NOT NULL)")
        guard var configuration = TestServer.durableConfiguration(consumer: "billing", schema: schema) else {
            throw FixtureError("no server configured")
        }
        configuration.retentionInterval = nil
        let service = try PostgresNotificationService(configuration: configuration, center: NotificationCenter())
        let attempts = Recorded<Int>()
        let logger = Logger(label: "test")
        service.processTransactionally(DurableHandles.item, options: quickOptions(concurrency: 4)) {
            item, delivery, connection in
            attempts.append(item.index)
            try await connection.query(
                "INSERT INTO \(unescaped: schema).effects (index) VALUES (\(item.index))", logger: logger)
            // Every seventh message fails its first attempt after its insert: the insert must be rolled back.
            if item.index % 7 == 0 && delivery.attempt == 1 { throw BillingDeclined(index: item.index) }
        }
        let running = RunningGroup([service])
        let done = await poll(timeout: .seconds(60)) {
            (try? sql("SELECT count(*) FROM \(schema).effects")) == "\(count)"
        }
        try await running.shutDown()
        #expect(done)
        #expect(try sql("SELECT count(*), count(DISTINCT index) FROM \(schema).effects") == "\(count)|\(count)")
        let retried = (0..<count).filter { $0 % 7 == 0 }
        for index in retried { #expect(attempts.all.filter { $0 == index }.count == 2, "index \(index)") }
        #expect(try sql("SELECT count(*) FROM \(schema).dead_letters") == "0")
    }

    /// `delivery.withTransaction(on:)` throws what was thrown: `alreadyAcknowledged` as a `DurableProcessingError`
    /// (through `client.withTransaction` it came wrapped in PostgresNIO's `PostgresTransactionError`), the body's
    /// own error as it is, and the body's writes rolled back with them.
    @Test func aDeliveryTransactionThrowsUnwrappedErrors() async throws {
        let schema = freshSchema("delivery_tx")
        try await publishItems(schema, count: 1)
        try sql("CREATE TABLE \(schema).effects (index int NOT NULL)")
        let client = try testClient(applicationName: freshApplicationName("delivery-tx"))
        let clientTask = Task { await client.run() }
        defer { clientTask.cancel() }
        let transport = try processingTransport(schema)
        let logger = Logger(label: "test")
        let outcomes = Recorded<String>()
        let task = Task {
            try await transport.process(DurableHandles.item, options: quickOptions(attempts: 1)) { delivery in
                let insert: @Sendable (PostgresConnection) async throws -> Void = { connection in
                    try await connection.query(
                        "INSERT INTO \(unescaped: schema).effects (index) VALUES (\(delivery.payload.index))",
                        logger: logger)
                }
                // The body's own error, unwrapped; its insert rolled back.
                do {
                    try await delivery.withTransaction(on: client, logger: logger) { connection in
                        try await insert(connection)
                        throw BillingDeclined(index: delivery.payload.index)
                    }
                    outcomes.append("no error")
                } catch let error as BillingDeclined {
                    outcomes.append("declined \(error.index)")
                }
                try await delivery.withTransaction(on: client, logger: logger, insert)
                // A second acknowledgement: another transaction committed it already.
                do {
                    try await delivery.withTransaction(on: client, logger: logger, insert)
                    outcomes.append("no error")
                } catch let error as DurableProcessingError {
                    outcomes.append("\(error.kind)")
                } catch {
                    outcomes.append("wrapped: \(type(of: error))")
                }
            }
        }
        defer { task.cancel() }
        #expect(await poll(timeout: .seconds(30)) { outcomes.all.count == 2 })
        #expect(outcomes.all == ["declined 0", "alreadyAcknowledged"])
        #expect(try sql("SELECT count(*) FROM \(schema).effects") == "1")
        task.cancel()
        _ = await task.result
    }
}
