import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Connecting: one connection per role, the schema, backoff, and the events of a lost and regained connection.
extension DurablePostgresNotificationTransport {
    // MARK: - Connecting

    /// Keeps a connection for `role` (`writer` or `reader`) through the shared engine: registers it (so that
    /// ``stop()`` closes it), sets the `search_path`, creates the schema if asked, and runs `body` until it throws or
    /// returns (stopped). The engine reconnects with backoff and reports `connectionLost` and `reconnected`.
    func keepConnected(
        role: String,
        _ body: @escaping @Sendable (DurablePostgresNotificationTransport, PostgresConnectionWatch) async throws -> Void
    ) async {
        await engine.keepConnected(
            role: role, isStopped: { [self] in isStopped }, report: { [self] in report($0) },
            leavesOpen: { [self] connection in
                lock.withLock {
                    guard role == "reader", state.abandonReaderConnection else { return false }
                    state.abandonReaderConnection = false
                    state.abandonedConnections.append(connection)
                    return true
                }
            },
            clientStopped: { [weak self] in self?.stop() }
        ) { connection, established in
            let key = ObjectIdentifier(connection)
            let stopped = lock.withLock {
                if !state.stopped { state.connections[key] = connection }
                return state.stopped
            }
            if stopped { return }
            defer { lock.withLock { _ = state.connections.removeValue(forKey: key) } }
            // Both roles notice a closed connection at once, and reconnect then: a writer that noticed only when it
            // next wrote would report the loss, and reconnect, during a graceful stop's flush.
            connection.closeFuture.whenComplete { [weak self] _ in
                if role == "reader" { self?.signalReader() } else { self?.wakeWriter() }
            }
            let watch = PostgresConnectionWatch.watching(connection, logger: logger)
            _ = try await storage { try await watch.run(schema.setSearchPath) }
            try await ensureSchema(on: watch)
            established()
            try await body(self, watch)
        }
    }

    /// Makes sure the tables are at this release's schema version, once per transport: migrates them (creating
    /// them if missing) with ``Configuration/createsSchema``, checks them without.
    ///
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaVersionMismatch`` or
    ///   ``PostgresTransportError/Kind/schemaMissing`` (the engine reports it and tries again after the backoff);
    ///   ``PostgresTransportError/Kind/storageFailed`` when the server refuses a statement.
    func ensureSchema(on connection: PostgresConnectionWatch) async throws {
        guard !lock.withLock({ state.schemaReady }) else { return }
        try await DurableSchemaState.ensureCurrent(schema, migrating: configuration.createsSchema) { query in
            try await storage { try await connection.run(query) }
        }
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

    var isStopped: Bool { lock.withLock { state.stopped } }

    static func seconds(_ duration: Duration) -> Double {
        PostgresReconnectBackoff.seconds(duration)
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
