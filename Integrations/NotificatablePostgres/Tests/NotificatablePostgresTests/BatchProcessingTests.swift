import Foundation
import Logging
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

@testable import NotificatablePostgres

/// What a batch handler saw: each batch's items, in call order.
private final class BatchRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var batches: [[DurableItem]] = []

    func append(_ batch: [DurableItem]) { lock.withLock { batches.append(batch) } }
    var all: [[DurableItem]] { lock.withLock { batches } }
}

extension PostgresIntegrationTests.Processing {
    /// Batches in one transaction each: every effect once, per-key order kept, a poison message split out of its
    /// batches and parked alone while the rest of its batches is processed.
    @Test func batchesCommitEachEffectOnceKeepKeyOrderAndParkThePoisonAlone() async throws {
        let schema = freshSchema("process_batch")
        let count = 600
        let poison = 123
        try await publishItems(schema, count: count, streams: 6)
        try sql("CREATE TABLE \(schema).effects (stream int NOT NULL, index int NOT NULL)")
        let transport = try processingTransport(schema)
        let record = BatchRecord()
        let parked = Recorded<NotificationTransportEvent>()
        let logger = Logger(label: "test")
        let options = quickOptions(attempts: 3, concurrency: 3)
        let task = Task {
            try await transport.processTransactionally(
                DurableHandles.item, maximumBatchSize: 40, options: options,
                partitionKey: { "\($0.stream)" }, onEvent: { if $0.kind == .messageParked { parked.append($0) } }
            ) { deliveries, connection in
                for delivery in deliveries {
                    try await connection.query(
                        """
                        INSERT INTO \(unescaped: schema).effects (stream, index)
                        VALUES (\(delivery.payload.stream), \(delivery.payload.index))
                        """, logger: logger)
                }
                if deliveries.contains(where: { $0.payload.index == poison }) { throw FixtureError("poison") }
                record.append(deliveries.map(\.payload))
            }
        }
        defer { task.cancel() }
        let done = await poll(timeout: .seconds(120)) {
            (try? sql("SELECT count(*) FROM \(schema).effects")) == "\(count - 1)" && !parked.all.isEmpty
        }
        task.cancel()
        _ = await task.result
        #expect(done, "effects: \((try? sql("SELECT count(*) FROM \(schema).effects")) ?? "?")")
        #expect(try sql("SELECT count(*), count(DISTINCT index) FROM \(schema).effects") == "\(count - 1)|\(count - 1)")
        #expect(try sql("SELECT count(*) FROM \(schema).effects WHERE index = \(poison)") == "0")
        #expect(try sql("SELECT count(*) FROM \(schema).dead_letters") == "1")
        #expect(parked.all.count == 1)
        let committed = record.all
        // Batching happened: most messages went in batches of more than one.
        #expect(committed.filter { $0.count > 1 }.count >= 5, "batch sizes: \(committed.map(\.count))")
        // Per key, the committed order is the posted order.
        for stream in 0..<6 {
            let indexes = committed.flatMap { $0 }.filter { $0.stream == stream }.map(\.index)
            #expect(indexes == indexes.sorted(), "stream \(stream) out of order")
            #expect(indexes.count == count / 6 - (poison % 6 == stream ? 1 : 0))
        }
    }

    /// Batches running while the server stops for 3 s and starts again: each batch's transaction either committed
    /// with its acknowledgements or is run again after the return, so every item's effect is stored exactly once,
    /// none is lost or parked, and what is posted after the return is processed too.
    ///
    /// Disabled: it finds a hang (29 November 2026, also before the batch changes of that day). After the restart the
    /// processor never reconnects (no connection of its own on the server, the effects stay where the stop left
    /// them) and `processTransactionally` does not return when cancelled, so the test runs into its time limit. The
    /// likely cause: a statement written to a handler's connection that the server closed (the handler's next
    /// statement, the acknowledgement, `COMMIT`/`ROLLBACK`) is never answered by PostgresNIO, and the session's task
    /// group waits for that call for good. The library's own statements go through `PostgresConnectionWatch`, the
    /// handler's transaction does not.
    @Test func batchesRunningThroughAServerRestartStoreEachEffectOnce() async throws {
        let schema = freshSchema("process_batch_outage")
        let (count, later) = (3_000, 3_000..<3_300)
        try await publishItems(schema, count: count, streams: 4)
        try sql("CREATE TABLE \(schema).effects (stream int NOT NULL, index int NOT NULL)")
        let transport = try processingTransport(schema)
        let events = Recorded<NotificationTransportEvent>()
        let logger = Logger(label: "test")
        let task = Task {
            try await transport.processTransactionally(
                DurableHandles.item, maximumBatchSize: 50, options: quickOptions(attempts: 3, concurrency: 2),
                partitionKey: { "\($0.stream)" }, onEvent: { events.append($0) }
            ) { deliveries, connection in
                let streams = deliveries.map(\.payload.stream)
                let indexes = deliveries.map(\.payload.index)
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schema).effects (stream, index)
                    SELECT * FROM unnest(\(streams)::int8[], \(indexes)::int8[])
                    """, logger: logger)
                // Long enough that batches are running (and transactions open) when the server stops.
                try await Task.sleep(for: .milliseconds(30))
            }
        }
        defer { task.cancel() }
        let effects = { (try? sql("SELECT count(*) FROM \(schema).effects")).flatMap { Int($0) } ?? -1 }
        #expect(await poll(timeout: .seconds(60), every: .milliseconds(5)) { effects() >= 300 })
        let atStop = effects()
        try TestServer.server("stop")
        let stopped = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        try TestServer.server("start")
        #expect(atStop < count, "the outage came after the last batch: \(atStop) effects")
        try await postItems(later, schema: schema)
        let total = count + later.count
        let done = await poll(timeout: .seconds(120)) { effects() >= total }
        task.cancel()
        _ = await task.result
        #expect(done, "effects \(effects()) of \(total), \(ContinuousClock.now - stopped) after the stop")
        #expect(try sql("SELECT count(*), count(DISTINCT index) FROM \(schema).effects") == "\(total)|\(total)")
        #expect(try sql("SELECT count(*) FROM \(schema).dead_letters") == "0")
        #expect(events.all.contains { $0.kind == .connectionLost })
        #expect(!events.all.contains { $0.kind == .messageParked })
    }

    /// A batch handler that ends the process on one message: the batches a crash can have left unfinished (near the
    /// stored position) are counted before they start, so the message is soon alone, counted per start, and parked
    /// after at most `maximumAttempts` + 1 starts (the first, further on, went uncounted, as a single message's
    /// does); the next run processes the rest, each effect once.
    @Test func aBatchHandlerThatEndsTheProcessIsParkedAloneAfterItsAttempts() async throws {
        let schema = freshSchema("process_batch_poison")
        let (count, poison, attempts) = (300, 200, 3)
        try await publishItems(schema, count: count)
        try sql("CREATE TABLE \(schema).effects (stream int NOT NULL, index int NOT NULL)")
        let arguments = ["durable-process", schema, "worker", "1", "batch", "0", "exit:\(poison)", "\(attempts)"]
        let effects = "SELECT count(*), count(DISTINCT index) FROM \(schema).effects"
        var exits: [String] = []
        var parked = false
        for _ in 1...(attempts + 2) where !parked {
            let peer = try LineProcess(peerPath, arguments)
            defer { peer.kill() }
            let ended = await peer.wait(timeout: .seconds(60)) { lines in
                lines.contains { $0.hasPrefix("exiting") || $0.hasPrefix("event messageParked") }
            }
            #expect(ended, "\(peer.lines.suffix(5))")
            if peer.lines.contains(where: { $0.hasPrefix("event messageParked") }) {
                parked = true
                let rest = await peer.wait(timeout: .seconds(60)) { lines in
                    Set(processedItems(lines).map(\.index)).isSuperset(of: (poison + 1)..<count)
                }
                #expect(rest, "the run that parked: \(peer.lines.suffix(5))")
                // The peer prints a batch's items before its transaction commits: wait for the last commit before
                // the peer is killed (on a loaded machine the kill came first, and the last batch never committed).
                _ = await poll(timeout: .seconds(30)) { (try? sql(effects)) == "\(count - 1)|\(count - 1)" }
            } else {
                #expect(peer.finish() == 3)
                exits += peer.lines.filter { $0.hasPrefix("exiting") }
            }
        }
        #expect(parked, "exits: \(exits)")
        #expect(exits.count <= attempts + 1, "exits: \(exits)")
        // The last starts were of the message alone.
        #expect(exits.last?.hasSuffix(" 1") == true, "exits: \(exits)")
        let letter = try sql(
            "SELECT id IS NOT NULL, attempts, error LIKE '%never returned%' FROM \(schema).dead_letters")
        #expect(letter == "t|\(attempts)|t")
        #expect(try sql(effects) == "\(count - 1)|\(count - 1)")
        #expect(try sql("SELECT count(*) FROM \(schema).effects WHERE index = \(poison)") == "0")
    }

    /// A batch size out of range is refused before anything runs.
    @Test func aBatchSizeOutOfRangeIsRefused() async throws {
        let transport = try processingTransport(freshSchema("process_batch_size"))
        for size in [0, -1, 10_001] {
            let error = await #expect(throws: PostgresTransportError.self) {
                try await transport.processTransactionally(DurableHandles.item, maximumBatchSize: size) { _, _ in }
            }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.setting == "maximumBatchSize")
        }
    }

    @Test func aBatchTransactionalHandlerKilledFiveTimesLeavesEveryEffectExactlyOnce() async throws {
        let schema = freshSchema("process_batch_kill")
        let count = killTestMessages(5_000)
        try await publishItems(schema, count: count)
        try sql("CREATE TABLE \(schema).effects (stream int NOT NULL, index int NOT NULL)")
        let processed = try await processKilled(schema: schema, count: count, kills: 5, concurrency: 4, mode: "batch")
        #expect(Set(processed.map(\.index)).count == count)
        let counts = try sql("SELECT count(*), count(DISTINCT index) FROM \(schema).effects")
        #expect(counts == "\(count)|\(count)", "effects (rows|distinct): \(counts)")
        print("process batch kill test: \(processed.count) handler calls, effects \(counts)")
    }
}
