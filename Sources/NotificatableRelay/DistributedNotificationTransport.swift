#if os(macOS) || NOTIFICATABLE_APPLE_CHECK
import Foundation
import Notificatable

/// A ``NotificationTransport`` between processes of one Mac, over `DistributedNotificationCenter`.
///
/// ```swift
/// let relay = NotificationRelay(transport: DistributedNotificationTransport())
/// relay.forward(documentDidExport)
/// ```
///
/// Each channel is a distributed notification named `channelPrefix` + the channel, and each message travels as the
/// notification's `object`, a string. The `userInfo` of a distributed notification must be a property list, and a
/// sandboxed app may not send a `userInfo` at all: the object string is what every app may send, so this transport
/// works in the sandbox too. Messages are delivered immediately, also to suspended apps, on the thread whose run loop
/// the system uses for distributed notifications (the main thread): a receiving process must run its main run loop.
/// Every process of the user's session can see these notifications: do not relay secrets this way.
public final class DistributedNotificationTransport: NotificationTransport, @unchecked Sendable {
    /// No limit that the relay must check: distributed notifications carry messages of any reasonable size.
    public let limits = NotificationTransportLimits.unlimited

    private let center: DistributedNotificationCenter
    private let channelPrefix: String
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var handler: NotificationTransportHandler?
    private var observers: [String: any NSObjectProtocol] = [:]

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - center: The distributed center. Defaults to `DistributedNotificationCenter.default()`.
    ///   - channelPrefix: Put before every channel to make the distributed notification's name; use your app's
    ///     reverse-DNS prefix so that unrelated apps do not share channels. Defaults to `"Notificatable.relay."`.
    public init(
        center: DistributedNotificationCenter = .default(),
        channelPrefix: String = "Notificatable.relay."
    ) {
        self.center = center
        self.channelPrefix = channelPrefix
    }

    /// Starts handing received messages to `handler`.
    ///
    /// - Parameter handler: Where received messages go.
    public func start(handler: NotificationTransportHandler) {
        lock.withLock { self.handler = handler }
    }

    /// Observes the distributed notification of `channel`.
    ///
    /// - Parameter channel: The channel.
    public func listen(to channel: String) {
        let observer = center.addObserver(
            forName: Notification.Name(channelPrefix + channel),
            object: nil,
            queue: nil
        ) { [weak self] notification in
            guard let self, let text = notification.object as? String else { return }
            self.lock.withLock { self.handler }?.receive(Data(text.utf8), on: channel)
        }
        let extra = lock.withLock { () -> (any NSObjectProtocol)? in
            guard observers[channel] == nil, handler != nil else { return observer }
            observers[channel] = observer
            return nil
        }
        if let extra { center.removeObserver(extra) }
    }

    /// Stops observing the distributed notification of `channel`.
    ///
    /// - Parameter channel: The channel.
    public func unlisten(from channel: String) {
        if let observer = lock.withLock({ observers.removeValue(forKey: channel) }) {
            center.removeObserver(observer)
        }
    }

    /// Posts `message`, as the object string of the channel's distributed notification, for immediate delivery.
    ///
    /// - Parameters:
    ///   - message: The message, UTF-8 JSON text.
    ///   - channel: The channel.
    public func publish(_ message: Data, on channel: String) {
        center.postNotificationName(
            Notification.Name(channelPrefix + channel),
            object: String(decoding: message, as: UTF8.self),
            userInfo: nil,
            deliverImmediately: true
        )
    }

    /// Removes every observer and lets go of the handler.
    public func stop() {
        let removed = lock.withLock { () -> [any NSObjectProtocol] in
            handler = nil
            defer { observers = [:] }
            return Array(observers.values)
        }
        for observer in removed { center.removeObserver(observer) }
    }
}
#endif
