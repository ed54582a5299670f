import Foundation

// The statements of batch processing (`processTransactionally(_:maximumBatchSize:…)`): one statement for a whole
// batch where one message takes one, so that a batch costs a few round trips, not three per message.
extension DurableOutboxSchema {
    /// Counts one more start of each message `$3[i]`/`$4[i]` of consumer `$1` on `$2`; returns each message's
    /// `txid`, `id` and count, this start included. Deletes first the counts of the messages `$5[i]`/`$6[i]`,
    /// finished since the last count, as ``countAttempt`` does (none of them is in the batch).
    var countAttempts: String {
        """
        WITH cleared AS (
            DELETE FROM \(quoted).attempts
            WHERE consumer = $1 AND channel = $2
              AND (txid, id) IN (SELECT t::text::xid8, i FROM unnest($5::int8[], $6::int8[]) AS f(t, i))
            RETURNING 1
        )
        INSERT INTO \(quoted).attempts AS a (consumer, channel, txid, id, attempts)
        SELECT $1, $2, t::text::xid8, i, 1 FROM unnest($3::int8[], $4::int8[]) AS b(t, i)
        ON CONFLICT (consumer, channel, txid, id) DO UPDATE SET attempts = a.attempts + 1, started_at = now()
        RETURNING txid::text::int8, id, attempts
        """
    }

    /// Takes back one start of each message `$3[i]`/`$4[i]` of consumer `$1` on `$2`: their batch failed or was
    /// abandoned, which is not a failure of each message.
    var uncountAttempts: String {
        """
        UPDATE \(quoted).attempts SET attempts = attempts - 1
        WHERE consumer = $1 AND channel = $2 AND attempts > 0
          AND (txid, id) IN (SELECT t::text::xid8, i FROM unnest($3::int8[], $4::int8[]) AS b(t, i))
        """
    }

    /// Acknowledges the messages `$3[i]`/`$4[i]` of consumer `$1` on `$2`; one row per message that was not
    /// acknowledged already.
    var acknowledgeAll: String {
        """
        INSERT INTO \(quoted).acknowledgements (consumer, channel, txid, id)
        SELECT $1, $2, t::text::xid8, i FROM unnest($3::int8[], $4::int8[]) AS b(t, i)
        ON CONFLICT (consumer, channel, txid, id) DO NOTHING
        RETURNING 1
        """
    }
}
