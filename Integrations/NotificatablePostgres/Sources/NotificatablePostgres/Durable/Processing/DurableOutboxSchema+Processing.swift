import Foundation
import PostgresNIO

// The SQL of acknowledged processing (`Durable/Processing/`): two tables beside the outbox, and the statements on
// them. A processing consumer's position is a `consumers` row of its own, named by `processingConsumer(_:)`, so that
// a relay forwarding a channel and a processor of the same channel under one consumer name do not share a position,
// and retention waits for both.
extension DurableOutboxSchema {
    /// The tables of processing (created by the migrations of `DurableSchemaMigrations.swift`; each statement
    /// idempotent):
    /// - `acknowledgements`: messages acknowledged inside a handler's transaction and not yet passed by the stored
    ///   position; deleted as the position passes them.
    /// - `dead_letters`: messages parked after their last attempt, or that could not be used at all, with the
    ///   error; `redrive` set asks the consumer to process the message again.
    var processingTableStatements: [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(quoted).acknowledgements (
                consumer text NOT NULL,
                channel text NOT NULL,
                txid xid8 NOT NULL,
                id bigint NOT NULL,
                acknowledged_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer, channel, txid, id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS \(quoted).dead_letters (
                consumer text NOT NULL,
                channel text NOT NULL,
                txid xid8 NOT NULL,
                id bigint NOT NULL,
                message text NOT NULL,
                error text NOT NULL,
                attempts integer NOT NULL,
                parked_at timestamptz NOT NULL DEFAULT now(),
                redrive boolean NOT NULL DEFAULT false,
                PRIMARY KEY (consumer, channel, txid, id)
            )
            """,
        ]
    }

    /// `attempts` (schema version 2): how many times the handler was started with a message not yet passed by the
    /// stored position, written before each start, so that a handler that ends the process is counted too; deleted
    /// as the position passes.
    var attemptsTableStatement: String {
        """
        CREATE TABLE IF NOT EXISTS \(quoted).attempts (
            consumer text NOT NULL,
            channel text NOT NULL,
            txid xid8 NOT NULL,
            id bigint NOT NULL,
            attempts integer NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (consumer, channel, txid, id)
        )
        """
    }

    /// `dead_letters.redrive_starts` (schema version 3): the starts of the handler with a re-driven letter since the
    /// re-drive was asked for, written before each start, so that a re-drive whose handler ends the process is
    /// parked again after its attempts instead of ending every run.
    var redriveStartsColumnStatement: String {
        "ALTER TABLE \(quoted).dead_letters ADD COLUMN IF NOT EXISTS redrive_starts integer NOT NULL DEFAULT 0"
    }

    /// The `consumers` row that holds the processing position of `consumer`.
    func processingConsumer(_ consumer: String) -> String { consumer + "/processing" }

    /// The advisory lock name of `consumer` processing `channel` (one process at a time).
    func processingLockName(_ consumer: String, channel: String) -> String {
        consumerLockName(processingConsumer(consumer)) + " " + channel
    }

    /// The position of `$1` on channel `$2`, created before every stored message when the consumer has none. Run
    /// inside ``lockRegistrations``, as ``registerPosition`` is.
    var registerPositionAtOldest: String {
        """
        WITH created AS (
            INSERT INTO \(quoted).consumers (consumer, channel, txid, id) VALUES ($1, $2, '0'::xid8, 0)
            ON CONFLICT (consumer, channel) DO NOTHING
            RETURNING txid, id
        )
        SELECT txid::text::int8, id FROM created
        UNION ALL
        SELECT txid::text::int8, id FROM \(quoted).consumers WHERE consumer = $1 AND channel = $2
        LIMIT 1
        """
    }

    /// Counts one more start of the handler with message `$3`/`$4` of consumer `$1` on `$2`; returns the count,
    /// this start included. Deletes first the counts of the messages `$5[i]`/`$6[i]`, finished since the last count
    /// (so that a finished message whose position was not stored before a crash does not keep its starts).
    var countAttempt: String {
        """
        WITH cleared AS (
            DELETE FROM \(quoted).attempts
            WHERE consumer = $1 AND channel = $2
              AND (txid, id) IN (SELECT t::text::xid8, i FROM unnest($5::int8[], $6::int8[]) AS f(t, i))
            RETURNING 1
        )
        INSERT INTO \(quoted).attempts AS a (consumer, channel, txid, id, attempts)
        VALUES ($1, $2, $3::int8::text::xid8, $4::int8, 1)
        ON CONFLICT (consumer, channel, txid, id) DO UPDATE SET attempts = a.attempts + 1, started_at = now()
        RETURNING attempts
        """
    }

    /// Counts a start of the re-driven dead letter `$3`/`$4` of consumer `$1` on `$2`: its starts since the re-drive
    /// was asked for, this one included; no row when the letter is gone or no longer asked to be re-driven.
    var countRedriveStart: String {
        """
        UPDATE \(quoted).dead_letters SET redrive_starts = redrive_starts + 1
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8 AND redrive
        RETURNING redrive_starts
        """
    }

    /// Takes back the count of a start of the re-driven dead letter `$3`/`$4` of consumer `$1` on `$2` that was
    /// abandoned (the processor stopped during it).
    var uncountRedriveStart: String {
        """
        UPDATE \(quoted).dead_letters SET redrive_starts = redrive_starts - 1
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8
          AND redrive_starts > 0
        """
    }

    /// Takes back the count of a start of message `$3`/`$4` of consumer `$1` on `$2` that was abandoned (the
    /// processor stopped during it): it is not a failure of the message.
    var uncountAttempt: String {
        """
        UPDATE \(quoted).attempts SET attempts = attempts - 1
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8 AND attempts > 0
        """
    }

    /// Acknowledges message `$3`/`$4` of consumer `$1` on channel `$2`; no row if it was acknowledged already.
    var acknowledge: String {
        """
        INSERT INTO \(quoted).acknowledgements (consumer, channel, txid, id)
        VALUES ($1, $2, $3::int8::text::xid8, $4::int8)
        ON CONFLICT (consumer, channel, txid, id) DO NOTHING
        RETURNING 1
        """
    }

    /// Acknowledges a re-driven dead letter by deleting it; no row if it is gone (processed already).
    var acknowledgeRedriven: String {
        """
        DELETE FROM \(quoted).dead_letters
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8 AND redrive
        RETURNING 1
        """
    }

    /// Whether message `$3`/`$4` of consumer `$1` on `$2` is acknowledged (one row).
    var isAcknowledged: String {
        """
        SELECT 1 FROM \(quoted).acknowledgements
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8
        """
    }

    /// The messages of consumer `$1` on `$2` acknowledged after the position `$3`/`$4`.
    var acknowledgedAfter: String {
        """
        SELECT txid::text::int8, id FROM \(quoted).acknowledgements
        WHERE consumer = $1 AND channel = $2 AND (txid, id) > ($3::int8::text::xid8, $4::int8)
        """
    }

    /// Parks message `$3`/`$4` of consumer `$1` on `$2`: `$5` message, `$6` error, `$7` attempts. A dead letter
    /// parked again (a re-drive that failed) is updated and waits for another re-drive.
    var park: String {
        """
        INSERT INTO \(quoted).dead_letters (consumer, channel, txid, id, message, error, attempts)
        VALUES ($1, $2, $3::int8::text::xid8, $4::int8, $5, $6, $7::int4)
        ON CONFLICT (consumer, channel, txid, id) DO UPDATE
        SET message = excluded.message, error = excluded.error, attempts = excluded.attempts, parked_at = now(),
            redrive = false, redrive_starts = 0
        """
    }

    /// Deletes the dead letter `$3`/`$4` of consumer `$1` on `$2` (a re-drive that succeeded).
    var deleteDeadLetter: String {
        """
        DELETE FROM \(quoted).dead_letters
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8
        """
    }

    /// Whether the dead letter `$3`/`$4` of consumer `$1` on `$2` is still there (one row).
    var deadLetterExists: String {
        """
        SELECT 1 FROM \(quoted).dead_letters
        WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8
        """
    }

    /// The dead letters of consumer `$1` on `$2` asked to be re-driven, oldest first, at most `$3`, after the position
    /// `$4`/`$5`.
    var redriveRequested: String {
        """
        SELECT txid::text::int8, id, message FROM \(quoted).dead_letters
        WHERE consumer = $1 AND channel = $2 AND redrive AND (txid, id) > ($4::int8::text::xid8, $5::int8)
        ORDER BY txid, id LIMIT $3
        """
    }

    /// The dead letters of consumer `$1` (every channel when `$2` is null), oldest first, at most `$3`.
    var listDeadLetters: String {
        """
        SELECT channel, txid::text::int8, id, message, error, attempts, parked_at, redrive
        FROM \(quoted).dead_letters
        WHERE consumer = $1 AND ($2::text IS NULL OR channel = $2)
        ORDER BY parked_at, txid, id LIMIT $3
        """
    }

    /// Asks for dead letter `$3`/`$4` of consumer `$1` on `$2` to be re-driven, and wakes the consumers (`$5` is
    /// the wake channel); one row if it exists.
    var requestRedrive: String {
        """
        WITH marked AS (
            UPDATE \(quoted).dead_letters SET redrive = true
            WHERE consumer = $1 AND channel = $2 AND txid = $3::int8::text::xid8 AND id = $4::int8
            RETURNING 1
        ) SELECT pg_notify($5, '') FROM marked
        """
    }
}
