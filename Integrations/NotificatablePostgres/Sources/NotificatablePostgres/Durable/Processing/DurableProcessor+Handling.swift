import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// One message through the handler: decoded as a relay would (authenticator, wire reader, the handle's conversion
// chain), handed to the handler, retried with backoff and jitter, parked after the last attempt.
extension DurableProcessor {
    // MARK: - Decoding

    /// Decodes `row` into an item; a message that cannot be used keeps the reason, and is parked when its turn comes.
    /// Its index and ordinal in its partition's window are set when it is appended there (outbox messages only).
    func item(_ row: DurableOutboxRow, redriven: Bool) -> Item {
        let decoded = decode(row)
        var key: String?
        if case .success(let value) = decoded { key = partitionKey?(value.payload) }
        return Item(
            position: row.position, message: row.message, redriven: redriven, decoded: decoded, key: key,
            partition: layout.partition(key: key, id: row.position.id), index: -1, ordinal: -1)
    }

    func decode(_ row: DurableOutboxRow) -> Result<Decoded, DurableProcessingError> {
        let id = DurableDeliveryID(row.position)
        func refuse(_ kind: DurableProcessingError.Kind, _ reason: String, _ error: (any Error)? = nil)
            -> Result<Decoded, DurableProcessingError>
        {
            .failure(DurableProcessingError(kind: kind, id: id, channel: channel, reason: reason, underlying: error))
        }
        var data = Data(row.message.utf8)
        if let authenticator {
            do {
                data = try authenticator.open(data)
            } catch {
                return refuse(.unauthenticated, String(describing: error), error)
            }
        }
        let message: NotificationRelayMessage
        do {
            message = try NotificationRelayMessage(decoding: data)
        } catch {
            return refuse(.malformed, String(describing: error), error)
        }
        guard message.name == handle.name else {
            return refuse(
                .malformed, "The message is for \"\(message.name.rawValue)\", not \"\(handle.name.rawValue)\".")
        }
        // Read into a `userInfo` with room to spare (fewer `AnyHashable` comparisons per insertion), as the relay's
        // re-post is.
        let userInfo = message.payloadUserInfo ?? [:]
        do {
            let payload = try handle.payload(from: Notification(name: handle.name, object: nil, userInfo: userInfo))
            return .success(
                Decoded(
                    payload: payload, name: message.name, sender: message.sender, sequence: message.sequence,
                    headers: message.headers))
        } catch {
            return refuse(.undecodable, String(describing: error), error)
        }
    }

    // MARK: - Handling

    /// Hands `item` to the handler until it succeeds or the attempts run out (then parks it); `.abandoned` if the
    /// processor stops meanwhile. Each start of a message read from the outbox is counted in the database first, so
    /// starts that ended the process count too: past ``DurableProcessingOptions/maximumAttempts`` the message is
    /// parked without another start. Throws only when the database cannot record a count, a dead letter or a
    /// re-drive.
    func handle(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Outcome {
        let decoded: Decoded
        switch item.decoded {
        case .failure(let error):
            try await park(item, error: error, on: watch)
            return .done
        case .success(let value):
            decoded = value
        }
        let id = DurableDeliveryID(item.position)
        // Starts are counted in the database before the call only where a crash can have left the message
        // unfinished (see ``countsFirstStart(_:)``); elsewhere the first call goes without that round trip, and
        // `uncounted` says by how much the stored count is behind the calls made.
        let counted = countsFirstStart(item)
        var attempt = 1
        var uncounted = 1
        if counted {
            // A re-driven dead letter is counted on its own row (its position is passed, so no count row would
            // stay): gone, or no longer asked to be re-driven, it is done.
            guard let count = try await countStart(item, on: watch) else { return .done }
            (attempt, uncounted) = (count, 0)
        }
        var hasCountRow = counted
        if item.redriven { monitor.metrics.redrivenMessages.increment() }
        while true {
            if attempt > options.maximumAttempts {
                let failure = DurableProcessingError(
                    kind: .handlerDidNotReturn, id: id, channel: channel, attempts: attempt - 1,
                    reason: "the handler was started \(attempt - 1) times and never returned nor threw: the process "
                        + "ended during each (a crash, exit, a kill)")
                try await park(item, error: failure, on: watch)
                return .done
            }
            let acknowledgement = DurableAcknowledgement(
                schema: schema, consumer: consumer, channel: channel, id: id, redriven: item.redriven,
                logger: transport.logger)
            let delivery = DurableDelivery(
                payload: decoded.payload, id: id, attempt: attempt, channel: channel, name: decoded.name,
                sender: decoded.sender, sequence: decoded.sequence, isRedriven: item.redriven,
                acknowledgement: acknowledgement)
            let started = ContinuousClock.now
            do {
                defer { monitor.recordDuration(since: started) }
                try await transport.tracing.process(
                    headers: decoded.headers, channel: channel, consumer: consumer, id: id.description
                ) {
                    try await callWatched(id: id, attempt: attempt) { try await self.call(delivery) }
                }
                monitor.metrics.succeeded.increment()
                monitor.progressed()
                if item.redriven && !acknowledgement.attempted { try await deleteDeadLetter(item, on: watch) }
                if !item.redriven && hasCountRow { finishedCounts.add(item.position) }
                return .done
            } catch {
                if Task.isCancelled {
                    if uncounted == 0 { try? await uncountAttempt(item, on: watch) }
                    return .abandoned
                }
                if acknowledgement.attempted, try await isAcknowledged(item, on: watch) {
                    monitor.metrics.succeeded.increment()
                    monitor.progressed()
                    if !item.redriven && hasCountRow { finishedCounts.add(item.position) }
                    return .done
                }
                monitor.metrics.failed.increment()
                let last = attempt >= options.maximumAttempts
                // One line per failed attempt, at warning: the handler's error is what an operator needs to see
                // (a retry is not noise in a consumer that must process every message), and the last one says the
                // message is parked.
                let next = last ? "parking it" : "retrying"
                transport.logger.warning(
                    "handler failed on message \(id), attempt \(attempt) of \(options.maximumAttempts); \(next): \(Self.describe(error))",
                    metadata: [
                        "notificatable.channel": "\(channel)", "notificatable.id": "\(id)",
                        "notificatable.attempt": "\(attempt)", "notificatable.redriven": "\(item.redriven)",
                    ])
                if last {
                    let timedOut = (error as? DurableProcessingError)?.kind == .handlerTimedOut
                    let failure = DurableProcessingError(
                        kind: timedOut ? .handlerTimedOut : .handlerFailed, id: id, channel: channel,
                        attempts: attempt, reason: Self.describe(error), underlying: error)
                    try await park(item, error: failure, on: watch)
                    return .done
                }
                do {
                    try await Task.sleep(for: Self.retryDelay(after: attempt, options: options))
                } catch {
                    return .abandoned
                }
                guard let next = try await countStart(item, on: watch) else { return .done }
                attempt = next + uncounted
                hasCountRow = true
            }
        }
    }

    /// Whether the first start of `item` is counted in the database before the call: for re-driven dead letters,
    /// and for the messages of a session that a crash of the session before can have left unfinished.
    ///
    /// A count stored before each call is what lets a handler that ends the process (a crash, `exit`) use its
    /// attempts up; it costs a round trip per message before the call, which halved a catch-up. A crash can leave
    /// unfinished only messages near the stored position: at most ``unsavedLimit`` are handed out past it
    /// (``DurableProcessingOptions/maximumUnacknowledged``, in batches at least a full batch per concurrent call), in
    /// order without a partition key; with one, a busy key can hold its messages back while later ones start, within
    /// the read-ahead (at most one and a half pages). Every start of those in the sessions after the crash is
    /// counted, before the call; a message's first start further on in a session goes uncounted, so a handler that
    /// ends the process there is parked after at most `maximumAttempts` + 1 starts. Retries always count before they
    /// call. Batches follow the same rule (``runBatch(_:on:)``).
    ///
    /// In a consumer group the rule holds per partition (its position and window are its own; `ordinal` counts its
    /// messages), and only for a partition whose last holder ended without giving it back (a crash, a kill, a lost
    /// connection: its held mark, ``DurableOutboxSchema/markPartitionHeld``, was still there): a partition handed
    /// over, or left by a process that stopped cleanly, has no message started and unfinished past its position.
    /// Counting the first messages of all 16 partitions after every hand-over wrote a count before most handler
    /// calls of a backlog and held four processes to 1.6 times one.
    func countsFirstStart(_ item: Item) -> Bool {
        item.redriven
            || (item.countsStarts && item.ordinal < unsavedLimit + (partitionKey == nil ? 0 : 2 * pageSize))
    }

    /// Counts a start of `item` in the database; returns the count, this start included. The same statement deletes
    /// the counts of the messages finished since the last one.
    func countAttempt(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Int {
        let finished = finishedCounts.take().filter { $0 != item.position }
        var bindings = itemBindings(item)
        bindings.append(finished.map(\.txid))
        bindings.append(finished.map(\.id))
        let rows = try await transport.storageQuery(schema.countAttempt, bindings, on: watch)
        guard let row = rows.first else { throw PostgresTransportError(kind: .storageFailed) }
        return Int(try row.decode(Int32.self))
    }

    /// Counts a start of `item` before the handler runs: in the `attempts` table for a message of the outbox, on its
    /// dead-letter row for a re-driven one (nil when that letter is gone or no longer asked to be re-driven).
    func countStart(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Int? {
        guard item.redriven else { return try await countAttempt(item, on: watch) }
        let rows = try await transport.storageQuery(schema.countRedriveStart, itemBindings(item), on: watch)
        return try rows.first.map { Int(try $0.decode(Int32.self)) }
    }

    func uncountAttempt(_ item: Item, on watch: PostgresConnectionWatch) async throws {
        let sql = item.redriven ? schema.uncountRedriveStart : schema.uncountAttempt
        try await transport.storageQuery(sql, itemBindings(item), on: watch)
    }

    /// Runs the handler in a task of its own, watched: past ``DurableProcessingOptions/handlerStallThreshold`` it is
    /// reported once (`handlerStalled`), past ``DurableProcessingOptions/handlerTimeout`` its task is cancelled and
    /// this throws ``DurableProcessingError/Kind/handlerTimedOut`` at once, without waiting for a handler that
    /// ignores cancellation. Cancelling the caller cancels the handler and waits for it, as before.
    func callWatched(
        id: DurableDeliveryID, attempt: Int, _ call: @escaping @Sendable () async throws -> Void
    ) async throws {
        let stall = options.handlerStallThreshold
        let timeout = options.handlerTimeout
        if stall == nil && timeout == nil { return try await call() }
        if let stall, timeout == nil {
            // Only a stall to report (the default): the handler runs in this task, and the processor's one stall
            // watch looks at it, instead of two tasks and a timer per call.
            let key = stallWatch.begin(threshold: stall) { [self] in
                let seconds = Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18
                let error = DurableProcessingError(
                    kind: .handlerStalled, id: id, channel: channel, attempts: attempt,
                    seconds: seconds)
                report(
                    NotificationTransportEvent(kind: .handlerStalled, name: handle.name, channel: channel, error: error)
                )
            }
            defer { stallWatch.end(key) }
            return try await call()
        }
        let outcome = DurableHandlerOutcome()
        let work = Task {
            do {
                try await call()
                outcome.finish(.success(()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        let started = ContinuousClock.now
        let watchdog = Task {
            if let stall, timeout.map({ stall < $0 }) ?? true {
                guard (try? await Task.sleep(until: started + stall)) != nil, !outcome.isFinished else { return }
                let seconds = Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18
                let error = DurableProcessingError(
                    kind: .handlerStalled, id: id, channel: channel, attempts: attempt,
                    seconds: seconds)
                report(
                    NotificationTransportEvent(kind: .handlerStalled, name: handle.name, channel: channel, error: error)
                )
            }
            if let timeout {
                guard (try? await Task.sleep(until: started + timeout)) != nil else { return }
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                let error = DurableProcessingError(
                    kind: .handlerTimedOut, id: id, channel: channel, attempts: attempt,
                    reason: "the handler ran for longer than its timeout of \(timeout)", seconds: seconds)
                if outcome.finish(.failure(error)) { work.cancel() }
            }
        }
        defer { watchdog.cancel() }
        try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            work.cancel()
        }
    }

    /// Runs the handler: as it is, or inside a transaction on a connection of the processor's, acknowledged there.
    func call(_ delivery: DurableDelivery<Info>) async throws {
        switch body {
        case .plain(let handler):
            try await handler(delivery)
        case .transactional(let handler):
            try await pool.withConnection { [self] connection in
                try await delivery.acknowledgement.inTransaction(on: connection, logger: transport.logger) {
                    try await handler(delivery, $0)
                }
            }
        case .batch(_, let handler):
            try await pool.withConnection { [self] connection in
                try await delivery.acknowledgement.inTransaction(on: connection, logger: transport.logger) {
                    try await handler([delivery], $0)
                }
            }
        }
    }

    // MARK: - Dead letters

    func itemBindings(_ item: Item) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(item.position.txid)
        bindings.append(item.position.id)
        return bindings
    }

    /// Stores `item` as a dead letter with `error`, and reports `messageParked`.
    func park(_ item: Item, error: DurableProcessingError, on watch: PostgresConnectionWatch) async throws {
        var bindings = itemBindings(item)
        bindings.append(item.message)
        bindings.append(error.reason)
        bindings.append(Int32(clamping: error.attempts))
        try await transport.storageQuery(schema.park, bindings, on: watch)
        if !item.redriven { finishedCounts.add(item.position) }
        monitor.metrics.parkedMessages.increment()
        monitor.progressed()
        report(NotificationTransportEvent(kind: .messageParked, name: handle.name, channel: channel, error: error))
    }

    func deleteDeadLetter(_ item: Item, on watch: PostgresConnectionWatch) async throws {
        try await transport.storageQuery(schema.deleteDeadLetter, itemBindings(item), on: watch)
    }

    /// Whether the handler's transaction that acknowledged `item` committed.
    func isAcknowledged(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Bool {
        if item.redriven {
            // Acknowledging a re-driven dead letter deletes it.
            return try await transport.storageQuery(schema.deadLetterExists, itemBindings(item), on: watch).isEmpty
        }
        return try await !transport.storageQuery(schema.isAcknowledged, itemBindings(item), on: watch).isEmpty
    }
}

/// The messages finished since the last attempt count was written, whose counts that statement deletes.
final class DurableFinishedCounts: @unchecked Sendable {
    typealias Position = DurablePostgresNotificationTransport.Position
    private let lock = NSLock()
    private var positions: [Position] = []

    func add(_ position: Position) { lock.withLock { positions.append(position) } }

    func take() -> [Position] {
        lock.withLock {
            defer { positions = [] }
            return positions
        }
    }
}

/// The result of one call of a handler, set once: by the handler's task when it ends, or by its timeout.
final class DurableHandlerOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Void, any Error>?
    private var waiter: CheckedContinuation<Void, any Error>?

    var isFinished: Bool { lock.withLock { result != nil } }

    /// Sets the result unless it is set already; returns whether this call set it.
    @discardableResult
    func finish(_ value: Result<Void, any Error>) -> Bool {
        let (set, waiting): (Bool, CheckedContinuation<Void, any Error>?) = lock.withLock {
            guard result == nil else { return (false, nil) }
            result = value
            defer { waiter = nil }
            return (true, waiter)
        }
        waiting?.resume(with: value)
        return set
    }

    /// Waits for the result (not cancellable: the handler's cancellation ends it).
    func value() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready: Result<Void, any Error>? = lock.withLock {
                if let result { return result }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// The connections on which ``DurablePostgresNotificationTransport/processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``
/// runs its handlers' transactions: at most one per running handler, kept between messages.
final class DurableProcessingConnections: @unchecked Sendable {
    private let transport: DurablePostgresNotificationTransport
    private let lock = NSLock()
    private var idle: [PostgresConnection] = []

    init(transport: DurablePostgresNotificationTransport) {
        self.transport = transport
    }

    /// Runs `body` (a handler's transaction) on a connection: the client's pool's, or one kept here. It ends with
    /// ``PostgresTransportError/Kind/connectionLost`` as soon as the connection closes
    /// (``PostgresConnectionWatch/untilClosed(_:)``): a statement of the handler's in flight when the server ends the
    /// session may never be answered, and a processor waiting for it never reconnected after a server restart.
    func withConnection(_ body: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws {
        let logger = transport.logger
        let watched: @Sendable (PostgresConnection) async throws -> Void = { connection in
            try await PostgresConnectionWatch.watching(connection, logger: logger).untilClosed {
                try await body(connection)
            }
        }
        if case .client = transport.connectionSource {
            // The client's pool keeps the connections between messages; a handler's transaction leaves no state.
            do {
                return try await transport.connectionSource.withPooledConnection(
                    id: 0, logger: transport.logger, watched)
            } catch let failure as PostgresConnectFailure {
                throw failure.error
            }
        }
        let connection: PostgresConnection
        // A kept connection that the server closed meanwhile (a restart) is dropped: PostgresNIO never answers a
        // statement written to a closed connection, so a transaction begun on it would wait for good.
        if let reused = takeOpen() {
            connection = reused
        } else {
            connection = try await PostgresConnection.connect(
                on: transport.eventLoopGroup.next(), configuration: transport.configuration.connection,
                id: Int.random(in: 1_000_000...9_999_999), logger: transport.logger)
        }
        do {
            try await watched(connection)
            giveBack(connection)
        } catch {
            // A connection whose transaction was cut short by cancellation may be mid-statement: close it.
            if Task.isCancelled { try? await connection.close() } else { giveBack(connection) }
            throw error
        }
    }

    /// The last kept connection that is still open, closing none of the others (they are closed already).
    private func takeOpen() -> PostgresConnection? {
        lock.withLock {
            while let connection = idle.popLast() {
                if !connection.isClosed { return connection }
            }
            return nil
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard !connection.isClosed else { return }
        lock.withLock { idle.append(connection) }
    }

    func closeAll() {
        let connections = lock.withLock {
            defer { idle = [] }
            return idle
        }
        for connection in connections { connection.closeInBackground() }
    }
}

/// The handler calls of one processor that run with a stall threshold and no timeout, and the one task that reports
/// each call running past its threshold, once (`handlerStalled`): a look every quarter of the threshold (between
/// 1 ms and 1 s), so a stall is reported within 1.25 times its threshold. The task runs while calls do, and ends
/// at the first look that finds none.
final class DurableStallWatch: @unchecked Sendable {
    private struct Call {
        var deadline: ContinuousClock.Instant
        var reported = false
        var report: @Sendable () -> Void
    }

    private let lock = NSLock()
    private var calls: [Int: Call] = [:]
    private var nextKey = 0
    private var looking = false

    /// Adds a call starting now, `report` to be called once if it runs past `threshold`; returns its key for
    /// ``end(_:)``.
    func begin(threshold: Duration, report: @escaping @Sendable () -> Void) -> Int {
        let call = Call(deadline: ContinuousClock.now + threshold, report: report)
        let (key, start): (Int, Bool) = lock.withLock {
            nextKey += 1
            calls[nextKey] = call
            defer { looking = true }
            return (nextKey, !looking)
        }
        if start {
            let interval = min(max(threshold / 4, .milliseconds(1)), .seconds(1))
            Task { await self.look(every: interval) }
        }
        return key
    }

    /// Removes a call that ended.
    func end(_ key: Int) { _ = lock.withLock { calls.removeValue(forKey: key) } }

    private func look(every interval: Duration) async {
        while true {
            try? await Task.sleep(for: interval)
            let now = ContinuousClock.now
            let (stalled, done): ([@Sendable () -> Void], Bool) = lock.withLock {
                var stalled: [@Sendable () -> Void] = []
                for (key, call) in calls where !call.reported && call.deadline <= now {
                    calls[key]?.reported = true
                    stalled.append(call.report)
                }
                if calls.isEmpty { looking = false }
                return (stalled, calls.isEmpty)
            }
            for report in stalled { report() }
            if done { return }
        }
    }
}
