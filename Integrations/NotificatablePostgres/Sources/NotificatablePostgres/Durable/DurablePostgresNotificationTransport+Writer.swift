import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// The writer: queued messages inserted into the outbox in batches, one `NOTIFY` per batch to wake the readers.
extension DurablePostgresNotificationTransport {
    // MARK: - Writing

    func enqueue(_ item: Outgoing, force: Bool = false) -> (Bool, CheckedContinuation<Void, Never>?) {
        lock.withLock {
            guard !state.stopped else { return (false, nil) }
            if case .message = item {
                guard force || state.queuedMessages < configuration.maximumQueuedMessages else { return (false, nil) }
                state.queuedMessages += 1
            }
            state.outgoing.append(item)
            defer { state.writerWakeUp = nil }
            return (true, state.writerWakeUp)
        }
    }

    /// What the writer does next.
    enum WriterStep {
        case messages([(channel: String, text: String)])
        case barrier(DurableBarrier)
        case stopped
        case connectionClosed
    }

    /// Takes a barrier alone, or up to `maximumBatchSize` messages, waiting while the queue is empty and
    /// `connection` open.
    func nextWrite(on connection: PostgresConnectionWatch) async -> WriterStep {
        while true {
            let step: WriterStep? = lock.withLock {
                if state.stopped { return .stopped }
                if connection.connection.isClosed { return .connectionClosed }
                guard state.outgoingHead < state.outgoing.count else { return nil }
                if case .barrier(let barrier) = state.outgoing[state.outgoingHead] {
                    advanceOutgoing(by: 1)
                    return .barrier(barrier)
                }
                var batch: [(channel: String, text: String)] = []
                var index = state.outgoingHead
                while index < state.outgoing.count, batch.count < configuration.maximumBatchSize,
                    case .message(let channel, let text) = state.outgoing[index]
                {
                    batch.append((channel, text))
                    index += 1
                }
                state.queuedMessages -= batch.count
                advanceOutgoing(by: batch.count)
                return .messages(batch)
            }
            if let step { return step }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if state.stopped || state.outgoingHead < state.outgoing.count { return true }
                    if connection.connection.isClosed { return true }
                    state.writerWakeUp = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Called with the lock held.
    func advanceOutgoing(by count: Int) {
        state.outgoingHead += count
        if state.outgoingHead == state.outgoing.count {
            state.outgoing.removeAll(keepingCapacity: true)
            state.outgoingHead = 0
        } else if state.outgoingHead > 4096 && state.outgoingHead * 2 > state.outgoing.count {
            state.outgoing.removeFirst(state.outgoingHead)
            state.outgoingHead = 0
        }
    }

    /// Puts a step that could not be completed back at the front of the queue, to be retried on the next
    /// connection.
    func requeue(_ step: WriterStep) {
        let orphan: DurableBarrier? = lock.withLock {
            guard !state.stopped else {
                if case .barrier(let barrier) = step { return barrier }
                return nil
            }
            var items: [Outgoing]
            switch step {
            case .messages(let batch):
                items = batch.map { .message(channel: $0.channel, text: $0.text) }
                state.queuedMessages += batch.count
            case .barrier(let barrier): items = [.barrier(barrier)]
            case .stopped, .connectionClosed: items = []
            }
            items.append(contentsOf: state.outgoing[state.outgoingHead...])
            state.outgoing = items
            state.outgoingHead = 0
            return nil
        }
        orphan?.interrupt()
    }

    func writeLoop(_ connection: PostgresConnectionWatch) async throws {
        while true {
            let step = await nextWrite(on: connection)
            do {
                switch step {
                case .stopped:
                    return
                case .connectionClosed:
                    throw PostgresTransportError(kind: .connectionLost)
                case .barrier(let barrier):
                    _ = try await connection.run("SELECT 1")
                    barrier.resume(with: takeWriterRefusals())
                case .messages(let batch):
                    try await store(batch, on: connection)
                    storedAgain()
                }
            } catch let refusal as DurableInsertRefusal {
                // Refused for a reason that can pass: what is left stays first in the queue, tried again later.
                requeue(.messages(refusal.remaining))
                guard await waitBeforeRetrying(after: refusal.error) else { return }
            } catch let interrupted as DurableInsertInterruption {
                requeue(.messages(interrupted.remaining))
                throw interrupted.error
            } catch {
                requeue(step)
                throw error
            }
        }
    }

    /// Stores `batch` in order. A refusal that is the messages' own fault (see ``isMessageFault(_:)``) makes the
    /// writer store them one by one, to drop only the faulty ones (each reported with `publishFailed`); any other
    /// refusal is thrown as a ``DurableInsertRefusal``, a lost connection as a ``DurableInsertInterruption``, with
    /// the messages not stored yet.
    func store(_ batch: [(channel: String, text: String)], on connection: PostgresConnectionWatch) async throws {
        do {
            try await insert(batch, on: connection)
            return
        } catch {
            guard Self.isMessageFault(error) else { throw classify(error, remaining: batch, on: connection) }
            if batch.count == 1 {
                drop(batch[0], refusedWith: error)
                return
            }
        }
        for (index, message) in batch.enumerated() {
            do {
                try await insert([message], on: connection)
            } catch {
                guard Self.isMessageFault(error) else {
                    throw classify(error, remaining: Array(batch[index...]), on: connection)
                }
                drop(message, refusedWith: error)
            }
        }
    }

    /// Drops a message the server refused because of itself: counted for the next flush, reported with
    /// `publishFailed`.
    func drop(_ message: (channel: String, text: String), refusedWith error: any Error) {
        let refusal = PostgresTransportError(kind: .serverRefused, wrapping: error)
        lock.withLock {
            state.writerRefusals += 1
            state.lastWriterRefusal = refusal
        }
        report(NotificationTransportEvent(kind: .publishFailed, channel: message.channel, error: refusal))
    }

    /// A lost connection, or a refusal to retry, carrying the messages not stored yet.
    func classify(
        _ error: any Error, remaining: [(channel: String, text: String)], on connection: PostgresConnectionWatch
    ) -> any Error {
        if connection.connection.isClosed || Self.isConnectionError(error) {
            return DurableInsertInterruption(error: error, remaining: remaining)
        }
        return DurableInsertRefusal(error: error, remaining: remaining)
    }

    /// Whether the server refused an insert because of the message itself, so that no retry can store it: a data
    /// exception (SQLSTATE class 22, such as a value out of range or an invalid text), an integrity constraint
    /// (class 23, a check the table was given) or a program limit (class 54, such as a row too large). Every other
    /// refusal can pass: read-only after a failover (25006), a lock timeout (55P03), a full disk (53100), too many
    /// connections (53300), a serialization failure or deadlock (class 40), a missing table or privilege (class 42,
    /// fixed by a migration or a grant); the messages stay queued and are tried again.
    static func isMessageFault(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        let sqlState = error.serverInfo?[.sqlState] ?? ""
        return sqlState.hasPrefix("22") || sqlState.hasPrefix("23") || sqlState.hasPrefix("54")
    }

    /// After a refusal that can pass: reports it (once, until an insert succeeds again) with a `transportError`
    /// event whose error has kind ``PostgresTransportError/Kind/insertRetrying``, then waits, with the reconnection
    /// backoff; false once stopped.
    func waitBeforeRetrying(after error: any Error) async -> Bool {
        let (first, attempt): (Bool, Int) = lock.withLock {
            defer { state.writerRetries += 1 }
            return (state.writerRetries == 0, state.writerRetries)
        }
        if first {
            report(
                NotificationTransportEvent(
                    kind: .transportError, error: PostgresTransportError(kind: .insertRetrying, wrapping: error)))
        }
        var delayAttempt = attempt
        return await engine.backoff.wait(failures: &delayAttempt, isStopped: { isStopped })
    }

    /// An insert succeeded: a run of refusals, if any, is over.
    func storedAgain() {
        let retried = lock.withLock {
            defer { state.writerRetries = 0 }
            return state.writerRetries
        }
        if retried > 0 {
            logger.notice("stored again after refusals", metadata: ["attempts": "\(retried)"])
        }
    }

    /// The messages dropped since the last flush barrier the writer passed, for that barrier. Called without the lock.
    func takeWriterRefusals() -> (count: Int, lastError: PostgresTransportError?) {
        lock.withLock {
            defer {
                state.writerRefusals = 0
                state.lastWriterRefusal = nil
            }
            return (state.writerRefusals, state.lastWriterRefusal)
        }
    }

    func insert(_ batch: [(channel: String, text: String)], on connection: PostgresConnectionWatch) async throws {
        let statement = DurableInsertBatchStatement(
            channels: batch.map(\.channel), messages: batch.map(\.text), wakeChannel: schema.wakeChannel,
            wakeToken: wakeToken)
        lock.withLock { state.insertsStarted += 1 }
        defer { lock.withLock { state.insertsFinished += 1 } }
        try await connection.perform(statement)
        metrics.count(NotificationMetrics.sent, Dictionary(batch.map { ($0.channel, 1) }, uniquingKeysWith: +))
    }

    /// Wakes the writer while it waits for work: its connection closed.
    func wakeWriter() {
        let wakeUp: CheckedContinuation<Void, Never>? = lock.withLock {
            defer { state.writerWakeUp = nil }
            return state.writerWakeUp
        }
        wakeUp?.resume()
    }
}

/// The server refused an insert for a reason that can pass; `remaining` were not stored.
struct DurableInsertRefusal: Error {
    var error: any Error
    var remaining: [(channel: String, text: String)]
}

/// The connection was lost during an insert; `remaining` were not stored (the first of them perhaps was: its copy is
/// dropped by the receiving relays, as it carries the same sender and sequence number).
struct DurableInsertInterruption: Error {
    var error: any Error
    var remaining: [(channel: String, text: String)]
}
