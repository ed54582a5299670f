import Foundation
import PostgresNIO

// Batches (`processTransactionally(_:maximumBatchSize:…)`): the items of a batch in order, runs of them in one
// transaction each, split in halves when a run fails; their starts, where a crash can have left them unfinished,
// counted and taken back in one statement each.
extension DurableProcessor {
    /// How many started messages a session leaves past its stored position at most:
    /// ``DurableProcessingOptions/maximumUnacknowledged``, and in batches at least a full batch per concurrent call.
    /// The session's loop (``session(_:connected:)``) computes the same bound; a crash can leave unfinished only
    /// messages within it (``countsFirstStart(_:)``).
    var unsavedLimit: Int {
        guard case .batch(let maximum, _) = body else { return options.maximumUnacknowledged }
        return max(options.maximumUnacknowledged, maximum * options.maximumConcurrency)
    }

    /// Handles the items of a batch in order: the messages read from the outbox and decoded, in runs, each run in one
    /// transaction (``runBatch(_:on:)``); a re-driven dead letter or a message that cannot be used alone, at its
    /// place. Returns the outcome of each item, in order.
    func handleBatch(_ items: [Item], on watch: PostgresConnectionWatch) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        var run: [Item] = []
        for item in items {
            if case .success = item.decoded, !item.redriven {
                run.append(item)
                continue
            }
            outcomes += try await runBatch(run, on: watch)
            run = []
            outcomes.append(Task.isCancelled ? .abandoned : try await handle(item, on: watch))
        }
        outcomes += try await runBatch(run, on: watch)
        return outcomes
    }

    /// Runs `items` (decoded, read from the outbox) through the handler in one transaction, acknowledged in it.
    ///
    /// Where a crash of an earlier session can have left one of the items unfinished (within ``unsavedLimit`` of
    /// the stored position: ``countsFirstStart(_:)``), each item's start is counted first, so that a process ending
    /// during the call is remembered: an item started before and not finished is handled alone, at its place, with
    /// the retry and dead-letter rules of one message. Further on, a batch goes without that round trip, as a single
    /// message's first start does: a handler that ends the process there leaves its batch within the limit of the
    /// next session, which counts it. A batch whose handler throws is rolled back, its starts taken back (the others
    /// did not fail), and split in two halves run in order, until the failing message is alone, retried and parked
    /// as one message is. One item goes the single-message way at once.
    func runBatch(_ items: [Item], on watch: PostgresConnectionWatch) async throws -> [Outcome] {
        if items.isEmpty { return [] }
        if Task.isCancelled { return items.map { _ in .abandoned } }
        if items.count == 1 { return [try await handle(items[0], on: watch)] }
        let counted = items.contains { countsFirstStart($0) }
        if counted, let suspect = try await countAttempts(items, on: watch).firstIndex(where: { $0 > 1 }) {
            try await uncountAttempts(items, on: watch)
            var outcomes = try await runBatch(Array(items[..<suspect]), on: watch)
            outcomes.append(Task.isCancelled ? .abandoned : try await handle(items[suspect], on: watch))
            return outcomes + (try await runBatch(Array(items[(suspect + 1)...]), on: watch))
        }
        let deliveries = items.compactMap { item -> DurableDelivery<Info>? in
            guard case .success(let decoded) = item.decoded else { return nil }
            let id = DurableDeliveryID(item.position)
            return DurableDelivery(
                payload: decoded.payload, id: id, attempt: 1, channel: channel, name: decoded.name,
                sender: decoded.sender, sequence: decoded.sequence, isRedriven: false,
                acknowledgement: DurableAcknowledgement(
                    schema: schema, consumer: consumer, channel: channel, id: id, redriven: false,
                    logger: transport.logger))
        }
        guard let first = deliveries.first else { return items.map { _ in .done } }
        let headers = items.map { item -> [String: String] in
            guard case .success(let decoded) = item.decoded else { return [:] }
            return decoded.headers
        }
        let started = ContinuousClock.now
        do {
            defer { monitor.recordDuration(since: started) }
            try await transport.tracing.processBatch(headers: headers, channel: channel, consumer: consumer) {
                try await callWatched(id: first.id, attempt: 1) { try await self.callBatch(deliveries) }
            }
            return finished(items, counted: counted)
        } catch {
            if Task.isCancelled {
                if counted { try? await uncountAttempts(items, on: watch) }
                return items.map { _ in .abandoned }
            }
            // A commit that failed on the way back may have been stored after all.
            if first.acknowledgement.attempted, try await isAcknowledged(items[0], on: watch) {
                return finished(items, counted: counted)
            }
            if counted {
                try await uncountAttempts(items, on: watch)
            } else {
                // A statement on the session's connection all the same: when the server is gone (the handler's
                // connection failed with it), the session ends here and reconnects, instead of splitting the batch
                // down to a message whose retry finds the session's connection gone.
                try await transport.storageQuery("SELECT 1", on: watch)
            }
            // One failed call of the handler; the messages are not charged an attempt (they are tried again).
            monitor.metrics.failed.increment()
            transport.logger.warning(
                "handler failed on a batch of \(items.count) messages from \(first.id); splitting it: \(Self.describe(error))",
                metadata: ["notificatable.channel": "\(channel)", "notificatable.id": "\(first.id)"])
            let middle = items.count / 2
            let head = try await runBatch(Array(items[..<middle]), on: watch)
            return head + (try await runBatch(Array(items[middle...]), on: watch))
        }
    }

    /// Records `items`, whose batch committed, as processed: counted in the metrics, their attempt counts (when
    /// `counted`, their starts were) to be deleted, done.
    private func finished(_ items: [Item], counted: Bool) -> [Outcome] {
        for item in items {
            monitor.metrics.succeeded.increment()
            if counted { finishedCounts.add(item.position) }
        }
        monitor.progressed()
        return items.map { _ in .done }
    }

    /// Calls the batch handler with `deliveries` in one transaction on a connection of the processor's, and
    /// acknowledges in it each delivery the handler did not acknowledge itself.
    func callBatch(_ deliveries: [DurableDelivery<Info>]) async throws {
        guard case .batch(_, let handler) = body else { return }
        try await pool.withConnection { [self] connection in
            try await connection.withTransaction(logger: transport.logger) { connection in
                let before = deliveries.map(\.acknowledgement.acknowledgeCalls)
                try await handler(deliveries, connection)
                let left = zip(deliveries, before).filter { $0.0.acknowledgement.acknowledgeCalls == $0.1 }.map(\.0)
                if left.isEmpty { return }
                for delivery in left { delivery.acknowledgement.noteAttempted() }
                var bindings = PostgresBindings(capacity: 4)
                bindings.append(consumer)
                bindings.append(channel)
                bindings.append(left.map(\.id.transactionID))
                bindings.append(left.map(\.id.rowID))
                let rows = try await connection.rows(
                    PostgresQuery(unsafeSQL: schema.acknowledgeAll, binds: bindings), logger: transport.logger)
                if rows.count != left.count {
                    throw DurableProcessingError(kind: .alreadyAcknowledged, id: left.first?.id, channel: channel)
                }
            }
        }
    }

    /// The wait before attempt `attempt + 1`: the initial delay doubled per attempt, capped, times a random factor
    /// between 0.5 and 1 (jitter, so that many consumers failing together do not retry together). At most about
    /// 285 years, so that a huge configured delay cannot overflow the conversion to nanoseconds.
    static func retryDelay(after attempt: Int, options: DurableProcessingOptions) -> Duration {
        let initial = DurablePostgresNotificationTransport.seconds(options.initialRetryDelay)
        let maximum = DurablePostgresNotificationTransport.seconds(options.maximumRetryDelay)
        let delay = min(initial * Double(1 << min(max(attempt - 1, 0), 30)), maximum) * Double.random(in: 0.5...1)
        return .nanoseconds(Int64(min(max(0, delay), 9e9) * 1e9))
    }

    /// The handler's own error when PostgresNIO wrapped it in a transaction error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            if let inner = error.closureError { return String(describing: inner) }
            if let inner = error.commitError { return "commit failed: \(String(reflecting: inner))" }
        }
        return String(describing: error)
    }

    /// Counts a start of each of `items` (read from the outbox) in one statement; returns each one's count, this
    /// start included, in order.
    func countAttempts(_ items: [Item], on watch: PostgresConnectionWatch) async throws -> [Int] {
        let positions = Set(items.map(\.position))
        let finished = finishedCounts.take().filter { !positions.contains($0) }
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(items.map(\.position.txid))
        bindings.append(items.map(\.position.id))
        bindings.append(finished.map(\.txid))
        bindings.append(finished.map(\.id))
        var counts: [Position: Int] = [:]
        for row in try await transport.storageQuery(schema.countAttempts, bindings, on: watch) {
            let (txid, id, count) = try row.decode((Int64, Int64, Int32).self)
            counts[Position(txid: txid, id: id)] = Int(count)
        }
        return try items.map {
            guard let count = counts[$0.position] else { throw PostgresTransportError(kind: .storageFailed) }
            return count
        }
    }

    /// Takes back a start of each of `items` in one statement.
    func uncountAttempts(_ items: [Item], on watch: PostgresConnectionWatch) async throws {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(items.map(\.position.txid))
        bindings.append(items.map(\.position.id))
        try await transport.storageQuery(schema.uncountAttempts, bindings, on: watch)
    }
}
