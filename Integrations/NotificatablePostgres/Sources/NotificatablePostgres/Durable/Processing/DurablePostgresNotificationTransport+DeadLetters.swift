import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Dead letters from code: list them, ask for a re-drive. (Plain SQL does the same; see the package README.)
extension DurablePostgresNotificationTransport {
    /// The messages this consumer (``Configuration/consumer``) parked, oldest first, on a connection of its own.
    ///
    /// ```swift
    /// let parked = try await transport.deadLetters(channel: orderPlaced.name.rawValue)
    /// ```
    ///
    /// - Parameters:
    ///   - channel: Only this channel (a handle's channel is its name); every channel when `nil`.
    ///   - limit: The most dead letters returned, 100 by default.
    /// - Returns: The dead letters.
    /// - Throws: PostgresNIO's error when the server cannot be reached or refuses.
    public func deadLetters(channel: String? = nil, limit: Int = 100) async throws -> [DurableDeadLetter] {
        try await engine.withSession { connection in
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(configuration.consumer)
            if let channel { bindings.append(channel) } else { bindings.appendNull() }
            bindings.append(max(0, limit))
            let query = PostgresQuery(unsafeSQL: schema.listDeadLetters, binds: bindings)
            return try await connection.rows(query, logger: logger).map { row in
                let (channel, txid, id, message, error, attempts, parkedAt, redrive) = try row.decode(
                    (String, Int64, Int64, String, String, Int32, Date, Bool).self)
                return DurableDeadLetter(
                    consumer: configuration.consumer, channel: channel, id: .init(transactionID: txid, rowID: id),
                    message: message, error: error, attempts: Int(attempts), parkedAt: parkedAt,
                    redriveRequested: redrive)
            }
        }
    }

    /// Asks the consumer that parked `deadLetter` to process it again: the running `process` of its channel takes it
    /// within a poll interval and calls the handler with it (``DurableDelivery/isRedriven`` true, attempts from 1).
    /// If the handler returns, the dead letter is deleted (inside the handler's transaction, when it acknowledges in
    /// one: then it is processed exactly once); if it fails every attempt again, it is parked again with the new
    /// error, and waits for another re-drive.
    ///
    /// ```swift
    /// for letter in try await transport.deadLetters() where letter.error.contains("timed out") {
    ///     try await transport.redrive(letter)
    /// }
    /// ```
    ///
    /// - Parameter deadLetter: A dead letter of this consumer, from ``deadLetters(channel:limit:)``.
    /// - Returns: Whether the dead letter was still there.
    /// - Throws: PostgresNIO's error when the server cannot be reached or refuses.
    @discardableResult
    public func redrive(_ deadLetter: DurableDeadLetter) async throws -> Bool {
        try await engine.withSession { connection in
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(deadLetter.consumer)
            bindings.append(deadLetter.channel)
            bindings.append(deadLetter.id.transactionID)
            bindings.append(deadLetter.id.rowID)
            bindings.append(schema.wakeChannel)
            let query = PostgresQuery(unsafeSQL: schema.requestRedrive, binds: bindings)
            return try await !connection.rows(query, logger: logger).isEmpty
        }
    }
}
