import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Connecting: one connection, kept open with backoff, its listeners installed again after a reconnection.
extension PostgresNotificationTransport {
    // MARK: - Connecting

    /// Keeps the transport's one connection (role `sender`) through the shared engine: listens on every channel,
    /// checks that the `LISTEN`s are in effect, starts the queue monitor, and sends until the connection fails.
    func maintainConnection() async {
        await engine.keepConnected(
            role: "sender", isStopped: { [self] in isStopped }, report: { [self] in report($0) },
            clientStopped: { [weak self] in self?.stop() }
        ) { connection, established in
            do {
                try await install(connection)
                _ = try await connection.rows("SELECT 1", logger: logger)  // every LISTEN is in effect
                startQueueMonitor(on: connection)
                established()
                try await sendLoop(connection)
            } catch {
                let monitor: Task<Void, Never>? = lock.withLock {
                    if state.connection === connection {
                        state.connection = nil
                        state.listeners = [:]
                    }
                    defer { state.monitorTask = nil }
                    return state.monitorTask
                }
                monitor?.cancel()
                throw error
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

    var isStopped: Bool { lock.withLock { state.stopped } }
}
