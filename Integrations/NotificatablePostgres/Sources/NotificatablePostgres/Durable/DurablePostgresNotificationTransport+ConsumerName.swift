import Foundation
import NotificatableRelay
import PostgresNIO

// One receiving process per consumer name at a time. The reader takes a session-level advisory lock on the consumer
// name before it listens or reads; a second process of the same name waits for that lock as a standby (it still
// publishes), and takes over, from the stored positions, when the first one's session ends: a stop, a crash, a
// rolling deploy. Two readers of one name would otherwise share one position and split or repeat messages.

/// A server session: its backend pid and its start time (pids are reused; the pair is not).
struct DurableReaderSession: Equatable, Sendable {
    var pid: Int32
    var start: String
}

extension DurablePostgresNotificationTransport {
    /// Takes the consumer name's lock on the reader's connection, waiting as a standby while another session holds
    /// it; false if the transport stopped meanwhile. A session left behind by a reader connection of this transport
    /// that was lost on this side only (the server has not noticed yet, and would hold the lock until it does) is
    /// ended rather than waited for.
    func holdConsumerName(on connection: PostgresConnectionWatch) async throws -> Bool {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(schema.consumerLockName(configuration.consumer))
        var waited = false
        while !isStopped {
            let taken = try await storageQuery(schema.tryConsumerLock, bindings, on: connection)
            if try taken.first?.decode(Bool.self) == true { break }
            let holders = try await storageQuery(schema.consumerLockHolder, bindings, on: connection)
            guard let row = holders.first else { continue }  // released in between: try again
            let (pid, start) = try row.decode((Int32, String).self)
            let holder = DurableReaderSession(pid: pid, start: start)
            if lock.withLock({ state.readerSession }) == holder {
                var end = PostgresBindings(capacity: 2)
                end.append(holder.pid)
                end.append(holder.start)
                try await storageQuery(schema.endSession, end, on: connection)
                logger.notice(
                    "ended this transport's earlier reader session, which still held the consumer name",
                    metadata: ["consumer": "\(configuration.consumer)", "pid": "\(holder.pid)"])
                // The session ends when its backend notices; a standby of another process may take the name first.
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            waited = true
            let barriers: [DurableBarrier] = lock.withLock {
                state.standby = true
                defer { state.readerBarriers = [] }
                return state.readerBarriers
            }
            for barrier in barriers { barrier.resume() }
            report(
                NotificationTransportEvent(
                    kind: .consumerStandby,
                    error: PostgresTransportError(kind: .consumerInUse, count: Int(pid), backendPID: Int(pid))))
            try await storageQuery(schema.waitForConsumerLock, bindings, on: connection)
            break
        }
        if isStopped { return false }
        let session = try await storageQuery(schema.currentSession, on: connection)
        if let row = session.first {
            let (pid, start) = try row.decode((Int32, String).self)
            lock.withLock { state.readerSession = DurableReaderSession(pid: pid, start: start) }
        }
        lock.withLock { state.standby = false }
        if waited {
            let error = PostgresTransportError(kind: .consumerTakenOver)
            report(NotificationTransportEvent(kind: .consumerTakenOver, error: error))
        }
        return true
    }

    /// Keeps the positions in memory, except those that another process of this consumer name moved (or that were
    /// deleted) since this one last loaded or saved them: there the table is right.
    func reconcilePositions(on connection: PostgresConnectionWatch) async throws {
        let known = lock.withLock {
            Array(state.channels.compactMapValues { $0 }.keys) + Array(state.parkedPositions.keys)
        }
        guard !known.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(configuration.consumer)
        bindings.append(known)
        let rows = try await storageQuery(schema.readPositions, bindings, on: connection)
        var stored: [String: Position] = [:]
        for row in rows {
            let (channel, txid, id) = try row.decode((String, Int64, Int64).self)
            stored[channel] = Position(txid: txid, id: id)
        }
        lock.withLock {
            for channel in known where stored[channel] != state.savedPositions[channel] {
                if state.channels[channel] != nil {
                    state.channels[channel] = .some(stored[channel])  // nil: loaded (or created) again
                } else {
                    state.parkedPositions[channel] = nil  // the next listen loads it
                }
                state.savedPositions[channel] = stored[channel]
                state.unsavedChannels.remove(channel)
            }
        }
    }

    /// Test hook: the reader's connection is given up without being closed, as when the network fails and the server
    /// has not noticed; its session keeps the consumer name's lock until the transport ends it.
    func abandonReaderConnection() {
        lock.withLock { state.abandonReaderConnection = true }
        signalReader()
    }
}
