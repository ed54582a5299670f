import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Sending: posts queued, one message sent alone when the sender is idle, batches of `NOTIFY` otherwise.
extension PostgresNotificationTransport {
    // MARK: - Sending

    func enqueue(_ item: Outgoing, force: Bool = false) -> (Bool, CheckedContinuation<Void, Never>?) {
        lock.withLock {
            guard !state.stopped else { return (false, nil) }
            guard force || state.outgoing.messageCount < configuration.maximumQueuedMessages else {
                return (false, nil)
            }
            state.outgoing.append(item)
            return (true, takeSenderWakeUpIfIdle())
        }
    }

    /// What `publish` does with a message.
    enum PublishStep {
        /// Queued; resume the sender task with the continuation, if any.
        case queued(CheckedContinuation<Void, Never>?)
        /// The connection is idle and nothing waits: send the message on it now (`state.sending` is set).
        case sendNow(PostgresConnection)
        /// The queue is full, or the transport stopped.
        case refused
    }

    func enqueueOrTakeConnection(_ message: (serverChannel: String, payload: String)) -> PublishStep {
        lock.withLock {
            guard !state.stopped, state.outgoing.messageCount < configuration.maximumQueuedMessages else {
                return .refused
            }
            if !state.sending, state.outgoing.isEmpty, let connection = state.connection, !state.connectionClosed {
                state.sending = true
                return .sendNow(connection)
            }
            state.outgoing.append(.message(serverChannel: message.serverChannel, payload: message.payload))
            return .queued(takeSenderWakeUpIfIdle())
        }
    }

    /// The sender task's continuation, if it waits and has something to do now. Called with the lock held.
    func takeSenderWakeUpIfIdle() -> CheckedContinuation<Void, Never>? {
        guard state.stopped || state.connectionClosed || (!state.sending && !state.outgoing.isEmpty) else {
            return nil
        }
        defer { state.senderWakeUp = nil }
        return state.senderWakeUp
    }

    /// Sends one message from the caller's thread: PostgresNIO writes the statement to the connection now, and it
    /// completes on the event loop, which wakes the sender task if messages queued up meanwhile.
    func sendAlone(_ message: (serverChannel: String, payload: String), on connection: PostgresConnection) {
        let watch = PostgresConnectionWatch.watching(connection, logger: logger)
        watch.query(Self.notifyQuery([message])) { [weak self] result in
            guard let self else { return }
            if case .failure(let error) = result {
                if connection.isClosed || Self.isConnectionError(error) {
                    self.report(
                        self.publishFailed(
                            message, PostgresTransportError(kind: .connectionLostWhileSending, wrapping: error)))
                    // The sender task finds out through the connection's close, and reconnects.
                    connection.closeInBackground()
                } else {
                    self.report(
                        self.publishFailed(message, PostgresTransportError(kind: .serverRefused, wrapping: error)))
                }
            }
            let wakeUp = self.lock.withLock {
                self.state.sending = false
                return self.takeSenderWakeUpIfIdle()
            }
            wakeUp?.resume()
        }
    }

    /// The next batch to send, waiting while the queue is empty or a message sent by `publish` is on its way. A batch
    /// or barrier returned has set `state.sending`: call `finishedSending()` after it.
    func next() async -> SenderStep {
        while true {
            let next: SenderStep? = lock.withLock {
                if state.stopped { return .stopped }
                if state.connectionClosed { return .connectionClosed }
                if state.sending { return nil }
                let batch = state.outgoing.takeBatch(maximumCount: configuration.maximumBatchSize)
                if batch != nil { state.sending = true }
                return batch
            }
            if let next { return next }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if state.stopped || state.connectionClosed || (!state.sending && !state.outgoing.isEmpty) {
                        return true
                    }
                    state.senderWakeUp = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    func finishedSending() {
        lock.withLock { state.sending = false }
    }

    /// Sends until the connection closes (throws) or the transport stops (returns).
    func sendLoop(_ connection: PostgresConnection) async throws {
        while true {
            switch await next() {
            case .stopped:
                return
            case .connectionClosed:
                throw PostgresTransportError(kind: .connectionLost)
            case .barrier(let barrier):
                defer { finishedSending() }
                do {
                    _ = try await connection.rows("SELECT 1", logger: logger)
                } catch {
                    lock.withLock { state.outgoing.prepend(.barrier(barrier)) }
                    throw error
                }
                barrier.resume()
            case .messages(let batch):
                defer { finishedSending() }
                try await send(batch, on: connection)
            }
        }
    }

    func send(_ batch: [(serverChannel: String, payload: String)], on connection: PostgresConnection)
        async throws
    {
        do {
            // Read the result to its end: PostgresNIO returns the rows once their description arrives, and an error
            // of the statement itself (such as "payload string too long") only surfaces while reading them.
            _ = try await connection.rows(Self.notifyQuery(batch), logger: logger)
        } catch {
            if connection.isClosed || Self.isConnectionError(error) {
                for message in batch {
                    report(
                        publishFailed(
                            message, PostgresTransportError(kind: .connectionLostWhileSending, wrapping: error)))
                }
                throw error
            }
            // The server refused the statement, so none of it was sent; send each message alone to find the culprit.
            guard batch.count > 1 else {
                report(publishFailed(batch[0], PostgresTransportError(kind: .serverRefused, wrapping: error)))
                return
            }
            for message in batch {
                try await send([message], on: connection)
            }
        }
    }

    func publishFailed(_ message: (serverChannel: String, payload: String), _ error: PostgresTransportError)
        -> NotificationTransportEvent
    {
        let channel = lock.withLock { state.channels[message.serverChannel] } ?? message.serverChannel
        return NotificationTransportEvent(kind: .publishFailed, channel: channel, error: error)
    }

    /// `SELECT pg_notify($1, $2)` for one message; for several, one statement over two bound arrays, which
    /// PostgreSQL evaluates row by row, in order, in one transaction.
    static func notifyQuery(_ batch: [(serverChannel: String, payload: String)]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 2)
        if batch.count == 1 {
            bindings.append(batch[0].serverChannel)
            bindings.append(batch[0].payload)
            return PostgresQuery(unsafeSQL: "SELECT pg_notify($1, $2)", binds: bindings)
        }
        bindings.append(batch.map(\.serverChannel))
        bindings.append(batch.map(\.payload))
        return PostgresQuery(
            unsafeSQL:
                "SELECT count(pg_notify(c, p)) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS m(c, p, i)",
            binds: bindings)
    }

    /// Whether `error` means the connection is gone, rather than the statement refused: anything but a server
    /// error, and the server's own "operator intervention" (57, e.g. 57P01 at shutdown) and "connection
    /// exception" (08) classes.
    static func isConnectionError(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        guard error.code == .server else { return true }
        let sqlState = error.serverInfo?[.sqlState] ?? ""
        return sqlState.hasPrefix("57") || sqlState.hasPrefix("08")
    }
}
