import Foundation
import PostgresNIO

// Consumer groups: the processes under one consumer name share a channel's partitions (`DurableProcessingPartitions
// .swift`, SQL in `DurableOutboxSchema+Partitions.swift`). A process is admitted to the group once no process of
// another layout runs, holds about its share of the partitions (`ceil(partitions / members)`), takes free ones when
// it holds fewer, and gives back the ones above its share (after their running messages end and their position is
// stored) when others join.
extension DurableProcessor {
    /// A partition taken: its number, its stored position, the messages acknowledged after it.
    struct TakenPartition: Sendable {
        var number: Int
        var position: Position
        var acknowledged: Set<Position>
        /// Whether its last holder ended without giving it back (see ``DurableOutboxSchema/markPartitionHeld``):
        /// then the first starts of its first messages are counted.
        var countsStarts: Bool
    }

    var groupName: String { schema.membersLockName(consumer, channel: channel) }

    func partitionRow(_ number: Int) -> String {
        schema.partitionConsumer(consumer, partition: number, of: layout.count)
    }

    func partitionLock(_ number: Int) -> String {
        schema.partitionLockName(consumer, channel: channel, partition: number, of: layout.count)
    }

    var channelOrderLock: String { schema.processingLockName(consumer, channel: channel) }

    /// Asks the server to end this session once the client's host stays silent for about
    /// ``DurableProcessingOptions/sessionTimeout``, so that a lost member's partitions are freed: keepalives after
    /// half of it, then three probes over the other half; unacknowledged data for at most the whole.
    func setSessionTimeouts(on watch: PostgresConnectionWatch) async throws {
        let seconds = max(3, Int(options.sessionTimeout.components.seconds))
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(String(max(1, seconds / 2)))
        bindings.append(String(max(1, seconds / 6)))
        bindings.append("3")
        bindings.append(String(seconds * 1_000))
        try await transport.storageQuery(schema.setSessionTimeouts, bindings, on: watch)
    }

    /// Joins the group, waiting (as a standby, polling) while a process of another layout runs: one in channel order,
    /// one of an earlier release, one with another partition count. On joining, the positions of another layout are
    /// taken over (every partition starts at the lowest of them: nothing is skipped) and deleted, and a consumer new
    /// to the channel gets a position per partition. False if cancelled meanwhile.
    func joinGroup(on watch: PostgresConnectionWatch) async throws -> Bool {
        try await standingBy(on: watch) { try await tryJoin(on: watch) }
    }

    /// One try at joining, in one transaction under the group's admission lock.
    private func tryJoin(on watch: PostgresConnectionWatch) async throws -> Bool {
        var group = PostgresBindings(capacity: 2)
        group.append(groupName)
        group.append(layout.count)
        var order = PostgresBindings(capacity: 1)
        order.append(channelOrderLock)
        var schemaName = PostgresBindings(capacity: 1)
        schemaName.append(schema.quoted)
        try await transport.storageQuery("BEGIN", on: watch)
        do {
            try await transport.storageQuery(schema.lockAdmission, group, on: watch)
            let counts = try await transport.storageQuery(schema.groupMembers, group, on: watch)
            var others: Int64 = 0
            if let row = counts.first { (others, _) = try row.decode((Int64, Int64).self) }
            guard others == 0,
                try await transport.storageQuery(schema.tryChannelOrderLockShared, order, on: watch).first?
                    .decode(Bool.self) == true
            else {
                try await transport.storageQuery("COMMIT", on: watch)
                return false
            }
            try await transport.storageQuery(schema.joinGroup, group, on: watch)
            try await transport.storageQuery(schema.lockRegistrations, schemaName, on: watch)
            try await adoptLayoutPositions(on: watch)
            try await transport.storageQuery("COMMIT", on: watch)
            return true
        } catch {
            _ = try? await transport.storageQuery("ROLLBACK", on: watch)
            throw error
        }
    }

    /// Makes the positions of this layout's partitions the only processing positions of the consumer on the channel:
    /// kept when they are all there and alone; otherwise every partition set to the lowest stored position of any
    /// layout (another layout's rows are then deleted), or, for a consumer new to the channel, to where a new
    /// consumer starts (``DurableProcessingOptions/startsAtOldestStored``).
    ///
    /// In channel order (run under the channel-order lock, so no group member runs), only another layout's rows are
    /// taken over; a consumer new to the channel is registered by ``loadPosition(on:)``.
    func adoptLayoutPositions(on watch: PostgresConnectionWatch) async throws {
        let rows = layout.isChannelOrder ? [schema.processingConsumer(consumer)] : (0..<layout.count).map(partitionRow)
        var lookup = PostgresBindings(capacity: 2)
        lookup.append(channel)
        lookup.append(schema.processingConsumer(consumer))
        var mine: [Position] = []
        var others: [(String, Position)] = []
        let own = Set(rows)
        for row in try await transport.storageQuery(schema.layoutPositions, lookup, on: watch) {
            let (name, txid, id) = try row.decode((String, Int64, Int64).self)
            if own.contains(name) {
                mine.append(Position(txid: txid, id: id))
            } else {
                others.append((name, Position(txid: txid, id: id)))
            }
        }
        if others.isEmpty && (mine.count == rows.count || layout.isChannelOrder) { return }
        let start: Position
        if let lowest = (mine + others.map(\.1)).min() {
            start = lowest
        } else if options.startsAtOldestStored {
            start = Position(txid: 0, id: 0)
        } else {
            let end = try await transport.storageQuery(schema.currentEnd, on: watch).first?.decode(Int64.self)
            start = Position(txid: end ?? 0, id: 0)
        }
        var set = PostgresBindings(capacity: 4)
        set.append(channel)
        set.append(rows)
        set.append(start.txid)
        set.append(start.id)
        try await transport.storageQuery(schema.setPartitionPositions, set, on: watch)
        if !others.isEmpty {
            var delete = PostgresBindings(capacity: 2)
            delete.append(channel)
            delete.append(others.map(\.0))
            try await transport.storageQuery(schema.deletePositions, delete, on: watch)
            transport.logger.notice(
                "processing positions of another layout taken over",
                metadata: [
                    "notificatable.channel": "\(channel)", "notificatable.consumer": "\(consumer)",
                    "notificatable.partitions": "\(layout.count)", "notificatable.replaced": "\(others.map(\.0))",
                ])
        }
    }

    /// How many partitions this process should hold: the count divided by the members of the group, rounded up.
    func partitionShare(on watch: PostgresConnectionWatch) async throws -> Int {
        var group = PostgresBindings(capacity: 2)
        group.append(groupName)
        group.append(layout.count)
        let counts = try await transport.storageQuery(schema.groupMembers, group, on: watch)
        var members: Int64 = 1
        if let row = counts.first { (_, members) = try row.decode((Int64, Int64).self) }
        members = max(1, members)
        return (layout.count + Int(members) - 1) / Int(members)
    }

    /// Takes up to `wanted` free partitions (none of `held`), in order from a place that depends on this session
    /// (so that processes joining at once try different ones first); returns them with their positions.
    func takePartitions(_ wanted: Int, holding held: [Int], on watch: PostgresConnectionWatch) async throws
        -> [TakenPartition]
    {
        guard wanted > 0 else { return [] }
        let candidates = (0..<layout.count).filter { !held.contains($0) }
        guard !candidates.isEmpty else { return [] }
        var lookup = PostgresBindings(capacity: 1)
        lookup.append(candidates.map(partitionLock))
        var free = try await transport.storageQuery(schema.freePartitions, lookup, on: watch).map {
            candidates[Int(try $0.decode(Int64.self)) - 1]
        }
        guard !free.isEmpty else { return [] }
        let offset = Int(DurablePartitionLayout.stableHash(watch.connection.id.description) % UInt64(free.count))
        free = Array(free[offset...] + free[..<offset]).prefix(wanted).sorted()
        var attempt = PostgresBindings(capacity: 1)
        attempt.append(free.map(partitionLock))
        let taken = try await transport.storageQuery(schema.tryPartitionLocks, attempt, on: watch).map {
            free[Int(try $0.decode(Int64.self)) - 1]
        }
        var result: [TakenPartition] = []
        for number in taken.sorted() {
            var read = PostgresBindings(capacity: 2)
            read.append(partitionRow(number))
            read.append(channel)
            guard let row = try await transport.storageQuery(schema.readPosition, read, on: watch).first else {
                throw PostgresTransportError(kind: .storageFailed)
            }
            let (txid, id) = try row.decode((Int64, Int64).self)
            let position = Position(txid: txid, id: id)
            var mark = PostgresBindings(capacity: 3)
            mark.append(partitionRow(number))
            mark.append(channel)
            mark.append(number)
            let clean = try await !transport.storageQuery(schema.markPartitionHeld, mark, on: watch).isEmpty
            result.append(
                TakenPartition(
                    number: number, position: position,
                    acknowledged: try await loadAcknowledged(after: position, on: watch), countsStarts: !clean))
        }
        return result
    }

    /// After a poll interval, the partitions to take (this process holds fewer than its share) and the share.
    func rebalance(holding held: [Int], on watch: PostgresConnectionWatch) async throws -> Event {
        guard (try? await Task.sleep(for: transport.configuration.pollInterval)) != nil else {
            return .rebalanced([], share: held.count)
        }
        let share = try await partitionShare(on: watch)
        let taken = try await takePartitions(share - held.count, holding: held, on: watch)
        return .rebalanced(taken, share: share)
    }

    /// Gives back the lock of partition `number` (its position is stored, none of its messages runs): its held
    /// mark is deleted first, so that its next holder counts no first start.
    func releasePartition(_ number: Int, on watch: PostgresConnectionWatch) async throws {
        try await clearHeld([number], on: watch)
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(partitionLock(number))
        try await transport.storageQuery(schema.unlockPartition, bindings, on: watch)
    }

    /// Deletes the held marks of `numbers`: they are given back cleanly.
    func clearHeld(_ numbers: [Int], on watch: PostgresConnectionWatch) async throws {
        guard !numbers.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(numbers.map(partitionRow))
        bindings.append(channel)
        try await transport.storageQuery(schema.clearPartitionsHeld, bindings, on: watch)
    }

    /// Stores the positions of several partitions, and deletes the acknowledgements and attempt counts every
    /// partition has passed.
    func savePartitions(_ saves: [(number: Int, count: Int, position: Position)], on watch: PostgresConnectionWatch)
        async throws
    {
        let statement = DurableSavePartitionsStatement(
            rows: saves.map { partitionRow($0.number) }, channel: channel, positions: saves.map(\.position),
            consumer: consumer, layoutRows: (0..<layout.count).map(partitionRow))
        try await transport.storage { try await watch.perform(statement) }
    }
}
