import Testing

@testable import NotificatablePostgres

/// The receive buffer between the connection's event loop and the delivery queue, without a server.
@Suite struct ReceiveInboxTests {
    @Test func messagesComeOutInOrderAndOneDrainIsStartedAtATime() {
        var inbox = ReceiveInbox()
        #expect(inbox.append(channel: "c", payload: "1", limit: 100) == .appended(startDrain: true))
        #expect(inbox.append(channel: "c", payload: "2", limit: 100) == .appended(startDrain: false))
        let batch = inbox.takeBatch(maximumCount: 10)
        #expect(batch.map(\.payload) == ["1", "2"])
        #expect(inbox.count == 2 && inbox.bytes == 2)  // counted until delivered
        #expect(inbox.delivered(count: 2, bytes: 2, limit: 100) == nil)
        #expect(inbox.count == 0 && inbox.bytes == 0)
        #expect(inbox.takeBatch(maximumCount: 10).isEmpty)  // ends the drain
        #expect(inbox.append(channel: "c", payload: "3", limit: 100) == .appended(startDrain: true))
    }

    @Test func overTheLimitMessagesAreDroppedReportedOnceAndCountedWhenCaughtUp() {
        var inbox = ReceiveInbox()
        let ten = String(repeating: "x", count: 10)
        #expect(inbox.append(channel: "c", payload: ten, limit: 20) == .appended(startDrain: true))
        #expect(inbox.append(channel: "c", payload: ten, limit: 20) == .appended(startDrain: false))
        #expect(inbox.append(channel: "c", payload: ten, limit: 20) == .dropped(firstOfEpisode: true))
        #expect(inbox.append(channel: "c", payload: ten, limit: 20) == .dropped(firstOfEpisode: false))
        let first = inbox.takeBatch(maximumCount: 1)
        #expect(first.count == 1)
        // Still over half the limit after this delivery: the episode goes on, nothing reported yet.
        #expect(inbox.delivered(count: 1, bytes: 10, limit: 19) == nil)
        #expect(inbox.append(channel: "c", payload: ten, limit: 19) == .dropped(firstOfEpisode: false))
        _ = inbox.takeBatch(maximumCount: 1)
        #expect(inbox.delivered(count: 1, bytes: 10, limit: 19) == 3)
        #expect(inbox.append(channel: "c", payload: ten, limit: 19) == .appended(startDrain: false))
    }

    @Test func aMessageLargerThanTheLimitStillFitsAnEmptyInbox() {
        var inbox = ReceiveInbox()
        #expect(inbox.append(channel: "c", payload: "too large", limit: 1) == .appended(startDrain: true))
        #expect(inbox.append(channel: "c", payload: "x", limit: 1) == .dropped(firstOfEpisode: true))
    }
}
