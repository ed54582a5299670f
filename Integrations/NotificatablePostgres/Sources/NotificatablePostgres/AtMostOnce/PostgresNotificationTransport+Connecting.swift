import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Connecting: one connection, kept open with backoff, its listeners installed again after a reconnection.
extension PostgresNotificationTransport {
    // MARK: - Connecting

    func maintainConnection() async {
        var attempt = 0
        var wasConnected = false
        var reportedConnectFailure = false
        var connectionID = 0
        let eventLoop = self.eventLoop
        let source: PostgresConnectionSource =
            configuration.client.map { .client($0) } ?? .settings(configuration.connection, eventLoop: { eventLoop })
        while !isStopped {
            connectionID += 1
            var current: PostgresConnection?
            do {
                try await source.withSession(id: connectionID, logger: logger) { connection in
                    current = connection
                    try await install(connection)
                    _ = try await connection.rows("SELECT 1", logger: logger)  // every LISTEN is in effect
                    startQueueMonitor(on: connection)
                    if wasConnected { report(NotificationTransportEvent(kind: .reconnected)) }
                    wasConnected = true
                    reportedConnectFailure = false
                    attempt = 0
                    try await sendLoop(connection)
                }
                return  // stopped
            } catch let failure as PostgresConnectFailure {
                if !reportedConnectFailure && !wasConnected && !isStopped {
                    reportedConnectFailure = true
                    report(
                        NotificationTransportEvent(
                            kind: .transportError,
                            error: PostgresTransportError(kind: .connectFailed, wrapping: failure.error)))
                }
                if await !backoff(attempt: &attempt) { return }
            } catch {
                let (stopped, monitor) = lock.withLock {
                    if let current, state.connection === current {
                        state.connection = nil
                        state.listeners = [:]
                    }
                    defer { state.monitorTask = nil }
                    return (state.stopped, state.monitorTask)
                }
                monitor?.cancel()
                if stopped { return }
                if wasConnected {
                    let lost =
                        (error as? PostgresTransportError)
                        ?? PostgresTransportError(kind: .connectionLost, wrapping: error)
                    report(NotificationTransportEvent(kind: .connectionLost, error: lost))
                }
                if await !backoff(attempt: &attempt) { return }
            }
        }
    }

    /// Makes `connection` current and listens on every channel.
    func install(_ connection: PostgresConnection) async throws {
        connection.closeFuture.whenComplete { [weak self] _ in self?.connectionDidClose(connection) }
        let stopped = lock.withLock {
            guard !state.stopped else { return true }
            state.connection = connection
            state.connectionClosed = connection.isClosed
            state.listeners = [:]
            for serverChannel in state.channels.keys {
                state.listeners[serverChannel] = addListener(on: connection, serverChannel: serverChannel)
            }
            return false
        }
        if stopped { throw CancellationError() }
    }

    func connectionDidClose(_ connection: PostgresConnection) {
        let wakeUp: CheckedContinuation<Void, Never>? = lock.withLock {
            guard state.connection === connection else { return nil }
            state.connectionClosed = true
            defer { state.senderWakeUp = nil }
            return state.senderWakeUp
        }
        wakeUp?.resume()
    }

    /// Waits before the next attempt; false if the transport stopped meanwhile.
    func backoff(attempt: inout Int) async -> Bool {
        let seconds = { (duration: Duration) in
            Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        }
        let delay = min(
            seconds(configuration.initialReconnectDelay) * Double(1 << min(attempt, 16)),
            seconds(configuration.maximumReconnectDelay))
        attempt += 1
        // Up to 25 % of jitter, so that many processes don't retry in step.
        let nanoseconds = delay * Double.random(in: 1...1.25) * 1e9
        do { try await Task.sleep(nanoseconds: UInt64(nanoseconds)) } catch { return false }
        return !isStopped
    }

    var isStopped: Bool { lock.withLock { state.stopped } }
}
