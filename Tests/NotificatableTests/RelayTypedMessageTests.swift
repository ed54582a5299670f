import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// Records what a relay publishes.
private final class CapturingTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    private let lock = NSLock()
    private var storage: [Data] = []
    var published: [Data] { lock.withLock { storage } }
    func start(handler: NotificationTransportHandler) {}
    func listen(to channel: String) {}
    func unlisten(from channel: String) {}
    func publish(_ message: Data, on channel: String) { lock.withLock { storage.append(message) } }
    func stop() {}
}

private struct Shipment: Codable, Equatable {
    var orderID: String
    var weight: Double
    var at: Date
}

@Suite("Relay messages built from a handle")
struct RelayTypedMessageTests {
    @Test func typedMessageIsByteForByteWhatTheRelaySends() throws {
        let center = NotificationCenter()
        let transport = CapturingTransport()
        let relay = NotificationRelay(transport: transport, center: center)
        defer { relay.stop() }
        let handle = Notificatable<Shipment>.name("TypedMessageShipment")
        relay.forward(handle)
        let shipment = Shipment(orderID: "A-17", weight: 2.5, at: Date(timeIntervalSince1970: 1_764_000_000.5))
        handle.post(shipment, center: center)
        handle.post(shipment, center: center)
        let sent = transport.published
        #expect(sent.count == 2)
        #expect(try NotificationRelayMessage.encoded(shipment, for: handle, sender: relay.id, sequence: 1) == sent[0])
        #expect(try NotificationRelayMessage.encoded(shipment, for: handle, sender: relay.id, sequence: 2) == sent[1])
    }

    @Test func plainKeysEncoderOfTheHandleIsUsed() throws {
        let encoder = UserInfoEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let handle = Notificatable<Shipment>.name("TypedMessagePlainKeys").postingPlainKeys(encoder: encoder)
        let at = Date(timeIntervalSince1970: 20)
        let bytes = try NotificationRelayMessage.encoded(
            Shipment(orderID: "B", weight: 1, at: at), for: handle, sender: "s", sequence: 4)
        let read = try NotificationRelayMessage(decoding: bytes)
        #expect(read.sender == "s")
        #expect(read.sequence == 4)
        #expect(read.name == handle.name)
        #expect(read.payload?["at"] as? Double == 20)
    }

    @Test func handleWithoutPayload() throws {
        let handle = Notificatable<Never>.name("TypedMessageNoPayload")
        let read = try NotificationRelayMessage(
            decoding: try NotificationRelayMessage.encoded(for: handle, sender: "s", sequence: 1))
        #expect(read.name == handle.name)
        #expect(read.payload == nil)
    }
}
