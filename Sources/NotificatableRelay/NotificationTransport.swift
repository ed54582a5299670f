import Foundation
import Notificatable

/// An engine that carries a ``NotificationRelay``'s messages between processes or machines. Three ship:
/// ``LoopbackNotificationTransport`` (in-process, for tests), `DistributedNotificationTransport` (macOS) and, in the
/// separate package `Integrations/NotificatablePostgres`, PostgreSQL `LISTEN`/`NOTIFY` (at most once, or durable
/// through an outbox table). For any other engine (Redis pub/sub, NATS, a broker you already run), conform a type of
/// your own, as sketched below.
///
/// A transport moves opaque messages on named channels. It knows nothing about notifications: the relay encodes
/// each post as one message (see <doc:AcrossProcesses> for the wire format), picks the channel with
/// ``NotificationChannelName``, and hands both to ``publish(_:on:)``. What the transport receives on a channel it
/// listens to, it hands back through the ``NotificationTransportHandler`` given to ``start(handler:)``.
///
/// Every method is synchronous and returns promptly: the relay calls ``publish(_:on:)`` on the thread that posted
/// the notification, so a transport that talks to a network enqueues the message and sends it later. It must
/// send the messages of one transport in the order ``publish(_:on:)`` was called, and report whatever goes wrong
/// (a message that could not be sent, a lost connection, a reconnection after which messages may be missing)
/// through ``NotificationTransportHandler/report(_:)``, never by throwing at the caller.
///
/// The relay calls ``publish(_:on:)`` from one thread at a time, in order, and never while holding one of its
/// locks. ``listen(to:)`` and ``unlisten(from:)`` are called as handles are forwarded and no longer forwarded.
///
/// ```swift
/// final class RedisTransport: NotificationTransport {
///     let limits = NotificationTransportLimits(maximumMessageSize: 512 * 1024 * 1024, maximumChannelLength: nil)
///     func start(handler: NotificationTransportHandler) { /* connect; on message: handler.receive(bytes, on: ch) */ }
///     func listen(to channel: String) { /* SUBSCRIBE channel */ }
///     func unlisten(from channel: String) { /* UNSUBSCRIBE channel */ }
///     func publish(_ message: Data, on channel: String) { /* enqueue PUBLISH channel message */ }
///     func stop() { /* disconnect; call the handler no more */ }
/// }
/// ```
public protocol NotificationTransport: AnyObject, Sendable {
    /// The largest message and the longest channel name that the engine accepts.
    ///
    /// The relay refuses a post whose message would be larger than ``NotificationTransportLimits/maximumMessageSize``
    /// (it reports ``NotificationTransportEvent/Kind/messageTooLarge`` and sends nothing), and shortens channel names
    /// to ``NotificationTransportLimits/maximumChannelLength`` with ``NotificationChannelName``. Read once, when the
    /// relay is created.
    var limits: NotificationTransportLimits { get }

    /// Starts the transport: from now on it hands what it receives, and what goes wrong, to `handler`.
    ///
    /// Called once, by the relay's initializer, before any other method. Connecting may finish later; report a
    /// failure through `handler`. Call ``NotificationTransportHandler/receive(_:on:)`` from one thread at a time, in
    /// the order the engine delivered the messages, so that each sender's order holds.
    ///
    /// - Parameter handler: Where received messages and transport events go. Keep it until ``stop()``.
    func start(handler: NotificationTransportHandler)

    /// Starts receiving the messages published on `channel`, by any process, this one included.
    ///
    /// The relay ignores the messages it sent itself, so a transport need not filter them out. Calling it for a
    /// channel already listened to does nothing.
    ///
    /// - Parameter channel: A channel name produced by ``NotificationChannelName``, within
    ///   ``NotificationTransportLimits/maximumChannelLength`` bytes of UTF-8. It may hold any character, quotes and
    ///   semicolons included: a transport that builds statements from it must quote it.
    func listen(to channel: String)

    /// Stops receiving the messages published on `channel`. Does nothing for a channel not listened to.
    ///
    /// - Parameter channel: A channel name that was passed to ``listen(to:)``.
    func unlisten(from channel: String)

    /// Sends `message` to every listener of `channel`, without waiting for the engine.
    ///
    /// Messages from one transport go out in the order of the calls. A failure is reported through the handler
    /// with kind ``NotificationTransportEvent/Kind/publishFailed``; it does not stop later messages.
    ///
    /// - Parameters:
    ///   - message: The encoded message, UTF-8 JSON text (see the wire format in the Across Processes article), so a
    ///     text-only engine sends it as a string. Never larger than ``NotificationTransportLimits/maximumMessageSize``
    ///     bytes.
    ///   - channel: The channel, as for ``listen(to:)``.
    func publish(_ message: Data, on channel: String)

    /// Stops the transport: it stops listening, lets go of the handler, and calls it no more once `stop()` has
    /// returned (a call already running on another thread may finish). Calling it again does nothing.
    func stop()

    /// The `onEvent:` handler of a ``NotificationRelay`` over this transport that was given none, so that the
    /// relay's events go where the transport's own logging goes (the PostgreSQL transports log them through their
    /// swift-log `Logger`, at each event's ``NotificationTransportEvent/severity``, in every build). `nil` (the
    /// default implementation): the relay uses ``NotificationRelay/defaultEventHandler``.
    var defaultRelayEventHandler: (@Sendable (NotificationTransportEvent) -> Void)? { get }

    /// The ``NotificationRelayMessage/headers`` of the message a relay is about to send for a post of `name` on
    /// `channel`. Called in the post, on the posting thread (and so inside the posting task, with its task-local
    /// values), before the message is encoded and sealed: a transport that traces injects the poster's trace context
    /// here. Empty (the default implementation): the message has no `headers` field, and costs nothing more. Headers
    /// over ``NotificationRelayMessage/maximumHeaderCount`` or ``NotificationRelayMessage/maximumHeadersLength``
    /// make the post fail with ``NotificationTransportEvent/Kind/encodingFailed``: keep them small.
    ///
    /// - Parameters:
    ///   - name: The notification's name.
    ///   - channel: The channel the message goes to.
    /// - Returns: The headers, empty for none.
    func headers(forPostOf name: Notification.Name, on channel: String) -> [String: String]
}

extension NotificationTransport {
    /// `nil`: a relay given no `onEvent:` uses ``NotificationRelay/defaultEventHandler``.
    public var defaultRelayEventHandler: (@Sendable (NotificationTransportEvent) -> Void)? { nil }

    /// Empty: messages carry no headers.
    ///
    /// - Parameters:
    ///   - name: The notification's name.
    ///   - channel: The channel the message goes to.
    /// - Returns: `[:]`.
    public func headers(forPostOf name: Notification.Name, on channel: String) -> [String: String] { [:] }
}

/// The limits of a ``NotificationTransport``'s engine.
///
/// ```swift
/// // PostgreSQL LISTEN/NOTIFY: payloads under 8,000 bytes, identifiers of at most 63 bytes.
/// let limits = NotificationTransportLimits(maximumMessageSize: 7_999, maximumChannelLength: 63)
/// ```
public struct NotificationTransportLimits: Hashable, Sendable {
    /// The largest message, in bytes, that the engine carries; `nil` for no limit that the relay must check.
    public var maximumMessageSize: Int?
    /// The longest channel name, in bytes of UTF-8, that the engine accepts; `nil` for no limit.
    public var maximumChannelLength: Int?

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maximumMessageSize: The largest message in bytes, or `nil` for no limit.
    ///   - maximumChannelLength: The longest channel name in bytes of UTF-8, or `nil` for no limit.
    public init(maximumMessageSize: Int?, maximumChannelLength: Int?) {
        self.maximumMessageSize = maximumMessageSize
        self.maximumChannelLength = maximumChannelLength
    }

    /// No limits.
    public static let unlimited = NotificationTransportLimits(maximumMessageSize: nil, maximumChannelLength: nil)
}

/// Where a ``NotificationTransport`` hands what it receives, and what goes wrong: given to
/// ``NotificationTransport/start(handler:)``.
///
/// A ``NotificationRelay`` makes one for its transport. Make your own to test a transport without a relay:
///
/// ```swift
/// let handler = NotificationTransportHandler(
///     receive: { message, channel in received.append((message, channel)) },
///     report: { event in events.append(event) }
/// )
/// transport.start(handler: handler)
/// ```
public struct NotificationTransportHandler: Sendable {
    private let receiveMessage: @Sendable (Data, String) -> Void
    private let reportEvent: @Sendable (NotificationTransportEvent) -> Void

    /// Creates a handler from two closures.
    ///
    /// - Parameters:
    ///   - receive: Called with each message received and the channel it arrived on.
    ///   - report: Called with each transport event.
    public init(
        receive: @escaping @Sendable (_ message: Data, _ channel: String) -> Void,
        report: @escaping @Sendable (_ event: NotificationTransportEvent) -> Void
    ) {
        self.receiveMessage = receive
        self.reportEvent = report
    }

    /// Hands over one received message. Call it from one thread at a time, in the order the engine delivered.
    ///
    /// - Parameters:
    ///   - message: The message's bytes, exactly as published.
    ///   - channel: The channel it arrived on.
    public func receive(_ message: Data, on channel: String) {
        receiveMessage(message, channel)
    }

    /// Reports a transport event: an error, a lost connection, a reconnection after which messages may be missing.
    ///
    /// - Parameter event: What happened.
    public func report(_ event: NotificationTransportEvent) {
        reportEvent(event)
    }
}
