import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Retention: rows every consumer has passed, and rows older than the age limit, deleted.
extension DurablePostgresNotificationTransport {
    // MARK: - Retention

    /// Deletes the rows every consumer has passed and, with a ``Configuration/retentionAge``, the rows older than
    /// it, on a connection of its own. The transport calls it every ``Configuration/retentionInterval``; call it
    /// yourself from a maintenance job when that is `nil`.
    ///
    /// - Returns: How many rows were deleted.
    /// - Throws: PostgresNIO's error when the server cannot be reached or refuses.
    @discardableResult
    public func enforceRetention() async throws -> Int {
        let connection = try await PostgresConnection.connect(
            on: eventLoopGroup.next(), configuration: configuration.connection, id: 0, logger: logger)
        do {
            let deleted = try await deleteExpired(on: DurableConnectionWatch(connection, logger: logger))
            try await connection.close()
            return deleted
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @discardableResult
    func deleteExpired(on connection: DurableConnectionWatch) async throws -> Int {
        var deleted = 0
        for row in try await connection.run(PostgresQuery(unsafeSQL: schema.deletePassed)) {
            deleted += Int(try row.decode(Int64.self))
        }
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
