import Foundation

// The SQL of consumer groups (`DurableProcessor+Group.swift`): a processing consumer whose messages may be handled
// out of the channel's order (a partition key, or more than one at once) splits the channel into partitions, each
// with a position row and an advisory lock of its own, and the processes under its name share the partitions.
//
// Names, for consumer `billing` on channel `c` of a layout of `N` partitions (`N` > 1):
// - partition `p`'s position: the `consumers` row `billing/processing p/N` (a name no relay's consumer can have: the
//   configuration refuses `/processing ` in a consumer name);
// - partition `p`'s lock: the one-key advisory lock of `"<schema>" billing/processing p/N c`, as the processing lock
//   of a consumer in channel order is `"<schema>" billing/processing c`;
// - membership: the two-key shared lock (hashtext of `"<schema>" billing/processing members c`, `N`), held by every
//   process admitted to the group for the session; the key (…, 0), taken for a transaction, admits one at a time.
// A member also holds the channel-order lock shared, so that no process working in channel order (and no process of
// an earlier release, which takes that lock alone) runs beside the group, and none of the group beside it.
extension DurableOutboxSchema {
    /// The `consumers` row of partition `partition` of `count` of processing consumer `consumer`.
    func partitionConsumer(_ consumer: String, partition: Int, of count: Int) -> String {
        processingConsumer(consumer) + " \(partition)/\(count)"
    }

    /// The advisory lock name of partition `partition` of `count` of `consumer` processing `channel`.
    func partitionLockName(_ consumer: String, channel: String, partition: Int, of count: Int) -> String {
        consumerLockName(partitionConsumer(consumer, partition: partition, of: count)) + " " + channel
    }

    /// The text hashed into the first key of the group's two-key membership locks.
    func membersLockName(_ consumer: String, channel: String) -> String {
        consumerLockName(processingConsumer(consumer)) + " members " + channel
    }

    /// Waits for the group's admission lock (`$1` the members' lock name), for the transaction.
    var lockAdmission: String { "SELECT pg_advisory_xact_lock(hashtext($1), 0)::text" }

    /// How many sessions hold the membership lock of the group `$1` with a layout other than `$2` partitions, and
    /// how many with `$2` (shared locks only: the admission lock, key 0, is taken alone, for a transaction).
    var groupMembers: String {
        """
        SELECT count(*) FILTER (WHERE l.objid::int8 <> $2::int8)::int8,
               count(*) FILTER (WHERE l.objid::int8 = $2::int8)::int8
        FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.mode = 'ShareLock' AND l.objid <> 0
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::int8 = hashtext($1)::int8 & 4294967295
        """
    }

    /// Takes the channel-order lock `$1` shared, if no session holds it alone.
    var tryChannelOrderLockShared: String { "SELECT pg_try_advisory_lock_shared(hashtextextended($1, 0))" }

    /// Gives back the channel-order lock `$1` taken shared.
    var unlockChannelOrderShared: String { "SELECT pg_advisory_unlock_shared(hashtextextended($1, 0))" }

    /// Takes the membership lock of group `$1` for a layout of `$2` partitions, for the session.
    var joinGroup: String { "SELECT pg_advisory_lock_shared(hashtext($1), $2::int4)::text" }

    /// Of the partition lock names `$1`, the places (1-based) of those no session holds.
    var freePartitions: String {
        """
        SELECT n.i::int8 FROM unnest($1::text[]) WITH ORDINALITY AS n(name, i)
        WHERE NOT EXISTS (
            SELECT 1 FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid::int8 = (hashtextextended(n.name, 0) >> 32) & 4294967295
              AND l.objid::int8 = hashtextextended(n.name, 0) & 4294967295)
        ORDER BY n.i
        """
    }

    /// Tries each partition lock of `$1`; returns the places (1-based) of those taken.
    var tryPartitionLocks: String {
        """
        SELECT n.i::int8 FROM unnest($1::text[]) WITH ORDINALITY AS n(name, i)
        WHERE pg_try_advisory_lock(hashtextextended(n.name, 0))
        """
    }

    /// Marks partition row `$1` on channel `$2` as held (`$3` its number): a row of `attempts` under the partition's
    /// row name, deleted when the partition is given back or its process stops cleanly. Returns a row when the mark
    /// was not there: the partition's last holder ended cleanly (or it is new), so no message of it was left started
    /// and unfinished, and first starts need not be counted; no row when its last holder ended without giving it
    /// back (a crash, a kill, a lost connection).
    var markPartitionHeld: String {
        """
        INSERT INTO \(quoted).attempts (consumer, channel, txid, id, attempts) VALUES ($1, $2, '0'::xid8, $3::int8, 0)
        ON CONFLICT (consumer, channel, txid, id) DO NOTHING
        RETURNING 1
        """
    }

    /// Deletes the held marks of the partition rows `$1` (an array) on channel `$2`: given back cleanly.
    var clearPartitionsHeld: String {
        "DELETE FROM \(quoted).attempts WHERE consumer = ANY($1::text[]) AND channel = $2 AND txid = '0'::xid8"
    }

    /// Gives back the partition lock `$1`.
    var unlockPartition: String { "SELECT pg_advisory_unlock(hashtextextended($1, 0))" }

    /// Every processing position of consumer `$2` (its processing row name) on channel `$1`, in any layout: the
    /// channel-order row `$2` and the partition rows starting with `$2 `.
    var layoutPositions: String {
        """
        SELECT consumer, txid::text::int8, id FROM \(quoted).consumers
        WHERE channel = $1 AND (consumer = $2 OR starts_with(consumer, $2 || ' '))
        """
    }

    /// Stores the position `$3`/`$4` for each row `$2` (an array) on channel `$1`, replacing any.
    var setPartitionPositions: String {
        """
        INSERT INTO \(quoted).consumers (consumer, channel, txid, id)
        SELECT c, $1, $3::int8::text::xid8, $4::int8 FROM unnest($2::text[]) AS c
        ON CONFLICT (consumer, channel) DO UPDATE SET txid = excluded.txid, id = excluded.id, updated_at = now()
        """
    }

    /// Deletes the processing rows `$2` (an array) of channel `$1`: another layout's, once its positions are taken
    /// over.
    var deletePositions: String {
        "DELETE FROM \(quoted).consumers WHERE channel = $1 AND consumer = ANY($2::text[])"
    }

    /// The first position a new consumer gets at the current end of the outbox (see ``registerPosition``).
    var currentEnd: String { "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::int8" }

    /// The position of row `$1` on channel `$2`.
    var readPosition: String {
        "SELECT txid::text::int8, id FROM \(quoted).consumers WHERE consumer = $1 AND channel = $2"
    }

    /// Sets the server's TCP keepalive and user timeout of this session, so that the server ends the session (and
    /// frees its locks) when the client's host goes silent: `$1` idle seconds, `$2` interval seconds, `$3` probes,
    /// `$4` milliseconds of unacknowledged data.
    var setSessionTimeouts: String {
        """
        SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false),
               set_config('tcp_keepalives_count', $3, false), set_config('tcp_user_timeout', $4, false)
        """
    }
}
