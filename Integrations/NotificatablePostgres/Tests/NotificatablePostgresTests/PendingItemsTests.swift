import Testing

@testable import NotificatablePostgres

/// The processor's queue of items read and not yet handed out (no server needed).
@Suite struct PendingItemsTests {
    @Test func itemsComeOutInOrderWhetherTakenFirstOrFromTheMiddle() {
        var pending = DurablePendingItems<Int>()
        for value in 0..<1_000 { pending.append(value) }
        var taken: [Int] = []
        // Takes from the front past the compaction point, with a take from the middle now and then.
        for step in 0..<700 {
            let offset = step % 50 == 49 ? 3 : 0
            if let value = pending.remove(at: offset) { taken.append(value) }
        }
        #expect(pending.count == 300)
        #expect(Array(pending.items).count == 300)
        var expected = Array(0..<1_000)
        var order: [Int] = []
        for step in 0..<700 { order.append(expected.remove(at: step % 50 == 49 ? 3 : 0)) }
        #expect(taken == order)
        #expect(Array(pending.items) == expected)
        for value in 1_000..<1_010 { pending.append(value) }
        #expect(Array(pending.items) == expected + Array(1_000..<1_010))
        #expect(pending.remove(at: 310) == nil)
        while pending.remove(at: 0) != nil {}
        #expect(pending.isEmpty)
        pending.append(7)
        #expect(Array(pending.items) == [7])
    }
}
