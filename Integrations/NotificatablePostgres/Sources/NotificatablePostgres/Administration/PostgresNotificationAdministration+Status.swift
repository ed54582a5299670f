import Foundation
import PostgresNIO

// `status`: the consumers, who holds each name, how far behind, the dead letters per consumer and channel, and the
// oldest transaction holding delivery back. Read-only; a handful of statements on one connection.
extension PostgresNotificationAdministration {
    /// Who consumes what, how far behind, which session holds each consumer name, the dead letters, and the
    /// transaction that holds delivery back, if one does.
    ///
    /// ```swift
    /// let status = try await administration.status()
    /// if let holder = status.holdingTransaction {
    ///     logger.warning("pid \(holder.pid) holds \(status.heldBackMessages) messages back")
    /// }
    /// ```
    ///
    /// - Parameter stallAfter: A consumer whose session holds its name, with messages after its position, and whose
    ///   position has not moved for longer than this is reported ``PostgresNotificationStatus/Consumer/State/stalled``.
    ///   A minute by default.
    /// - Returns: The status, read in one go (not one snapshot: each part is one statement).
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing`` when the outbox
    ///   does not exist; PostgresNIO's error.
    public func status(stallAfter: Duration = .seconds(60)) async throws -> PostgresNotificationStatus {
        let stallSeconds = DurablePostgresNotificationTransport.seconds(stallAfter)
        return try await withRows { run in
            let state = try await DurableSchemaState.read(outbox, run: run)
            guard state.outboxExists else {
                throw PostgresTransportError(kind: .schemaMissing, schema: outbox.quoted)
            }
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(outbox.quoted)
            let consumers = try await run(PostgresQuery(unsafeSQL: consumersQuery, binds: bindings)).map { row in
                try consumer(row, stallSeconds: stallSeconds)
            }
            let deadLetters = try await run(PostgresQuery(unsafeSQL: deadLetterCountsQuery)).map { row in
                let (consumer, channel, count, redrive, oldest) = try row.decode(
                    (String, String, Int64, Int64, Date).self)
                return PostgresNotificationStatus.DeadLetterCount(
                    consumer: consumer, channel: channel, count: Int(count), redriveRequested: Int(redrive),
                    oldestParkedAt: oldest)
            }
            let heldBack = try await run(PostgresQuery(unsafeSQL: heldBackQuery)).first?.decode(Int64.self) ?? 0
            var holding: PostgresNotificationStatus.Session?
            if heldBack > 0, let row = try await run(PostgresQuery(unsafeSQL: holdingTransactionQuery)).first {
                holding = try session(row)
            }
            return PostgresNotificationStatus(
                schema: schema, schemaVersion: state.version,
                expectedSchemaVersion: DurableOutboxSchema.currentVersion, consumers: consumers,
                deadLetters: deadLetters, heldBackMessages: Int(heldBack), holdingTransaction: holding)
        }
    }

    private func consumer(_ row: PostgresRow, stallSeconds: Double) throws -> PostgresNotificationStatus.Consumer {
        // Cell by cell: the row has the session's columns too, read by `sessionColumns`.
        let columns = Array(row)
        guard columns.count == 16 else { throw PostgresTransportError(kind: .storageFailed) }
        let name = try columns[0].decode(String.self)
        let channel = try columns[1].decode(String.self)
        let txid = try columns[2].decode(Int64.self)
        let id = try columns[3].decode(Int64.self)
        let savedAt = try columns[4].decode(Date.self)
        let savedSeconds = try columns[5].decode(Double.self)
        let lagMessages = try columns[6].decode(Int64.self)
        let lagSeconds = try columns[7].decode(Double.self)
        let waiting = try columns[8].decode(Int64.self)
        let session = try sessionColumns(columns, from: 9)
        // A processing position: `<consumer>/processing`, or a partition's `<consumer>/processing <p>/<count>`.
        let processingSuffix = "/processing"
        var consumer = name
        var partition: String?
        let processing: Bool
        if name.hasSuffix(processingSuffix) {
            processing = true
            consumer = String(name.dropLast(processingSuffix.count))
        } else if let marker = name.range(of: processingSuffix + " ", options: .backwards) {
            processing = true
            consumer = String(name[..<marker.lowerBound])
            partition = String(name[marker.upperBound...])
        } else {
            processing = false
        }
        let state: PostgresNotificationStatus.Consumer.State
        if session == nil {
            state = .stopped
        } else if lagMessages > 0 && savedSeconds > stallSeconds {
            state = .stalled
        } else {
            state = .running
        }
        return PostgresNotificationStatus.Consumer(
            consumer: consumer, kind: processing ? .processing : .relay, partition: partition, channel: channel,
            position: DurableDeliveryID(transactionID: txid, rowID: id), positionSavedAt: savedAt,
            lagMessages: Int(lagMessages), lagSeconds: lagSeconds, state: state, session: session,
            waitingSessions: Int(waiting))
    }

    /// The session columns (pid, application name, client address, backend start, state, transaction seconds,
    /// database) of `row`, from the column `start`; nil when the pid is null.
    private func session(_ row: PostgresRow) throws -> PostgresNotificationStatus.Session? {
        try sessionColumns(Array(row), from: 0)
    }

    private func sessionColumns(_ columns: [PostgresCell], from start: Int) throws -> PostgresNotificationStatus
        .Session?
    {
        guard columns.count >= start + 7, let pid = try columns[start].decode(Int32?.self) else { return nil }
        return PostgresNotificationStatus.Session(
            pid: Int(pid), applicationName: try columns[start + 1].decode(String?.self) ?? "",
            clientAddress: try columns[start + 2].decode(String?.self),
            backendStart: try columns[start + 3].decode(Date?.self),
            state: try columns[start + 4].decode(String?.self),
            transactionSeconds: try columns[start + 5].decode(Double?.self),
            database: try columns[start + 6].decode(String?.self))
    }

    /// Every `consumers` row with its lag, the session holding its lock (a relay consumer's: `"<schema>" <name>`;
    /// a processing position's: `"<schema>" <name>/processing <channel>`) and how many sessions wait for it. `$1`:
    /// the schema's quoted name.
    private var consumersQuery: String {
        let q = outbox.quoted
        return """
            SELECT c.consumer, c.channel, c.txid::text::int8, c.id, c.updated_at,
                   extract(epoch FROM now() - c.updated_at)::float8,
                   lag.messages, coalesce(extract(epoch FROM now() - lag.oldest), 0)::float8,
                   (SELECT count(*) FROM pg_locks w
                    WHERE w.locktype = 'advisory' AND NOT w.granted AND w.objsubid = 1 AND w.database = db.oid
                      AND w.classid::int8 = (k.key >> 32) & 4294967295 AND w.objid::int8 = k.key & 4294967295)::int8,
                   l.pid, a.application_name, host(a.client_addr), a.backend_start, a.state,
                   extract(epoch FROM now() - a.xact_start)::float8, a.datname::text
            FROM \(q).consumers c
            CROSS JOIN (SELECT oid FROM pg_database WHERE datname = current_database()) db
            CROSS JOIN LATERAL (
                SELECT hashtextextended(
                    CASE WHEN c.consumer LIKE '%/processing' OR c.consumer LIKE '%/processing %'
                         THEN $1 || ' ' || c.consumer || ' ' || c.channel
                         ELSE $1 || ' ' || c.consumer END, 0) AS key
            ) k
            CROSS JOIN LATERAL (
                SELECT count(*)::int8 AS messages, min(o.created_at) AS oldest FROM \(q).outbox o
                WHERE o.channel = c.channel AND (o.txid, o.id) > (c.txid, c.id)
            ) lag
            LEFT JOIN pg_locks l
              ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = db.oid
             AND l.classid::int8 = (k.key >> 32) & 4294967295 AND l.objid::int8 = k.key & 4294967295
            LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            ORDER BY c.consumer, c.channel
            """
    }

    private var deadLetterCountsQuery: String {
        """
        SELECT consumer, channel, count(*)::int8, count(*) FILTER (WHERE redrive)::int8, min(parked_at)
        FROM \(outbox.quoted).dead_letters GROUP BY consumer, channel ORDER BY consumer, channel
        """
    }

    /// Committed rows that readers may not read yet: of transactions not older than every one still running.
    private var heldBackQuery: String {
        "SELECT count(*)::int8 FROM \(outbox.quoted).outbox WHERE txid >= pg_snapshot_xmin(pg_current_snapshot())"
    }

    /// The session whose transaction has the oldest transaction id still running (transaction ids are the
    /// cluster's, so it may be of another database): the one that holds readers back.
    private var holdingTransactionQuery: String {
        """
        SELECT a.pid, a.application_name, host(a.client_addr), a.backend_start, a.state,
               extract(epoch FROM now() - a.xact_start)::float8, a.datname::text
        FROM pg_stat_activity a
        WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
        ORDER BY age(a.backend_xid) DESC LIMIT 1
        """
    }
}

/// What ``PostgresNotificationAdministration/status(stallAfter:)`` reads. Its JSON (the output of
/// `notificatable-pg status --json`) has these field names; dates are ISO 8601, durations seconds.
public struct PostgresNotificationStatus: Sendable, Codable {
    /// A database session (a row of `pg_stat_activity`).
    public struct Session: Sendable, Codable, Hashable {
        /// Its backend pid (`pg_stat_activity.pid`).
        public let pid: Int
        /// Its `application_name` (empty when it set none).
        public let applicationName: String
        /// The client's address; nil for a Unix socket.
        public let clientAddress: String?
        /// When the session started.
        public let backendStart: Date?
        /// `active`, `idle`, `idle in transaction` …
        public let state: String?
        /// How long its current transaction has been open, in seconds; nil outside a transaction.
        public let transactionSeconds: Double?
        /// Its database.
        public let database: String?
    }

    /// One consumer's position on one channel (a row of `consumers`).
    public struct Consumer: Sendable, Codable {
        /// Which position it is.
        public enum Kind: String, Sendable, Codable {
            /// A relay's reader (`DurablePostgresNotificationTransport`, the service's relay).
            case relay
            /// A `process` call's acknowledged position.
            case processing
        }

        /// How the consumer is doing.
        public enum State: String, Sendable, Codable {
            /// A session holds the name and the position moves (or nothing waits).
            case running
            /// A session holds the name, messages wait after the position, and it has not moved for longer than
            /// `stallAfter`: a handler that hangs, or delivery held back (see
            /// ``PostgresNotificationStatus/holdingTransaction``).
            case stalled
            /// No session holds the name: no process of this consumer runs.
            case stopped
        }

        /// The consumer name (for a processing position, without its `/processing` suffix).
        public let consumer: String
        /// Which position it is.
        public let kind: Kind
        /// For a consumer group's position, its partition, as `number/count` (`"3/16"`): a process under the
        /// consumer name holds each partition (``session``); nil for a relay's position and for processing in channel
        /// order.
        public let partition: String?
        /// The channel (the notification name, as stored).
        public let channel: String
        /// The last message passed.
        public let position: DurableDeliveryID
        /// When the position was last saved.
        public let positionSavedAt: Date
        /// Messages stored after the position (still to be received or processed).
        public let lagMessages: Int
        /// The age of the oldest of them, in seconds; 0 when there are none.
        public let lagSeconds: Double
        /// How it is doing.
        public let state: State
        /// The session that holds the name's advisory lock; nil when none does.
        public let session: Session?
        /// How many other sessions wait for the name (standbys).
        public let waitingSessions: Int
    }

    /// The dead letters of one consumer on one channel.
    public struct DeadLetterCount: Sendable, Codable, Hashable {
        /// The consumer name.
        public let consumer: String
        /// The channel.
        public let channel: String
        /// How many are parked.
        public let count: Int
        /// How many of them wait for a re-drive.
        public let redriveRequested: Int
        /// When the oldest was parked.
        public let oldestParkedAt: Date
    }

    /// The schema, as given.
    public let schema: String
    /// Its version (0: none recorded).
    public let schemaVersion: Int
    /// The version this release reads and writes.
    public let expectedSchemaVersion: Int
    /// Every consumer's position per channel, by consumer name, then channel.
    public let consumers: [Consumer]
    /// Dead letters per consumer and channel (only those with some).
    public let deadLetters: [DeadLetterCount]
    /// Committed messages readers may not read yet, because an older transaction still runs.
    public let heldBackMessages: Int
    /// When messages are held back: the session of the oldest transaction still running, which holds them.
    public let holdingTransaction: Session?
}

// MARK: - Codable

extension DurableDeliveryID: Codable {
    private enum CodingKeys: String, CodingKey {
        case transactionID, rowID
    }

    /// Decodes `{"transactionID": …, "rowID": …}`.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field is missing or not an integer.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            transactionID: try container.decode(Int64.self, forKey: .transactionID),
            rowID: try container.decode(Int64.self, forKey: .rowID))
    }

    /// Encodes `{"transactionID": …, "rowID": …}`.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactionID, forKey: .transactionID)
        try container.encode(rowID, forKey: .rowID)
    }
}
