import Testing

@testable import NotificatablePostgres

/// How a consumer group splits a channel, and what one process holds (no server needed).
@Suite struct PartitionSetTests {
    typealias Position = DurablePostgresNotificationTransport.Position

    func at(_ id: Int64) -> Position { Position(txid: 100, id: id) }

    @Test func theLayoutFollowsTheOrderingOptionsAndTheKeyHashIsTheSameEverywhere() {
        var options = DurableProcessingOptions()
        #expect(DurablePartitionLayout(options: options, hasPartitionKey: false).count == 1)
        #expect(DurablePartitionLayout(options: options, hasPartitionKey: true).count == 16)
        options.maximumConcurrency = 4
        #expect(DurablePartitionLayout(options: options, hasPartitionKey: false).count == 16)
        options.partitionCount = 5
        #expect(DurablePartitionLayout(options: options, hasPartitionKey: true).count == 5)
        // FNV-1a 64 of "a" and of "": published values, so every process and machine agrees.
        #expect(DurablePartitionLayout.stableHash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(DurablePartitionLayout.stableHash("") == 0xcbf2_9ce4_8422_2325)
        let layout = DurablePartitionLayout(count: 16)
        let hashOfA: UInt64 = 0xaf63_dc4c_8601_ec8c
        #expect(layout.partition(key: "a", id: 7) == Int(hashOfA % 16))
        #expect(layout.partition(key: nil, id: 35) == 3)
        #expect(DurablePartitionLayout(count: 1).partition(key: "a", id: 35) == 0)
        // Keys spread: 1,000 keys over 16 partitions, none empty nor holding three times its share.
        var counts = [Int](repeating: 0, count: 16)
        for key in 0..<1_000 { counts[layout.partition(key: "order-\(key)", id: 0)] += 1 }
        #expect(counts.allSatisfy { $0 > 0 && $0 < 3 * 1_000 / 16 })
    }

    @Test func eachPartitionsPositionPassesTheOthersMessagesAndWaitsForItsOwn() {
        var set = DurablePartitionSet()
        set.take(0, at: at(0))
        set.take(1, at: at(0))
        // Messages 1…6 alternate between partitions 0 and 1; each is handed out in its own partition only.
        var handed: [Int64: (index: Int, ordinal: Int)] = [:]
        for id in Int64(1)...6 {
            let partition = Int(id % 2)
            if let place = set.append(at(id), partition: partition, done: false, after: at(0)) { handed[id] = place }
        }
        #expect(handed.count == 6)
        #expect(handed[1]?.ordinal == 0 && handed[3]?.ordinal == 1 && handed[2]?.ordinal == 0)
        // Partition 1 finishes 1 and 3; partition 0 finishes nothing yet.
        for id: Int64 in [1, 3] {
            set.markStarted(1, index: handed[id]?.index)
            set.markEnded(1, index: handed[id]?.index, finished: true)
        }
        let saves = Dictionary(uniqueKeysWithValues: set.positionsToSave().map { ($0.number, $0.position) })
        // Partition 1 may pass 1, 2 (partition 0's) and 3, up to 4 (partition 0's), not its own 5; partition 0
        // passes 1 (partition 1's), not its own 2.
        #expect(saves[1] == at(4))
        #expect(saves[0] == at(1))
        #expect(set.acknowledged == at(1))
        #expect(set.readAfter == at(6))
        // A save for room in the window stores only partition 1, whose started messages it covers: partition 0
        // moved on past partition 1's message only.
        #expect(set.positionsToSave(freeingWindow: true).map(\.number) == [1])
        #expect(set.releaseAwaitsSave == false)
        // Read again from an earlier position (a partition taken behind): nothing is handed out twice.
        #expect(set.append(at(3), partition: 1, done: false, after: at(0)) == nil)
    }

    @Test func aPartitionGivenBackHandsNothingOutAndIsReleasableOnceItsMessagesEndedAndItsPositionIsStored() {
        var set = DurablePartitionSet()
        set.take(2, at: at(0))
        let first = set.append(at(1), partition: 2, done: false, after: at(0))
        set.markStarted(2, index: first?.index)
        set.release(2)
        #expect(!set.isActive(2))
        // A message of a partition being given back is not handed out, and its position stays before it.
        #expect(set.append(at(2), partition: 2, done: false, after: at(0)) == nil)
        #expect(set.releasable.isEmpty)  // message 1 still runs
        set.markEnded(2, index: first?.index, finished: true)
        #expect(set.releasable.isEmpty)  // its position is not stored yet
        #expect(set.releaseAwaitsSave)
        let saves = set.positionsToSave()
        #expect(saves.map(\.position) == [at(1)])
        for save in saves { set.saved(save.number, upTo: save.count, position: save.position) }
        #expect(set.releasable == [2])
        set.remove(2)
        #expect(set.isEmpty && set.readAfter == nil)
    }

    /// A partition taken behind a read in progress (its position before where that read started) takes nothing
    /// from that read: the rows between would be skipped, and its position could pass messages never handled (the
    /// loss the three-process kill test found).
    @Test func aPartitionTakenBehindAReadInProgressSkipsNothing() {
        var set = DurablePartitionSet()
        set.take(0, at: at(10))
        #expect(set.append(at(11), partition: 0, done: false, after: at(10)) != nil)
        set.take(1, at: at(2))  // taken while the next read, after 11, runs
        #expect(!set.isNew(at(13), in: 1, after: at(11)))
        #expect(set.append(at(13), partition: 1, done: false, after: at(11)) == nil)
        #expect(set.readAfter == at(2))  // the next read starts from the partition taken behind
        #expect(set.positionsToSave().allSatisfy { $0.number == 0 || $0.position <= at(2) })
        // That read hands partition 1 its messages from 3 on, and partition 0 nothing twice.
        #expect(set.append(at(3), partition: 1, done: false, after: at(2)) != nil)
        #expect(set.append(at(11), partition: 0, done: false, after: at(2)) == nil)
        #expect(set.append(at(13), partition: 1, done: false, after: at(2)) != nil)
    }

    @Test func theUnsavedCountAddsUpOverPartitions() {
        var set = DurablePartitionSet()
        set.take(0, at: at(0))
        set.take(1, at: at(0))
        for id in Int64(1)...4 {
            let partition = Int(id % 2)
            let place = set.append(at(id), partition: partition, done: false, after: at(0))
            set.markStarted(partition, index: place?.index)
        }
        #expect(set.unsavedStarted == 4)
        #expect(set.numbers == [0, 1])
    }
}
