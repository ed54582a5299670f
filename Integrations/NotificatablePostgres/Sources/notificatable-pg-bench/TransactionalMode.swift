// The exactly-once processing mode of the benchmark: `notificatable-pg-bench --mode transactional [--messages N]
// [--rounds R] [--smoke]` (or `scripts/postgres.sh bench --mode transactional`); registered in main.swift.
//
// Works off a stored backlog of N messages (5,000 by default) with `processTransactionally`, the handler inserting
// one row per message into a table of its own in the transaction that acknowledges it, at concurrency 1:
//   - one message per transaction (`processTransactionally(_:options:…)`), and
//   - batches of up to 100 (`processTransactionally(_:maximumBatchSize: 100, …)`), one insert per message still;
// each with the server's `fsync` on and off, the order rotating between rounds. The rate runs from the start of the
// call to the last commit seen; every effect is checked to be stored exactly once. Prints each round and the medians,
// and the batch-over-one ratio (goal ≥ 10× with fsync on).
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

/// `--mode transactional`.
func runTransactionalMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration)
    async -> Int32
{
    let messages = arguments.int("--messages", 5_000, smoke: 200)
    let rounds = arguments.int("--rounds", 3, smoke: 1)
    let sizes = [1, 100]
    print(
        "PostgreSQL exactly-once processing benchmark: a backlog of \(messages), one insert per message, "
            + "one message per transaction and batches of 100, fsync on and off, \(rounds) round(s)")
    var rates: [String: [Double]] = [:]
    do {
        for round in 1...rounds {
            for fsync in (round % 2 == 1 ? [true, false] : [false, true]) {
                try ProcessBenchmark.setFsync(fsync)
                for size in (round % 2 == 1 ? sizes : sizes.reversed()) {
                    let rate = try await measureTransactional(
                        batchSize: size, count: messages, configuration: configuration)
                    let label =
                        "\(size == 1 ? "one per transaction" : "batches of \(size)"), fsync \(fsync ? "on" : "off")"
                    rates[label, default: []].append(rate)
                    print("round \(round) \(label): \(format(rate)) msg/s")
                }
            }
        }
        try ProcessBenchmark.setFsync(false)
    } catch {
        print("benchmark failed: \(error)")
        try? ProcessBenchmark.setFsync(false)
        return 1
    }
    print("")
    print("medians over \(rounds) round(s):")
    for fsync in ["on", "off"] {
        let one = median(rates["one per transaction, fsync \(fsync)"] ?? [])
        let batch = median(rates["batches of 100, fsync \(fsync)"] ?? [])
        print(
            "  fsync \(fsync): one per transaction \(format(one)) msg/s, batches of 100 \(format(batch)) msg/s: "
                + "\(format(batch / one, 1))×" + (fsync == "on" ? " (goal ≥ 10×)" : ""))
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}

/// Stores `count` messages in a fresh schema, then processes them transactionally in batches of `batchSize` (one
/// message per transaction for 1); returns messages per second, after checking each effect is stored once.
private func measureTransactional(
    batchSize: Int, count: Int, configuration: PostgresNotificationTransport.Configuration
) async throws -> Double {
    let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
    var durable = DurablePostgresNotificationTransport.Configuration(
        connection: configuration.connection, consumer: "bench-transactional")
    durable.schema = schema
    durable.retentionInterval = nil
    let center = NotificationCenter()
    let sender = try DurablePostgresNotificationTransport(configuration: durable)
    let relay = NotificationRelay(
        transport: sender, center: center, onEvent: { print("relay event: \($0)") },
        onFailure: { print("relay failure: \($0)") })
    relay.forward(PeerHandles.bench)
    await sender.flush()  // the tables exist
    for index in 0..<count { PeerHandles.bench.post(BenchPayload(index: index, sentAt: 0), center: center) }
    await sender.flush()
    relay.stop()
    let (output, status) = try TestServer.psql([
        "-tA", "-c", "CREATE TABLE \(schema).effects (index int8 NOT NULL)", "-c", "CHECKPOINT",
    ])
    guard status == 0 else { throw FixtureError("psql: \(output)") }

    let transport = try DurablePostgresNotificationTransport(configuration: durable)
    var options = DurableProcessingOptions(maximumAttempts: 1, maximumConcurrency: 1)
    options.startsAtOldestStored = true
    let clock = ProcessBenchmark.Clock()
    let logger = Logger(label: "bench")
    let insert = "INSERT INTO \(schema).effects (index) VALUES ($1)"
    let onEvent: @Sendable (NotificationTransportEvent) -> Void = { print("processing event: \($0)") }
    let started = monotonicNanoseconds()
    let task = Task {
        if batchSize == 1 {
            try await transport.processTransactionally(PeerHandles.bench, options: options, onEvent: onEvent) {
                delivery, connection in
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(delivery.payload.index)
                try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger)
                clock.record(delivery.payload.index)
            }
        } else {
            try await transport.processTransactionally(
                PeerHandles.bench, maximumBatchSize: batchSize, options: options, onEvent: onEvent
            ) { deliveries, connection in
                for delivery in deliveries {
                    var bindings = PostgresBindings(capacity: 1)
                    bindings.append(delivery.payload.index)
                    try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger)
                }
                for delivery in deliveries { clock.record(delivery.payload.index) }
            }
        }
    }
    let done = await poll(timeout: .seconds(900), every: .milliseconds(2)) { clock.count >= count }
    let last = clock.snapshot.last ?? started
    // The handler saw the last message before its transaction committed: wait for the commit before stopping.
    let countSQL = "SELECT count(*) FROM \(schema).effects"
    _ = await poll(timeout: .seconds(60), every: .milliseconds(20)) {
        (try? TestServer.psql(["-tA", "-c", countSQL]))?.output.trimmingCharacters(in: .whitespacesAndNewlines)
            == "\(count)"
    }
    task.cancel()
    _ = await task.result
    guard done else { throw FixtureError("batches of \(batchSize): processed \(clock.count) of \(count)") }
    let (stored, storedStatus) = try TestServer.psql([
        "-tA", "-c", "SELECT count(*), count(DISTINCT index) FROM \(schema).effects",
    ])
    guard storedStatus == 0, stored.trimmingCharacters(in: .whitespacesAndNewlines) == "\(count)|\(count)" else {
        throw FixtureError("batches of \(batchSize): effects stored \(stored), expected \(count) once each")
    }
    return Double(count) / (Double(last - started) / 1e9)
}
