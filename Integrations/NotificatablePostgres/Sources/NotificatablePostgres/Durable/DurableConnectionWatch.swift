import Foundation
import PostgresNIO

/// Runs the statements of one connection so that each one ends when the connection closes, even if PostgresNIO never
/// completes it: observed with PostgreSQL 15 and PostgresNIO 1.33, a statement in flight when the server shuts down
/// (`pg_ctl stop -m fast`, SQLSTATE 57P01) sometimes neither returns nor throws, which would leave the transport
/// waiting forever instead of reconnecting.
final class DurableConnectionWatch: @unchecked Sendable {
    let connection: PostgresConnection
    private let logger: Logger
    private let lock = NSLock()
    private var closed = false
    private var nextID = 0
    private var readPagePrepared = false
    /// Statements under way: each entry fails its caller with ``PostgresTransportError/Kind/connectionLost``. Whoever
    /// removes an entry (the statement's completion or the connection's close) resumes that caller, once.
    private var pending: [Int: @Sendable (any Error) -> Void] = [:]

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        connection.closeFuture.whenComplete { [weak self] _ in self?.connectionClosed() }
    }

    private func connectionClosed() {
        let waiting: [@Sendable (any Error) -> Void] = lock.withLock {
            closed = true
            defer { pending = [:] }
            return Array(pending.values)
        }
        for fail in waiting { fail(PostgresTransportError(kind: .connectionLost)) }
    }

    /// Registers a statement's caller; nil once the connection is closed.
    private func register<T>(_ continuation: CheckedContinuation<T, any Error>) -> Int? {
        lock.withLock {
            guard !closed else { return nil }
            nextID += 1
            pending[nextID] = { continuation.resume(throwing: $0) }
            return nextID
        }
    }

    /// Whether the statement `id` is still waiting, taking it off the list.
    private func complete(_ id: Int) -> Bool {
        lock.withLock { pending.removeValue(forKey: id) != nil }
    }

    /// Runs `query` and reads its rows to the end; throws ``PostgresTransportError/Kind/connectionLost`` as soon as
    /// the connection closes.
    func run(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[PostgresRow], any Error>) in
            guard let id = register(continuation) else {
                continuation.resume(throwing: PostgresTransportError(kind: .connectionLost))
                return
            }
            // The future-based query collects the rows on the event loop and completes there: no task to start,
            // no row sequence to iterate, one resume of the caller.
            let future: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
            future.whenComplete { result in
                if self.complete(id) { continuation.resume(with: result.map(\.rows)) }
            }
        }
    }

    /// Reads a page with the session's prepared read, preparing it first on a new session; rows are read on the
    /// event loop (as ``run(_:)``). One role uses a connection at a time, so the read is prepared once.
    func readPage(_ statement: DurableReadPageStatement) async throws -> [DurableOutboxRow] {
        if !lock.withLock({ readPagePrepared }) {
            _ = try await run(DurableReadPageStatement.prepare)
            lock.withLock { readPagePrepared = true }
        }
        return try await run(statement.execute).map(statement.decodeRow)
    }

    /// Runs a PostgresNIO prepared statement without result rows (PostgresNIO prepares it on this connection the
    /// first time); throws ``PostgresTransportError/Kind/connectionLost`` as soon as the connection closes. Without a
    /// row description the result is complete before it is handed over: no row stream to wait on. (PostgresNIO's
    /// own overload for such statements, which returns the command tag, traps: its row stream is never marked
    /// consumed.)
    func perform<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws
    where Statement.Row == () {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            guard let id = register(continuation) else {
                continuation.resume(throwing: PostgresTransportError(kind: .connectionLost))
                return
            }
            // PostgresNIO runs prepared statements through its async API only: one task per statement.
            let (connection, logger) = (connection, logger)
            Task {
                let result: Result<Void, any Error>
                do {
                    for try await _ in try await connection.execute(statement, logger: logger) {}  // lint: no rows
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                if self.complete(id) { continuation.resume(with: result) }
            }
        }
    }
}
