import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// Forwarding a name that is already forwarded replaces the handle, and nothing else (issue 29 item 7): the
/// transport keeps listening (a durable transport would otherwise go back to its stored position and hand over
/// again what it had delivered), and the relay keeps its senders' windows (it would otherwise post those copies).
@Suite struct RelayForwardAgainTests {
    struct Tick: Codable, Equatable, Sendable {
        var sender: String
        var sequence: Int
    }

    /// A transport that records its channel calls and lets the test hand the relay messages.
    final class ChannelRecordingTransport: NotificationTransport, @unchecked Sendable {
        let limits = NotificationTransportLimits.unlimited
        let calls = ValueRecorder<String>()
        private let lock = NSLock()
        private var handler: NotificationTransportHandler?

        func start(handler: NotificationTransportHandler) { lock.withLock { self.handler = handler } }
        func listen(to channel: String) { calls.append("listen") }
        func unlisten(from channel: String) { calls.append("unlisten") }
        func publish(_ message: Data, on channel: String) {}
        func stop() { lock.withLock { handler = nil } }

        /// Hands the relay what `sender` sends as its message number `sequence` of `handle`.
        func deliver(_ handle: Notificatable<Tick>, _ sender: String, _ sequence: Int) throws {
            let message = try NotificationRelayMessage(
                name: handle.name, sender: sender, sequence: sequence,
                payload: ["sender": sender, "sequence": sequence]
            ).encoded()
            lock.withLock { handler }?.receive(message, on: handle.name.rawValue)
        }
    }

    /// Before: the calls were listen, unlisten, listen, and the three messages handed over again were posted again.
    @Test func forwardingAgainKeepsListeningAndKeepsTheSendersWindows() throws {
        let handle = Notificatable<Tick>.name(uniqueName())
        let transport = ChannelRecordingTransport()
        let center = NotificationCenter()
        let events = ValueRecorder<NotificationTransportEvent>()
        let relay = NotificationRelay(transport: transport, center: center, onEvent: { events.append($0) })
        defer { relay.stop() }
        let received = ValueRecorder<Int>()
        handle.subscribe(center: center) { note in received.append(note.userInfo.sequence) }
        relay.forward(handle)
        for sequence in 1...3 { try transport.deliver(handle, "a", sequence) }
        relay.forward(handle)  // replaces the forwarding
        for sequence in 1...4 { try transport.deliver(handle, "a", sequence) }  // 1-3 again, as a transport might
        #expect(received.values == [1, 2, 3, 4])
        #expect(transport.calls.values == ["listen"])
        relay.stop()
        #expect(transport.calls.values == ["listen", "unlisten"])
        let duplicates = events.values.filter { $0.kind == .duplicatesDropped }
        #expect((duplicates.first?.error as? NotificationRelayError)?.duplicateCount == 3)
    }
}
