import PostgresNIO

// A processor's position saves, the statements it runs most after its page reads (one per handful of messages when
// busy): PostgresNIO prepared statements, prepared once per session, then only bound and executed. They run on the
// processor's own connection, whose `search_path` is the outbox's schema (``DurableOutboxSchema/setSearchPath``), so
// their SQL names the tables without it, as the delivery path's statements do (DurableStatements.swift). Neither
// returns rows: a `DELETE` without `RETURNING` at the top, so PostgresNIO waits for the command tag only.

/// Stores a channel-order processing position and deletes the acknowledgements and attempt counts it passes: `$1`
/// the processing row, `$2` channel, `$3`/`$4` the position, `$5` the consumer whose acknowledgements and counts
/// these are.
struct DurableSavePositionStatement: PostgresPreparedStatement {
    static let name = "notificatable_processing_save_position"
    static let sql = """
        WITH saved AS (
            INSERT INTO consumers (consumer, channel, txid, id)
            VALUES ($1, $2, $3::int8::text::xid8, $4::int8)
            ON CONFLICT (consumer, channel) DO UPDATE SET txid = excluded.txid, id = excluded.id, updated_at = now()
            RETURNING 1
        ), counted AS (
            DELETE FROM attempts
            WHERE consumer = $5 AND channel = $2 AND (txid, id) <= ($3::int8::text::xid8, $4::int8)
            RETURNING 1
        )
        DELETE FROM acknowledgements
        WHERE consumer = $5 AND channel = $2 AND (txid, id) <= ($3::int8::text::xid8, $4::int8)
        """
    typealias Row = Void

    /// The processing row (``DurableOutboxSchema/processingConsumer(_:)``).
    var row: String
    var channel: String
    var position: DurablePostgresNotificationTransport.Position
    /// The consumer name, under which acknowledgements and attempt counts are kept.
    var consumer: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(row)
        bindings.append(channel)
        bindings.append(position.txid)
        bindings.append(position.id)
        bindings.append(consumer)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}

/// Stores the positions `$3[i]`/`$4[i]` of the partition rows `$1[i]` on channel `$2`, and deletes the
/// acknowledgements and attempt counts of consumer `$5` that every row of the layout `$6` has passed (the lowest
/// stored position of the layout, read before this statement's own writes: never too far).
struct DurableSavePartitionsStatement: PostgresPreparedStatement {
    static let name = "notificatable_processing_save_partitions"
    static let sql = """
        WITH saved AS (
            INSERT INTO consumers (consumer, channel, txid, id)
            SELECT c, $2, t::text::xid8, i FROM unnest($1::text[], $3::int8[], $4::int8[]) AS p(c, t, i)
            ON CONFLICT (consumer, channel) DO UPDATE SET txid = excluded.txid, id = excluded.id, updated_at = now()
            RETURNING 1
        ), lowest AS (
            SELECT txid, id FROM consumers WHERE channel = $2 AND consumer = ANY($6::text[])
            ORDER BY txid, id LIMIT 1
        ), counted AS (
            DELETE FROM attempts a USING lowest
            WHERE a.consumer = $5 AND a.channel = $2 AND (a.txid, a.id) <= (lowest.txid, lowest.id)
            RETURNING 1
        )
        DELETE FROM acknowledgements a USING lowest
        WHERE a.consumer = $5 AND a.channel = $2 AND (a.txid, a.id) <= (lowest.txid, lowest.id)
        """
    typealias Row = Void

    /// The partitions' rows (`billing/processing 3/16`), in the order of `positions`.
    var rows: [String]
    var channel: String
    var positions: [DurablePostgresNotificationTransport.Position]
    /// The consumer name, under which acknowledgements and attempt counts are kept.
    var consumer: String
    /// Every partition row of the layout.
    var layoutRows: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(rows)
        bindings.append(channel)
        bindings.append(positions.map(\.txid))
        bindings.append(positions.map(\.id))
        bindings.append(consumer)
        bindings.append(layoutRows)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
