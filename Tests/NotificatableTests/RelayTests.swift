import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// A shipped order: the payload the relay tests carry.
struct RelayOrder: Codable, Equatable, Sendable {
    var id: String
    var count: Int
    var shippedAt: Date
}

/// A payload that encodes as a single value, so it cannot be a `userInfo`.
struct RelaySingleValue: Codable, Sendable {
    var value: Int
    init(value: Int) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Int.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// Two centers joined by two relays over one loopback bus, with everything they report recorded.
final class RelayPair: @unchecked Sendable {
    let bus = LoopbackNotificationBus()
    let leftCenter = NotificationCenter()
    let rightCenter = NotificationCenter()
    let leftTransport: LoopbackNotificationTransport
    let rightTransport: LoopbackNotificationTransport
    let left: NotificationRelay
    let right: NotificationRelay
    let events = ValueRecorder<NotificationTransportEvent>()
    let failures = ValueRecorder<NotificationDecodingFailure>()

    init(limits: NotificationTransportLimits = .unlimited) {
        leftTransport = LoopbackNotificationTransport(bus: bus, limits: limits)
        rightTransport = LoopbackNotificationTransport(bus: bus, limits: limits)
        let events = self.events
        let failures = self.failures
        left = NotificationRelay(
            transport: leftTransport, center: leftCenter, onEvent: { events.append($0) },
            onFailure: { failures.append($0) })
        right = NotificationRelay(
            transport: rightTransport, center: rightCenter, onEvent: { events.append($0) },
            onFailure: { failures.append($0) })
    }

    func forward<Info: Codable>(_ handle: Notificatable<Info>) {
        left.forward(handle)
        right.forward(handle)
    }

    /// Every message published on `channel` from now on, as a third process would hear it.
    func spy(on channel: String) -> ValueRecorder<Data> {
        let messages = ValueRecorder<Data>()
        let transport = LoopbackNotificationTransport(bus: bus)
        transport.start(
            handler: NotificationTransportHandler(receive: { data, _ in messages.append(data) }, report: { _ in }))
        transport.listen(to: channel)
        spies.append(transport)
        return messages
    }
    private var spies: [LoopbackNotificationTransport] = []
}

@Suite("Notification relay over the loopback transport")
struct RelayTests {
    let order = RelayOrder(id: "A-17", count: 3, shippedAt: Date(timeIntervalSince1970: 1_764_000_000.5))

    @Test func typedPostsCrossInBothDirections() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onLeft = ValueRecorder<RelayOrder>()
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.leftCenter) { onLeft.append($0.userInfo) }.store(in: bag)
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)

        shipped.post(order, center: pair.leftCenter)
        var back = order
        back.id = "B-2"
        shipped.post(back, center: pair.rightCenter)

        #expect(onRight.values == [order, back])
        #expect(onLeft.values == [order, back])
        #expect(pair.events.values.isEmpty)
        #expect(pair.failures.values.isEmpty)
    }

    @Test func legacyObserversSeeTheReservedKeyAndThePlainKeys() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let seen = ValueRecorder<Notification>()
        let token = pair.rightCenter.addObserver(forName: shipped.name, object: nil, queue: nil) { seen.append($0) }
        defer { pair.rightCenter.removeObserver(token) }

        shipped.post(order, center: pair.leftCenter)

        let note = seen.values.first
        #expect(seen.count == 1)
        #expect(note?.userInfo?[NotificatableUserInfoKey] as? RelayOrder == order)
        #expect(note?.userInfo?["id"] as? String == "A-17")
        #expect(note?.userInfo?["count"] as? Int == 3)
        #expect(note?.userInfo?["shippedAt"] as? Date == order.shippedAt)
        #expect(note?.userInfo?[NotificationRelay.senderUserInfoKey] as? String == pair.left.id)
        #expect(note?.object == nil)
    }

    @Test func aLegacyPostWithPlainKeysIsForwardedTyped() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)

        pair.leftCenter.post(
            name: shipped.name, object: nil, userInfo: ["id": "A-17", "count": 3, "shippedAt": order.shippedAt])

        #expect(onRight.values == [order])
    }

    @Test func neverHandlesCross() {
        let pair = RelayPair()
        let invalidated = Notificatable.withoutPayload(uniqueName())
        pair.forward(invalidated)
        let onLeft = Counter()
        let onRight = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        invalidated.subscribe(center: pair.leftCenter) { _ in onLeft.increment() }.store(in: bag)
        invalidated.subscribe(center: pair.rightCenter) { _ in onRight.increment() }.store(in: bag)

        invalidated.post(center: pair.leftCenter)
        invalidated.post(center: pair.rightCenter)
        invalidated.post(center: pair.rightCenter)

        #expect(onLeft.count == 3)
        #expect(onRight.count == 3)
        #expect(pair.failures.values.isEmpty)
    }

    @Test func eachSendersOrderHolds() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let counts = ValueRecorder<Int>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { counts.append($0.userInfo.count) }.store(in: bag)
        let spy = pair.spy(on: shipped.name.rawValue)

        for count in 1...200 {
            var next = order
            next.count = count
            shipped.post(next, center: pair.leftCenter)
        }

        #expect(counts.values == Array(1...200))
        let sequences = try spy.values.map { try NotificationRelayMessage(decoding: $0).sequence }
        #expect(sequences == Array(1...200))
    }

    @Test func aRelayIgnoresItsOwnMessagesAndNeverForwardsARepost() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onLeft = Counter()
        let onRight = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.leftCenter) { _ in onLeft.increment() }.store(in: bag)
        shipped.subscribe(center: pair.rightCenter) { [left = pair.left] _ in
            onRight.increment()
            if onRight.count > 10 { left.stop() }  // ends a ping-pong, so that the test fails instead of hanging
        }.store(in: bag)
        let spy = pair.spy(on: shipped.name.rawValue)

        shipped.post(order, center: pair.leftCenter)

        // The left relay heard its own message on the bus and did not post it again (no echo); the right relay's
        // re-post was not sent back (no ping-pong): exactly one message went over the bus.
        #expect(onLeft.count == 1)
        #expect(onRight.count == 1)
        #expect(spy.count == 1)
    }

    @Test func twoRelaysOnOneCenterDoNotLoop() {
        let bus = LoopbackNotificationBus()
        let center = NotificationCenter()
        let first = NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: center)
        let second = NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: center)
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        first.forward(shipped)
        second.forward(shipped)
        let messages = ValueRecorder<Data>()
        let spy = LoopbackNotificationTransport(bus: bus)
        spy.start(handler: .init(receive: { data, _ in messages.append(data) }, report: { _ in }))
        spy.listen(to: shipped.name.rawValue)
        let received = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: center) { _ in
            received.increment()
            if received.count > 10 { first.stop() }  // ends a loop, so that the test fails instead of hanging
        }.store(in: bag)

        shipped.post(order, center: center)

        // Both relays send the post; each re-posts the other's message once, and nothing is sent again.
        #expect(messages.count == 2)
        #expect(received.count == 3)
    }

    @Test func aMalformedMessageIsReportedAndTheNextOneArrives() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)
        let channel = shipped.name.rawValue

        pair.bus.publish(Data("{not json".utf8), on: channel)
        let noSequence = #"{"version":1,"name":"\#(channel)","sender":"other","payload":{}}"#
        pair.bus.publish(Data(noSequence.utf8), on: channel)
        shipped.post(order, center: pair.leftCenter)

        #expect(onRight.values == [order])
        let failures = pair.failures.values
        try #require(failures.count == 4)  // each of the two relays reports each bad message
        let first = try #require(failures.first)
        #expect(first.kind == .malformedMessage)
        #expect(first.name.rawValue == channel)
        #expect(first.codingPath.isEmpty)
        #expect((first.error as? DecodingError).map { if case .dataCorrupted = $0 { true } else { false } } == true)
        let second = failures[2]
        #expect(second.kind == .malformedMessage)
        #expect(second.name == shipped.name)
        #expect(second.payloadType is RelayOrder.Type)
        guard case .keyNotFound(let key, _) = second.error as? DecodingError else {
            Issue.record("expected keyNotFound, got \(second.error)")
            return
        }
        #expect(key.stringValue == "sequence")
    }

    @Test func anUnknownVersionIsReported() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.right.forward(shipped)
        let message = NotificationRelayMessage(name: shipped.name, sender: "other", sequence: 1, payload: [:])
        var future = message
        future.version = 2

        pair.bus.publish(try future.encoded(), on: shipped.name.rawValue)

        let failure = try #require(pair.failures.values.first)
        #expect(pair.failures.count == 1)
        #expect(failure.kind == .unsupportedMessageVersion)
        #expect(failure.name == shipped.name)
        #expect(paths(failure) == ["version"])
        #expect("\(failure)".contains("version 2"))
    }

    @Test func aPayloadThatDoesNotDecodeIsReportedWithItsPath() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.right.forward(shipped)
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)
        let legacy = Counter()
        let token = pair.rightCenter.addObserver(forName: shipped.name, object: nil, queue: nil) { _ in
            legacy.increment()
        }
        defer { pair.rightCenter.removeObserver(token) }
        let bad = NotificationRelayMessage(
            name: shipped.name, sender: "other", sequence: 1,
            payload: ["id": "A-17", "count": "three", "shippedAt": order.shippedAt])
        let good = NotificationRelayMessage(
            name: shipped.name, sender: "other", sequence: 2,
            payload: ["id": "A-17", "count": 3, "shippedAt": order.shippedAt])

        pair.bus.publish(try bad.encoded(), on: shipped.name.rawValue)
        pair.bus.publish(try good.encoded(), on: shipped.name.rawValue)

        let failure = try #require(pair.failures.values.first)
        #expect(pair.failures.count == 1)
        #expect(failure.kind == .decodingFailed)
        #expect(failure.payloadType is RelayOrder.Type)
        #expect(paths(failure) == ["count"])
        guard case .typeMismatch = failure.error as? DecodingError else {
            Issue.record("expected typeMismatch, got \(failure.error)")
            return
        }
        #expect(onRight.values == [order])
        #expect(legacy.count == 1)  // the message that did not decode is not posted at all
    }

    @Test func anOversizedPostIsRefusedAndTheNextOneGoesThrough() throws {
        let pair = RelayPair(limits: NotificationTransportLimits(maximumMessageSize: 300, maximumChannelLength: nil))
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)
        var huge = order
        huge.id = String(repeating: "é", count: 200)

        shipped.post(huge, center: pair.leftCenter)
        shipped.post(order, center: pair.leftCenter)

        #expect(onRight.values == [order])
        let event = try #require(pair.events.values.first)
        #expect(pair.events.count == 1)  // and no `messagesMissed`: the refused post used no sequence number
        #expect(event.kind == .messageTooLarge)
        #expect(event.name == shipped.name)
        let error = try #require(event.error as? NotificationRelayError)
        #expect(error.messageSize.map { $0 > 400 } == true)
        #expect("\(event)".contains("over the transport's limit of 300 bytes"))
    }

    @Test func aPayloadThatIsNotADictionaryIsReportedAtPostTime() throws {
        let pair = RelayPair()
        let single = Notificatable<RelaySingleValue>.name(uniqueName())
        pair.forward(single)
        let spy = pair.spy(on: single.name.rawValue)

        single.post(RelaySingleValue(value: 1), center: pair.leftCenter)

        let event = try #require(pair.events.values.first)
        #expect(event.kind == .encodingFailed)
        #expect(event.error is EncodingError)
        #expect(spy.count == 0)
    }

    @Test func aLostConnectionAndTheMissedMessagesAreReported() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let onRight = ValueRecorder<Int>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo.count) }.store(in: bag)

        for count in 1...5 {
            if count == 2 { pair.rightTransport.disconnect() }
            if count == 5 { pair.rightTransport.reconnect() }
            var next = order
            next.count = count
            shipped.post(next, center: pair.leftCenter)
        }

        #expect(onRight.values == [1, 5])
        let kinds = pair.events.values.map(\.kind)
        #expect(kinds == [.connectionLost, .reconnected, .messagesMissed])
        let missed = try #require(pair.events.values.last?.error as? NotificationRelayError)
        #expect(missed.missedCount == 3)
    }

    @Test func aDuplicateMessageIsPostedOnce() throws {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.right.forward(shipped)
        let onRight = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { _ in onRight.increment() }.store(in: bag)
        let message = try NotificationRelayMessage(
            name: shipped.name, sender: "other", sequence: 1,
            payload: ["id": "A-17", "count": 3, "shippedAt": order.shippedAt]
        ).encoded()

        pair.bus.publish(message, on: shipped.name.rawValue)
        pair.bus.publish(message, on: shipped.name.rawValue)

        #expect(onRight.count == 1)
    }

    @Test func aLongNameTravelsOnAHashedChannel() {
        let pair = RelayPair(limits: NotificationTransportLimits(maximumMessageSize: 7_999, maximumChannelLength: 63))
        let longName = "com.example.warehouse.notifications." + uniqueName() + ".OrderShippedNotification"
        let shipped = Notificatable<RelayOrder>.name(longName)
        pair.forward(shipped)
        let onRight = ValueRecorder<RelayOrder>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { onRight.append($0.userInfo) }.store(in: bag)

        shipped.post(order, center: pair.leftCenter)

        let channel = NotificationChannelName.channel(for: longName, maximumLength: 63)
        #expect(pair.rightTransport.listenedChannels == [channel])
        #expect(channel.utf8.count == 63)
        #expect(onRight.values == [order])
    }

    @Test func disposingAForwardingStopsThatHandleOnly() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        let invalidated = Notificatable.withoutPayload(uniqueName())
        pair.left.forward(invalidated)
        pair.right.forward(invalidated)
        let forwarding = pair.left.forward(shipped)
        pair.right.forward(shipped)
        let shippedOnRight = Counter()
        let invalidatedOnRight = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { _ in shippedOnRight.increment() }.store(in: bag)
        invalidated.subscribe(center: pair.rightCenter) { _ in invalidatedOnRight.increment() }.store(in: bag)

        forwarding.dispose()
        shipped.post(order, center: pair.leftCenter)
        invalidated.post(center: pair.leftCenter)

        #expect(shippedOnRight.count == 0)
        #expect(invalidatedOnRight.count == 1)
        #expect(pair.leftTransport.listenedChannels == [invalidated.name.rawValue])
    }

    @Test func transportEventsReachTheHook() {
        let pair = RelayPair()
        pair.leftTransport.report(.init(kind: .transportError, channel: "x"))
        #expect(pair.events.values.map(\.kind) == [.transportError])
        #expect(pair.events.values.first?.channel == "x")
    }

    @Test func stopRemovesEveryObserverAndStopsTheTransport() {
        let pair = RelayPair()
        let released = Counter()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        let invalidated = Notificatable.withoutPayload(uniqueName())
        let spyShipped = pair.spy(on: shipped.name.rawValue)
        let spyInvalidated = pair.spy(on: invalidated.name.rawValue)
        do {
            // A converter that holds a watched object: it lives as long as something holds the handle.
            let watched = Watched(released)
            let converting = shipped.addingConverter { _ in withExtendedLifetime(watched) { nil } }
            pair.left.forward(converting)
            pair.left.forward(invalidated)
        }
        #expect(released.count == 0)

        pair.left.stop()
        pair.left.stop()
        shipped.post(order, center: pair.leftCenter)
        invalidated.post(center: pair.leftCenter)

        #expect(released.count == 1)  // the center holds nothing of the relay any more
        #expect(spyShipped.count == 0)
        #expect(spyInvalidated.count == 0)
        #expect(pair.leftTransport.listenedChannels.isEmpty)
        // A stopped transport hears nothing: the right relay's posts reach no one on the left.
        let onLeft = Counter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        invalidated.subscribe(center: pair.leftCenter) { _ in onLeft.increment() }.store(in: bag)
        pair.right.forward(invalidated)
        invalidated.post(center: pair.rightCenter)
        #expect(onLeft.count == 0)
        #expect(spyInvalidated.count == 1)
    }

    @Test func aRelayThatGoesAwayStopsItsTransport() {
        let bus = LoopbackNotificationBus()
        let center = NotificationCenter()
        let transport = LoopbackNotificationTransport(bus: bus)
        weak var weakRelay: NotificationRelay?
        do {
            let relay = NotificationRelay(transport: transport, center: center)
            relay.forward(Notificatable.withoutPayload(uniqueName()))
            weakRelay = relay
        }
        #expect(weakRelay == nil)
        #expect(transport.listenedChannels.isEmpty)
    }
}

/// Counts its own deinitialization.
private final class Watched: @unchecked Sendable {
    let counter: Counter
    init(_ counter: Counter) { self.counter = counter }
    deinit { counter.increment() }
}
