import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

/// A payload whose encoding fails for one value, to see a batch fail before anything is written.
struct RefusingItem: Codable, Sendable {
    var index: Int

    struct Refused: Error {}

    func encode(to encoder: any Encoder) throws {
        guard index >= 0 else { throw Refused() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
    }
}

extension PostgresIntegrationTests.Durable {
    /// How many rows the outbox of `schema` holds.
    func outboxRows(_ schema: String) throws -> Int {
        Int(try sql("SELECT count(*) FROM \(schema).outbox")) ?? -1
    }

    @Test func batchPostsKeepTheirOrderWithinAndAcrossBatchesAndReachTheConsumerInIt() async throws {
        let schema = freshSchema("batch")
        let client = try testClient(applicationName: freshApplicationName("batch"))
        let logger = Logger(label: "test")
        let publisher = DurableNotificationPublisher(client: client, configuration: .init(schema: schema))
        let clientRunning = RunningGroup([client])
        try await publisher.ready()
        let received = Recorded<Int>()
        let billing = try service(schema, consumer: "billing")
        billing.receive(DurableHandles.item) { item in received.append(item.index) }
        let running = RunningGroup([billing])
        await billing.transport.flush()

        func items(_ range: Range<Int>) -> [DurableItem] {
            range.map { DurableItem(publisher: "batch", stream: 0, index: $0) }
        }
        // A single post, a batch, a single post and a batch in one transaction; then batches in transactions of
        // their own, through the publisher and through the transport.
        try await client.withTransaction(logger: logger) { connection in
            try await publisher.post(items(0..<1)[0], on: DurableHandles.item, in: connection)
            try await publisher.post(contentsOf: items(1..<40), on: DurableHandles.item, in: connection)
            try await publisher.post(items(40..<41)[0], on: DurableHandles.item, in: connection)
            try await publisher.post(contentsOf: items(41..<100), on: DurableHandles.item, in: connection)
        }
        for start in stride(from: 100, to: 300, by: 50) {
            try await client.withTransaction(logger: logger) { connection in
                if start % 100 == 0 {
                    try await publisher.post(
                        contentsOf: items(start..<start + 50), on: DurableHandles.item, in: connection)
                } else {
                    try await billing.transport.post(
                        contentsOf: items(start..<start + 50), on: DurableHandles.item, in: connection)
                }
            }
        }
        #expect(await poll(timeout: .seconds(60)) { received.count >= 300 })
        try await running.shutDown()
        try await clientRunning.shutDown()
        #expect(received.all == Array(0..<300))
        // The ids follow the order of the posts: the delivery order is the order of (txid, id).
        #expect(
            try sql(
                """
                SELECT bool_and(ok) FROM (SELECT (message::json->'payload'->>'index')::int
                  = row_number() OVER (ORDER BY txid, id) - 1 AS ok FROM \(schema).outbox) r
                """) == "t")
    }

    @Test func aBatchWakesTheReadersOnceAndAnEmptyBatchSendsNothing() async throws {
        let schema = freshSchema("batchwake")
        let client = try testClient(applicationName: freshApplicationName("batchwake"))
        let logger = Logger(label: "test")
        let publisher = DurableNotificationPublisher(client: client, configuration: .init(schema: schema))
        let clientRunning = RunningGroup([client])
        try await publisher.ready()

        let listener = try await testConnection()
        let wakeUps = Recorded<String>()
        let wakeChannel = "notificatable.outbox." + schema
        _ = listener.addListener(channel: wakeChannel) { _, notification in wakeUps.append(notification.payload) }
        _ = try await listener.query("SELECT 1", logger: logger).get()  // the LISTEN is in effect

        let batch = (0..<50).map { DurableItem(publisher: "batch", stream: 0, index: $0) }
        try await client.withTransaction(logger: logger) { connection in
            try await publisher.post(contentsOf: batch, on: DurableHandles.item, in: connection)
        }
        #expect(await poll(timeout: .seconds(10)) { wakeUps.count >= 1 })
        // Two more round trips on the listening session: any further notification of that commit has arrived.
        _ = try await listener.query("SELECT 1", logger: logger).get()
        _ = try await listener.query("SELECT 1", logger: logger).get()
        #expect(wakeUps.count == 1)
        #expect(try outboxRows(schema) == 50)

        // An empty batch sends nothing: not even on a closed connection does it fail, and no wake-up follows.
        let closed = try await testConnection()
        try await closed.close()
        try await publisher.post(contentsOf: [DurableItem](), on: DurableHandles.item, in: closed)
        try await client.withTransaction(logger: logger) { connection in
            try await publisher.post(contentsOf: [DurableItem](), on: DurableHandles.item, in: connection)
        }
        _ = try await listener.query("SELECT 1", logger: logger).get()
        #expect(wakeUps.count == 1)
        #expect(try outboxRows(schema) == 50)
        try await listener.close()
        try await clientRunning.shutDown()
    }

    @Test func aBatchThatFailsItsChecksOrRollsBackWritesNothing() async throws {
        let schema = freshSchema("batchfail")
        let client = try testClient(applicationName: freshApplicationName("batchfail"))
        let logger = Logger(label: "test")
        var configuration = DurableNotificationPublisher.Configuration(schema: schema)
        configuration.maximumMessageSize = 1_000
        let publisher = DurableNotificationPublisher(client: client, configuration: configuration)
        let clientRunning = RunningGroup([client])
        try await publisher.ready()
        let refusing = Notificatable<RefusingItem>.name("NotificatablePostgres.RefusingItem")

        // Too large (the last of the batch) and an encoding failure (the middle one): the same errors as a single
        // post of that payload, thrown before anything is sent, so the caller's transaction goes on and commits
        // what it posts afterwards.
        let large = DurableItem(publisher: "batch", stream: 0, index: 2, blob: String(repeating: "x", count: 2_000))
        let batch = [DurableItem(publisher: "batch", stream: 0, index: 0), large]
        try await client.withTransaction(logger: logger) { connection in
            let single = await #expect(throws: PostgresTransportError.self) {
                try await publisher.post(large, on: DurableHandles.item, in: connection)
            }
            let batched = await #expect(throws: PostgresTransportError.self) {
                try await publisher.post(contentsOf: batch, on: DurableHandles.item, in: connection)
            }
            #expect(single?.kind == .payloadTooLarge)
            #expect(batched?.kind == .payloadTooLarge)
            await #expect(throws: RefusingItem.Refused.self) {
                try await publisher.post(RefusingItem(index: -1), on: refusing, in: connection)
            }
            await #expect(throws: RefusingItem.Refused.self) {
                try await publisher.post(
                    contentsOf: [RefusingItem(index: 1), RefusingItem(index: -1), RefusingItem(index: 2)], on: refusing,
                    in: connection)
            }
            // Had a statement failed, the transaction would be aborted and this post would throw.
            try await publisher.post(RefusingItem(index: 7), on: refusing, in: connection)
        }
        #expect(try outboxRows(schema) == 1)

        // A batch in a transaction that rolls back leaves nothing.
        struct RolledBack: Error {}
        // PostgresNIO wraps the closure's error in its PostgresTransactionError.
        await #expect(throws: (any Error).self) {
            try await client.withTransaction(logger: logger) { connection in
                try await publisher.post(
                    contentsOf: [RefusingItem(index: 8), RefusingItem(index: 9)], on: refusing, in: connection)
                throw RolledBack()
            }
        }
        #expect(try outboxRows(schema) == 1)
        try await clientRunning.shutDown()
    }

    @Test func postsPreparedPerConnectionRecoverFromAFailedPrepareAndKeepEachSchemaApart() async throws {
        let (first, second, late) = (freshSchema("prepa"), freshSchema("prepb"), freshSchema("prepc"))
        let client = try testClient(applicationName: freshApplicationName("prepared"))
        let logger = Logger(label: "test")
        let clientRunning = RunningGroup([client])
        let publishers = [first, second, late].map {
            DurableNotificationPublisher(client: client, configuration: .init(schema: $0))
        }
        try await publishers[0].ready()
        try await publishers[1].ready()
        let connection = try await testConnection()
        func items(_ range: Range<Int>) -> [DurableItem] {
            range.map { DurableItem(publisher: "prepared", stream: 0, index: $0) }
        }
        func run(_ statement: String) async throws {
            _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).get()
        }

        // The first post on this connection is prepared inside a transaction that has already failed: the prepare
        // fails (and PostgresNIO remembers that for the statement's name on this connection).
        try await run("BEGIN")
        await #expect(throws: (any Error).self) { try await run("SELECT 1 / 0") }
        await #expect(throws: (any Error).self) {
            try await publishers[0].post(items(0..<1)[0], on: DurableHandles.item, in: connection)
        }
        await #expect(throws: (any Error).self) {
            try await publishers[0].post(contentsOf: items(0..<2), on: DurableHandles.item, in: connection)
        }
        try await run("ROLLBACK")
        // Before its schema exists, a post fails; after `ready()`, on the same connection, it succeeds.
        await #expect(throws: (any Error).self) {
            try await publishers[2].post(items(0..<1)[0], on: DurableHandles.item, in: connection)
        }
        try await publishers[2].ready()

        // Then single posts and batches of the three schemas, interleaved in one transaction, each in its own outbox.
        try await run("BEGIN")
        for round in 0..<3 {
            try await publishers[0].post(items(round..<round + 1)[0], on: DurableHandles.item, in: connection)
            try await publishers[1].post(contentsOf: items(0..<round + 2), on: DurableHandles.item, in: connection)
            try await publishers[2].post(items(round..<round + 1)[0], on: DurableHandles.item, in: connection)
            try await publishers[0].post(contentsOf: items(0..<3), on: DurableHandles.item, in: connection)
        }
        try await run("COMMIT")
        #expect(try outboxRows(first) == 3 + 9)
        #expect(try outboxRows(second) == 2 + 3 + 4)
        #expect(try outboxRows(late) == 3)
        try await connection.close()
        try await clientRunning.shutDown()
    }
}
