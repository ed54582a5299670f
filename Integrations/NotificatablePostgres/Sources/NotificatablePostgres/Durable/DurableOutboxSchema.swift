import Foundation
import PostgresNIO

/// The SQL of ``DurablePostgresNotificationTransport``'s tables and statements, for one schema.
///
/// The tables (the Durable delivery section of the package README gives them as plain SQL for migration tools):
/// - `outbox`: one row per message, `(txid, id)` its place in the delivery order. `txid` is the inserting
///   transaction's id, so a reader can take only rows of transactions older than every one still running.
/// - `consumers`: each consumer's position per channel, the `(txid, id)` of the last row it has received.
/// - `retention`: the highest `(txid, id)` deleted for age, so that a consumer behind it is told.
/// - `acknowledgements` and `dead_letters`, of acknowledged processing (`DurableOutboxSchema+Processing.swift`).
struct DurableOutboxSchema: Sendable {
    /// The schema's name, as given.
    let name: String
    /// The schema's name quoted as an identifier, with its `"` doubled.
    let quoted: String
    /// The `LISTEN`/`NOTIFY` channel that wakes the readers.
    let wakeChannel: String

    init(_ name: String) {
        self.name = name
        self.quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        self.wakeChannel = PostgresChannelName.serverChannel(for: "notificatable.outbox." + name)
        self.statementKey = Self.statementKey(for: name)
    }

    /// A short key of the schema's name for the names of its prepared statements (which PostgreSQL cuts at 63
    /// bytes): `n` and the name when it is at most 24 ASCII letters, digits and underscores, else `h` and the
    /// 64-bit FNV-1a hash of its UTF-8 bytes in hexadecimal.
    let statementKey: String

    /// The ``statementKey`` of the schema `name`.
    static func statementKey(for name: String) -> String {
        let plain =
            name.utf8.count <= 24
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            }
        if plain { return "n" + name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "h" + String(hash, radix: 16)
    }

    /// The tables of schema version 1 (see `DurableSchemaMigrations.swift`, which creates them), in order; each
    /// statement is idempotent, so a schema created before versions were recorded is adopted as it is.
    var outboxTableStatements: [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(quoted).outbox (
                txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                id bigint GENERATED ALWAYS AS IDENTITY,
                channel text NOT NULL,
                message text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (txid, id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS \(quoted).consumers (
                consumer text NOT NULL,
                channel text NOT NULL,
                txid xid8 NOT NULL,
                id bigint NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer, channel)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS \(quoted).retention (
                single boolean PRIMARY KEY DEFAULT true CHECK (single),
                txid xid8 NOT NULL,
                id bigint NOT NULL
            )
            """,
        ]
    }

    /// Sets the session's `search_path` to this schema alone (`pg_catalog` stays first, as always), for the
    /// statements of `DurableStatements.swift`, prepared per session, which name the tables without their schema.
    var setSearchPath: PostgresQuery {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(quoted)
        return PostgresQuery(unsafeSQL: "SELECT set_config('search_path', $1, false)", binds: bindings)
    }

    /// Inserts one message and wakes the readers when its transaction commits: `$1` channel, `$2` message, `$3`
    /// wake channel. A single post's statement (the batch's `unnest … ORDER BY` costs a single post 15 %: 664 against
    /// 780 posts per second, one per transaction, `notificatable-pg-bench --mode process`). An `INSERT` without
    /// `RETURNING`, so no rows come back (a prepared statement, `DurablePostStatements.swift`); the notification comes
    /// from a CTE joined in once, as in ``insertPosts``.
    var insertOne: String {
        """
        WITH woken AS (SELECT pg_notify($3, ''))
        INSERT INTO \(quoted).outbox (channel, message) SELECT $1, $2 FROM woken
        """
    }

    /// Inserts the messages `$2` (a `text[]`, in its order) on channel `$1` and wakes the readers once when the
    /// transaction commits (`$3` the wake channel): a batch of transactional posts. Ids are
    /// given in the array's order (`ORDER BY` the ordinality). An `INSERT` without `RETURNING`, so no rows come back;
    /// the notification comes from a CTE joined in once, as in the writer's insert (`DurableStatements.swift`).
    var insertPosts: String {
        """
        WITH woken AS (SELECT pg_notify($3, ''))
        INSERT INTO \(quoted).outbox (channel, message)
        SELECT $1, m FROM unnest($2::text[]) WITH ORDINALITY AS b(m, i), woken ORDER BY i
        """
    }

    /// The position of `$1` on channel `$2`, created at the current end when the consumer has none: after every
    /// transaction that had taken its transaction id when the statement began (`pg_snapshot_xmax`, the first id not
    /// yet given out), so that no row committed before it, nor any row of a transaction already under way then,
    /// reaches the new consumer, and every row of a later transaction does. Run inside
    /// ``lockRegistrations`` (see ``lockRetention``).
    var registerPosition: String {
        """
        WITH created AS (
            INSERT INTO \(quoted).consumers (consumer, channel, txid, id)
            VALUES ($1, $2, pg_snapshot_xmax(pg_current_snapshot()), 0)
            ON CONFLICT (consumer, channel) DO NOTHING
            RETURNING txid, id
        )
        SELECT txid::text::int8, id FROM created
        UNION ALL
        SELECT txid::text::int8, id FROM \(quoted).consumers WHERE consumer = $1 AND channel = $2
        LIMIT 1
        """
    }

    /// Takes, for the transaction, the lock that a registration shares with other registrations and that the
    /// deletion of passed rows takes alone (``lockRetention``): a registration's position is after every row a
    /// deletion that ran before it could see, and a deletion sees every registration that committed before it. The
    /// two-key form of advisory lock, so it never meets a consumer name's lock (one `bigint` key). `$1`: the
    /// schema's quoted name.
    var lockRegistrations: String { "SELECT pg_advisory_xact_lock_shared(hashtext($1), 1)::text" }

    /// Takes the lock of ``lockRegistrations`` alone, for the transaction: no registration is under way while the
    /// transaction deletes.
    var lockRetention: String { "SELECT pg_advisory_xact_lock(hashtext($1), 1)::text" }

    /// Saves the position `$2`/`$3` of consumer `$1` on the channels `$4`.
    var savePositions: String {
        """
        INSERT INTO \(quoted).consumers (consumer, channel, txid, id)
        SELECT $1, c, $2::int8::text::xid8, $3::int8 FROM unnest($4::text[]) AS c
        ON CONFLICT (consumer, channel) DO UPDATE SET txid = excluded.txid, id = excluded.id, updated_at = now()
        """
    }

    /// The highest position deleted for age, if any.
    var readHorizon: String {
        "SELECT txid::text::int8, id FROM \(quoted).retention"
    }

    /// Deletes the rows that every consumer of their channel has passed; returns how many. Per channel, so that a
    /// consumer of a quiet channel holds back nothing else. A row of a channel no consumer has a position on is
    /// deleted too: no consumer can receive it any more (one new to the channel starts after it). Every position
    /// that must hold rows back has to be a row of `consumers`. Run after ``lockRetention``, in its transaction.
    var deletePassed: String {
        """
        WITH deleted AS (
            DELETE FROM \(quoted).outbox AS o
            WHERE NOT EXISTS (
                SELECT 1 FROM \(quoted).consumers AS c
                WHERE c.channel = o.channel AND (c.txid, c.id) < (o.txid, o.id)
            )
            RETURNING 1
        ) SELECT count(*)::int8 FROM deleted
        """
    }

    /// Deletes the rows older than `$1` seconds and raises the retention horizon to the highest deleted; returns
    /// how many.
    var deleteOlder: String {
        """
        WITH deleted AS (
            DELETE FROM \(quoted).outbox WHERE created_at < now() - $1::float8 * interval '1 second'
            RETURNING txid, id
        ), highest AS (
            SELECT txid, id FROM deleted ORDER BY txid DESC, id DESC LIMIT 1
        ), raised AS (
            INSERT INTO \(quoted).retention (single, txid, id) SELECT true, txid, id FROM highest
            ON CONFLICT (single) DO UPDATE SET txid = excluded.txid, id = excluded.id
            WHERE (\(quoted).retention.txid, \(quoted).retention.id) < (excluded.txid, excluded.id)
            RETURNING 1
        ) SELECT count(*)::int8 FROM deleted
        """
    }

    /// Per channel `$1[i]` with position `$2[i]`/`$3[i]`: how many rows are stored after the position, and the age
    /// in seconds of the oldest of them (0 when none).
    var consumerLag: String {
        """
        SELECT c.channel, count(o.id)::int8,
               coalesce(extract(epoch FROM now() - min(o.created_at)), 0)::float8
        FROM unnest($1::text[], $2::int8[], $3::int8[]) AS c(channel, txid, id)
        LEFT JOIN \(quoted).outbox o
          ON o.channel = c.channel AND (o.txid, o.id) > (c.txid::text::xid8, c.id)
        GROUP BY c.channel
        """
    }

    /// The oldest transaction that has written (so holds an xid), has been open for longer than `$1` seconds, and
    /// holds back committed rows of the channels `$2` (rows this reader's snapshot sees but may not read yet): its
    /// backend pid and how long it has been open, in seconds.
    var stallingTransaction: String {
        """
        SELECT a.pid, extract(epoch FROM now() - a.xact_start)::float8 FROM pg_stat_activity a
        WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
          AND a.xact_start < now() - $1::float8 * interval '1 second'
          AND EXISTS (
            SELECT 1 FROM \(quoted).outbox o
            WHERE o.txid >= pg_snapshot_xmin(pg_current_snapshot()) AND o.channel = ANY($2::text[]))
        ORDER BY a.xact_start LIMIT 1
        """
    }

    // MARK: - The consumer name's lock

    /// The text hashed into the advisory lock key of consumer `$1`'s name in this schema.
    func consumerLockName(_ consumer: String) -> String { quoted + " " + consumer }

    /// Takes the session-level advisory lock of a consumer name (`$1` from ``consumerLockName(_:)``) if it is free.
    var tryConsumerLock: String { "SELECT pg_try_advisory_lock(hashtextextended($1, 0))" }

    /// Waits for the lock of a consumer name and takes it.
    var waitForConsumerLock: String { "SELECT pg_advisory_lock(hashtextextended($1, 0))::text" }

    /// The session holding the lock of a consumer name: its backend pid and start time, as text.
    var consumerLockHolder: String {
        """
        SELECT l.pid, coalesce(a.backend_start::text, '') FROM pg_locks l
        LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::int8 = (hashtextextended($1, 0) >> 32) & 4294967295
          AND l.objid::int8 = hashtextextended($1, 0) & 4294967295
        LIMIT 1
        """
    }

    /// This session's backend pid and start time, as text.
    var currentSession: String {
        "SELECT pid, backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()"
    }

    /// Ends the session with backend pid `$1` if it started at `$2` (so never a later session that reused the pid).
    var endSession: String {
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start::text = $2"
    }

    /// The stored positions of consumer `$1` on the channels `$2`.
    var readPositions: String {
        """
        SELECT channel, txid::text::int8, id FROM \(quoted).consumers WHERE consumer = $1 AND channel = ANY($2::text[])
        """
    }
}
