import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Retention: rows every consumer of their channel has passed, and rows older than the age limit, deleted.
extension DurablePostgresNotificationTransport {
    // MARK: - Retention

    /// Deletes the rows that every consumer of their channel has passed (a consumer of a quiet channel holds back
    /// nothing else) and, with a ``Configuration/retentionAge``, the rows older than it, on a connection of its own (leased from ``Configuration/client`` when set). The transport calls it every
    /// ``Configuration/retentionInterval``; call it yourself from a maintenance job when that is `nil`.
    ///
    /// - Returns: How many rows were deleted.
    /// - Throws: PostgresNIO's error when the server cannot be reached or refuses.
    @discardableResult
    public func enforceRetention() async throws -> Int {
        try await engine.withSession { connection in
            try await deleteExpired(on: PostgresConnectionWatch.watching(connection, logger: logger))
        }
    }

    @discardableResult
    func deleteExpired(on connection: PostgresConnectionWatch) async throws -> Int {
        var deleted = 0
        var schemaName = PostgresBindings(capacity: 1)
        schemaName.append(schema.quoted)
        _ = try await connection.run("BEGIN")
        _ = try await connection.run(PostgresQuery(unsafeSQL: schema.lockRetention, binds: schemaName))
        for row in try await connection.run(PostgresQuery(unsafeSQL: schema.deletePassed)) {
            deleted += Int(try row.decode(Int64.self))
        }
        _ = try await connection.run("COMMIT")
        if let age = configuration.retentionAge {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(Self.seconds(age))
            let query = PostgresQuery(unsafeSQL: schema.deleteOlder, binds: bindings)
            for row in try await connection.run(query) {
                deleted += Int(try row.decode(Int64.self))
            }
        }
        return deleted
    }

    /// How many read rounds the reader has started: each one reads what is readable on every channel.
    var readRounds: Int { lock.withLock { state.readRounds } }
}
