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
    func nextWrite(on connection: DurableConnectionWatch) async -> WriterStep {
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
        orphan?.resume()
    }

    func writeLoop(_ connection: DurableConnectionWatch) async throws {
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
                    barrier.resume()
                case .messages(let batch):
                    try await insert(batch, on: connection)
                }
            } catch {
                requeue(step)
                throw error
            }
        }
    }

    func insert(_ batch: [(channel: String, text: String)], on connection: DurableConnectionWatch) async throws {
        let statement = DurableInsertBatchStatement(
            channels: batch.map(\.channel), messages: batch.map(\.text), wakeChannel: schema.wakeChannel,
            wakeToken: wakeToken)
        lock.withLock { state.insertsStarted += 1 }
        defer { lock.withLock { state.insertsFinished += 1 } }
        do {
            _ = try await connection.execute(statement)
            metrics.count(NotificationMetrics.sent, Dictionary(batch.map { ($0.channel, 1) }, uniquingKeysWith: +))
        } catch {
            if connection.connection.isClosed || Self.isConnectionError(error) { throw error }
            // Refused by the server: store each message alone to find the culprit, report it, keep the others.
            guard batch.count > 1 else {
                report(
                    NotificationTransportEvent(
                        kind: .publishFailed, channel: batch[0].channel,
                        error: PostgresTransportError(kind: .serverRefused, wrapping: error)))
                return
            }
            for message in batch { try await insert([message], on: connection) }
        }
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
