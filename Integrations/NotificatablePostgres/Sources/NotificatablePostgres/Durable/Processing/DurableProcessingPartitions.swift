import Foundation

/// How a processing consumer's channel is split among the processes under its name: in channel order (one
/// partition, one process at a time, as before consumer groups), or in ``count`` partitions, each message in one of
/// them (by its partition key's hash, or by its row id without a key), each partition with its own position and
/// lock.
struct DurablePartitionLayout: Sendable, Equatable {
    /// How many partitions; 1 is channel order.
    let count: Int

    /// Channel order when messages must be handled one after the other in the channel's order (concurrency 1 and no
    /// partition key); otherwise `partitions`.
    init(options: DurableProcessingOptions, hasPartitionKey: Bool) {
        count = options.maximumConcurrency == 1 && !hasPartitionKey ? 1 : options.partitionCount
    }

    init(count: Int) { self.count = count }

    /// Whether the channel is processed in its order by one process at a time.
    var isChannelOrder: Bool { count == 1 }

    /// The partition of a message: its key's hash, or its row id when it has no key (no partition key, or a message
    /// that could not be decoded).
    func partition(key: String?, id: Int64) -> Int {
        if count == 1 { return 0 }
        guard let key else { return Int(UInt64(bitPattern: id) % UInt64(count)) }
        return Int(Self.stableHash(key) % UInt64(count))
    }

    /// FNV-1a of the key's UTF-8 bytes: the same in every process and on every machine (Swift's `Hasher` is seeded
    /// per process), so that every member of a group puts a key in the same partition.
    static func stableHash(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// The partitions a processor's session holds, each with its window (the messages read since it was taken, see
/// ``DurableProcessingWindow``) and the last position it has read. Every message read goes into the window of every
/// held partition: as finished in the others, so that each partition's position follows the channel when its own
/// messages are done, and a quiet partition holds back no retention.
struct DurablePartitionSet {
    typealias Position = DurablePostgresNotificationTransport.Position

    struct Partition {
        let number: Int
        var window: DurableProcessingWindow
        /// The last position read into its window.
        var readAfter: Position
        /// Its own messages appended since it was taken (the first ones are those a crash may have left unfinished).
        var ordinals = 0
        /// Its messages handed out and not finished.
        var running = 0
        /// Whether the first starts of its first messages are counted (its last holder did not give it back).
        var countsStarts = true
        /// Given back: none of its messages is handed out any more; once none runs, its position is stored and its
        /// lock given back.
        var releasing = false
    }

    private(set) var partitions: [Int: Partition] = [:]

    /// The held partitions' numbers, in order. Kept apart from `partitions`, so that a loop over them can change the
    /// partitions in place: a loop over `partitions.keys` holds the dictionary's storage, and every change inside it
    /// copied the dictionary and then the window's arrays (a copy of every window for every row read: most of the
    /// CPU of a busy group session).
    private(set) var numbers: [Int] = []

    var isEmpty: Bool { partitions.isEmpty }

    /// Whether `number` is held and not being given back: its messages may be handed out.
    func isActive(_ number: Int) -> Bool { partitions[number].map { !$0.releasing } ?? false }

    /// Holds partition `number` from its stored position; `countsStarts` when its last holder did not give it back.
    mutating func take(_ number: Int, at position: Position, countsStarts: Bool = true) {
        partitions[number] = Partition(
            number: number, window: DurableProcessingWindow(start: position), readAfter: position,
            countsStarts: countsStarts)
        if !numbers.contains(number) {
            numbers.append(number)
            numbers.sort()
        }
    }

    /// Whether the first starts of `partition`'s first messages are counted.
    func countsStarts(_ partition: Int) -> Bool { partitions[partition]?.countsStarts ?? true }

    /// Stops holding partition `number`.
    mutating func remove(_ number: Int) {
        partitions[number] = nil
        numbers.removeAll { $0 == number }
    }

    mutating func release(_ number: Int) { partitions[number]?.releasing = true }

    /// Where the next read starts: after the position every held partition has read.
    var readAfter: Position? { partitions.values.map(\.readAfter).min() }

    /// Appends a message read at `position` of partition `partition`, by a read of the rows after `after`, to every
    /// window that has read up to `after` or further and not up to `position` (a partition taken behind `after`
    /// while that read ran gets the message from the next read, which starts from it: a window never skips a row);
    /// returns its index and ordinal in its partition's window when it is to be handed out (its partition held and
    /// not being given back, not read before, and not `done`: acknowledged before).
    mutating func append(_ position: Position, partition: Int, done: Bool, after: Position) -> (
        index: Int, ordinal: Int
    )? {
        var handed: (Int, Int)?
        for number in numbers {
            guard let readAfter = partitions[number]?.readAfter, after <= readAfter, readAfter < position else {
                continue
            }
            partitions[number]?.readAfter = position
            guard number == partition else {
                _ = partitions[number]?.window.append(position, finished: true)
                continue
            }
            let releasing = partitions[number]?.releasing ?? false
            guard let index = partitions[number]?.window.append(position, finished: done && !releasing) else {
                continue
            }
            if !done && !releasing {
                let ordinal = partitions[number]?.ordinals ?? 0
                partitions[number]?.ordinals = ordinal + 1
                handed = (index, ordinal)
            }
        }
        return handed
    }

    /// Started messages after the stored positions, in every held partition: at most these are handed out again
    /// after a crash.
    var unsavedStarted: Int { partitions.values.reduce(0) { $0 + $1.window.unsavedStarted } }

    /// A message of `partition` was handed out: `index` its place in the window, nil for a re-driven dead letter.
    mutating func markStarted(_ partition: Int, index: Int?) {
        if let index { partitions[partition]?.window.markStarted(index) }
        partitions[partition]?.running += 1
    }

    /// A message of `partition` ended: `finished` when it was processed or parked (not abandoned).
    mutating func markEnded(_ partition: Int, index: Int?, finished: Bool) {
        partitions[partition]?.running -= 1
        if finished, let index { partitions[partition]?.window.markFinished(index) }
    }

    /// Whether a message read at `position` of `partition`, by a read of the rows after `after`, is new to a held
    /// partition being worked (not given back): one it has not read yet, in a read that covers its window's end.
    func isNew(_ position: Position, in partition: Int, after: Position) -> Bool {
        guard let held = partitions[partition], !held.releasing else { return false }
        return after <= held.readAfter && held.readAfter < position
    }

    /// The positions to store: each held partition whose finished messages are ahead of its stored position; with
    /// `freeingWindow`, only those that hold started messages past it (whose save makes room to hand out more), not
    /// those that moved on only past other partitions' messages.
    func positionsToSave(freeingWindow: Bool = false) -> [(number: Int, count: Int, position: Position)] {
        partitions.values.filter { $0.window.needsSaving && (!freeingWindow || $0.window.unsavedStarted > 0) }.map {
            ($0.number, $0.window.finishedCount, $0.window.acknowledged)
        }
        .sorted { $0.number < $1.number }
    }

    /// Whether a partition being given back waits for its position to be stored.
    var releaseAwaitsSave: Bool { partitions.values.contains { $0.releasing && $0.window.needsSaving } }

    mutating func saved(_ number: Int, upTo count: Int, position: Position) {
        partitions[number]?.window.saved(upTo: count, position: position)
    }

    /// The lowest position that may be stored, over the held partitions (the consumer's lag is measured from it).
    var acknowledged: Position? { partitions.values.map(\.window.acknowledged).min() }

    /// The partitions being given back whose messages have all ended and whose position is stored: their locks may
    /// be given back.
    var releasable: [Int] {
        partitions.values.filter { $0.releasing && $0.running == 0 && !$0.window.needsSaving }.map(\.number).sorted()
    }
}
