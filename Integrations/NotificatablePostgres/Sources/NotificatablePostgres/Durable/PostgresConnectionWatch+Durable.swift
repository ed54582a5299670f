import Foundation
import PostgresNIO

// The durable transport's two statements on a watched connection (see DurableStatements.swift).
extension PostgresConnectionWatch {
    /// Reads a page with the session's prepared read, preparing it first on a new session; rows are read on the
    /// event loop (as ``run(_:)``). One role uses a connection at a time, so the read is prepared once.
    func readPage(_ statement: DurableReadPageStatement) async throws -> [DurableOutboxRow] {
        if !isPrepared(DurableReadPageStatement.name) {
            _ = try await run(DurableReadPageStatement.prepare)
            notePrepared(DurableReadPageStatement.name)
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
