import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// A loopback transport that offers its own event handler to relays given none, as the PostgreSQL transports do.
final class ReportingLoopbackTransport: NotificationTransport, @unchecked Sendable {
    let inner: LoopbackNotificationTransport
    let events = ValueRecorder<NotificationTransportEvent>()

    init(bus: LoopbackNotificationBus, limits: NotificationTransportLimits) {
        inner = LoopbackNotificationTransport(bus: bus, limits: limits)
    }

    var limits: NotificationTransportLimits { inner.limits }
    func start(handler: NotificationTransportHandler) { inner.start(handler: handler) }
    func listen(to channel: String) { inner.listen(to: channel) }
    func unlisten(from channel: String) { inner.unlisten(from: channel) }
    func publish(_ message: Data, on channel: String) { inner.publish(message, on: channel) }
    func stop() { inner.stop() }

    var defaultRelayEventHandler: (@Sendable (NotificationTransportEvent) -> Void)? {
        let events = self.events
        return { events.append($0) }
    }
}

@Suite struct RelayEventSeverityTests {
    @Test func everyKindHasTheSeverityThatFitsWhatItMeans() {
        let expected: [(NotificationTransportEvent.Kind, NotificationTransportEvent.Severity)] = [
            (.messageTooLarge, .error), (.encodingFailed, .error), (.publishFailed, .error),
            (.messagesMissed, .error), (.unauthenticatedMessage, .error), (.transportError, .error),
            (.connectionLost, .warning), (.sequenceJumped, .warning), (.nothingForwarded, .warning),
            (.reconnected, .notice), (.duplicatesDropped, .notice),
        ]
        for (kind, severity) in expected {
            #expect(kind.defaultSeverity == severity, "\(kind)")
            #expect(NotificationTransportEvent(kind: kind).severity == severity, "\(kind)")
        }
        #expect(NotificationTransportEvent(kind: .transportError, severity: .notice).severity == .notice)
        typealias Severity = NotificationTransportEvent.Severity
        let ordered: [Severity] = [.debug, .info, .notice, .warning, .error]
        #expect(ordered == ordered.sorted())
        #expect(Set(ordered).count == 5)
    }

    @Test func aRelayGivenNoEventHandlerUsesTheOneItsTransportOffers() {
        let bus = LoopbackNotificationBus()
        let transport = ReportingLoopbackTransport(
            bus: bus, limits: NotificationTransportLimits(maximumMessageSize: 64, maximumChannelLength: nil))
        let center = NotificationCenter()
        let relay = NotificationRelay(transport: transport, center: center)
        let handle = Notificatable<RelayOrder>.name("Severity.Order")
        relay.forward(handle)
        handle.post(RelayOrder(id: String(repeating: "A", count: 100), count: 1, shippedAt: Date()), center: center)
        relay.stop()
        let events = transport.events.values
        #expect(events.map(\.kind) == [.messageTooLarge])
        #expect(events.first?.severity == .error)
    }

    @Test func theRelayErrorNamesTheSender() {
        #expect(NotificationRelayError.messagesMissed(sender: "A", count: 2).sender == "A")
        #expect(NotificationRelayError.duplicatesDropped(sender: "B", count: 2).sender == "B")
        #expect(NotificationRelayError.sequenceJumped(sender: "C", from: 1, to: 900).sender == "C")
        #expect(NotificationRelayError.messageTooLarge(size: 2, limit: 1).sender == nil)
    }
}
