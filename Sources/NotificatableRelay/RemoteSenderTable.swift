import Foundation
import Notificatable

/// The recent sequence numbers a relay received from each remote sender, per name: what drops duplicates, finds gaps,
/// and keeps a stray or forged number from silencing a sender.
///
/// **Per sender and name**, the table keeps a *track*: the highest number seen and a bitmap of which of the
/// ``windowSize`` numbers up to it were seen. A number within the window is a duplicate if its bit is set (dropped,
/// and counted) and new otherwise (posted, late); a number up to ``windowSize`` above the highest moves the window up
/// and reports the numbers it skipped as missed. A number further away, above or below, cannot be told apart from a
/// replay of an old message, a stray, a forgery, a restart of the sender's numbers or a long outage: it is posted and
/// reported as a jump, and a second track follows it.
///
/// Of the two tracks, the *leading* one decides every number in its window and up to ``windowSize`` above it, and
/// only the other one is ever replaced by a new jump. So numbers below the leading window (old messages replayed, in
/// any pattern) can never make the table forget the leading numbers, whose replays stay duplicates; and a lone stray
/// cannot move the window away from the genuine numbers. The other track drops its own duplicates, and whatever new
/// number it accepts is reported as a jump too (each one, not only the first of a run), unless a second message
/// confirms it *above* the leading track, as when a sender is back after a long outage: it then leads, and the old
/// leading track becomes the other one.
///
/// **Bounded:** every process that starts a relay is a new sender, so the table keeps the `capacity` senders heard
/// most recently, and forgets the one heard least recently when a new one arrives. A sender that keeps sending is
/// therefore never forgotten while fewer than `capacity` other senders are heard after its last message; a forgotten
/// sender heard again starts afresh (its next message counts as its first, so neither a gap across the forgetting nor
/// a duplicate of a message from before it can be recognised). Each sender holds at most two tracks per name, of
/// fixed size.
///
/// **Duplicates are counted**, per sender and name, until the relay takes the counts to report them
/// (``takeDuplicateCounts()``).
///
/// Finding the sender to forget scans the table once; it happens only when a sender the table does not know arrives
/// while it is full, that is, about once per process start, and the hot path (a known sender) stays two lookups.
/// Not thread-safe: the relay guards it with its lock. It holds strings only, never user objects.
struct RemoteSenderTable {
    /// How many recent numbers a track remembers: 256.
    static let windowSize = SequenceWindow.size

    /// What to do with a received message.
    enum Verdict: Equatable {
        /// A number already received from this sender for this name, within the window: drop the message.
        case duplicate
        /// A new message within the window; `missed` numbers were skipped below it (0 for none, or when the sender or
        /// the name is new to the table).
        case accepted(missed: Int)
        /// A new message outside the leading window of the sender's recent numbers: post it and report the jump from
        /// `from`, the highest number of the leading track.
        case jumped(from: Int)
    }

    /// Duplicates dropped for one sender and name, not reported yet.
    struct DuplicateCount: Equatable {
        var sender: String
        var name: Notification.Name
        var count: Int
    }

    private struct Sender {
        /// The value of `clock` when the sender was last heard.
        var lastHeard: UInt64
        var sequences: [Notification.Name: Tracks]
    }

    /// The most senders kept, at least 1.
    let capacity: Int
    private var senders: [String: Sender] = [:]
    /// Counts messages received, to order senders and tracks by when they were last used.
    private var clock: UInt64 = 0
    /// Duplicates dropped since the relay last took them, by sender and name.
    private var duplicates: [DuplicateKey: Int] = [:]

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many senders the table remembers.
    var count: Int { senders.count }

    /// Whether duplicates were counted that the relay has not taken yet.
    var hasDuplicateCounts: Bool { !duplicates.isEmpty }

    /// Records a message numbered `sequence` from `sender` for `name`, and says whether it is new.
    mutating func receive(_ sequence: Int, from sender: String, name: Notification.Name) -> Verdict {
        clock &+= 1
        let now = clock
        if let verdict = Self.update(&senders[sender], sequence: sequence, name: name, now: now) {
            if verdict == .duplicate { duplicates[DuplicateKey(sender: sender, name: name), default: 0] += 1 }
            return verdict
        }
        if senders.count >= capacity, let oldest = senders.min(by: { $0.value.lastHeard < $1.value.lastHeard })?.key {
            senders[oldest] = nil
        }
        senders[sender] = Sender(lastHeard: now, sequences: [name: Tracks(first: sequence)])
        return .accepted(missed: 0)
    }

    /// Updates a known sender in place; `nil` when the sender is unknown.
    private static func update(_ entry: inout Sender?, sequence: Int, name: Notification.Name, now: UInt64) -> Verdict?
    {
        guard entry != nil else { return nil }
        entry?.lastHeard = now
        guard entry?.sequences[name] != nil else {
            entry?.sequences[name] = Tracks(first: sequence)
            return .accepted(missed: 0)
        }
        return entry?.sequences[name]?.receive(sequence) ?? .accepted(missed: 0)
    }

    /// The duplicates counted since the last call, by sender and name, and forgets them.
    mutating func takeDuplicateCounts() -> [DuplicateCount] {
        guard !duplicates.isEmpty else { return [] }
        defer { duplicates = [:] }
        return duplicates.map { DuplicateCount(sender: $0.key.sender, name: $0.key.name, count: $0.value) }
            .sorted { ($0.name.rawValue, $0.sender) < ($1.name.rawValue, $1.sender) }
    }

    /// Forgets every sender's numbers for `name`, as when the relay stops forwarding it; a sender left with no name is
    /// forgotten. Duplicate counts stay until taken.
    mutating func forget(_ name: Notification.Name) {
        for sender in Array(senders.keys) {
            senders[sender]?.sequences[name] = nil
            if senders[sender]?.sequences.isEmpty == true { senders[sender] = nil }
        }
    }

    /// Forgets every sender. Duplicate counts stay until taken.
    mutating func removeAll() {
        senders = [:]
    }
}

extension RemoteSenderTable {
    private struct DuplicateKey: Hashable {
        var sender: String
        var name: Notification.Name
    }

    /// One run of a sender's numbers: the highest seen, which of the recent ones were seen, and whether a second
    /// message confirmed it.
    private struct Track {
        var window: SequenceWindow
        /// How many messages the track accepted, up to 2: a track with one is a lone number, maybe a stray.
        var accepted: Int

        init(first sequence: Int) {
            window = SequenceWindow(highest: sequence)
            accepted = 1
        }

        var isConfirmed: Bool { accepted >= 2 }

        /// The window's verdict on `sequence`, counting an accepted one; `nil` if it falls outside.
        mutating func receive(_ sequence: Int) -> Verdict? {
            guard let verdict = window.receive(sequence) else { return nil }
            if verdict != .duplicate { accepted = min(2, accepted + 1) }
            return verdict
        }
    }

    /// A sender's tracks for one name: the leading one, which holds the highest numbers confirmed by a second message
    /// (or the sender's first number, until another track is confirmed above it), and at most one other.
    ///
    /// The leading track decides every number in its window and up to ``SequenceWindow/size`` above it, so a number it
    /// has seen is always a duplicate there. A number outside it goes to the other track, or starts a new other track,
    /// which replaces the old other track and never the leading one: so messages older than the leading window (a
    /// replay of old captured messages, a stray) cannot make it forget what it saw. Whatever the other track accepts is
    /// reported as a jump, unless it confirms the other track above the leading one, which then leads (a sender back
    /// after a long outage): its numbers are below the leading window, or a lone number above it.
    private struct Tracks {
        var leading: Track
        var other: Track?

        init(first sequence: Int) {
            leading = Track(first: sequence)
        }

        mutating func receive(_ sequence: Int) -> Verdict {
            if let verdict = leading.receive(sequence) { return verdict }
            let from = leading.window.highest
            guard var other, let verdict = other.receive(sequence) else {
                // Outside both: a new other track, which replaces the old other one, never the leading one.
                other = Track(first: sequence)
                return .jumped(from: from)
            }
            if verdict != .duplicate, other.isConfirmed, other.window.highest > leading.window.highest {
                // Confirmed above the leading track: the sender's numbers moved on (a long outage); it leads now.
                self.other = leading
                leading = other
                return verdict
            }
            self.other = other
            // A number below the leading window that this track has not seen: posted, and reported.
            return verdict == .duplicate ? .duplicate : .jumped(from: from)
        }
    }
}

/// The highest sequence number of a track and a bitmap of the ``size`` numbers up to it: bit `i` stands for
/// `highest - i`. Four words, inline, so that a track costs no allocation.
struct SequenceWindow {
    static let size = 256

    private(set) var highest: Int
    private var words: (UInt64, UInt64, UInt64, UInt64)

    init(highest: Int) {
        self.highest = highest
        words = (1, 0, 0, 0)
    }

    /// Records `sequence` if it falls in the window or up to ``size`` above it; `nil` if it falls outside.
    mutating func receive(_ sequence: Int) -> RemoteSenderTable.Verdict? {
        let (distance, overflow) = sequence.subtractingReportingOverflow(highest)
        guard !overflow, distance > -Self.size, distance <= Self.size else { return nil }
        if distance <= 0 {
            let bit = -distance
            if self[bit] { return .duplicate }
            self[bit] = true
            return .accepted(missed: 0)
        }
        shift(by: distance)
        highest = sequence
        self[0] = true
        return .accepted(missed: distance - 1)
    }

    /// Moves every bit `count` places up (toward older numbers), dropping those that leave the window.
    private mutating func shift(by count: Int) {
        guard count < Self.size else {
            words = (0, 0, 0, 0)
            return
        }
        let wordShift = count / 64
        let bitShift = UInt64(count % 64)
        // From the top word down, so that each reads words below it that are not yet rewritten.
        for index in stride(from: 3, through: 0, by: -1) {
            let source = index - wordShift
            var value: UInt64 = 0
            if source >= 0 {
                value = word(source) << bitShift
                if bitShift > 0, source > 0 { value |= word(source - 1) >> (64 - bitShift) }
            }
            setWord(index, value)
        }
    }

    private subscript(bit: Int) -> Bool {
        get { word(bit / 64) & (1 << UInt64(bit % 64)) != 0 }
        set {
            let mask: UInt64 = 1 << UInt64(bit % 64)
            setWord(bit / 64, newValue ? word(bit / 64) | mask : word(bit / 64) & ~mask)
        }
    }

    private func word(_ index: Int) -> UInt64 {
        switch index {
        case 0: words.0
        case 1: words.1
        case 2: words.2
        default: words.3
        }
    }

    private mutating func setWord(_ index: Int, _ value: UInt64) {
        switch index {
        case 0: words.0 = value
        case 1: words.1 = value
        case 2: words.2 = value
        default: words.3 = value
        }
    }
}
