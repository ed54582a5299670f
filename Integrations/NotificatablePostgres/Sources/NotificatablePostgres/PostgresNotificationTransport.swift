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
/// let transport = PostgresNotificationTransport(configuration: .init(
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
        /// PostgresNIO's connection settings: host, port, user, password, database, TLS.
        public var connection: PostgresConnection.Configuration
        /// The largest message, in bytes, that is sent. PostgreSQL refuses payloads of 8,000 bytes or more (with its
        /// default 8 kB block size), so the default is 7,999.
        public var maximumPayloadSize: Int = 7_999
        /// How many messages may wait to be sent (while the server is unreachable, say) before new ones are refused
        /// with ``PostgresTransportError/Kind/queueFull``.
        public var maximumQueuedMessages: Int = 100_000
        /// The most messages sent in one statement when several are waiting.
        public var maximumBatchSize: Int = 256
        /// The wait before the first reconnection attempt; it doubles after each failed attempt.
        public var initialReconnectDelay: Duration = .milliseconds(100)
        /// The longest wait between two reconnection attempts.
        public var maximumReconnectDelay: Duration = .seconds(5)
        /// How often, while connected, the transport asks the server how full its notification queue is
        /// (`SELECT pg_notification_queue_usage()`, one short statement): once right after connecting, then at this
        /// interval. Nil turns the check off.
        public var notificationQueueCheckInterval: Duration? = .seconds(10)
        /// The fraction of the server's notification queue (0 to 1) at which the transport reports
        /// ``PostgresTransportError/Kind/notificationQueueFilling``, once, and then
        /// ``PostgresTransportError/Kind/notificationQueueBelowThreshold`` once the usage is under it again.
        /// PostgreSQL itself logs a warning from 0.5 on.
        public var notificationQueueUsageThreshold: Double = 0.5
        /// The most bytes of received messages (payload text) that wait for the relay while a subscriber is busy.
        /// The transport keeps reading the connection whatever its subscribers do; when this much is waiting it
        /// reports ``PostgresTransportError/Kind/receiveBufferFull`` and drops what arrives until the relay has
        /// caught up, then reports ``PostgresTransportError/Kind/messagesDropped`` with the count. 64 MiB by default.
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

    private let configuration: Configuration
    /// The event loop of every connection, so that received messages are handed over from one thread, in order, even
    /// across reconnections.
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let lock = NSLock()
    private var state = State()
    /// Where received messages are handed to the relay, so that a busy subscriber never stops the connection's
    /// event loop from reading.
    private let deliveryQueue = DispatchQueue(label: "NotificatablePostgres.delivery")

    private struct State {
        var handler: NotificationTransportHandler?
        var started = false
        var stopped = false
        /// PostgreSQL channel → relay channel, for every channel listened to.
        var channels: [String: String] = [:]
        var connection: PostgresConnection?
        var connectionClosed = false
        var listeners: [String: PostgresListenContext] = [:]
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
    ///   - logger: Where PostgresNIO and the transport log; nothing below `warning` by default.
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = PostgresConnection.defaultEventLoopGroup,
        logger: Logger? = nil
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoopGroup.next()
        self.logger =
            logger
            ?? {
                var logger = Logger(label: "NotificatablePostgres")
                logger.logLevel = .warning
                return logger
            }()
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
        let listener: PostgresListenContext? = lock.withLock {
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
                PostgresConnection?, [PostgresListenContext], CheckedContinuation<Void, Never>?, Task<Void, Never>?,
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
        if let connection { connection.close().whenComplete { _ in } }
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

    // MARK: - Sending

    private func enqueue(_ item: Outgoing, force: Bool = false) -> (Bool, CheckedContinuation<Void, Never>?) {
        lock.withLock {
            guard !state.stopped else { return (false, nil) }
            guard force || state.outgoing.messageCount < configuration.maximumQueuedMessages else {
                return (false, nil)
            }
            state.outgoing.append(item)
            return (true, takeSenderWakeUpIfIdle())
        }
    }

    /// What `publish` does with a message.
    private enum PublishStep {
        /// Queued; resume the sender task with the continuation, if any.
        case queued(CheckedContinuation<Void, Never>?)
        /// The connection is idle and nothing waits: send the message on it now (`state.sending` is set).
        case sendNow(PostgresConnection)
        /// The queue is full, or the transport stopped.
        case refused
    }

    private func enqueueOrTakeConnection(_ message: (serverChannel: String, payload: String)) -> PublishStep {
        lock.withLock {
            guard !state.stopped, state.outgoing.messageCount < configuration.maximumQueuedMessages else {
                return .refused
            }
            if !state.sending, state.outgoing.isEmpty, let connection = state.connection, !state.connectionClosed {
                state.sending = true
                return .sendNow(connection)
            }
            state.outgoing.append(.message(serverChannel: message.serverChannel, payload: message.payload))
            return .queued(takeSenderWakeUpIfIdle())
        }
    }

    /// The sender task's continuation, if it waits and has something to do now. Called with the lock held.
    private func takeSenderWakeUpIfIdle() -> CheckedContinuation<Void, Never>? {
        guard state.stopped || state.connectionClosed || (!state.sending && !state.outgoing.isEmpty) else {
            return nil
        }
        defer { state.senderWakeUp = nil }
        return state.senderWakeUp
    }

    /// Sends one message from the caller's thread: PostgresNIO writes the statement to the connection now, and it
    /// completes on the event loop, which wakes the sender task if messages queued up meanwhile.
    private func sendAlone(_ message: (serverChannel: String, payload: String), on connection: PostgresConnection) {
        connection.query(Self.notifyQuery([message]), logger: logger).whenComplete { [weak self] result in
            guard let self else { return }
            if case .failure(let error) = result {
                if connection.isClosed || Self.isConnectionError(error) {
                    self.report(
                        self.publishFailed(
                            message, PostgresTransportError(kind: .connectionLostWhileSending, wrapping: error)))
                    // The sender task finds out through the connection's close, and reconnects.
                    connection.close().whenComplete { _ in }
                } else {
                    self.report(
                        self.publishFailed(message, PostgresTransportError(kind: .serverRefused, wrapping: error)))
                }
            }
            let wakeUp = self.lock.withLock {
                self.state.sending = false
                return self.takeSenderWakeUpIfIdle()
            }
            wakeUp?.resume()
        }
    }

    /// The next batch to send, waiting while the queue is empty or a message sent by `publish` is on its way. A batch
    /// or barrier returned has set `state.sending`: call `finishedSending()` after it.
    private func next() async -> SenderStep {
        while true {
            let next: SenderStep? = lock.withLock {
                if state.stopped { return .stopped }
                if state.connectionClosed { return .connectionClosed }
                if state.sending { return nil }
                let batch = state.outgoing.takeBatch(maximumCount: configuration.maximumBatchSize)
                if batch != nil { state.sending = true }
                return batch
            }
            if let next { return next }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if state.stopped || state.connectionClosed || (!state.sending && !state.outgoing.isEmpty) {
                        return true
                    }
                    state.senderWakeUp = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    private func finishedSending() {
        lock.withLock { state.sending = false }
    }

    /// Sends until the connection closes (throws) or the transport stops (returns).
    private func sendLoop(_ connection: PostgresConnection) async throws {
        while true {
            switch await next() {
            case .stopped:
                return
            case .connectionClosed:
                throw PostgresTransportError(kind: .connectionLost)
            case .barrier(let barrier):
                defer { finishedSending() }
                do {
                    _ = try await connection.query("SELECT 1", logger: logger).collect()
                } catch {
                    lock.withLock { state.outgoing.prepend(.barrier(barrier)) }
                    throw error
                }
                barrier.resume()
            case .messages(let batch):
                defer { finishedSending() }
                try await send(batch, on: connection)
            }
        }
    }

    private func send(_ batch: [(serverChannel: String, payload: String)], on connection: PostgresConnection)
        async throws
    {
        do {
            // Read the result to its end: PostgresNIO returns the rows once their description arrives, and an error
            // of the statement itself (such as "payload string too long") only surfaces while reading them.
            _ = try await connection.query(Self.notifyQuery(batch), logger: logger).collect()
        } catch {
            if connection.isClosed || Self.isConnectionError(error) {
                for message in batch {
                    report(
                        publishFailed(
                            message, PostgresTransportError(kind: .connectionLostWhileSending, wrapping: error)))
                }
                throw error
            }
            // The server refused the statement, so none of it was sent; send each message alone to find the culprit.
            guard batch.count > 1 else {
                report(publishFailed(batch[0], PostgresTransportError(kind: .serverRefused, wrapping: error)))
                return
            }
            for message in batch {
                try await send([message], on: connection)
            }
        }
    }

    private func publishFailed(_ message: (serverChannel: String, payload: String), _ error: PostgresTransportError)
        -> NotificationTransportEvent
    {
        let channel = lock.withLock { state.channels[message.serverChannel] } ?? message.serverChannel
        return NotificationTransportEvent(kind: .publishFailed, channel: channel, error: error)
    }

    /// `SELECT pg_notify($1, $2)` for one message; for several, one statement over two bound arrays, which
    /// PostgreSQL evaluates row by row, in order, in one transaction.
    static func notifyQuery(_ batch: [(serverChannel: String, payload: String)]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 2)
        if batch.count == 1 {
            bindings.append(batch[0].serverChannel)
            bindings.append(batch[0].payload)
            return PostgresQuery(unsafeSQL: "SELECT pg_notify($1, $2)", binds: bindings)
        }
        bindings.append(batch.map(\.serverChannel))
        bindings.append(batch.map(\.payload))
        return PostgresQuery(
            unsafeSQL:
                "SELECT count(pg_notify(c, p)) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS m(c, p, i)",
            binds: bindings)
    }

    /// Whether `error` means the connection is gone, rather than the statement refused: anything but a server
    /// error, and the server's own "operator intervention" (57, e.g. 57P01 at shutdown) and "connection
    /// exception" (08) classes.
    private static func isConnectionError(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        guard error.code == .server else { return true }
        let sqlState = error.serverInfo?[.sqlState] ?? ""
        return sqlState.hasPrefix("57") || sqlState.hasPrefix("08")
    }

    // MARK: - Connecting

    private func maintainConnection() async {
        var attempt = 0
        var wasConnected = false
        var reportedConnectFailure = false
        var connectionID = 0
        while !isStopped {
            connectionID += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    on: eventLoop, configuration: configuration.connection, id: connectionID, logger: logger)
            } catch {
                if !reportedConnectFailure && !wasConnected {
                    reportedConnectFailure = true
                    report(
                        NotificationTransportEvent(
                            kind: .transportError, error: PostgresTransportError(kind: .connectFailed, wrapping: error))
                    )
                }
                if await !backoff(attempt: &attempt) { return }
                continue
            }
            do {
                try await install(connection)
                _ = try await connection.query("SELECT 1", logger: logger).collect()  // every LISTEN above is in effect
                startQueueMonitor(on: connection)
                if wasConnected { report(NotificationTransportEvent(kind: .reconnected)) }
                wasConnected = true
                reportedConnectFailure = false
                attempt = 0
                try await sendLoop(connection)
                return  // stopped
            } catch {
                let (stopped, monitor) = lock.withLock {
                    if state.connection === connection {
                        state.connection = nil
                        state.listeners = [:]
                    }
                    defer { state.monitorTask = nil }
                    return (state.stopped, state.monitorTask)
                }
                monitor?.cancel()
                connection.close().whenComplete { _ in }
                if stopped { return }
                if wasConnected {
                    let lost =
                        (error as? PostgresTransportError)
                        ?? PostgresTransportError(kind: .connectionLost, wrapping: error)
                    report(NotificationTransportEvent(kind: .connectionLost, error: lost))
                }
                if await !backoff(attempt: &attempt) { return }
            }
        }
    }

    /// Makes `connection` current and listens on every channel.
    private func install(_ connection: PostgresConnection) async throws {
        connection.closeFuture.whenComplete { [weak self] _ in self?.connectionDidClose(connection) }
        let stopped = lock.withLock {
            guard !state.stopped else { return true }
            state.connection = connection
            state.connectionClosed = connection.isClosed
            state.listeners = [:]
            for serverChannel in state.channels.keys {
                state.listeners[serverChannel] = addListener(on: connection, serverChannel: serverChannel)
            }
            return false
        }
        if stopped { throw CancellationError() }
    }

    private func connectionDidClose(_ connection: PostgresConnection) {
        let wakeUp: CheckedContinuation<Void, Never>? = lock.withLock {
            guard state.connection === connection else { return nil }
            state.connectionClosed = true
            defer { state.senderWakeUp = nil }
            return state.senderWakeUp
        }
        wakeUp?.resume()
    }

    /// Waits before the next attempt; false if the transport stopped meanwhile.
    private func backoff(attempt: inout Int) async -> Bool {
        let seconds = { (duration: Duration) in
            Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        }
        let delay = min(
            seconds(configuration.initialReconnectDelay) * Double(1 << min(attempt, 16)),
            seconds(configuration.maximumReconnectDelay))
        attempt += 1
        // Up to 25 % of jitter, so that many processes don't retry in step.
        let nanoseconds = delay * Double.random(in: 1...1.25) * 1e9
        do { try await Task.sleep(nanoseconds: UInt64(nanoseconds)) } catch { return false }
        return !isStopped
    }

    private var isStopped: Bool { lock.withLock { state.stopped } }

    // MARK: - Watching the server's notification queue

    /// Checks the server's notification queue now and then every
    /// ``Configuration/notificationQueueCheckInterval`` while `connection` is the current one.
    private func startQueueMonitor(on connection: PostgresConnection) {
        guard let interval = configuration.notificationQueueCheckInterval else { return }
        let task = Task { [weak self] in
            var first = true
            while !Task.isCancelled {
                if !first {
                    do { try await Task.sleep(for: interval) } catch { return }
                }
                first = false
                guard let transport = self, await transport.checkQueueUsage(on: connection) else { return }
            }
        }
        let previous: Task<Void, Never>? = lock.withLock {
            guard !state.stopped, state.connection === connection else { return task }
            defer { state.monitorTask = task }
            return state.monitorTask
        }
        previous?.cancel()
    }

    /// Asks the server how full its notification queue is and reports a crossing of the threshold, up or down.
    /// False when checking should stop: the connection is gone, replaced, or the server refused the statement.
    private func checkQueueUsage(on connection: PostgresConnection) async -> Bool {
        var usage: Double?
        do {
            let rows = try await connection.query("SELECT pg_notification_queue_usage()", logger: logger)
            for try await value in rows.decode(Double.self) { usage = value }
        } catch {
            if connection.isClosed || Self.isConnectionError(error) || Task.isCancelled { return false }
            report(
                NotificationTransportEvent(
                    kind: .transportError, error: PostgresTransportError(kind: .serverRefused, wrapping: error)))
            return false
        }
        guard let usage else { return true }
        let threshold = configuration.notificationQueueUsageThreshold
        let crossing: (kind: PostgresTransportError.Kind?, current: Bool) = lock.withLock {
            guard !state.stopped, state.connection === connection else { return (nil, false) }
            let over = usage >= threshold
            guard over != state.queueOverThreshold else { return (nil, true) }
            state.queueOverThreshold = over
            return (over ? .notificationQueueFilling : .notificationQueueBelowThreshold, true)
        }
        if let kind = crossing.kind {
            report(
                NotificationTransportEvent(
                    kind: .transportError,
                    error: PostgresTransportError(kind: kind, queueUsage: usage, queueUsageThreshold: threshold)))
        }
        return crossing.current
    }

    // MARK: - Receiving

    /// Registers a listener; PostgresNIO sends `LISTEN "<serverChannel>"`, a statement `serverChannel` cannot break
    /// (see ``serverChannel(for:)``). Called with the lock held: it only queues work on the connection's event loop.
    private func addListener(on connection: PostgresConnection, serverChannel: String) -> PostgresListenContext {
        connection.addListener(channel: serverChannel) { [weak self] _, notification in
            self?.received(notification.payload, on: notification.channel)
        }
    }

    /// What the transport has received so far, and what waits for the relay.
    public var receiveStatistics: ReceiveStatistics {
        lock.withLock {
            var statistics = state.statistics
            statistics.buffered = state.inbox.count
            statistics.bufferedBytes = state.inbox.bytes
            return statistics
        }
    }

    /// Runs on the connection's event loop (the same one for every connection), in the order the server sent. Only
    /// queues the message for the delivery queue, so that the event loop goes on reading whatever subscribers do.
    private func received(_ payload: String, on serverChannel: String) {
        if configuration.deliversOnEventLoop {
            let delivery: (handler: NotificationTransportHandler, channel: String)? = lock.withLock {
                guard !state.stopped, let handler = state.handler, let channel = state.channels[serverChannel] else {
                    return nil
                }
                state.statistics.received += 1
                state.statistics.delivered += 1
                return (handler, channel)
            }
            delivery?.handler.receive(Data(payload.utf8), on: delivery?.channel ?? serverChannel)
            return
        }
        let limit = configuration.maximumReceiveBufferBytes
        let (startDrain, bufferFull): (Bool, Bool) = lock.withLock {
            guard !state.stopped, state.handler != nil, let channel = state.channels[serverChannel] else {
                return (false, false)
            }
            state.statistics.received += 1
            switch state.inbox.append(channel: channel, payload: payload, limit: limit) {
            case .appended(let startDrain):
                return (startDrain, false)
            case .dropped(let firstOfEpisode):
                state.statistics.dropped += 1
                return (false, firstOfEpisode)
            }
        }
        if startDrain {
            deliveryQueue.async { [weak self] in self?.drain() }
        }
        if bufferFull {
            report(
                NotificationTransportEvent(
                    kind: .transportError, error: PostgresTransportError(kind: .receiveBufferFull, limit: limit)))
        }
    }

    /// Runs on the delivery queue: hands the waiting messages to the handler, in order, outside the lock, until none
    /// is left.
    private func drain() {
        while true {
            let next: (handler: NotificationTransportHandler, batch: [ReceivedMessage])? = lock.withLock {
                guard !state.stopped, let handler = state.handler else {
                    state.inbox.removeAll()
                    return nil
                }
                let batch = state.inbox.takeBatch(maximumCount: 256)
                return batch.isEmpty ? nil : (handler, batch)
            }
            guard let next else { return }
            var bytes = 0
            var count = 0
            for message in next.batch {
                if isStopped { break }
                bytes += message.payload.utf8.count
                count += 1
                next.handler.receive(Data(message.payload.utf8), on: message.channel)
            }
            let limit = configuration.maximumReceiveBufferBytes
            let dropped: Int? = lock.withLock {
                state.statistics.delivered += count
                return state.inbox.delivered(count: next.batch.count, bytes: bytes, limit: limit)
            }
            if let dropped {
                report(
                    NotificationTransportEvent(
                        kind: .transportError, error: PostgresTransportError(kind: .messagesDropped, count: dropped)))
            }
        }
    }

    private func report(_ event: NotificationTransportEvent) {
        let handler = lock.withLock { state.handler }
        handler?.report(event)
    }
}

// MARK: - The outgoing queue

/// A continuation resumed once, when the sender reaches it (or the transport stops).
final class Barrier: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func resume() {
        let continuation = lock.withLock {
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }
}

/// What the sender does next.
enum SenderStep {
    case messages([(serverChannel: String, payload: String)])
    case barrier(Barrier)
    case connectionClosed
    case stopped
}

enum Outgoing {
    case message(serverChannel: String, payload: String)
    case barrier(Barrier)
}

/// A FIFO of outgoing items with O(1) amortized removal from the front.
struct OutgoingQueue {
    private var items: [Outgoing] = []
    private var head = 0
    private(set) var messageCount = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ item: Outgoing) {
        if case .message = item { messageCount += 1 }
        items.append(item)
    }

    mutating func prepend(_ item: Outgoing) {
        if case .message = item { messageCount += 1 }
        if head > 0 {
            head -= 1
            items[head] = item
        } else {
            items.insert(item, at: 0)
        }
    }

    /// Everything removed; the barriers are returned so their waiters can be resumed.
    mutating func removeAll() -> [Barrier] {
        var barriers: [Barrier] = []
        for item in items[head...] {
            if case .barrier(let barrier) = item { barriers.append(barrier) }
        }
        items = []
        head = 0
        messageCount = 0
        return barriers
    }

    /// A barrier alone, or up to `maximumCount` messages that stop before the next barrier and before a repeated
    /// (channel, payload) pair (PostgreSQL delivers identical notifications of one transaction only once). Nil when
    /// empty.
    mutating func takeBatch(maximumCount: Int) -> SenderStep? {
        guard !isEmpty else { return nil }
        if case .barrier(let barrier) = items[head] {
            advance(by: 1)
            return .barrier(barrier)
        }
        var batch: [(serverChannel: String, payload: String)] = []
        var seen = Set<Int>()
        var index = head
        while index < items.count, batch.count < maximumCount, case .message(let channel, let payload) = items[index] {
            var hasher = Hasher()
            hasher.combine(channel)
            hasher.combine(payload)
            if !seen.insert(hasher.finalize()).inserted && batch.contains(where: { $0 == (channel, payload) }) {
                break
            }
            batch.append((channel, payload))
            index += 1
        }
        messageCount -= batch.count
        advance(by: batch.count)
        return .messages(batch)
    }

    private mutating func advance(by count: Int) {
        head += count
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
