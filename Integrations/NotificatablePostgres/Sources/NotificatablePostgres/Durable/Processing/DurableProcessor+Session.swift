import Foundation
import PostgresNIO

// A processor's session: one connection's worth of processing, in channel order (one lock, one position) or as a
// member of the consumer's group (partitions taken and given back as processes join and leave).
extension DurableProcessor {
    /// The longest a busy session leaves finished messages' positions unstored while its loop runs: 50 ms (the loop
    /// wakes at least every poll interval, with its lag measure). A crash repeats at most ``unsavedLimit`` started
    /// messages whatever the interval; it bounds how far the stored positions, the lag an operator sees and the
    /// retention horizon trail the work.
    static var saveInterval: Duration { .milliseconds(50) }

    /// One connection's worth of processing: returns when cancelled (after the running handlers end and the
    /// positions are stored), throws when the connection fails.
    func session(_ watch: PostgresConnectionWatch, connected: () -> Void) async throws {
        _ = try await transport.storage { try await watch.run(schema.setSearchPath) }
        // Position saves need not wait for the WAL flush: a server crash can only lose the last ones, and then
        // messages are processed again, never skipped (WAL order keeps a dead letter before the position passing it).
        _ = try await watch.run(PostgresQuery(unsafeSQL: "SET synchronous_commit = off"))
        try await transport.ensureSchema(on: watch)
        if layout.isChannelOrder {
            guard try await holdLock(on: watch) else { return }
        } else {
            try await setSessionTimeouts(on: watch)
            guard try await joinGroup(on: watch) else { return }
        }
        let signal = DurableProcessingSignal()
        let listener = PostgresListener(watch.connection, channel: schema.wakeChannel) { _ in signal.fire() }
        defer { listener.stop() }
        _ = try await watch.run("SELECT 1")  // the LISTEN is in effect

        var partitions = DurablePartitionSet()
        var acknowledged: Set<Position> = []
        var share = 1
        if layout.isChannelOrder {
            let start = try await loadPosition(on: watch)
            partitions.take(0, at: start)
            acknowledged = try await loadAcknowledged(after: start, on: watch)
        } else {
            share = try await partitionShare(on: watch)
            for taken in try await takePartitions(share, holding: [], on: watch) {
                partitions.take(taken.number, at: taken.position, countsStarts: taken.countsStarts)
                acknowledged.formUnion(taken.acknowledged)
            }
            logPartitions(took: partitions.numbers, gaveBack: [], share: share)
        }
        connected()
        var lastAcknowledged = partitions.acknowledged ?? Position(txid: 0, id: 0)
        if partitions.isEmpty { monitor.standingBy() } else { monitor.processing(from: lastAcknowledged) }
        monitor.holding(partitions.numbers, of: layout.count)
        defer { monitor.disconnected() }

        var pending = DurablePendingItems<Item>()
        var running = 0
        /// The messages handed out and not finished: `running` counts handler calls, one per batch.
        var runningItems = 0
        var runningKeys: [String: Int] = [:]
        var redriving: Set<Position> = []
        // Re-drives that finished, with the serial of the last fetch started before they did: a fetch that started
        // before a re-drive finished may have read its dead letter still there, and must not hand it out again.
        var finishedRedrives: [Position: Int] = [:]
        var fetchSerial = 0
        var fetching = false
        var saving = false
        var measuring = false
        var rebalancing = false
        var unlocking: Set<Int> = []
        let rewind = DurableFetchRewind()
        var redrives = DurableRedriveCursor(checkedAt: ContinuousClock.now - transport.configuration.pollInterval)
        // A consumer that has not passed a message yet (a new one starts before every stored message) did not miss
        // what retention deleted before: it reports only deletions from now on.
        var reportedHorizon: Position? =
            lastAcknowledged == Position(txid: 0, id: 0) ? try await readHorizon(on: watch) : nil

        // Started messages whose position is not stored yet (see ``unsavedLimit``).
        let unsavedLimit = self.unsavedLimit
        var lastSave = ContinuousClock.now

        /// Records that `item` was handed out.
        func start(_ item: Item) {
            runningItems += 1
            if let key = item.key { runningKeys[key, default: 0] += 1 }
            partitions.markStarted(item.partition, index: item.redriven ? nil : item.index)
        }

        /// Records that `item` finished (or was abandoned): its key is free again, its place in the window done.
        func settle(_ item: Item, _ outcome: Outcome) {
            runningItems -= 1
            if let key = item.key {
                runningKeys[key, default: 1] -= 1
                if runningKeys[key] == 0 { runningKeys[key] = nil }
            }
            if item.redriven {
                redriving.remove(item.position)
                finishedRedrives[item.position] = fetchSerial
            }
            let finished: Bool
            if case .done = outcome { finished = true } else { finished = false }
            partitions.markEnded(item.partition, index: item.redriven ? nil : item.index, finished: finished)
        }

        try await withThrowingTaskGroup(of: Event.self) { group in
            while true {
                let stopping = Task.isCancelled
                // Hand out what may start: within the concurrency, within the unacknowledged window, in key order.
                while !stopping, running < options.maximumConcurrency,
                    partitions.unsavedStarted < unsavedLimit,
                    let next = nextStartable(pending, runningKeys: runningKeys),
                    let item = pending.remove(at: next)
                {
                    running += 1
                    start(item)
                    guard case .batch(let maximum, _) = body else {
                        group.addTask {
                            let outcome = try await self.handle(item, on: watch)
                            return .finished(item, outcome)
                        }
                        continue
                    }
                    // A batch: the next startable items, in order, within the window; a key may appear more than
                    // once (in order, in one transaction), but not in two batches at once.
                    var batch = [item]
                    var batchKeys: Set<String> = item.key.map { [$0] } ?? []
                    while batch.count < maximum, partitions.unsavedStarted < unsavedLimit,
                        let next = nextStartable(pending, runningKeys: runningKeys, joining: batchKeys),
                        let more = pending.remove(at: next)
                    {
                        if let key = more.key { batchKeys.insert(key) }
                        start(more)
                        batch.append(more)
                    }
                    group.addTask {
                        let outcomes = try await self.handleBatch(batch, on: watch)
                        return .finishedBatch(batch, outcomes)
                    }
                }
                if !stopping, !fetching, pending.count <= pageSize / 2, let after = partitions.readAfter {
                    fetching = true
                    fetchSerial += 1
                    let (cursor, serial) = (redrives, fetchSerial)
                    rewind.clear()
                    group.addTask {
                        try await self.fetch(
                            after: after, redrives: cursor, serial: serial, signal: signal, rewind: rewind, on: watch)
                    }
                }
                // Store the positions when it matters, not after every message: when nothing runs (a quiet
                // consumer's position follows at once), when half the window of started messages is unsaved (the
                // other half keeps the handlers busy while the save runs), when a partition is being given back,
                // when stopping, and at least every `saveInterval`. One save per handful of messages, each an
                // upsert of every held partition, queued the page reads behind it on the one connection.
                // A save for room in the window stores only the partitions that give room (a few rows, not every
                // held partition's).
                // (Looked at only while no save runs: the loop turns once per event.)
                let saveAll =
                    !saving
                    && (stopping || runningItems == 0 || partitions.releaseAwaitsSave
                        || ContinuousClock.now - lastSave >= Self.saveInterval)
                if !saving, saveAll || partitions.unsavedStarted >= unsavedLimit / 2 {
                    let saves = partitions.positionsToSave(freeingWindow: !saveAll)
                    if !saves.isEmpty {
                        saving = true
                        lastSave = ContinuousClock.now
                        group.addTask {
                            if self.layout.isChannelOrder {
                                try await self.save(saves[0].position, on: watch)
                            } else {
                                try await self.savePartitions(saves, on: watch)
                            }
                            return .saved(saves)
                        }
                    }
                }
                if !saving {
                    // Give back the partitions above this process's share once their messages ended and their
                    // positions are stored.
                    for number in partitions.releasable where unlocking.insert(number).inserted {
                        group.addTask {
                            try await self.releasePartition(number, on: watch)
                            return .released(number)
                        }
                    }
                }
                if !stopping, !measuring, !partitions.isEmpty {
                    measuring = true
                    group.addTask {
                        try await self.measureLag(on: watch)
                        return .measured
                    }
                }
                if !stopping, !rebalancing, !layout.isChannelOrder {
                    rebalancing = true
                    let held = partitions.numbers
                    group.addTask { try await self.rebalance(holding: held, on: watch) }
                }
                if let position = partitions.acknowledged { lastAcknowledged = position }
                monitor.update(running: runningItems, waiting: pending.count, acknowledged: lastAcknowledged)
                if stopping, running == 0, !saving, !fetching, unlocking.isEmpty {
                    // Stopped cleanly: every position stored, nothing running; the next holders count no first
                    // start.
                    if !layout.isChannelOrder { try await clearHeld(partitions.numbers, on: watch) }
                    return
                }
                guard let event = try await group.next() else { return }
                switch event {
                case .fetched(let rows, let after, let redriven, let cursor, let serial, let horizon):
                    fetching = false
                    redrives = cursor
                    if let horizon, let after = partitions.readAfter, after < horizon, reportedHorizon != horizon {
                        // Rows this consumer had not read were deleted for age: say so, as a relay's reader does.
                        reportedHorizon = horizon
                        report(
                            NotificationTransportEvent(
                                kind: .messagesMissed, name: handle.name, channel: channel,
                                error: PostgresTransportError(kind: .behindRetention)))
                    }
                    for row in rows {
                        let (partition, read) = readItem(row, after: after, partitions: partitions)
                        let done = read != nil && acknowledged.remove(row.position) != nil
                        let appended = partitions.append(row.position, partition: partition, done: done, after: after)
                        if var item = read, let (index, ordinal) = appended {
                            item.index = index
                            item.ordinal = ordinal
                            item.countsStarts = partitions.countsStarts(partition)
                            pending.append(item)
                        }
                    }
                    for row in redriven where finishedRedrives[row.position].map({ serial > $0 }) ?? true {
                        let item = item(row, redriven: true)
                        if partitions.isActive(item.partition), redriving.insert(row.position).inserted {
                            pending.append(item)
                        }
                    }
                    // Every fetch from now on starts after each of these finished.
                    finishedRedrives = [:]
                case .finished(let item, let outcome):
                    running -= 1
                    settle(item, outcome)
                case .finishedBatch(let items, let outcomes):
                    running -= 1
                    for (item, outcome) in zip(items, outcomes) { settle(item, outcome) }
                case .saved(let saves):
                    saving = false
                    for save in saves { partitions.saved(save.number, upTo: save.count, position: save.position) }
                case .measured:
                    measuring = false
                case .rebalanced(let taken, let newShare):
                    rebalancing = false
                    share = newShare
                    let wasEmpty = partitions.isEmpty
                    for partition in taken {
                        partitions.take(partition.number, at: partition.position, countsStarts: partition.countsStarts)
                        acknowledged.formUnion(partition.acknowledged)
                    }
                    if !taken.isEmpty {
                        // A partition taken behind the others' read position: the read in progress ends, and the
                        // next one starts from there.
                        rewind.set()
                        signal.fire()
                        if wasEmpty, let position = partitions.acknowledged { monitor.processing(from: position) }
                    }
                    let working = partitions.numbers.filter(partitions.isActive)
                    let givingBack = working.count > share ? Array(working.suffix(working.count - share)) : []
                    for number in givingBack {
                        partitions.release(number)
                        for item in pending.removeAll(where: { $0.partition == number }) where item.redriven {
                            redriving.remove(item.position)
                        }
                    }
                    if !taken.isEmpty || !givingBack.isEmpty {
                        logPartitions(took: taken.map(\.number), gaveBack: givingBack, share: share)
                        monitor.holding(partitions.numbers.filter(partitions.isActive), of: layout.count)
                    }
                case .released(let number):
                    unlocking.remove(number)
                    partitions.remove(number)
                    if partitions.isEmpty { monitor.standingBy() }
                }
                if acknowledged.count > 4 * pageSize, let after = partitions.readAfter {
                    acknowledged = acknowledged.filter { after < $0 }
                }
            }
        }
    }

    /// The partition of a message read from the outbox, and its item when that partition is held and being worked
    /// and has not read it yet. With a partition key, every message is decoded (its key gives its partition);
    /// without one, only those of held partitions. The item's index and ordinal are set when it is appended to its
    /// partition's window.
    func readItem(_ row: DurableOutboxRow, after: Position, partitions: DurablePartitionSet) -> (
        partition: Int, item: Item?
    ) {
        if partitionKey == nil || layout.isChannelOrder {
            let partition = layout.partition(key: nil, id: row.position.id)
            guard partitions.isNew(row.position, in: partition, after: after) else { return (partition, nil) }
            return (partition, item(row, redriven: false))
        }
        let item = item(row, redriven: false)
        return (item.partition, partitions.isNew(row.position, in: item.partition, after: after) ? item : nil)
    }

    /// Logs a change of the partitions this process holds, at `info`: which ones it took and gave back, and its share.
    func logPartitions(took: [Int], gaveBack: [Int], share: Int) {
        transport.logger.info(
            "consumer group: partitions taken \(took), given back \(gaveBack); share \(share) of \(layout.count)",
            metadata: [
                "notificatable.channel": "\(channel)", "notificatable.consumer": "\(consumer)",
                "notificatable.partitions.taken": "\(took)", "notificatable.partitions.givenBack": "\(gaveBack)",
            ])
    }
}

/// Tells a processor's read in progress that a partition was taken behind where it reads: the read ends, so that
/// the next one starts from the new partition's position.
final class DurableFetchRewind: @unchecked Sendable {
    private let lock = NSLock()
    private var requested = false

    func set() { lock.withLock { requested = true } }

    func clear() { lock.withLock { requested = false } }

    var isSet: Bool { lock.withLock { requested } }
}
