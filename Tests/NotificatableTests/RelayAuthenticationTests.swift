import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// A stand-in for a real authenticator (HMACMessageAuthenticator lives in the PostgreSQL package, with swift-crypto):
/// the same framing, `fake-tag:<key id>:<tag>\n<message>`, with a keyed FNV-1a checksum as the tag. Not
/// cryptography: it only lets the relay's behaviour be tested without a dependency. Signs with its first key,
/// accepts any.
struct FakeTagAuthenticator: NotificationMessageAuthenticator {
    enum Failure: Error, Equatable {
        case missingTag
        case unknownKey(String)
        case invalidTag
    }

    let keys: [(id: String, secret: String)]

    init(_ keys: (id: String, secret: String)...) { self.keys = keys }

    var maximumOverhead: Int { Self.prefix.utf8.count + keys[0].id.utf8.count + 1 + 16 + 1 }

    func seal(_ message: Data) throws -> Data {
        var sealed = Data("\(Self.prefix)\(keys[0].id):\(Self.tag(message, secret: keys[0].secret))\n".utf8)
        sealed.append(message)
        return sealed
    }

    func open(_ sealed: Data) throws -> Data {
        let prefix = Data(Self.prefix.utf8)
        guard sealed.starts(with: prefix), let newline = sealed.firstIndex(of: UInt8(ascii: "\n")) else {
            throw Failure.missingTag
        }
        let header = String(decoding: sealed[(sealed.startIndex + prefix.count)..<newline], as: UTF8.self)
        let parts = header.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw Failure.missingTag }
        let message = Data(sealed[(newline + 1)...])
        guard let key = keys.first(where: { $0.id == parts[0] }) else { throw Failure.unknownKey(String(parts[0])) }
        guard Self.tag(message, secret: key.secret) == parts[1] else { throw Failure.invalidTag }
        return message
    }

    static let prefix = "fake-tag:"

    static func tag(_ message: Data, secret: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Data(secret.utf8) + [0] + message {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// An authenticator that misbehaves in the ways a relay must survive.
struct MisbehavingAuthenticator: NotificationMessageAuthenticator {
    struct SealFailed: Error {}
    /// Throws from `seal` instead of sealing.
    var failsToSeal = false
    /// Adds this many bytes, whatever `maximumOverhead` says (0).
    var addedBytes = 0

    var maximumOverhead: Int { 0 }

    func seal(_ message: Data) throws -> Data {
        if failsToSeal { throw SealFailed() }
        return Data(repeating: UInt8(ascii: " "), count: addedBytes) + message
    }

    func open(_ sealed: Data) throws -> Data { sealed }
}

/// Relays that share (or don't share) keys over one loopback bus, with what each receives and reports.
final class AuthenticatedRelays: @unchecked Sendable {
    let bus = LoopbackNotificationBus()
    let handle = Notificatable<RelayOrder>.name(uniqueName())
    private(set) var relays: [NotificationRelay] = []
    private(set) var centers: [NotificationCenter] = []
    private(set) var received: [ValueRecorder<RelayOrder>] = []
    private(set) var events: [ValueRecorder<NotificationTransportEvent>] = []
    private(set) var failures: [ValueRecorder<NotificationDecodingFailure>] = []
    /// The subscriptions that fill `received`, for as long as these relays live.
    let bag = DisposeBag()
    let limits: NotificationTransportLimits

    init(limits: NotificationTransportLimits = .unlimited) { self.limits = limits }

    /// Adds a relay forwarding `handle`; returns its index.
    @discardableResult
    func add(_ authenticator: (any NotificationMessageAuthenticator)?) -> Int {
        let center = NotificationCenter()
        let events = ValueRecorder<NotificationTransportEvent>()
        let failures = ValueRecorder<NotificationDecodingFailure>()
        let received = ValueRecorder<RelayOrder>()
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: bus, limits: limits), center: center,
            authenticator: authenticator, onEvent: { events.append($0) }, onFailure: { failures.append($0) })
        relay.forward(handle)
        handle.subscribe(center: center) { received.append($0.userInfo) }.store(in: bag)
        relays.append(relay)
        centers.append(center)
        self.received.append(received)
        self.events.append(events)
        self.failures.append(failures)
        return relays.count - 1
    }

    func post(_ order: RelayOrder, from index: Int) { handle.post(order, center: centers[index]) }

    /// Every message published on the handle's channel from now on, as a listener without a relay hears it.
    func spy() -> ValueRecorder<Data> {
        let messages = ValueRecorder<Data>()
        let transport = LoopbackNotificationTransport(bus: bus)
        transport.start(
            handler: NotificationTransportHandler(receive: { data, _ in messages.append(data) }, report: { _ in }))
        transport.listen(to: handle.name.rawValue)
        spies.append(transport)
        return messages
    }
    private var spies: [LoopbackNotificationTransport] = []

    /// The unauthenticatedMessage events of relay `index`.
    func refusals(_ index: Int) -> [NotificationTransportEvent] {
        events[index].values.filter { $0.kind == .unauthenticatedMessage }
    }

    func stop() { relays.forEach { $0.stop() } }
}

@Suite("Notification relay: authenticated messages")
struct RelayAuthenticationTests {
    let order = RelayOrder(id: "P-1", count: 1, shippedAt: Date(timeIntervalSince1970: 1_764_000_000))
    let shared = FakeTagAuthenticator((id: "k1", secret: "shared secret"))

    @Test func relaysSharingAKeyExchangeTypedPostsSealedOnTheWire() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        relays.add(shared)
        let wire = relays.spy()

        relays.post(order, from: 0)
        var back = order
        back.id = "P-2"
        relays.post(back, from: 1)

        #expect(relays.received[1].values == [order, back])
        #expect(relays.received[0].values == [order, back])
        #expect(wire.count == 2)
        let sealed = try #require(wire.values.first)
        #expect(String(decoding: sealed, as: UTF8.self).hasPrefix("fake-tag:k1:"))
        // The tag covers the message exactly as the relay encoded it, which follows the header line unchanged.
        let message = try shared.open(sealed)
        #expect(try NotificationRelayMessage(decoding: message).name == relays.handle.name)
        #expect(relays.events.allSatisfy { $0.values.isEmpty })
        #expect(relays.failures.allSatisfy { $0.values.isEmpty })
    }

    @Test func anUnsignedMessageIsRefusedReportedAndNeverPosted() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        let channel = relays.handle.name.rawValue
        let legacy = ValueRecorder<Notification>()
        let token = relays.centers[0].addObserver(forName: relays.handle.name, object: nil, queue: nil) {
            legacy.append($0)
        }
        defer { relays.centers[0].removeObserver(token) }

        // A well-formed message, as anyone who can publish on the engine can write it.
        let forged = NotificationRelayMessage(
            name: relays.handle.name, sender: "forger", sequence: 1,
            payload: ["id": "P-999", "count": 1, "shippedAt": Date(timeIntervalSince1970: 0)])
        relays.bus.publish(try forged.encoded(), on: channel)

        #expect(relays.received[0].values.isEmpty)
        #expect(legacy.values.isEmpty)
        let refusal = try #require(relays.refusals(0).first)
        #expect(relays.events[0].count == 1)
        #expect(refusal.channel == channel)
        #expect(refusal.name == nil)  // nothing in an unauthenticated message is trusted
        #expect(refusal.error as? FakeTagAuthenticator.Failure == .missingTag)
        #expect("\(refusal)".hasPrefix("unauthenticatedMessage (on channel \"\(channel)\"): "))
        #expect(relays.failures[0].values.isEmpty)  // not a decoding failure: the message was not read at all
    }

    @Test func aMessageSignedWithAnotherKeyOrAlteredAfterSigningIsRefused() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        relays.add(FakeTagAuthenticator((id: "k1", secret: "a guessed secret")))
        relays.add(FakeTagAuthenticator((id: "other", secret: "another key")))
        let wire = relays.spy()

        relays.post(order, from: 1)  // the right key id, the wrong secret
        relays.post(order, from: 2)  // a key id relay 0 does not hold
        #expect(relays.received[0].values.isEmpty)
        let errors = relays.refusals(0).map { $0.error as? FakeTagAuthenticator.Failure }
        #expect(errors == [.invalidTag, .unknownKey("other")])

        // A genuine message with one byte of its payload changed: the tag no longer matches.
        relays.post(order, from: 0)
        let genuine = try #require(wire.values.last)
        let altered = Data(String(decoding: genuine, as: UTF8.self).replacingOccurrences(of: "P-1", with: "P-9").utf8)
        #expect(altered != genuine)
        relays.bus.publish(altered, on: relays.handle.name.rawValue)
        #expect(relays.received[0].values == [order])  // relay 0's own post, locally; nothing from the wire
        #expect(relays.refusals(0).last?.error as? FakeTagAuthenticator.Failure == .invalidTag)
        #expect(relays.refusals(0).count == 3)
        #expect(relays.received[1].values == [order])  // its own post: relay 0's message did not open there
        #expect(relays.failures.allSatisfy { $0.values.isEmpty })
    }

    /// What the threat model promises about replays: a tag proves who sealed a message, not when. A copy opens; the
    /// sequence numbers drop it only where the original's number is still among the recent ones.
    @Test func aReplayedGenuineMessageOpensAndOnlyTheSequenceWindowDropsIt() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        relays.add(shared)
        let wire = relays.spy()
        relays.post(order, from: 0)
        let genuine = try #require(wire.values.first)

        // A relay that heard the original drops the copy, and counts it when the next new message arrives.
        relays.bus.publish(genuine, on: relays.handle.name.rawValue)
        #expect(relays.received[1].values == [order])
        var next = order
        next.id = "P-2"
        relays.post(next, from: 0)
        #expect(relays.received[1].values == [order, next])
        #expect(relays.events[1].values.map(\.kind) == [.duplicatesDropped])
        #expect(relays.refusals(1).isEmpty)  // it is genuine: nothing is refused

        // A relay that starts after the original went out has nothing to compare it with: the copy is posted there.
        let late = relays.add(shared)
        relays.bus.publish(genuine, on: relays.handle.name.rawValue)
        #expect(relays.received[late].values == [order])
        #expect(relays.events[late].values.isEmpty)

        // Once the original is more than 256 numbers back, a copy is posted again, reported as a jump.
        for index in 3...300 {
            var later = order
            later.count = index
            relays.post(later, from: 0)
        }
        relays.bus.publish(genuine, on: relays.handle.name.rawValue)
        #expect(relays.received[1].values.count == 301)
        #expect(relays.received[1].values.last == order)
        // (Relay 1 also dropped the copy sent for the late relay, counted when message 3 arrived.)
        #expect(relays.events[1].values.map(\.kind) == [.duplicatesDropped, .duplicatesDropped, .sequenceJumped])
    }

    /// Issue 29.4, with authentication on (a replay carries a valid tag): replaying a sender's old messages 1, 2 and
    /// 300 does not make the relay forget its recent numbers. The 256 most recent messages, replayed, are dropped and
    /// counted; the three old ones are posted again, each reported as a jump. (Before, the three pushed the recent
    /// numbers out, and 255 of the 256 replayed were posted again with no event.)
    @Test func replaysOfOldSealedMessagesCannotMakeTheRecentOnesPostAgain() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        relays.add(shared)
        let wire = relays.spy()
        for index in 1...1_000 {
            var next = order
            next.count = index
            relays.post(next, from: 0)
        }
        let captured = wire.values
        try #require(captured.count == 1_000)
        let channel = relays.handle.name.rawValue
        for number in [1, 2, 300] + Array(745...1_000) { relays.bus.publish(captured[number - 1], on: channel) }
        var last = order
        last.count = 1_001
        relays.post(last, from: 0)
        let counts = relays.received[1].values.map(\.count)
        #expect(counts.count == 1_000 + 3 + 1)
        #expect(counts.suffix(4) == [1, 2, 300, 1_001])
        let events = relays.events[1].values
        let jumps = events.compactMap { ($0.error as? NotificationRelayError)?.sequenceJump }
        #expect(jumps.map(\.to) == [1, 2, 300])
        #expect(jumps.allSatisfy { $0.from == 1_000 })
        #expect(events.compactMap { ($0.error as? NotificationRelayError)?.duplicateCount }.reduce(0, +) == 256)
        #expect(relays.refusals(1).isEmpty)
    }

    @Test func rotationSignsWithTheFirstKeyAndAcceptsAnyListed() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        let old = (id: "2026-10", secret: "old secret")
        let new = (id: "2026-11", secret: "new secret")
        let rotated = relays.add(FakeTagAuthenticator(new, old))  // signs with the new key
        let rotating = relays.add(FakeTagAuthenticator(old, new))  // still signs with the old one, accepts the new
        let stale = relays.add(FakeTagAuthenticator(old))  // has not heard of the new key
        let wire = relays.spy()

        relays.post(order, from: rotated)
        var fromRotating = order
        fromRotating.id = "P-2"
        relays.post(fromRotating, from: rotating)

        #expect(String(decoding: try #require(wire.values.first), as: UTF8.self).hasPrefix("fake-tag:2026-11:"))
        #expect(String(decoding: try #require(wire.values.last), as: UTF8.self).hasPrefix("fake-tag:2026-10:"))
        #expect(relays.received[rotating].values == [order, fromRotating])
        #expect(relays.received[rotated].values == [order, fromRotating])
        #expect(relays.received[stale].values == [fromRotating])
        #expect(relays.refusals(stale).map { $0.error as? FakeTagAuthenticator.Failure } == [.unknownKey("2026-11")])
        #expect(relays.refusals(rotated).isEmpty && relays.refusals(rotating).isEmpty)
    }

    @Test func theSizeLimitCountsTheSealAndARefusedPostTakesNoSequenceNumber() throws {
        // Find the size of the plain message, then set the limit so that it fits plain but not sealed.
        let probe = AuthenticatedRelays()
        probe.add(nil)
        let plainWire = probe.spy()
        probe.post(order, from: 0)
        probe.stop()
        let plainSize = try #require(plainWire.values.first).count
        let limit = plainSize + shared.maximumOverhead - 1

        let relays = AuthenticatedRelays(
            limits: NotificationTransportLimits(maximumMessageSize: limit, maximumChannelLength: nil))
        defer { relays.stop() }
        relays.add(shared)
        relays.add(shared)
        let wire = relays.spy()

        relays.post(order, from: 0)
        #expect(wire.count == 0)
        let event = try #require(relays.events[0].values.first)
        #expect(event.kind == .messageTooLarge)
        #expect(event.name == relays.handle.name)
        let error = try #require(event.error as? NotificationRelayError)
        #expect(error.messageSize == plainSize + shared.maximumOverhead)

        var smaller = order
        smaller.id = "P"
        relays.post(smaller, from: 0)
        #expect(wire.count == 1)
        #expect(try #require(wire.values.first).count <= limit)
        #expect(relays.received[1].values == [smaller])
        #expect(relays.events[1].values.isEmpty)  // no messagesMissed: the refused post took no sequence number
    }

    @Test func aRelayWithoutAnAuthenticatorRefusesASealedMessageAsMalformed() throws {
        let relays = AuthenticatedRelays()
        defer { relays.stop() }
        relays.add(shared)
        let plain = relays.add(nil)

        relays.post(order, from: 0)

        #expect(relays.received[plain].values.isEmpty)
        let failure = try #require(relays.failures[plain].values.first)
        #expect(failure.kind == .malformedMessage)
        #expect(failure.codingPath.isEmpty)
        #expect(relays.events[plain].values.isEmpty)
    }

    @Test func anAuthenticatorThatFailsToSealOrExceedsItsOverheadIsReportedAndNothingIsSent() throws {
        let relays = AuthenticatedRelays(
            limits: NotificationTransportLimits(maximumMessageSize: 1_000, maximumChannelLength: nil))
        defer { relays.stop() }
        relays.add(MisbehavingAuthenticator(failsToSeal: true))
        relays.add(MisbehavingAuthenticator(addedBytes: 2_000))
        let wire = relays.spy()

        relays.post(order, from: 0)
        relays.post(order, from: 1)

        #expect(wire.count == 0)
        let sealFailure = try #require(relays.events[0].values.first)
        #expect(sealFailure.kind == .encodingFailed)
        #expect(sealFailure.name == relays.handle.name)
        #expect(sealFailure.error is MisbehavingAuthenticator.SealFailed)
        let tooLarge = try #require(relays.events[1].values.first)
        #expect(tooLarge.kind == .messageTooLarge)
        #expect(tooLarge.name == relays.handle.name)
        #expect((tooLarge.error as? NotificationRelayError)?.messageSize.map { $0 > 2_000 } == true)
    }
}
