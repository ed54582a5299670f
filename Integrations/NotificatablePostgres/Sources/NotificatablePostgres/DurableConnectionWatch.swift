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
    private var pending: [Int: CheckedContinuation<[PostgresRow], any Error>] = [:]

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        connection.closeFuture.whenComplete { [weak self] _ in self?.connectionClosed() }
    }

    private func connectionClosed() {
        let waiting: [CheckedContinuation<[PostgresRow], any Error>] = lock.withLock {
            closed = true
            defer { pending = [:] }
            return Array(pending.values)
        }
        for continuation in waiting { continuation.resume(throwing: PostgresTransportError(kind: .connectionLost)) }
    }

    /// Runs `query` and reads its rows to the end; throws ``PostgresTransportError/Kind/connectionLost`` as soon as
    /// the connection closes.
    func run(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[PostgresRow], any Error>) in
            let id: Int? = lock.withLock {
                guard !closed else { return nil }
                nextID += 1
                pending[nextID] = continuation
                return nextID
            }
            guard let id else {
                continuation.resume(throwing: PostgresTransportError(kind: .connectionLost))
                return
            }
            // The future-based query collects the rows on the event loop and completes there: no task to start,
            // no row sequence to iterate, one resume of the caller.
            let future: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
            future.whenComplete { result in
                let waiting = self.lock.withLock { self.pending.removeValue(forKey: id) }
                waiting?.resume(with: result.map(\.rows))
            }
        }
    }
}
