// The exactly-once processing mode of the benchmark: `notificatable-pg-bench --mode transactional [--messages N]
// [--rounds R] [--batch B] [--rows single,per-message,unnest] [--fsync on,off] [--smoke]` (or
// `scripts/postgres.sh bench --mode transactional`); registered in main.swift.
//
// Works off a stored backlog of N messages (5,000 by default) with `processTransactionally`, the handler storing one
// row per message in a table of its own, in the transaction that acknowledges it, at concurrency 1. Three rows:
//   - `single`: one message per transaction (`processTransactionally(_:options:…)`), one insert;
//   - `per-message`: batches of up to B (100; `processTransactionally(_:maximumBatchSize:…)`), one insert statement
//     per message still: B round trips of the handler's own per batch;
//   - `unnest`: batches of up to B, the batch's rows written by one multi-row statement (`unnest` of an array).
// Each with the server's `fsync` on and off, the order rotating between rounds. The rate runs from the start of the
// call to the last message the handler saw; every effect is checked to be stored exactly once. Prints each round,
// where a transaction's time went (in the handler: its statements and their mean round trip; outside it: the
// library's reading, counting, acknowledging and committing), the medians, and each batch row over the single one
// (goal ≥ 10× with fsync on), also round by round (the rows of a round run back to back, under the same load).
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

/// How a row of `--mode transactional` processes: one message per transaction, or batches written one statement per
/// message or in one statement.
enum TransactionalRow: String, CaseIterable {
    case single
    case perMessage = "per-message"
    case unnest

    /// The row's label in the output, for batches of `batch`.
    func label(batch: Int) -> String {
        switch self {
        case .single: "one per transaction"
        case .perMessage: "batches of \(batch), one insert per message"
        case .unnest: "batches of \(batch), one unnest insert per batch"
        }
    }
}

/// Where the transactions of one measurement spent their time, seen from the handler (concurrency 1, so calls do not
/// overlap): inside the handler (its statements, timed one by one) and between one call's end and the next's start
/// (the library: acknowledging, committing, counting starts, beginning, reading).
final class TransactionalProfile: @unchecked Sendable {
    private let lock = NSLock()
    private var lastEnd: UInt64 = 0
    private(set) var calls = 0
    private(set) var handlerNanoseconds: UInt64 = 0
    private(set) var gapNanoseconds: UInt64 = 0
    private(set) var gaps = 0
    private(set) var statements = 0
    private(set) var statementNanoseconds: UInt64 = 0

    /// Notes a handler call starting now; returns its start.
    func begin() -> UInt64 {
        let now = monotonicNanoseconds()
        lock.withLock {
            if lastEnd > 0 {
                gapNanoseconds += now - lastEnd
                gaps += 1
            }
        }
        return now
    }

    /// Notes one statement of the handler's, started at `start`.
    func statement(since start: UInt64) {
        let now = monotonicNanoseconds()
        lock.withLock {
            statements += 1
            statementNanoseconds += now - start
        }
    }

    /// Notes the end of the handler call started at `start`.
    func end(since start: UInt64) {
        let now = monotonicNanoseconds()
        lock.withLock {
            calls += 1
            handlerNanoseconds += now - start
            lastEnd = now
        }
    }

    /// One line: per transaction, the time in the handler (statements, mean round trip) and outside it.
    var summary: String {
        lock.withLock {
            let perCall = Double(handlerNanoseconds) / Double(max(calls, 1)) / 1e6
            let gap = Double(gapNanoseconds) / Double(max(gaps, 1)) / 1e6
            let perStatement = Double(statementNanoseconds) / Double(max(statements, 1)) / 1e3
            let statementsPerCall = Double(statements) / Double(max(calls, 1))
            return "per transaction \(format(perCall + gap, 2)) ms: handler \(format(perCall, 2)) ms "
                + "(\(format(statementsPerCall, 0)) statement(s), \(format(perStatement)) µs each), "
                + "outside the handler \(format(gap, 2)) ms; \(calls) transactions"
        }
    }

    /// The mean round trip of the handler's statements, in microseconds.
    var meanStatementMicroseconds: Double {
        lock.withLock { Double(statementNanoseconds) / Double(max(statements, 1)) / 1e3 }
    }

    /// The mean time outside the handler per transaction, in milliseconds.
    var meanGapMilliseconds: Double {
        lock.withLock { Double(gapNanoseconds) / Double(max(gaps, 1)) / 1e6 }
    }
}

/// `--mode transactional`.
func runTransactionalMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration)
    async -> Int32
{
    let messages = arguments.int("--messages", 5_000, smoke: 200)
    let rounds = arguments.int("--rounds", 3, smoke: 1)
    let batch = arguments.int("--batch", 100, smoke: 100)
    let rows = (arguments.string("--rows") ?? "single,per-message,unnest").split(separator: ",").compactMap {
        TransactionalRow(rawValue: String($0))
    }
    let fsyncs = (arguments.string("--fsync") ?? "on,off").split(separator: ",").map { $0 == "on" }
    print(
        "PostgreSQL exactly-once processing benchmark: a backlog of \(messages), "
            + rows.map { $0.label(batch: batch) }.joined(separator: "; ")
            + ", fsync \(fsyncs.map { $0 ? "on" : "off" }.joined(separator: " and ")), \(rounds) round(s)")
    var rates: [String: [Double]] = [:]
    var roundTrips: [String: [Double]] = [:]
    var gaps: [String: [Double]] = [:]
    do {
        for round in 1...rounds {
            for fsync in (round % 2 == 1 ? fsyncs : fsyncs.reversed()) {
                try ProcessBenchmark.setFsync(fsync)
                let order = (0..<rows.count).map { rows[($0 + round - 1) % rows.count] }
                for row in order {
                    let profile = TransactionalProfile()
                    let rate = try await measureTransactional(
                        row, batchSize: row == .single ? 1 : batch, count: messages, profile: profile,
                        configuration: configuration)
                    let label = "\(row.label(batch: batch)), fsync \(fsync ? "on" : "off")"
                    rates[label, default: []].append(rate)
                    roundTrips[label, default: []].append(profile.meanStatementMicroseconds)
                    gaps[label, default: []].append(profile.meanGapMilliseconds)
                    print("round \(round) \(label): \(format(rate)) msg/s; \(profile.summary)")
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
    for fsync in fsyncs.map({ $0 ? "on" : "off" }) {
        let singles = rates["\(TransactionalRow.single.label(batch: batch)), fsync \(fsync)"] ?? []
        for row in rows {
            let label = "\(row.label(batch: batch)), fsync \(fsync)"
            let rate = median(rates[label] ?? [])
            var line =
                "  \(label): \(format(rate)) msg/s (handler statement \(format(median(roundTrips[label] ?? []))) µs, "
                + "outside the handler \(format(median(gaps[label] ?? []), 2)) ms per transaction)"
            if row != .single, !singles.isEmpty {
                // Each round's ratio too: the rows of one round run back to back, under the same load.
                let ratios = zip(rates[label] ?? [], singles).map { $0 / $1 }
                let perRound = ratios.map { format($0, 1) + "×" }.joined(separator: ", ")
                line += ": \(format(rate / median(singles), 1))× one per transaction (per round \(perRound), "
                line += "median \(format(median(ratios), 1))×)" + (fsync == "on" ? " (goal ≥ 10×)" : "")
            }
            print(line)
        }
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}

/// Stores `count` messages in a fresh schema, then processes them transactionally as `row` says, in batches of
/// `batchSize` (one message per transaction for 1); returns messages per second, after checking each effect is
/// stored once. The handler's calls and statements are timed into `profile`.
private func measureTransactional(
    _ row: TransactionalRow, batchSize: Int, count: Int, profile: TransactionalProfile,
    configuration: PostgresNotificationTransport.Configuration
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
    let insertAll = "INSERT INTO \(schema).effects (index) SELECT unnest($1::int8[])"
    let onEvent: @Sendable (NotificationTransportEvent) -> Void = { print("processing event: \($0)") }
    let started = monotonicNanoseconds()
    let task = Task {
        if row == .single {
            try await transport.processTransactionally(PeerHandles.bench, options: options, onEvent: onEvent) {
                delivery, connection in
                let start = profile.begin()
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(delivery.payload.index)
                try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger)
                profile.statement(since: start)
                clock.record(delivery.payload.index)
                profile.end(since: start)
            }
        } else {
            try await transport.processTransactionally(
                PeerHandles.bench, maximumBatchSize: batchSize, options: options, onEvent: onEvent
            ) { deliveries, connection in
                let start = profile.begin()
                if row == .unnest {
                    var bindings = PostgresBindings(capacity: 1)
                    bindings.append(deliveries.map(\.payload.index))
                    try await connection.query(PostgresQuery(unsafeSQL: insertAll, binds: bindings), logger: logger)
                    profile.statement(since: start)
                } else {
                    for delivery in deliveries {
                        let statementStart = monotonicNanoseconds()
                        var bindings = PostgresBindings(capacity: 1)
                        bindings.append(delivery.payload.index)
                        try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger)
                        profile.statement(since: statementStart)
                    }
                }
                for delivery in deliveries { clock.record(delivery.payload.index) }
                profile.end(since: start)
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
    let what = row.label(batch: batchSize)
    guard done else { throw FixtureError("\(what): processed \(clock.count) of \(count)") }
    let (stored, storedStatus) = try TestServer.psql([
        "-tA", "-c", "SELECT count(*), count(DISTINCT index) FROM \(schema).effects",
    ])
    guard storedStatus == 0, stored.trimmingCharacters(in: .whitespacesAndNewlines) == "\(count)|\(count)" else {
        throw FixtureError("\(what): effects stored \(stored), expected \(count) once each")
    }
    return Double(count) / (Double(last - started) / 1e9)
}
