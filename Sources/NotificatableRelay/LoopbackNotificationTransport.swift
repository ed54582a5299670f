import Foundation
import Notificatable

/// An in-process engine for ``LoopbackNotificationTransport``s: what one transport publishes, every transport on the
/// same bus that listens to the channel receives, the publisher included.
///
/// Use it in tests, to join two notification centers as two processes would be joined:
///
/// ```swift
/// let bus = LoopbackNotificationBus()
/// let left = NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: leftCenter)
/// let right = NotificationRelay(transport: LoopbackNotificationTransport(bus: bus), center: rightCenter)
/// left.forward(orderShipped)
/// right.forward(orderShipped)
/// orderShipped.post(order, center: leftCenter)   // rightCenter's subscribers have it when post returns
/// ```
///
/// Delivery is synchronous: a message reaches every listener before the outermost `publish` returns, one message at
/// a time, in the order of publishing. A message published while another is being delivered (by a subscriber that
/// posts, say) is delivered right after it. No lock is held while a transport's handler runs.
public final class LoopbackNotificationBus: @unchecked Sendable {
    private let lock = NSLock()
    /// The transports that have been started and not stopped. Guarded by `lock`.
    private var transports: [ObjectIdentifier: LoopbackNotificationTransport] = [:]
    /// Messages waiting to be delivered, and whether a thread is delivering. Guarded by `lock`.
    private var pending: [(message: Data, channel: String)] = []
    private var isDelivering = false

    /// Creates an empty bus.
    public init() {}

    /// Delivers `message` to every transport listening to `channel`, as if a process had published it.
    ///
    /// Use it to inject a message by hand, a malformed one for instance:
    ///
    /// ```swift
    /// bus.publish(Data("not json".utf8), on: "OrderShipped")
    /// ```
    ///
    /// - Parameters:
    ///   - message: The bytes to deliver.
    ///   - channel: The channel.
    public func publish(_ message: Data, on channel: String) {
        lock.lock()
        pending.append((message, channel))
        guard !isDelivering else {
            lock.unlock()
            return
        }
        isDelivering = true
        lock.unlock()
        while true {
            lock.lock()
            guard !pending.isEmpty else {
                isDelivering = false
                lock.unlock()
                return
            }
            let (message, channel) = pending.removeFirst()
            let receivers = Array(transports.values)
            lock.unlock()
            for transport in receivers {
                transport.deliver(message, on: channel)
            }
        }
    }

    func attach(_ transport: LoopbackNotificationTransport) {
        lock.withLock { transports[ObjectIdentifier(transport)] = transport }
    }

    func detach(_ transport: LoopbackNotificationTransport) {
        let removed = lock.withLock { transports.removeValue(forKey: ObjectIdentifier(transport)) }
        withExtendedLifetime(removed) {}
    }
}

/// A ``NotificationTransport`` that carries messages within the process, over a ``LoopbackNotificationBus``: for
/// tests of code that uses a ``NotificationRelay``, and for trying out relays without an engine.
///
/// ```swift
/// let bus = LoopbackNotificationBus()
/// let transport = LoopbackNotificationTransport(
///     bus: bus,
///     limits: NotificationTransportLimits(maximumMessageSize: 7_999, maximumChannelLength: 63)
/// )
/// ```
///
/// It can act out what a network does to a relay: ``disconnect()`` drops every message until ``reconnect()``, which
/// reports the gap, as a real transport would.
public final class LoopbackNotificationTransport: NotificationTransport, @unchecked Sendable {
    /// The bus this transport publishes on.
    public let bus: LoopbackNotificationBus
    /// The limits it reports; the bus itself carries messages of any size.
    public let limits: NotificationTransportLimits

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var handler: NotificationTransportHandler?
    private var channels: Set<String> = []
    private var isConnected = true
    private var isStopped = false

    /// Creates a transport on `bus`.
    ///
    /// - Parameters:
    ///   - bus: The bus shared with the transports it talks to.
    ///   - limits: The limits to report to the relay, to test how it keeps them. Defaults to none.
    public init(bus: LoopbackNotificationBus, limits: NotificationTransportLimits = .unlimited) {
        self.bus = bus
        self.limits = limits
    }

    /// The channels this transport listens to now.
    public var listenedChannels: Set<String> {
        lock.withLock { channels }
    }

    /// Starts delivering to `handler`. Does nothing if the transport was started before.
    ///
    /// - Parameter handler: Where received messages and events go.
    public func start(handler: NotificationTransportHandler) {
        let started = lock.withLock {
            guard self.handler == nil, !isStopped else { return false }
            self.handler = handler
            return true
        }
        if started { bus.attach(self) }
    }

    /// Starts receiving the messages published on `channel`.
    ///
    /// - Parameter channel: The channel.
    public func listen(to channel: String) {
        lock.withLock { _ = channels.insert(channel) }
    }

    /// Stops receiving the messages published on `channel`.
    ///
    /// - Parameter channel: The channel.
    public func unlisten(from channel: String) {
        lock.withLock { _ = channels.remove(channel) }
    }

    /// Delivers `message` to every transport on the bus that listens to `channel`, this one included, before it
    /// returns (unless a delivery is already under way on this thread, which then delivers it next). While
    /// disconnected, the message is dropped and reported as ``NotificationTransportEvent/Kind/publishFailed``.
    ///
    /// - Parameters:
    ///   - message: The message.
    ///   - channel: The channel.
    public func publish(_ message: Data, on channel: String) {
        let (connected, handler) = lock.withLock { (isConnected && !isStopped, self.handler) }
        guard connected else {
            handler?.report(.init(kind: .publishFailed, channel: channel, error: LoopbackDisconnected()))
            return
        }
        bus.publish(message, on: channel)
    }

    /// Stops the transport: it leaves the bus, listens to nothing, and calls its handler no more.
    public func stop() {
        let handler = lock.withLock {
            isStopped = true
            channels = []
            defer { self.handler = nil }
            return self.handler
        }
        bus.detach(self)
        withExtendedLifetime(handler) {}
    }

    /// Acts out a lost connection: reports ``NotificationTransportEvent/Kind/connectionLost``, then drops every
    /// message published to or by this transport until ``reconnect()``.
    public func disconnect() {
        let handler = lock.withLock {
            isConnected = false
            return self.handler
        }
        handler?.report(.init(kind: .connectionLost, error: LoopbackDisconnected()))
    }

    /// Ends a ``disconnect()``: reports ``NotificationTransportEvent/Kind/reconnected`` and delivers again. The
    /// messages dropped meanwhile stay lost.
    public func reconnect() {
        let handler = lock.withLock {
            isConnected = true
            return self.handler
        }
        handler?.report(.init(kind: .reconnected))
    }

    /// Reports `event` to the handler, as the transport would: to test how an app reacts to transport events.
    ///
    /// - Parameter event: The event.
    public func report(_ event: NotificationTransportEvent) {
        lock.withLock { handler }?.report(event)
    }

    func deliver(_ message: Data, on channel: String) {
        let handler = lock.withLock { () -> NotificationTransportHandler? in
            guard isConnected, !isStopped, channels.contains(channel) else { return nil }
            return self.handler
        }
        handler?.receive(message, on: channel)
    }
}

/// The error of a ``LoopbackNotificationTransport`` that was told to ``LoopbackNotificationTransport/disconnect()``.
private struct LoopbackDisconnected: Error, CustomStringConvertible {
    var description: String { "The loopback transport is disconnected." }
}
