// The acknowledged-processing command of the peer, for the tests that kill a consumer at random points:
//
//   notificatable-pg-peer durable-process SCHEMA CONSUMER CONCURRENCY plain|transactional|batch [STEP_µs]
//       processes DurableHandles.item from the oldest stored message.
//       plain: each handler awaits a random step of up to STEP_µs (300 by default), then prints the item;
//       transactional: each handler inserts the item's index into SCHEMA.effects in the transaction that acknowledges
//       it, then prints the item (before the commit);
//       batch: as transactional, in batches of up to 50 (processTransactionally(_:maximumBatchSize:)), one
//       multi-row insert per batch.
//       exit:INDEX (a sixth argument, plain and batch): the handler ends the process (exit 3) on the item INDEX (in
//       batches: on a batch holding it, printing `exiting INDEX ATTEMPT BATCH_SIZE`), before printing it; a seventh
//       argument sets maximumAttempts (5 by default).
//       output: ready | processed STREAM INDEX ATTEMPT | event KIND DESCRIPTION
//   keyed|unkeyed (several processes under one consumer name): see Groups.swift.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

func runDurableProcessor(
    schema: String, consumer: String, concurrency: Int, mode: String, maximumStep: Duration = .microseconds(300),
    exitOn: Int? = nil, maximumAttempts: Int = 5
) async {
    guard let configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema),
        let transport = try? DurablePostgresNotificationTransport(configuration: configuration)
    else { exit(2) }
    var options = DurableProcessingOptions(maximumAttempts: maximumAttempts, maximumConcurrency: concurrency)
    options.startsAtOldestStored = true
    let onEvent: @Sendable (NotificationTransportEvent) -> Void = { emit("event \($0.kind) \($0)") }
    let effects = "\"\(schema)\".effects"
    emit("ready")
    do {
        if mode == "batch" {
            try await transport.processTransactionally(
                DurableHandles.item, maximumBatchSize: 50, options: options, onEvent: onEvent
            ) { deliveries, connection in
                if let exitOn, let doomed = deliveries.first(where: { $0.payload.index == exitOn }) {
                    emit("exiting \(exitOn) \(doomed.attempt) \(deliveries.count)")
                    exit(3)
                }
                var bindings = PostgresBindings(capacity: 2)
                bindings.append(deliveries.map(\.payload.stream))
                bindings.append(deliveries.map(\.payload.index))
                _ = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(effects) (stream, index) SELECT * FROM unnest($1::int[], $2::int[])",
                        binds: bindings),
                    logger: Logger(label: "peer")
                ).collect()
                for delivery in deliveries {
                    emit("processed \(delivery.payload.stream) \(delivery.payload.index) \(delivery.attempt)")
                }
            }
        } else if mode == "transactional" {
            try await transport.processTransactionally(DurableHandles.item, options: options, onEvent: onEvent) {
                delivery, connection in
                let item = delivery.payload
                var bindings = PostgresBindings(capacity: 2)
                bindings.append(item.stream)
                bindings.append(item.index)
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "INSERT INTO \(effects) (stream, index) VALUES ($1, $2)", binds: bindings),
                    logger: Logger(label: "peer")
                ).collect()
                emit("processed \(item.stream) \(item.index) \(delivery.attempt)")
            }
        } else {
            try await transport.process(DurableHandles.item, options: options, onEvent: onEvent) { delivery in
                if delivery.payload.index == exitOn {
                    emit("exiting \(delivery.payload.index) \(delivery.attempt)")
                    exit(3)
                }
                try await Task.sleep(for: maximumStep * Double.random(in: 0...1))
                emit("processed \(delivery.payload.stream) \(delivery.payload.index) \(delivery.attempt)")
            }
        }
    } catch {
        emit("error \(error)")
    }
}

/// `durable-catch-up SCHEMA COUNT`: the benchmark's consumer process started behind a backlog (ProcessMode.swift's
/// held-out catch-up). Processes PeerHandles.bench from the oldest stored message with a handler that only counts,
/// under the consumer name `bench-processor`, and when COUNT handler calls have returned prints
/// `done FIRST_NS LAST_NS` (the first and the last handler call on the monotonic clock the benchmark shares) and
/// exits: the process's whole life, from its start to its last message, is what the benchmark times.
func runDurableCatchUp(schema: String, count: Int) async {
    guard let configuration = TestServer.durableConfiguration(consumer: "bench-processor", schema: schema) else {
        exit(2)
    }
    guard let transport = try? DurablePostgresNotificationTransport(configuration: configuration) else { exit(2) }
    var options = DurableProcessingOptions(maximumAttempts: 1, maximumConcurrency: 1)
    options.startsAtOldestStored = true
    let counter = CatchUpCounter(target: count)
    let task = Task {
        try await transport.process(PeerHandles.bench, options: options, onEvent: { emit("event \($0.kind) \($0)") }) {
            _ in counter.record()
        }
    }
    let (first, last) = await counter.finished()
    emit("done \(first) \(last)")
    task.cancel()
    exit(0)
}

/// Counts handler calls and wakes the waiter at the target.
final class CatchUpCounter: @unchecked Sendable {
    private let lock = NSLock()
    private let target: Int
    private var count = 0
    private var first: UInt64 = 0
    private var waiter: CheckedContinuation<(UInt64, UInt64), Never>?
    private var result: (UInt64, UInt64)?

    init(target: Int) { self.target = target }

    func record() {
        let now = monotonicNanoseconds()
        let wake: (CheckedContinuation<(UInt64, UInt64), Never>, (UInt64, UInt64))? = lock.withLock {
            count += 1
            if count == 1 { first = now }
            guard count == target else { return nil }
            result = (first, now)
            defer { waiter = nil }
            return waiter.map { ($0, (first, now)) }
        }
        if let (continuation, times) = wake { continuation.resume(returning: times) }
    }

    func finished() async -> (UInt64, UInt64) {
        await withCheckedContinuation { continuation in
            let done: (UInt64, UInt64)? = lock.withLock {
                if let result { return result }
                waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
