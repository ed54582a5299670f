import Foundation
import Notificatable
import NotificatableRelay

/// The payload of the relay tests that hand a relay messages from made-up senders.
struct RelayTick: Codable, Equatable, Sendable {
    var sender: String
    var sequence: Int
}

/// A transport that records its channel calls and what the relay publishes, and lets a test hand the relay messages.
final class ScriptedRelayTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    /// `listen` and `unlisten`, in order.
    let calls = ValueRecorder<String>()
    /// The messages the relay published.
    let published = ValueRecorder<Data>()
    private let lock = NSLock()
    private var handler: NotificationTransportHandler?

    func start(handler: NotificationTransportHandler) { lock.withLock { self.handler = handler } }
    func listen(to channel: String) { calls.append("listen") }
    func unlisten(from channel: String) { calls.append("unlisten") }
    func publish(_ message: Data, on channel: String) { published.append(message) }
    func stop() { lock.withLock { handler = nil } }

    /// Hands the relay what `sender` sends as its message number `sequence` of `handle`.
    func deliver(_ handle: Notificatable<RelayTick>, _ sender: String, _ sequence: Int) throws {
        let message = try NotificationRelayMessage(
            name: handle.name, sender: sender, sequence: sequence,
            payload: ["sender": sender, "sequence": sequence]
        ).encoded()
        lock.withLock { handler }?.receive(message, on: handle.name.rawValue)
    }
}
