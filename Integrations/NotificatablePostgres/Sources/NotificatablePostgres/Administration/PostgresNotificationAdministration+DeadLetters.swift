import Foundation
import PostgresNIO

// Dead letters of every consumer: list, re-drive, purge, with the same filter. A re-drive sets `redrive` (the
// consumer's running `process` takes the letter within a poll interval, see the Processing article); a purge deletes
// the rows (the messages are not processed, ever).
extension PostgresNotificationAdministration {
    /// Which dead letters a call concerns: all of them, or those that match every field set.
    ///
    /// ```swift
    /// let filter = PostgresNotificationAdministration.DeadLetterFilter(
    ///     consumer: "billing", errorContains: "timed out", olderThan: .seconds(3_600))
    /// let parked = try await administration.deadLetters(matching: filter)
    /// ```
    public struct DeadLetterFilter: Sendable, Hashable {
        /// Only this consumer's.
        public var consumer: String?
        /// Only this channel's (the notification name, as stored).
        public var channel: String?
        /// Only those whose error contains this text, ignoring case.
        public var errorContains: String?
        /// Only those parked longer ago than this.
        public var olderThan: Duration?
        /// Only the letter of this outbox message (one per consumer that parked it).
        public var id: DurableDeliveryID?

        /// Creates a filter; every field left `nil` matches everything.
        ///
        /// - Parameters:
        ///   - consumer: Only this consumer's.
        ///   - channel: Only this channel's.
        ///   - errorContains: Only those whose error contains this text, ignoring case.
        ///   - olderThan: Only those parked longer ago than this.
        ///   - id: Only the letter of this outbox message.
        public init(
            consumer: String? = nil, channel: String? = nil, errorContains: String? = nil,
            olderThan: Duration? = nil, id: DurableDeliveryID? = nil
        ) {
            self.consumer = consumer
            self.channel = channel
            self.errorContains = errorContains
            self.olderThan = olderThan
            self.id = id
        }
    }

    /// The dead letters that match `filter`, oldest first (by when they were parked), of every consumer.
    ///
    /// - Parameters:
    ///   - filter: Which; all by default.
    ///   - limit: The most returned; nil for all.
    /// - Returns: The dead letters.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing`` when the outbox
    ///   does not exist; PostgresNIO's error.
    public func deadLetters(matching filter: DeadLetterFilter = DeadLetterFilter(), limit: Int? = nil) async throws
        -> [DurableDeadLetter]
    {
        try await withRows { run in
            try await requireOutbox(run)
            var bindings = filterBindings(filter)
            if let limit { bindings.append(Int64(max(0, limit))) } else { bindings.appendNull() }
            let query = PostgresQuery(
                unsafeSQL: "SELECT \(Self.deadLetterColumns) FROM \(outbox.quoted).dead_letters WHERE "
                    + Self.deadLetterFilterSQL + " ORDER BY parked_at, consumer, channel, txid, id LIMIT $7",
                binds: bindings)
            return try await run(query).map(Self.deadLetter)
        }
    }

    /// Asks for the dead letters that match `filter` to be processed again (sets their `redrive`), and wakes the
    /// consumers: each consumer's running `process` of the letter's channel takes it within a poll interval (see
    /// ``DurablePostgresNotificationTransport/redrive(_:)``). A letter whose consumer does not run waits for it.
    ///
    /// - Parameter filter: Which.
    /// - Returns: The dead letters marked, as they are now.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing``; PostgresNIO's
    ///   error.
    @discardableResult
    public func redriveDeadLetters(matching filter: DeadLetterFilter) async throws -> [DurableDeadLetter] {
        try await withRows { run in
            try await requireOutbox(run)
            let query = PostgresQuery(
                unsafeSQL: "UPDATE \(outbox.quoted).dead_letters SET redrive = true WHERE "
                    + Self.deadLetterFilterSQL + " AND $7::int8 IS NULL RETURNING \(Self.deadLetterColumns)",
                binds: bindingsWithoutLimit(filter))
            let marked = try await run(query).map(Self.deadLetter)
            if !marked.isEmpty {
                // Only a wake-up: a consumer that misses it finds the letters at its next poll.
                var wake = PostgresBindings(capacity: 1)
                wake.append(outbox.wakeChannel)
                _ = try await run(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, '')::text", binds: wake))
            }
            return marked.sorted { ($0.parkedAt, $0.id) < ($1.parkedAt, $1.id) }
        }
    }

    /// Deletes the dead letters that match `filter`: their messages are never processed by their consumers.
    ///
    /// - Parameter filter: Which.
    /// - Returns: The dead letters deleted.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing``; PostgresNIO's
    ///   error.
    @discardableResult
    public func purgeDeadLetters(matching filter: DeadLetterFilter) async throws -> [DurableDeadLetter] {
        try await withRows { run in
            try await requireOutbox(run)
            let query = PostgresQuery(
                unsafeSQL: "DELETE FROM \(outbox.quoted).dead_letters WHERE " + Self.deadLetterFilterSQL
                    + " AND $7::int8 IS NULL RETURNING \(Self.deadLetterColumns)",
                binds: bindingsWithoutLimit(filter))
            return try await run(query).map(Self.deadLetter).sorted { ($0.parkedAt, $0.id) < ($1.parkedAt, $1.id) }
        }
    }

    // MARK: - SQL

    static let deadLetterColumns =
        "consumer, channel, txid::text::int8, id, message, error, attempts, parked_at, redrive"

    /// `$1` consumer, `$2` channel, `$3` error text, `$4` age in seconds, `$5`/`$6` the id; each null matches all.
    static let deadLetterFilterSQL = """
        ($1::text IS NULL OR consumer = $1) AND ($2::text IS NULL OR channel = $2)
        AND ($3::text IS NULL OR strpos(lower(error), lower($3)) > 0)
        AND ($4::float8 IS NULL OR parked_at < now() - $4::float8 * interval '1 second')
        AND ($5::int8 IS NULL OR (txid = $5::int8::text::xid8 AND id = $6::int8))
        """

    private func filterBindings(_ filter: DeadLetterFilter) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        if let consumer = filter.consumer { bindings.append(consumer) } else { bindings.appendNull() }
        if let channel = filter.channel { bindings.append(channel) } else { bindings.appendNull() }
        if let text = filter.errorContains { bindings.append(text) } else { bindings.appendNull() }
        if let age = filter.olderThan {
            bindings.append(DurablePostgresNotificationTransport.seconds(age))
        } else {
            bindings.appendNull()
        }
        if let id = filter.id {
            bindings.append(id.transactionID)
            bindings.append(id.rowID)
        } else {
            bindings.appendNull()
            bindings.appendNull()
        }
        return bindings
    }

    /// The filter's bindings and a null `$7`, so that the update and the delete share the filter's SQL and its
    /// parameter types.
    private func bindingsWithoutLimit(_ filter: DeadLetterFilter) -> PostgresBindings {
        var bindings = filterBindings(filter)
        bindings.appendNull()
        return bindings
    }

    private static func deadLetter(_ row: PostgresRow) throws -> DurableDeadLetter {
        let (consumer, channel, txid, id, message, error, attempts, parkedAt, redrive) = try row.decode(
            (String, String, Int64, Int64, String, String, Int32, Date, Bool).self)
        return DurableDeadLetter(
            consumer: consumer, channel: channel, id: DurableDeliveryID(transactionID: txid, rowID: id),
            message: message, error: error, attempts: Int(attempts), parkedAt: parkedAt, redriveRequested: redrive)
    }
}

// MARK: - Encodable

extension DurableDeadLetter: Encodable {
    private enum CodingKeys: String, CodingKey {
        case consumer, channel, id, message, error, attempts, parkedAt, redriveRequested
    }

    /// Encodes the dead letter with these field names (the JSON of `notificatable-pg dead-letters`): `consumer`,
    /// `channel`, `id` (`{"transactionID": …, "rowID": …}`), `message`, `error`, `attempts`, `parkedAt`,
    /// `redriveRequested`.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(consumer, forKey: .consumer)
        try container.encode(channel, forKey: .channel)
        try container.encode(id, forKey: .id)
        try container.encode(message, forKey: .message)
        try container.encode(error, forKey: .error)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(parkedAt, forKey: .parkedAt)
        try container.encode(redriveRequested, forKey: .redriveRequested)
    }
}
