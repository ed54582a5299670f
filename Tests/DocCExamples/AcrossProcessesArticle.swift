// The ```swift blocks of AcrossProcesses.md, verbatim (see DocCExamples.swift).

import Foundation
import Notificatable
import NotificatableRelay

struct OrderShipped: Codable, Sendable {
    var orderID: String
    var items: Int
}

let orderShipped = Notificatable<OrderShipped>.name("com.example.OrderShipped")
let cacheInvalidated = Notificatable.withoutPayload("com.example.CacheInvalidated")

func joinProcesses(transport: any NotificationTransport) -> NotificationRelay {
    let relay = NotificationRelay(
        transport: transport,
        center: .default,
        onEvent: { event in print("relay:", event) },
        onFailure: { failure in print("relay:", failure) }
    )
    relay.forward(orderShipped)
    relay.forward(cacheInvalidated)
    return relay
}

func joinTrustedProcesses(
    transport: any NotificationTransport,
    authenticator: any NotificationMessageAuthenticator
) -> NotificationRelay {
    let relay = NotificationRelay(
        transport: transport,
        authenticator: authenticator,  // HMACMessageAuthenticator(keys: …), the same keys in every process
        onEvent: { event in
            if event.kind == .unauthenticatedMessage { print("refused, not posted:", event) }
        }
    )
    relay.forward(orderShipped)
    return relay
}

/// The few calls a pub/sub client offers (a Redis or NATS client library has equivalents).
protocol PubSubClient: Sendable {
    func publish(_ bytes: Data, to channel: String) async throws
    func subscribe(to channel: String, onMessage: @escaping @Sendable (Data) -> Void) async throws
    func unsubscribe(from channel: String) async throws
}

final class PubSubTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits(maximumMessageSize: 1_000_000, maximumChannelLength: nil)
    private let client: any PubSubClient
    private let lock = NSLock()
    private var handler: NotificationTransportHandler?
    private var tail: Task<Void, Never>?  // the last queued call: each call waits for the one before

    init(client: any PubSubClient) { self.client = client }

    func start(handler: NotificationTransportHandler) {
        lock.withLock { self.handler = handler }
    }

    func listen(to channel: String) {
        enqueue { client, handler in
            try await client.subscribe(to: channel) { bytes in handler?.receive(bytes, on: channel) }
        }
    }

    func unlisten(from channel: String) {
        enqueue { client, _ in try await client.unsubscribe(from: channel) }
    }

    func publish(_ message: Data, on channel: String) {
        enqueue { client, _ in try await client.publish(message, to: channel) }
    }

    func stop() {
        lock.withLock { handler = nil }
    }

    /// Runs `work` after every call enqueued before it, and reports its error.
    private func enqueue(
        _ work: @escaping @Sendable (any PubSubClient, NotificationTransportHandler?) async throws -> Void
    ) {
        lock.withLock {
            let previous = tail
            let client = self.client
            let handler = self.handler
            tail = Task {
                await previous?.value
                do {
                    try await work(client, handler)
                } catch {
                    handler?.report(NotificationTransportEvent(kind: .publishFailed, error: error))
                }
            }
        }
    }
}

// MARK: - NotificatableRelay.md (the library's landing page)

func relayLandingPageExample() -> NotificationRelay {
    let bus = LoopbackNotificationBus()
    let relay = NotificationRelay(transport: LoopbackNotificationTransport(bus: bus))
    relay.forward(Notificatable<String>.name("com.example.Greeting"))
    return relay
}
