import Foundation
import Notificatable

/// The last sequence number a relay received from each remote sender, per name: what drops duplicates and finds gaps.
///
/// Every process that starts a relay is a new sender, so the table is bounded: it keeps the `capacity` senders heard
/// most recently, and forgets the one heard least recently when a new one arrives. A sender that keeps sending is
/// therefore never forgotten while fewer than `capacity` other senders are heard after its last message; a forgotten
/// sender heard again starts afresh (its next message counts as its first, so neither a gap across the forgetting nor
/// a duplicate of a message from before it can be recognised).
///
/// Finding the sender to forget scans the table once; it happens only when a sender the table does not know arrives
/// while it is full, that is, about once per process start, and the hot path (a known sender) stays two lookups.
/// Not thread-safe: the relay guards it with its lock. It holds strings only, never user objects.
struct RemoteSenderTable {
    /// What to do with a received message.
    enum Verdict: Equatable {
        /// A number already received from this sender for this name, or an older one: drop the message.
        case duplicate
        /// A new message; `missed` numbers were skipped since the last one received (0 for none, or when the sender
        /// or the name is new to the table).
        case accepted(missed: Int)
    }

    private struct Sender {
        /// The value of `clock` when the sender was last heard.
        var lastHeard: UInt64
        var sequences: [Notification.Name: Int]
    }

    /// The most senders kept, at least 1.
    let capacity: Int
    private var senders: [String: Sender] = [:]
    /// Counts messages received, to order senders by when they were last heard.
    private var clock: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many senders the table remembers.
    var count: Int { senders.count }

    /// Records a message numbered `sequence` from `sender` for `name`, and says whether it is new.
    mutating func receive(_ sequence: Int, from sender: String, name: Notification.Name) -> Verdict {
        clock &+= 1
        let now = clock
        let verdict: Verdict? = Self.update(&senders[sender], sequence: sequence, name: name, now: now)
        if let verdict { return verdict }
        if senders.count >= capacity, let oldest = senders.min(by: { $0.value.lastHeard < $1.value.lastHeard })?.key {
            senders[oldest] = nil
        }
        senders[sender] = Sender(lastHeard: now, sequences: [name: sequence])
        return .accepted(missed: 0)
    }

    /// Updates a known sender in place; `nil` when the sender is unknown.
    private static func update(_ entry: inout Sender?, sequence: Int, name: Notification.Name, now: UInt64) -> Verdict?
    {
        guard entry != nil else { return nil }
        entry?.lastHeard = now
        let last = entry?.sequences[name]
        if let last, sequence <= last { return .duplicate }
        entry?.sequences[name] = sequence
        guard let last else { return .accepted(missed: 0) }
        // The numbers come from the wire: a difference that does not fit in an Int is reported as the largest one.
        let (difference, overflow) = sequence.subtractingReportingOverflow(last)
        return .accepted(missed: overflow ? Int.max : difference - 1)
    }

    /// Forgets every sender's number for `name`, as when the relay stops forwarding it; a sender left with no name is
    /// forgotten.
    mutating func forget(_ name: Notification.Name) {
        for sender in Array(senders.keys) {
            senders[sender]?.sequences[name] = nil
            if senders[sender]?.sequences.isEmpty == true { senders[sender] = nil }
        }
    }

    /// Forgets everything.
    mutating func removeAll() {
        senders = [:]
    }
}
