import Foundation
import Notificatable
import NotificatableAuthentication
import NotificatableRelay
import Testing

/// HMAC authentication with the in-process loopback transport, in a package whose build graph holds the root
/// package and swift-crypto only (no postgres-nio): what a user of the loopback or macOS transport builds.
@Suite struct LoopbackAuthenticationTests {
    struct Order: Codable, Sendable, Equatable {
        var id: Int
        var note: String
    }

    final class Recorder<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [Value] = []
        func append(_ value: Value) { lock.withLock { storage.append(value) } }
        var values: [Value] { lock.withLock { storage } }
    }

    /// A relay on its own center and loopback transport, forwarding `handle`, with what it receives and reports.
    struct Peer {
        let center = NotificationCenter()
        let relay: NotificationRelay
        let received = Recorder<Order>()
        let events = Recorder<NotificationTransportEvent>()
        let subscription: Disposable

        init(
            bus: LoopbackNotificationBus, handle: Notificatable<Order>,
            authenticator: (any NotificationMessageAuthenticator)?
        ) {
            let events = self.events
            let received = self.received
            relay = NotificationRelay(
                transport: LoopbackNotificationTransport(bus: bus), center: center, authenticator: authenticator,
                onEvent: { events.append($0) })
            relay.forward(handle)
            subscription = handle.subscribe(center: center) { received.append($0.userInfo) }
        }
    }

    static func key(_ id: String, _ seed: UInt8) throws -> HMACMessageAuthenticator.Key {
        try HMACMessageAuthenticator.Key(id: id, secret: Data(repeating: seed, count: 32))
    }

    @Test func peersSharingAKeyTalkAndAPeerWithAnotherKeyRefusesAndReports() throws {
        let bus = LoopbackNotificationBus()
        let handle = Notificatable<Order>.name("LoopbackAuthenticationTests.\(UUID().uuidString)")
        let sender = Peer(
            bus: bus, handle: handle, authenticator: try HMACMessageAuthenticator(keys: [Self.key("k1", 1)]))
        let receiver = Peer(
            bus: bus, handle: handle, authenticator: try HMACMessageAuthenticator(keys: [Self.key("k1", 1)]))
        let stranger = Peer(
            bus: bus, handle: handle, authenticator: try HMACMessageAuthenticator(keys: [Self.key("k1", 2)]))
        defer { [sender, receiver, stranger].forEach { $0.relay.stop() } }

        handle.post(Order(id: 17, note: "signed"), center: sender.center)

        #expect(receiver.received.values == [Order(id: 17, note: "signed")])
        #expect(receiver.events.values.isEmpty)
        #expect(stranger.received.values.isEmpty)
        #expect(stranger.events.values.map(\.kind) == [.unauthenticatedMessage])
    }

    @Test func aPeerWithoutAuthenticationIsRefused() throws {
        let bus = LoopbackNotificationBus()
        let handle = Notificatable<Order>.name("LoopbackAuthenticationTests.\(UUID().uuidString)")
        let plain = Peer(bus: bus, handle: handle, authenticator: nil)
        let guarded = Peer(
            bus: bus, handle: handle, authenticator: try HMACMessageAuthenticator(keys: [Self.key("k1", 1)]))
        defer { [plain, guarded].forEach { $0.relay.stop() } }

        handle.post(Order(id: 1, note: "unsigned"), center: plain.center)

        #expect(guarded.received.values.isEmpty)
        #expect(guarded.events.values.map(\.kind) == [.unauthenticatedMessage])
    }
}
