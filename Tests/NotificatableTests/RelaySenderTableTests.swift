import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

// The relay remembers the last sequence number of each remote sender, per name, to drop duplicates and report gaps.
// Every restarted process is a new sender, so without a bound that table grows for as long as the relay runs.

/// One relay on a loopback bus, fed hand-made messages, as many senders as a test likes would send them.
private final class ReceivingRelay: @unchecked Sendable {
    let bus = LoopbackNotificationBus()
    let center = NotificationCenter()
    let relay: NotificationRelay
    let events = ValueRecorder<NotificationTransportEvent>()
    let received = ValueRecorder<String>()
    let handle: Notificatable<RelaySenderTableTests.Tick>
    /// The subscription that fills `received`, for as long as this relay lives.
    let bag = DisposeBag()

    init(_ handle: Notificatable<RelaySenderTableTests.Tick>, maximumTrackedSenders: Int? = nil) {
        self.handle = handle
        let events = self.events
        let transport = LoopbackNotificationTransport(bus: bus)
        if let maximumTrackedSenders {
            relay = NotificationRelay(
                transport: transport, center: center, maximumTrackedSenders: maximumTrackedSenders,
                onEvent: { events.append($0) })
        } else {
            relay = NotificationRelay(transport: transport, center: center, onEvent: { events.append($0) })
        }
        relay.forward(handle)
        let received = self.received
        handle.subscribe(center: center) { note in
            received.append("\(note.userInfo.sender)#\(note.userInfo.sequence)")
        }.store(in: bag)
    }

    /// Publishes what `sender` would send as its message number `sequence`.
    func hear(_ sender: String, _ sequence: Int) throws {
        let message = try NotificationRelayMessage(
            name: handle.name, sender: sender, sequence: sequence,
            payload: ["sender": sender, "sequence": sequence]
        ).encoded()
        bus.publish(message, on: handle.name.rawValue)
    }

    /// The gaps reported, as their errors.
    var missed: [NotificationRelayError] { errors(of: .messagesMissed) }

    /// The errors of the events of `kind`.
    func errors(of kind: NotificationTransportEvent.Kind) -> [NotificationRelayError] {
        events.values.compactMap { event in event.kind == kind ? event.error as? NotificationRelayError : nil }
    }

    /// How many duplicates the `duplicatesDropped` events counted.
    var duplicatesReported: Int { errors(of: .duplicatesDropped).compactMap(\.duplicateCount).reduce(0, +) }
}

@Suite("Relay: the table of remote senders stays bounded")
struct RelaySenderTableTests {
    struct Tick: Codable, Sendable {
        var sender: String
        var sequence: Int
    }

    /// Relay churn: every restarted process is a new sender. The table keeps at most the default number.
    @Test func manySendersComingAndGoingKeepTheTableBounded() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        let churn = NotificationRelay.defaultMaximumTrackedSenders + 200
        for index in 0..<churn {
            try relay.hear("process-\(index)", 1)
            try relay.hear("process-\(index)", 2)
        }
        #expect(relay.relay.trackedSenderCount == NotificationRelay.defaultMaximumTrackedSenders)
        // Every message was new, so every one was posted, and none skipped a number.
        #expect(relay.received.values.count == churn * 2)
        #expect(relay.missed.isEmpty)
    }

    /// A sender heard all along is never the one forgotten: its duplicates are dropped and its gaps reported, however
    /// many other senders come and go meanwhile.
    @Test func aLiveSenderKeepsItsDuplicatesDroppedAndItsGapsReported() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()), maximumTrackedSenders: 8)
        var sequence = 0
        for round in 0..<50 {
            sequence += 1
            try relay.hear("live", sequence)
            try relay.hear("live", sequence)  // a duplicate: dropped
            for other in 0..<3 { try relay.hear("gone-\(round)-\(other)", 1) }
            #expect(relay.relay.trackedSenderCount <= 8)
        }
        try relay.hear("live", sequence + 3)  // skipped two
        try relay.hear("live", sequence)  // older than the last posted: dropped
        let fromLive = relay.received.values.filter { $0.hasPrefix("live#") }
        #expect(fromLive == (1...50).map { "live#\($0)" } + ["live#53"])
        #expect(relay.missed == [.messagesMissed(sender: "live", count: 2)])
        #expect(relay.relay.trackedSenderCount == 8)
    }

    /// The sender forgotten is the one heard least recently; heard again, its next message counts as its first.
    @Test func theSenderHeardLeastRecentlyIsForgotten() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()), maximumTrackedSenders: 2)
        try relay.hear("a", 1)
        try relay.hear("b", 1)
        try relay.hear("a", 2)  // a is now the most recent
        try relay.hear("c", 1)  // forgets b
        try relay.hear("a", 2)  // still known: a duplicate, dropped
        try relay.hear("b", 1)  // forgotten: posted again (documented), and forgets c
        try relay.hear("a", 5)  // still known: a gap of 2
        #expect(relay.received.values == ["a#1", "b#1", "a#2", "c#1", "b#1", "a#5"])
        #expect(relay.missed == [.messagesMissed(sender: "a", count: 2)])
        #expect(relay.relay.trackedSenderCount == 2)
    }

    /// Several names of one sender are one entry: the bound counts senders, not sender and name pairs.
    @Test func theBoundCountsSendersNotNames() throws {
        let bus = LoopbackNotificationBus()
        let center = NotificationCenter()
        let first = Notificatable<Tick>.name(uniqueName() + ".first")
        let second = Notificatable<Tick>.name(uniqueName() + ".second")
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: bus), center: center, maximumTrackedSenders: 1,
            onEvent: { _ in })
        relay.forward(first)
        relay.forward(second)
        let received = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        first.subscribe(center: center) { _ in received.increment() }.store(in: bag)
        second.subscribe(center: center) { _ in received.increment() }.store(in: bag)
        for handle in [first, second] {
            let message = try NotificationRelayMessage(
                name: handle.name, sender: "one", sequence: 1, payload: ["sender": "one", "sequence": 1]
            ).encoded()
            bus.publish(message, on: handle.name.rawValue)
            bus.publish(message, on: handle.name.rawValue)
        }
        #expect(received.count == 2)
        #expect(relay.trackedSenderCount == 1)
    }

    /// Sequence numbers come from the wire: the widest jump, from 1 to `Int.max` and back, is reported, never an
    /// arithmetic trap; a number below 1 is a malformed message.
    @Test func extremeSequenceNumbersAreAJumpNotATrap() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        try relay.hear("wild", 1)
        try relay.hear("wild", Int.max)
        try relay.hear("wild", 2)
        try relay.hear("wild", Int.max - 1)
        try relay.hear("wild", Int.max)
        #expect(relay.received.values == ["wild#1", "wild#\(Int.max)", "wild#2", "wild#\(Int.max - 1)"])
        #expect(relay.errors(of: .sequenceJumped) == [.sequenceJumped(sender: "wild", from: 1, to: Int.max)])
        #expect(relay.missed.isEmpty)
        relay.relay.stop()
        #expect(relay.duplicatesReported == 1)
    }

    // MARK: - The window of recent sequence numbers (issue 24.1)

    /// A single forged message with a sender's id and a far sequence number does not silence the sender: its later
    /// genuine messages are posted. The jump is reported as `sequenceJumped`, not as a gap of 999,997 messages.
    /// (Before, every later genuine message was dropped as a duplicate, silently.)
    @Test func aForgedFarSequenceNumberDoesNotSilenceTheSender() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        for sequence in 1...3 { try relay.hear("victim", sequence) }
        try relay.hear("victim", 1_000_000)
        for sequence in 4...10 { try relay.hear("victim", sequence) }
        #expect(
            relay.received.values == (1...3).map { "victim#\($0)" } + ["victim#1000000"]
                + (4...10).map { "victim#\($0)" })
        #expect(relay.missed.isEmpty)
        #expect(relay.errors(of: .sequenceJumped) == [.sequenceJumped(sender: "victim", from: 3, to: 1_000_000)])
        // A second forged message near the first makes the forged numbers lead, as a sender back from a long outage
        // would; the genuine numbers stay checked, and each later genuine message is posted and reported as a jump.
        try relay.hear("victim", 1_000_001)
        try relay.hear("victim", 10)  // a duplicate of a genuine message: dropped
        try relay.hear("victim", 11)
        #expect(relay.received.values.suffix(2) == ["victim#1000001", "victim#11"])
        #expect(relay.duplicatesReported == 1)
        #expect(relay.errors(of: .sequenceJumped).last == .sequenceJumped(sender: "victim", from: 1_000_001, to: 11))
    }

    /// Duplicates are dropped and never silently: they are counted in a `duplicatesDropped` event, one per sender and
    /// name, reported when the next new message arrives.
    @Test func duplicatesAreDroppedAndCounted() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        try relay.hear("a", 1)
        try relay.hear("a", 2)
        try relay.hear("a", 2)
        try relay.hear("a", 1)
        try relay.hear("a", 2)
        try relay.hear("a", 3)
        #expect(relay.received.values == ["a#1", "a#2", "a#3"])
        #expect(relay.errors(of: .duplicatesDropped) == [.duplicatesDropped(sender: "a", count: 3)])
        let event = try #require(relay.events.values.first { $0.kind == .duplicatesDropped })
        #expect(event.name == relay.handle.name)
        #expect("\(event)".contains("3 duplicate messages from relay a were dropped"))
    }

    /// Duplicates still pending when the relay stops are reported then.
    @Test func duplicatesPendingAtStopAreReported() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        try relay.hear("a", 1)
        try relay.hear("a", 1)
        relay.relay.stop()
        #expect(relay.errors(of: .duplicatesDropped) == [.duplicatesDropped(sender: "a", count: 1)])
    }

    /// A replay of the last messages (what an at-least-once engine does after a crash) is dropped in full, as long as
    /// it stays within the window of recent numbers, even after newer messages.
    @Test func aReplayWithinTheWindowIsDropped() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        let window = RemoteSenderTable.windowSize
        for sequence in 1...1_000 { try relay.hear("a", sequence) }
        for sequence in (1_000 - window + 1)...1_000 { try relay.hear("a", sequence) }
        try relay.hear("a", 1_001)
        #expect(relay.received.values.count == 1_001)
        #expect(relay.duplicatesReported == window)
        #expect(relay.errors(of: .sequenceJumped).isEmpty)
    }

    /// A message that arrives after a later one, within the window, is posted late (before, it was dropped silently);
    /// the gap reported before counted it.
    @Test func aLateMessageWithinTheWindowIsPosted() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        try relay.hear("a", 1)
        try relay.hear("a", 3)
        try relay.hear("a", 2)
        try relay.hear("a", 2)
        try relay.hear("a", 4)
        #expect(relay.received.values == ["a#1", "a#3", "a#2", "a#4"])
        #expect(relay.missed == [.messagesMissed(sender: "a", count: 1)])
        #expect(relay.duplicatesReported == 1)
    }

    /// A sender whose numbers start again from 1 (a service that kept its id across a restart): each message is
    /// posted and reported as a jump, since the relay cannot tell it from a replay of an old one. Numbers that jump far
    /// ahead (a long outage): the first is reported, and once a second one confirms them they lead, quietly.
    @Test func aRestartOrAFarJumpIsReportedAndFollowed() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        for sequence in 1...500 { try relay.hear("a", sequence) }
        for sequence in 1...5 { try relay.hear("a", sequence) }
        for sequence in 10_000...10_005 { try relay.hear("a", sequence) }
        #expect(relay.received.values.count == 500 + 5 + 6)
        #expect(
            relay.errors(of: .sequenceJumped)
                == (1...5).map { .sequenceJumped(sender: "a", from: 500, to: $0) } + [
                    .sequenceJumped(sender: "a", from: 500, to: 10_000)
                ])
        #expect(relay.missed.isEmpty)
        #expect(relay.duplicatesReported == 0)
        // The numbers before the outage are still checked, as the other track.
        try relay.hear("a", 500)
        try relay.hear("a", 10_006)
        #expect(relay.duplicatesReported == 1)
    }

    /// The issue's fuzz: a sender's messages, with corrupted copies (digits grown, random numbers, extreme values) and
    /// exact duplicates mixed in. Nothing is silent: every message is posted or counted as a duplicate. And a stray
    /// number cannot stop later genuine messages: every genuine message whose number no stray took is posted.
    @Test func strayNumbersAmongGenuineMessagesAreNeverSilentAndStopNothing() throws {
        let seed =
            ProcessInfo.processInfo.environment["NOTIFICATABLE_RELAY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("RelaySenderTableTests: stray-number fuzz seed \(seed) (replay with NOTIFICATABLE_RELAY_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        var published = 0
        var strays = Set<Int>()
        let genuine = 3_000
        for sequence in 1...genuine {
            try relay.hear("g", sequence)
            published += 1
            guard Int.random(in: 0..<10, using: &random) < 3 else { continue }
            let stray: Int
            switch Int.random(in: 0..<5, using: &random) {
            case 0: stray = sequence  // an exact duplicate
            case 1: stray = max(1, sequence - Int.random(in: 0..<200, using: &random))  // an older duplicate
            case 2: stray = sequence * 10 + Int.random(in: 0...9, using: &random)  // a digit grew
            case 3: stray = Int.random(in: 1...Int.max, using: &random)
            default: stray = Int(String(sequence) + String(Int.random(in: 0...99_999, using: &random))) ?? Int.max
            }
            if stray > sequence { strays.insert(stray) }
            try relay.hear("g", stray)
            published += 1
        }
        try relay.hear("g", genuine + 1_000_000_000)  // a last new message reports the duplicates pending
        published += 1
        let posted = relay.received.values
        #expect(
            posted.count + relay.duplicatesReported == published,
            "seed \(seed): \(published) published, \(posted.count) posted, \(relay.duplicatesReported) reported dropped"
        )
        let postedSet = Set(posted)
        let lost = (1...genuine).filter { !strays.contains($0) && !postedSet.contains("g#\($0)") }
        #expect(lost.isEmpty, "seed \(seed): \(lost.count) genuine messages lost, first \(lost.prefix(5))")
    }

    // MARK: - Replays of old messages (issue 29.4)

    /// The issue's replay: three old captured messages of a sender (numbers 1, 2 and 300) pushed its genuine track out
    /// of the two-track window, so that its 256 most recent messages, replayed, were posted again, 255 of them with no
    /// event. Now the old ones are posted and each reported as a jump, and the window keeps the recent numbers: their
    /// replays are dropped and counted.
    @Test func oldReplaysCannotPushTheRecentNumbersOut() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        let window = RemoteSenderTable.windowSize
        for sequence in 1...1_000 { try relay.hear("a", sequence) }
        for sequence in [1, 2, 300] { try relay.hear("a", sequence) }
        for sequence in (1_000 - window + 1)...1_000 { try relay.hear("a", sequence) }
        try relay.hear("a", 1_001)
        #expect(relay.received.values.count == 1_000 + 3 + 1)
        #expect(relay.received.values.suffix(4) == ["a#1", "a#2", "a#300", "a#1001"])
        #expect(relay.duplicatesReported == window)
        #expect(
            relay.errors(of: .sequenceJumped) == [1, 2, 300].map { .sequenceJumped(sender: "a", from: 1_000, to: $0) })
        #expect(relay.missed.isEmpty)
    }

    /// Every old message that is posted is reported, the second of a run of old numbers too (before, only the first
    /// of a run was reported, and the rest of the run was posted silently, in the second track).
    @Test func everyOldMessagePostedIsReported() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        for sequence in 1...600 { try relay.hear("a", sequence) }
        for sequence in 10...20 { try relay.hear("a", sequence) }
        for sequence in 10...20 { try relay.hear("a", sequence) }  // replayed again: now duplicates
        try relay.hear("a", 601)
        #expect(relay.received.values.count == 600 + 11 + 1)
        #expect(
            relay.errors(of: .sequenceJumped) == (10...20).map { .sequenceJumped(sender: "a", from: 600, to: $0) })
        #expect(relay.duplicatesReported == 11)
    }

    /// A sender that starts its numbers again under the same id: those below the window of its earlier numbers are
    /// posted and each reported; those in it are dropped as duplicates (the relay cannot tell them from replays), and it
    /// is followed again past its old highest number.
    @Test func aSenderRestartingUnderItsIdLosesTheNumbersInTheOldWindow() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        let window = RemoteSenderTable.windowSize
        for sequence in 1...300 { try relay.hear("a", sequence) }
        for sequence in 1...302 { try relay.hear("a", sequence) }
        let belowWindow = 300 - window
        #expect(relay.received.values.count == 300 + belowWindow + 2)
        #expect(relay.received.values.suffix(2) == ["a#301", "a#302"])
        #expect(relay.errors(of: .sequenceJumped).count == belowWindow)
        #expect(relay.duplicatesReported == window)
    }

    /// The fuzz of issue 29.4: a sender's genuine messages in order, with replays of its captured messages mixed in:
    /// runs of old numbers (which make a second track), the issue's 1, 2 and 300, the recent window, single old numbers.
    /// Whatever is posted a second time is reported, as a jump to that very number, by the message that posted it; a
    /// replay of one of the 256 most recent numbers is never posted; no genuine message is lost; every message is
    /// posted or counted as a duplicate.
    @Test func replaysAfterEvictionAreDroppedOrReportedNeverSilent() throws {
        let seed =
            ProcessInfo.processInfo.environment["NOTIFICATABLE_RELAY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("RelaySenderTableTests: replay fuzz seed \(seed) (replay with NOTIFICATABLE_RELAY_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        let window = RemoteSenderTable.windowSize
        var highest = 0
        var published = 0
        var postCounts: [Int: Int] = [:]
        var problems: [String] = []
        func hear(_ sequence: Int, replay: Bool) throws {
            let postedBefore = relay.received.count
            let eventsBefore = relay.events.count
            try relay.hear("g", sequence)
            published += 1
            guard relay.received.count > postedBefore else { return }
            postCounts[sequence, default: 0] += 1
            if postCounts[sequence, default: 0] > 1 {
                let reported = relay.events.values.dropFirst(eventsBefore).contains { event in
                    let jump = (event.error as? NotificationRelayError)?.sequenceJump
                    return event.kind == .sequenceJumped && jump?.to == sequence
                }
                if !reported { problems.append("#\(sequence) posted again with no report") }
            }
            if replay, sequence > highest - window {
                problems.append("#\(sequence), among the \(window) most recent of \(highest), posted again")
            }
        }
        for _ in 0..<2_500 where problems.count < 5 {
            let shape = highest < 2 ? 0 : Int.random(in: 0..<12, using: &random)
            switch shape {
            case 0..<6:
                highest += 1
                try hear(highest, replay: false)
            case 6:
                // A run of old numbers, which a second track follows.
                let start = Int.random(in: 1...highest, using: &random)
                for sequence in start...min(highest, start + Int.random(in: 1...4, using: &random)) {
                    try hear(sequence, replay: true)
                }
            case 7:
                // The issue's shape: 1, 2, then another old number.
                for sequence in [1, 2, Int.random(in: 1...highest, using: &random)] { try hear(sequence, replay: true) }
            case 8:
                // Part of the recent window, in any order.
                for _ in 0..<Int.random(in: 1...20, using: &random) {
                    try hear(Int.random(in: max(1, highest - window + 1)...highest, using: &random), replay: true)
                }
            case 9:
                // Two old runs far apart, then numbers of the recent window.
                for _ in 0..<2 {
                    let start = Int.random(in: 1...highest, using: &random)
                    try hear(start, replay: true)
                    try hear(min(highest, start + 1), replay: true)
                }
                for _ in 0..<40 {
                    try hear(Int.random(in: max(1, highest - window + 1)...highest, using: &random), replay: true)
                }
            default:
                try hear(Int.random(in: 1...highest, using: &random), replay: true)
            }
        }
        highest += 1
        try hear(highest, replay: false)  // reports the duplicates pending
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(5))")
        let lost = (1...highest).filter { postCounts[$0] == nil }
        #expect(lost.isEmpty, "seed \(seed): genuine messages lost, first \(lost.prefix(5))")
        #expect(
            relay.received.values.count + relay.duplicatesReported == published,
            "seed \(seed): \(published) published, \(relay.received.values.count) posted, \(relay.duplicatesReported) dropped"
        )
    }

    /// A name no longer forwarded is forgotten for every sender; a sender left with no name is forgotten too.
    @Test func stoppingAForwardingForgetsItsSenders() throws {
        let bus = LoopbackNotificationBus()
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: bus), center: NotificationCenter(), onEvent: { _ in })
        let handle = Notificatable<Tick>.name(uniqueName())
        let forwarding = relay.forward(handle)
        for sender in ["a", "b", "c"] {
            let message = try NotificationRelayMessage(
                name: handle.name, sender: sender, sequence: 1, payload: ["sender": sender, "sequence": 1]
            ).encoded()
            bus.publish(message, on: handle.name.rawValue)
        }
        #expect(relay.trackedSenderCount == 3)
        forwarding.dispose()
        #expect(relay.trackedSenderCount == 0)
    }

    @Test func aBoundBelowOneIsOne() {
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: LoopbackNotificationBus()), center: NotificationCenter(),
            maximumTrackedSenders: 0, onEvent: { _ in })
        #expect(relay.maximumTrackedSenders == 1)
    }
}
