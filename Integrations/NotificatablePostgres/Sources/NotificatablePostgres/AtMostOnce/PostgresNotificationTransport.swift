import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// A `NotificationTransport` over PostgreSQL `LISTEN`/`NOTIFY`, through PostgresNIO.
///
/// Give it to a `NotificationRelay` in every process that should share notifications, all pointed at the same
/// database:
///
/// ```swift
/// let transport = try PostgresNotificationTransport(configuration: .init(
///     host: "127.0.0.1", port: 5432, username: "app", password: nil, database: "app"))
/// let relay = NotificationRelay(transport: transport)
/// relay.forward(orderShipped)
/// ```
///
/// ## What it does
/// - One connection per transport, used both to listen and to send. Each relay channel is one PostgreSQL channel
///   (``serverChannel(for:)``); messages go as bound parameters of `pg_notify`, never spliced into SQL.
/// - ``publish(_:on:)`` returns at once. When the connection is idle, the message is written to it there and then,
///   on the caller's thread; otherwise it waits in an in-memory queue, and one task sends what has queued up in one
///   statement (one transaction) as soon as the statement before it has completed. One statement at a time, so
///   messages reach the server in the order published, and PostgreSQL delivers a transaction's notifications in
///   order.
/// - Received messages are read on the connection's event loop and handed to the relay on the transport's delivery
///   queue (a serial dispatch queue of its own), in the order the server sent them. So the relay's local re-posts,
///   and the subscribers that receive them without a queue of their own, run there, one at a time: a subscriber
///   that blocks delays the messages after it, but the connection goes on being read, so the server's notification
///   queue is not held back. What waits for the relay is bounded by ``Configuration/maximumReceiveBufferBytes``:
///   past it, messages are dropped and counted (``PostgresTransportError/Kind/receiveBufferFull``, then
///   ``PostgresTransportError/Kind/messagesDropped``), and ``receiveStatistics`` says how many.
///   ``Configuration/deliversOnEventLoop`` hands them over on the event loop itself instead, without the hop and
///   without that protection.
/// - While connected, the transport checks the server's notification queue (`pg_notification_queue_usage()`, every
///   ``Configuration/notificationQueueCheckInterval``) and reports
///   ``PostgresTransportError/Kind/notificationQueueFilling`` when it reaches
///   ``Configuration/notificationQueueUsageThreshold`` (another session is listening without reading; when the
///   queue is full, every `NOTIFY` of the database fails), and
///   ``PostgresTransportError/Kind/notificationQueueBelowThreshold`` when it is back under it.
/// - A message over ``Configuration/maximumPayloadSize`` bytes (PostgreSQL refuses 8,000 and more) is refused with
///   ``PostgresTransportError/Kind/payloadTooLarge``. Nothing is ever truncated, and later messages are sent.
/// - When the connection drops, the transport reports `connectionLost`, reconnects with exponential backoff, listens
///   again on every channel, and reports `reconnected`. Messages published meanwhile wait in the queue and are sent
///   after the reconnection.
///
/// ## What PostgreSQL does not do
/// `NOTIFY` is not durable. A notification reaches only the sessions listening at the moment its transaction
/// commits: whatever is sent while a listener is disconnected is lost for that listener, and the `reconnected`
/// event is the only sign of the gap. A process that needs every message writes it to an outbox table in the same
/// transaction as the change it describes, treats the notification as a wake-up call, and reads the table from its
/// last seen id, at startup and after every `reconnected` event.
public final class PostgresNotificationTransport: NotificationTransport, @unchecked Sendable {
    /// How the transport connects and how much it queues.
    public struct Configuration: Sendable {
        /// PostgresNIO's connection settings: host, port, user, password, database, TLS. Not used when ``client``
        /// is set.
        public var connection: PostgresConnection.Configuration
        /// The application's `PostgresClient`, when the transport takes its connection from it (see
        /// ``init(client:)``); `nil`: the transport opens its own from ``connection``.
        public var client: PostgresClient?
        /// The largest message, in bytes, that is sent. PostgreSQL refuses payloads of 8,000 bytes or more (with its
        /// default 8 kB block size), so the default is 7,999. From 1 to 1,073,741,823 (a server built with larger
        /// blocks takes more).
        public var maximumPayloadSize: Int = 7_999
        /// How many messages may wait to be sent (while the server is unreachable, say) before new ones are refused
        /// with ``PostgresTransportError/Kind/queueFull``. From 1 to 100,000,000.
        public var maximumQueuedMessages: Int = 100_000
        /// The most messages sent in one statement when several are waiting. 256 by default; from 1 to 100,000.
        public var maximumBatchSize: Int = 256
        /// The wait before the first reconnection attempt; it doubles after each failed attempt.
        public var initialReconnectDelay: Duration = .milliseconds(100)
        /// The longest wait between two reconnection attempts.
        public var maximumReconnectDelay: Duration = .seconds(5)
        /// The longest wait for a connection from ``client``: then the request is given up, reported as
        /// ``PostgresTransportError/Kind/connectionWaiting`` (`warning`), and made again after the backoff, until a
        /// connection comes. PostgresNIO's pool has no timeout of its own and was seen leaving a request waiting for
        /// good after an outage. Ten seconds by default; not used without a client.
        public var leaseTimeout: Duration = .seconds(10)
        /// How often, while connected, the transport asks the server how full its notification queue is
        /// (`SELECT pg_notification_queue_usage()`, one short statement): once right after connecting, then at this
        /// interval. Nil turns the check off; otherwise above zero, at most a day.
        public var notificationQueueCheckInterval: Duration? = .seconds(10)
        /// The fraction of the server's notification queue (0 to 1) at which the transport reports
        /// ``PostgresTransportError/Kind/notificationQueueFilling``, once, and then
        /// ``PostgresTransportError/Kind/notificationQueueBelowThreshold`` once the usage is under it again.
        /// PostgreSQL itself logs a warning from 0.5 on. Above 0, at most 1.
        public var notificationQueueUsageThreshold: Double = 0.5
        /// The most bytes of received messages (payload text) that wait for the relay while a subscriber is busy.
        /// The transport keeps reading the connection whatever its subscribers do; when this much is waiting it
        /// reports ``PostgresTransportError/Kind/receiveBufferFull`` and drops what arrives until the relay has
        /// caught up, then reports ``PostgresTransportError/Kind/messagesDropped`` with the count. 64 MiB by default;
        /// from 1 byte to 1 TiB.
        public var maximumReceiveBufferBytes: Int = 64 << 20
        /// Whether received messages are handed to the relay on the connection's event loop itself, with no thread
        /// hop, instead of on the transport's delivery queue. Off by default. On saves the hop's wake-up (a few tens
        /// of microseconds per message when messages come one at a time), but a subscriber that blocks then stops
        /// the connection from being read: notifications wait in the server's queue, which every service of the
        /// database shares, for as long as it blocks (``PostgresTransportError/Kind/notificationQueueFilling`` is
        /// the alarm), and the transport cannot send meanwhile. Turn it on only when every subscriber without a
        /// queue of its own is short and never blocks.
        public var deliversOnEventLoop = false

        /// Creates a configuration from PostgresNIO's connection settings.
        ///
        /// - Parameter connection: Where and how to connect.
        public init(connection: PostgresConnection.Configuration) {
            self.connection = connection
        }

        /// Creates a configuration whose connection is leased from the application's `PostgresClient`, with its
        /// settings (TLS, credentials): the transport opens none of its own.
        ///
        /// It takes **one** of the client's connections for as long as it runs (from ``start(handler:)`` to
        /// ``stop()``, and again after a lost connection): its `LISTEN`s last only as long as their session. That
        /// connection is closed, never handed back, when the transport is done with it (the pool opens another as
        /// needed), so that no `LISTEN` of it stays on a connection the application's queries use. The client must
        /// run (its `run()`, or the client in the same `ServiceGroup`, listed before the transport: a stopping
        /// client closes every connection, leased ones included); until it does, the transport waits for its
        /// connection and what is published stays queued.
        ///
        /// - Parameter client: The application's client.
        public init(client: PostgresClient) {
            // Not used while `client` is set; a placeholder that connects nowhere if `client` is set to nil.
            self.connection = .init(unixSocketPath: "", username: "", password: nil, database: nil)
            self.client = client
        }

        /// Creates a configuration for a server reached over TCP without TLS (a loopback or private network).
        ///
        /// - Parameters:
        ///   - host: The server's host name or address.
        ///   - port: The server's port.
        ///   - username: The role to connect as.
        ///   - password: Its password, if the server asks for one.
        ///   - database: The database; `LISTEN`/`NOTIFY` channels are per database.
        public init(host: String, port: Int = 5432, username: String, password: String?, database: String?) {
            self.init(
                connection: .init(
                    host: host, port: port, username: username, password: password, database: database, tls: .disable))
        }
    }

    /// What the transport has received, and what waits for the relay: see ``receiveStatistics``.
    public struct ReceiveStatistics: Sendable, Equatable {
        /// Messages read from the connection on a channel listened to, since the transport was created.
        public var received = 0
        /// Messages handed to the relay.
        public var delivered = 0
        /// Messages read and waiting for the relay (a subscriber is busy).
        public var buffered = 0
        /// Their payload bytes, bounded by ``Configuration/maximumReceiveBufferBytes``.
        public var bufferedBytes = 0
        /// Messages dropped because the buffer was full.
        public var dropped = 0

        /// Statistics with every count at zero.
        public init() {}
    }

    /// The limits the relay checks before publishing: ``Configuration/maximumPayloadSize`` bytes per message, and
    /// channel names of at most 63 bytes, PostgreSQL's identifier length.
    public let limits: NotificationTransportLimits

    let configuration: Configuration
    /// The event loop of every connection, so that received messages are handed over from one thread, in order, even
    /// across reconnections.
    let eventLoop: any EventLoop
    let logger: Logger
    /// Opens (or leases) the connection and keeps it, with backoff: shared with the durable transport.
    let engine: PostgresConnectionEngine
    let lock = NSLock()
    var state = State()
    /// Where received messages are handed to the relay, so that a busy subscriber never stops the connection's
    /// event loop from reading.
    let deliveryQueue = DispatchQueue(label: "NotificatablePostgres.delivery")

    struct State {
        var handler: NotificationTransportHandler?
        var started = false
        var stopped = false
        /// PostgreSQL channel → relay channel, for every channel listened to.
        var channels: [String: String] = [:]
        var connection: PostgresConnection?
        var connectionClosed = false
        var listeners: [String: PostgresListener] = [:]
        var outgoing = OutgoingQueue()
        /// Whether a statement is on its way to the server, sent by the sender task or directly by `publish`. One at
        /// a time, so that messages keep their order.
        var sending = false
        /// The sender task's continuation while it waits for work.
        var senderWakeUp: CheckedContinuation<Void, Never>?
        var runTask: Task<Void, Never>?
        /// The task that checks the server's notification queue on the current connection.
        var monitorTask: Task<Void, Never>?
        /// Whether the last check found the queue at or over the threshold.
        var queueOverThreshold = false
        var inbox = ReceiveInbox()
        var statistics = ReceiveStatistics()
    }

    /// Creates a transport. It connects when the relay starts it.
    ///
    /// - Parameters:
    ///   - configuration: Where to connect, and the limits.
    ///   - eventLoopGroup: Where the connection runs: the transport picks one of its event loops and uses it for every
    ///     connection. PostgresNIO's shared group by default.
    ///   - logger: Where PostgresNIO logs, and where a relay over this transport that was given no `onEvent:` logs
    ///     its events (``defaultRelayEventHandler``), each at its severity. `Logger(label: "NotificatablePostgres")`
    ///     by default: the level and the destination are your `LoggingSystem`'s.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/invalidConfiguration`` for a
    ///   configuration value out of its range (a ``Configuration/maximumBatchSize`` below 1, a
    ///   ``Configuration/notificationQueueUsageThreshold`` outside 0 to 1 …), naming it.
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = PostgresConnection.defaultEventLoopGroup,
        logger: Logger? = nil
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        let eventLoop = eventLoopGroup.next()
        self.eventLoop = eventLoop
        let logger = logger ?? Logger(label: "NotificatablePostgres")
        self.logger = logger
        self.engine = PostgresConnectionEngine(
            source: configuration.client.map { .client($0, leaseTimeout: configuration.leaseTimeout) }
                ?? .settings(configuration.connection, eventLoop: { eventLoop }),
            backoff: PostgresReconnectBackoff(
                initial: configuration.initialReconnectDelay, maximum: configuration.maximumReconnectDelay),
            logger: logger)
        self.limits = NotificationTransportLimits(
            maximumMessageSize: configuration.maximumPayloadSize,
            maximumChannelLength: PostgresChannelName.maximumLength)
    }

    /// The PostgreSQL channel that carries a relay channel; a service in another language listens on this name.
    ///
    /// A channel of 1 to 63 bytes of UTF-8 without a double quote or a NUL is used as it is. Any other is replaced,
    /// in the form the relay uses for long names (`NotificationChannelName`): the channel's characters other than
    /// `"` and NUL, cut to at most 46 bytes on a character boundary, then `#`, then the 64-bit FNV-1a hash of the
    /// whole channel's UTF-8 bytes as 16 lowercase hexadecimal digits. The relay already shortens names longer than
    /// 63 bytes, so in practice only names with a `"` are replaced: PostgresNIO writes the channel into
    /// `LISTEN "…"` as it is, and the replacement keeps that statement whole.
    ///
    /// ```swift
    /// PostgresNotificationTransport.serverChannel(for: "OrderShipped")  // "OrderShipped"
    /// PostgresNotificationTransport.serverChannel(for: #"Say "hi""#)    // "Say hi#" and 16 hex digits
    /// ```
    ///
    /// - Parameter channel: A channel name from the relay.
    /// - Returns: The name used with `LISTEN` and `pg_notify`.
    public static func serverChannel(for channel: String) -> String {
        PostgresChannelName.serverChannel(for: channel)
    }

    // MARK: - NotificationTransport

    /// The handler of a relay over this transport that was given no `onEvent:`: every event is logged through the
    /// transport's logger at its severity, with its metadata (`Logger.log(_:)`), in every build.
    public var defaultRelayEventHandler: (@Sendable (NotificationTransportEvent) -> Void)? {
        let logger = self.logger
        return { event in logger.log(event) }
    }

    /// Connects in the background and keeps the connection up until ``stop()``.
    ///
    /// - Parameter handler: Receives the messages and the transport's events.
    public func start(handler: NotificationTransportHandler) {
        lock.withLock {
            guard !state.started, !state.stopped else { return }
            state.started = true
            state.handler = handler
            // The task keeps the transport alive, connected and reconnecting, until stop().
            state.runTask = Task { [weak self] in
                guard let self else { return }
                await self.maintainConnection()
            }
        }
    }

    /// Starts listening on the PostgreSQL channel for `channel` (see ``serverChannel(for:)``), now if connected and
    /// again after every reconnection.
    ///
    /// - Parameter channel: The relay's channel name.
    public func listen(to channel: String) {
        let serverChannel = Self.serverChannel(for: channel)
        lock.withLock {
            guard !state.stopped, state.channels[serverChannel] == nil else { return }
            state.channels[serverChannel] = channel
            if let connection = state.connection, !state.connectionClosed {
                state.listeners[serverChannel] = addListener(on: connection, serverChannel: serverChannel)
            }
        }
    }

    /// Stops listening on `channel`: PostgresNIO sends `UNLISTEN`.
    ///
    /// - Parameter channel: The relay's channel name.
    public func unlisten(from channel: String) {
        let serverChannel = Self.serverChannel(for: channel)
        let listener: PostgresListener? = lock.withLock {
            guard state.channels.removeValue(forKey: serverChannel) != nil else { return nil }
            return state.listeners.removeValue(forKey: serverChannel)
        }
        listener?.stop()
    }

    /// Sends `message` on `channel` without waiting for the server: written to the connection at once when it is
    /// idle, queued otherwise. A message that cannot be sent is reported through the handler with kind
    /// `publishFailed` and a ``PostgresTransportError``.
    ///
    /// - Parameters:
    ///   - message: UTF-8 text without NUL bytes, at most ``Configuration/maximumPayloadSize`` bytes.
    ///   - channel: The relay's channel name.
    public func publish(_ message: Data, on channel: String) {
        let refusal: PostgresTransportError?
        if message.count > configuration.maximumPayloadSize {
            refusal = PostgresTransportError(
                kind: .payloadTooLarge, size: message.count, limit: configuration.maximumPayloadSize)
        } else if let payload = String(data: message, encoding: .utf8), !message.contains(0) {
            let message = (serverChannel: Self.serverChannel(for: channel), payload: payload)
            switch enqueueOrTakeConnection(message) {
            case .refused:
                refusal = PostgresTransportError(kind: .queueFull, limit: configuration.maximumQueuedMessages)
            case .queued(let wakeUp):
                wakeUp?.resume()
                refusal = nil
            case .sendNow(let connection):
                sendAlone(message, on: connection)
                refusal = nil
            }
        } else {
            refusal = PostgresTransportError(kind: .payloadNotText, size: message.count)
        }
        if let refusal {
            report(NotificationTransportEvent(kind: .publishFailed, channel: channel, error: refusal))
        }
    }

    /// Stops listening, closes the connection and lets go of the handler. Messages still queued are not sent: call
    /// ``flush()`` first to send them. Received messages still waiting for the relay are not delivered.
    public func stop() {
        let (connection, listeners, wakeUp, task, barriers):
            (
                PostgresConnection?, [PostgresListener], CheckedContinuation<Void, Never>?, Task<Void, Never>?,
                [Barrier]
            ) =
                lock.withLock {
                    guard !state.stopped else { return (nil, [], nil, nil, []) }
                    state.stopped = true
                    state.handler = nil
                    let barriers = state.outgoing.removeAll()
                    state.monitorTask?.cancel()
                    state.monitorTask = nil
                    state.inbox.removeAll()
                    state.statistics.buffered = 0
                    state.statistics.bufferedBytes = 0
                    defer {
                        state.connection = nil
                        state.listeners = [:]
                        state.senderWakeUp = nil
                        state.runTask = nil
                    }
                    return (
                        state.connection, Array(state.listeners.values), state.senderWakeUp, state.runTask, barriers
                    )
                }
        for listener in listeners { listener.stop() }
        wakeUp?.resume()
        task?.cancel()
        for barrier in barriers { barrier.resume() }
        if let connection { connection.closeInBackground() }
    }

    /// Waits until every message published and every channel listened to before the call has reached the server,
    /// connecting first if needed. Returns at once after ``stop()``.
    ///
    /// Useful before stopping (queued messages are otherwise dropped) and in tests, to know that a listener is
    /// ready before another process sends.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let barrier = Barrier(continuation)
            let (accepted, wakeUp) = enqueue(.barrier(barrier), force: true)
            wakeUp?.resume()
            if !accepted { barrier.resume() }
        }
    }
}
