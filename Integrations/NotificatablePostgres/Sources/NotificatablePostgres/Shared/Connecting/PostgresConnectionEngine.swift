import Foundation
import Logging
import NotificatableRelay
import PostgresNIO

/// The one connection engine of both transports and of every processor: it opens (or leases, with a bounded wait)
/// a connection for a role, runs the role's session on it until the session ends or the connection fails, and
/// connects again with backoff, reporting the outage once.
///
/// Each role keeps only what differs: what its session sets up (`LISTEN`s, `search_path`, the schema, locks) and
/// does. The engine decides the rest, the same way for all of them:
/// - **Backoff** from ``PostgresReconnectBackoff`` (validated settings; no setting can make it trap).
/// - **One event per outage**: `transportError` with ``PostgresTransportError/Kind/connectFailed`` when the role has
///   never been connected, `connectionLost` when a session it had failed; `reconnected` once a session of the role
///   is established again. A refusal by the server that is not about the connection
///   (``PostgresTransportError/Kind/storageFailed``) is reported each time.
/// - **Bounded leases**: a connection leased from the application's `PostgresClient` comes within the lease
///   timeout or the request is given up and made again after the backoff; each timeout is reported as
///   ``PostgresTransportError/Kind/connectionWaiting`` (`warning`, with the role and how long it has waited), so a
///   role stranded by the pool is never silent.
/// - **A stopped client ends it**: a `PostgresClient` that has stopped never gives a connection again, so the engine
///   reports ``PostgresTransportError/Kind/clientStopped`` (`error`) and returns instead of retrying for ever: a
///   `ServiceGroup` that lists the client after the notification service stops the client first, and the service
///   must then end, not wait.
final class PostgresConnectionEngine: @unchecked Sendable {
    /// Where connections come from.
    let source: PostgresConnectionSource
    /// The waits between attempts.
    let backoff: PostgresReconnectBackoff
    /// PostgresNIO's logger for the connections the engine opens.
    let logger: Logger

    private let lock = NSLock()
    private var lastConnectionID = 0

    /// How long a role waits before its first lease from the application's client, so that the client's `run()`,
    /// started beside it in a `ServiceGroup`, has begun.
    static let clientHeadStart: Duration = .milliseconds(100)

    init(source: PostgresConnectionSource, backoff: PostgresReconnectBackoff, logger: Logger) {
        self.source = source
        self.backoff = backoff
        self.logger = logger
    }

    /// A new id for PostgresNIO's logs (connections opened from settings; the client numbers its own).
    func nextConnectionID() -> Int {
        lock.withLock {
            lastConnectionID += 1
            return lastConnectionID
        }
    }

    /// Runs `session` for `role` on a connection of its own, again and again, until `isStopped` holds, the task is
    /// cancelled, or `session` returns.
    ///
    /// - Parameters:
    ///   - role: What the connection is for (`writer`, `reader`, `processor`…): named in the events.
    ///   - channel: The channel the events concern, if any.
    ///   - isStopped: Whether the owner stopped; checked before every attempt and after every failure.
    ///   - report: Receives the engine's events.
    ///   - leavesOpen: Asked after `session` throws on a connection opened from settings: true leaves it open (a
    ///     test hook that simulates a lost network).
    ///   - clientStopped: Called when the application's `PostgresClient` refuses a lease because it has stopped (it
    ///     never runs again): the engine reports ``PostgresTransportError/Kind/clientStopped`` and returns.
    ///   - session: Sets up the connection, calls `established` once it is ready to work (the engine then reports
    ///     `reconnected` if the role had been connected before, and resets its backoff), and works until it
    ///     returns (stopped) or throws (the connection failed, or the server refused).
    func keepConnected(
        role: String, channel: String? = nil, isStopped: @escaping @Sendable () -> Bool,
        report: @escaping @Sendable (NotificationTransportEvent) -> Void,
        leavesOpen: @escaping @Sendable (PostgresConnection) -> Bool = { _ in false },
        clientStopped: @Sendable () -> Void = {},
        _ session: (PostgresConnection, _ established: () -> Void) async throws -> Void
    ) async {
        var failures = 0
        var everConnected = false
        var outageReported = false
        var waitedForLease: Duration = .zero
        let stopped: @Sendable () -> Bool = { isStopped() || Task.isCancelled }
        if case .client = source {
            // PostgresNIO logs a warning for every lease asked for before the client's `run()` has begun, and a
            // `ServiceGroup` starts its services together: give the client's `run()` a head start.
            try? await Task.sleep(for: Self.clientHeadStart)
        }
        while !stopped() {
            do {
                try await source.withSession(id: nextConnectionID(), logger: logger, leavesOpen: leavesOpen) {
                    connection in
                    try await session(connection) {
                        if everConnected { report(NotificationTransportEvent(kind: .reconnected, channel: channel)) }
                        everConnected = true
                        outageReported = false
                        waitedForLease = .zero
                        failures = 0
                    }
                }
                return  // stopped
            } catch let failure as PostgresConnectFailure {
                if stopped() { return }
                if Self.isClientStopped(failure.error) {
                    // A `PostgresClient` runs once: stopped, it never gives a connection again.
                    let error = PostgresTransportError(kind: .clientStopped, role: role)
                    report(NotificationTransportEvent(kind: .transportError, channel: channel, error: error))
                    clientStopped()
                    return
                }
                if let timeout = failure.error as? PostgresLeaseTimeout {
                    waitedForLease += timeout.waited
                    let error = PostgresTransportError(
                        kind: .connectionWaiting, underlying: timeout,
                        seconds: PostgresReconnectBackoff.seconds(waitedForLease), role: role)
                    report(NotificationTransportEvent(kind: .transportError, channel: channel, error: error))
                } else if !outageReported {
                    outageReported = true
                    let error = PostgresTransportError(
                        kind: everConnected ? .connectionLost : .connectFailed, wrapping: failure.error)
                    report(
                        NotificationTransportEvent(
                            kind: everConnected ? .connectionLost : .transportError, channel: channel, error: error))
                }
            } catch {
                if stopped() { return }
                if let error = error as? PostgresTransportError,
                    Self.reportedAtEveryAttempt.contains(error.kind)
                {
                    report(NotificationTransportEvent(kind: .transportError, channel: channel, error: error))
                } else if !outageReported {
                    outageReported = true
                    let lost =
                        (error as? PostgresTransportError).flatMap { $0.kind == .connectionLost ? $0 : nil }
                        ?? PostgresTransportError(kind: .connectionLost, wrapping: error)
                    report(NotificationTransportEvent(kind: .connectionLost, channel: channel, error: lost))
                }
            }
            if await !backoff.wait(failures: &failures, isStopped: stopped) { return }
        }
    }

    /// The refusals of a session's set-up that are reported at every attempt (each one after the backoff): the
    /// outbox unusable until someone acts (a statement refused, a schema missing or at another version).
    static let reportedAtEveryAttempt: Set<PostgresTransportError.Kind> = [
        .storageFailed, .schemaVersionMismatch, .schemaMissing,
    ]

    /// Whether a lease failed because the `PostgresClient` has stopped. PostgresNIO 1.33.2 throws its pool's
    /// `ConnectionPoolError.poolShutdown` there (from the underscored `_ConnectionPoolModule`, not re-exported; its
    /// `mapToPSQLError` is never called), so the error is recognized by its type's name and case, and also as the
    /// `PSQLError.poolClosed` that the mapping would make.
    static func isClientStopped(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.code == .poolClosed }
        return String(describing: type(of: error)) == "ConnectionPoolError"
            && String(describing: error).contains("poolShutdown")
    }

    /// Runs `body` once on a session of its own (a maintenance call: retention, dead letters), with the same
    /// bounded lease; no retry.
    ///
    /// - Throws: The error that kept a connection from being had (PostgresNIO's, or ``PostgresLeaseTimeout``), or
    ///   `body`'s.
    func withSession<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await source.withSession(id: nextConnectionID(), logger: logger, body)
        } catch let failure as PostgresConnectFailure {
            throw failure.error
        }
    }
}
