/// A message read from the connection, waiting for the relay.
struct ReceivedMessage {
    /// The relay's channel.
    var channel: String
    var payload: String
}

/// The received messages that wait for the delivery queue, bounded in payload bytes. Guarded by the transport's lock.
struct ReceiveInbox {
    /// What `append` did.
    enum Appended: Equatable {
        /// Queued; `startDrain` when no drain is running and one must be started.
        case appended(startDrain: Bool)
        /// Dropped, the inbox being full; `firstOfEpisode` for the first drop since the inbox was last caught up.
        case dropped(firstOfEpisode: Bool)
    }

    private var items: [ReceivedMessage] = []
    private var head = 0
    /// Messages taken by the drain and not yet delivered.
    private var inFlight = 0
    /// Payload bytes of the waiting and in-flight messages.
    private(set) var bytes = 0
    /// Whether a drain is scheduled or running.
    private var draining = false
    /// Messages dropped since the inbox was last caught up.
    private var droppedSinceCaughtUp = 0

    /// Messages waiting or being delivered.
    var count: Int { items.count - head + inFlight }

    /// Queues a message unless the bytes waiting would go over `limit`; a message always fits in an empty inbox.
    mutating func append(channel: String, payload: String, limit: Int) -> Appended {
        let size = payload.utf8.count
        guard count == 0 || bytes + size <= limit else {
            droppedSinceCaughtUp += 1
            return .dropped(firstOfEpisode: droppedSinceCaughtUp == 1)
        }
        items.append(ReceivedMessage(channel: channel, payload: payload))
        bytes += size
        defer { draining = true }
        return .appended(startDrain: !draining)
    }

    /// Up to `maximumCount` messages, oldest first; they stay counted until `delivered`. Empty when none waits,
    /// which also ends the drain.
    mutating func takeBatch(maximumCount: Int) -> [ReceivedMessage] {
        let end = min(items.count, head + maximumCount)
        let batch = Array(items[head..<end])
        head = end
        inFlight += batch.count
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 4096)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        if batch.isEmpty { draining = false }
        return batch
    }

    /// Records that the drain delivered `count` messages of `bytes` payload bytes. Returns how many were dropped
    /// since the inbox was last caught up when this ends an episode of drops (what waits is down to half of
    /// `limit`), nil otherwise.
    mutating func delivered(count: Int, bytes: Int, limit: Int) -> Int? {
        inFlight = max(0, inFlight - count)
        self.bytes = max(0, self.bytes - bytes)
        guard droppedSinceCaughtUp > 0, self.bytes <= limit / 2 else { return nil }
        defer { droppedSinceCaughtUp = 0 }
        return droppedSinceCaughtUp
    }

    /// Forgets every waiting message (the transport stopped). In-flight ones are still delivered or discarded by
    /// the drain.
    mutating func removeAll() {
        items = []
        head = 0
        inFlight = 0
        bytes = 0
        draining = false
        droppedSinceCaughtUp = 0
    }
}
