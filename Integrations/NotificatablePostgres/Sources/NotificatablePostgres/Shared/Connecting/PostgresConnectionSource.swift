import Foundation
import Logging
import PostgresNIO

/// Where a transport's sessions come from: connections it opens itself from PostgresNIO's connection settings, or
/// connections it leases from the application's `PostgresClient`, each lease waiting at most `leaseTimeout`
/// (see ``PostgresLease``).
///
/// A session is a connection used by one role of the transport for as long as that role needs it (the reader's
/// `LISTEN` and advisory lock, the writer's prepared insert and `search_path`). A connection leased from the client
/// is closed, never handed back, when the role is done with it: its session carries state (a session-level advisory
/// lock, a `LISTEN`, the outbox's `search_path`, prepared statements) that the application's other queries must not
/// inherit; the client's pool opens a fresh connection in its place when it needs one. (`PostgresClient` has no way
/// to pass on the settings of its configuration, TLS among them, so a transport cannot open connections of its own
/// "like the client's": it leases them.)
enum PostgresConnectionSource: Sendable {
    /// The settings, and the event loop each new connection runs on.
    case settings(PostgresConnection.Configuration, eventLoop: @Sendable () -> any EventLoop)
    /// The application's client, and the longest wait for one of its connections.
    case client(PostgresClient, leaseTimeout: Duration)

    /// Runs `body` on a session of its own and closes the connection afterwards, whether `body` returns or throws.
    /// A connection that could not be opened or leased is a ``PostgresConnectFailure``.
    ///
    /// - Parameters:
    ///   - id: The connection's id in PostgresNIO's logs (settings only: the client numbers its own).
    ///   - logger: PostgresNIO's logger for a connection opened from settings.
    ///   - leavesOpen: Asked after `body` throws, for a connection opened from settings: true leaves it open (a
    ///     test hook that simulates a lost network). A leased connection is always closed.
    ///   - body: Uses the connection; it must not keep it.
    /// - Returns: What `body` returns.
    /// - Throws: ``PostgresConnectFailure`` when no connection could be had; `body`'s error.
    func withSession<T: Sendable>(
        id: Int, logger: Logger, leavesOpen: (PostgresConnection) -> Bool = { _ in false },
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        switch self {
        case .settings(let configuration, let eventLoop):
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    on: eventLoop(), configuration: configuration, id: id, logger: logger)
            } catch {
                throw PostgresConnectFailure(error: error)
            }
            do {
                let result = try await body(connection)
                try? await connection.close()
                return result
            } catch {
                if !leavesOpen(connection) { try? await connection.close() }
                throw error
            }
        case .client(let client, let leaseTimeout):
            return try await PostgresLease.withConnection(from: client, timeout: leaseTimeout) { connection in
                do {
                    let result = try await body(connection)
                    // Closed before the lease ends: the pool sees it closed, and never hands its session out.
                    try? await connection.close()
                    return result
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        }
    }

    /// Runs `body` on a connection for a short unit of work that leaves no state on the session (a transaction of a
    /// handler): a new connection from settings, closed afterwards; the client's pool's, handed back afterwards.
    func withPooledConnection<T: Sendable>(id: Int, logger: Logger, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
        switch self {
        case .settings:
            return try await withSession(id: id, logger: logger, body)
        case .client(let client, let leaseTimeout):
            return try await PostgresLease.withConnection(from: client, timeout: leaseTimeout, body)
        }
    }
}

/// A connection could not be opened, or leased from the application's client.
struct PostgresConnectFailure: Error {
    var error: any Error
}
