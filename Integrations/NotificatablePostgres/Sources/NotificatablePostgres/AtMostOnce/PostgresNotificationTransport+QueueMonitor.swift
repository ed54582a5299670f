import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Watching the server's notification queue: `pg_notification_queue_usage()` at connect and every interval.
extension PostgresNotificationTransport {
    // MARK: - Watching the server's notification queue

    /// Checks the server's notification queue now and then every
    /// ``Configuration/notificationQueueCheckInterval`` while `connection` is the current one.
    func startQueueMonitor(on connection: PostgresConnection) {
        guard let interval = configuration.notificationQueueCheckInterval else { return }
        let task = Task { [weak self] in
            var first = true
            while !Task.isCancelled {
                if !first {
                    do { try await Task.sleep(for: interval) } catch { return }
                }
                first = false
                guard let transport = self, await transport.checkQueueUsage(on: connection) else { return }
            }
        }
        let previous: Task<Void, Never>? = lock.withLock {
            guard !state.stopped, state.connection === connection else { return task }
            defer { state.monitorTask = task }
            return state.monitorTask
        }
        previous?.cancel()
    }

    /// Asks the server how full its notification queue is and reports a crossing of the threshold, up or down.
    /// False when checking should stop: the connection is gone, replaced, or the server refused the statement.
    func checkQueueUsage(on connection: PostgresConnection) async -> Bool {
        var usage: Double?
        do {
            let rows = try await connection.rows("SELECT pg_notification_queue_usage()", logger: logger)
            usage = try rows.first?.decode(Double.self)
        } catch {
            if connection.isClosed || Self.isConnectionError(error) || Task.isCancelled { return false }
            report(
                NotificationTransportEvent(
                    kind: .transportError, error: PostgresTransportError(kind: .serverRefused, wrapping: error)))
            return false
        }
        guard let usage else { return true }
        let threshold = configuration.notificationQueueUsageThreshold
        let crossing: (kind: PostgresTransportError.Kind?, current: Bool) = lock.withLock {
            guard !state.stopped, state.connection === connection else { return (nil, false) }
            let over = usage >= threshold
            guard over != state.queueOverThreshold else { return (nil, true) }
            state.queueOverThreshold = over
            return (over ? .notificationQueueFilling : .notificationQueueBelowThreshold, true)
        }
        if let kind = crossing.kind {
            report(
                NotificationTransportEvent(
                    kind: .transportError,
                    error: PostgresTransportError(kind: kind, queueUsage: usage, queueUsageThreshold: threshold)))
        }
        return crossing.current
    }
}
