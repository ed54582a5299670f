import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// Forwarding a name that is already forwarded replaces the handle, and nothing else (issue 29 item 7): the
/// transport keeps listening (a durable transport would otherwise go back to its stored position and hand over
/// again what it had delivered), and the relay keeps its senders' windows (it would otherwise post those copies).
@Suite struct RelayForwardAgainTests {
    /// Before: the calls were listen, unlisten, listen, and the three messages handed over again were posted again.
    @Test func forwardingAgainKeepsListeningAndKeepsTheSendersWindows() throws {
        let handle = Notificatable<RelayTick>.name(uniqueName())
        let transport = ScriptedRelayTransport()
        let center = NotificationCenter()
        let events = ValueRecorder<NotificationTransportEvent>()
        let relay = NotificationRelay(transport: transport, center: center, onEvent: { events.append($0) })
        defer { relay.stop() }
        let received = ValueRecorder<Int>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        handle.subscribe(center: center) { note in received.append(note.userInfo.sequence) }.store(in: bag)
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
