import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Connecting: one connection per role, the schema, backoff, and the events of a lost and regained connection.
extension DurablePostgresNotificationTransport {
    // MARK: - Connecting

    /// Connects (or leases a connection from the configuration's client), creates the schema if asked, runs `body`
    /// until it throws or returns (stopped), and reconnects with backoff. Reports `connectionLost` and `reconnected`.
    func keepConnected(
        role: String,
        _ body: @escaping @Sendable (DurablePostgresNotificationTransport, PostgresConnectionWatch) async throws -> Void
    ) async {
        var attempt = 0
        var wasConnected = false
        var reportedFailure = false
        var connectionID = role == "writer" ? 1 : 2
        let source = connectionSource
        while !isStopped {
            connectionID += 2
            do {
                try await source.withSession(
                    id: connectionID, logger: logger,
                    leavesOpen: { connection in
                        lock.withLock {
                            guard role == "reader", state.abandonReaderConnection else { return false }
                            state.abandonReaderConnection = false
                            state.abandonedConnections.append(connection)
                            return true
                        }
                    }
                ) { connection in
                    let key = ObjectIdentifier(connection)
                    let stopped = lock.withLock {
                        if !state.stopped { state.connections[key] = connection }
                        return state.stopped
                    }
                    if stopped { return }
                    defer { lock.withLock { _ = state.connections.removeValue(forKey: key) } }
                    // Both roles notice a closed connection at once, and reconnect then: a writer that noticed only
                    // when it next wrote would report the loss, and reconnect, during a graceful stop's flush.
                    connection.closeFuture.whenComplete { [weak self] _ in
                        if role == "reader" { self?.signalReader() } else { self?.wakeWriter() }
                    }
                    let watch = PostgresConnectionWatch.watching(connection, logger: logger)
                    _ = try await storage { try await watch.run(schema.setSearchPath) }
                    try await ensureSchema(on: watch)
                    if wasConnected { report(NotificationTransportEvent(kind: .reconnected)) }
                    wasConnected = true
                    reportedFailure = false
                    attempt = 0
                    try await body(self, watch)
                }
                return  // stopped
            } catch let failure as PostgresConnectFailure {
                if !reportedFailure && !wasConnected && !isStopped {
                    reportedFailure = true
                    report(
                        NotificationTransportEvent(
                            kind: .transportError,
                            error: PostgresTransportError(kind: .connectFailed, wrapping: failure.error)))
                }
                if await !backoff(attempt: &attempt) { return }
            } catch {
                if isStopped { return }
                if let error = error as? PostgresTransportError, error.kind == .storageFailed {
                    report(NotificationTransportEvent(kind: .transportError, error: error))
                } else if wasConnected {
                    report(
                        NotificationTransportEvent(
                            kind: .connectionLost, error: PostgresTransportError(kind: .connectionLost, wrapping: error)
                        ))
                }
                if await !backoff(attempt: &attempt) { return }
            }
        }
    }

    func ensureSchema(on connection: PostgresConnectionWatch) async throws {
        guard configuration.createsSchema, !lock.withLock({ state.schemaReady }) else { return }
        try await storageQuery(schema.creationBlock, on: connection)
        lock.withLock { state.schemaReady = true }
    }

    /// Runs `sql` with `bindings` on `connection` as a statement on the tables (see ``storage(_:)``).
    @discardableResult
    func storageQuery(
        _ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: PostgresConnectionWatch
    ) async throws -> [PostgresRow] {
        try await storage { try await connection.run(PostgresQuery(unsafeSQL: sql, binds: bindings)) }
    }

    /// Runs a statement on the tables; a refusal by the server (not a lost connection) becomes a
    /// ``PostgresTransportError/Kind/storageFailed``.
    func storage<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if Self.isConnectionError(error) { throw error }
            throw PostgresTransportError(kind: .storageFailed, wrapping: error)
        }
    }

    func backoff(attempt: inout Int) async -> Bool {
        let delay = min(
            Self.seconds(configuration.initialReconnectDelay) * Double(1 << min(attempt, 16)),
            Self.seconds(configuration.maximumReconnectDelay))
        attempt += 1
        let nanoseconds = delay * Double.random(in: 1...1.25) * 1e9
        do { try await Task.sleep(nanoseconds: UInt64(nanoseconds)) } catch { return false }
        return !isStopped
    }

    var isStopped: Bool { lock.withLock { state.stopped } }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Whether `error` means the connection is gone rather than the statement refused.
    static func isConnectionError(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransportError { return error.kind == .connectionLost }
        guard let error = error as? PSQLError else { return true }
        guard error.code == .server else { return true }
        let sqlState = error.serverInfo?[.sqlState] ?? ""
        return sqlState.hasPrefix("57") || sqlState.hasPrefix("08")
    }

    func report(_ event: NotificationTransportEvent) {
        let handler = lock.withLock { state.handler }
        handler?.report(event.graded)
    }
}
