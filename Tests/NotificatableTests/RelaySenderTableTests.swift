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
        }
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
    var missed: [NotificationRelayError] {
        events.values.compactMap { event in
            event.kind == .messagesMissed ? event.error as? NotificationRelayError : nil
        }
    }
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
        first.subscribe(center: center) { _ in received.increment() }
        second.subscribe(center: center) { _ in received.increment() }
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

    /// Sequence numbers come from the wire: the widest gap, from 1 to `Int.max`, is reported, never an arithmetic
    /// trap; a number below 1 is a malformed message.
    @Test func extremeSequenceNumbersAreAGapNotATrap() throws {
        let relay = ReceivingRelay(Notificatable<Tick>.name(uniqueName()))
        try relay.hear("wild", 1)
        try relay.hear("wild", Int.max)
        #expect(relay.received.values == ["wild#1", "wild#\(Int.max)"])
        #expect(relay.missed == [.messagesMissed(sender: "wild", count: Int.max - 2)])
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
