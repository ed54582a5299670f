import CoreMetrics
import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO
import Tracing

/// A `NotificationTransport` that stores every message in a PostgreSQL outbox table, so that nothing is lost: a
/// listener that was down, disconnected, or whose server restarted catches up from its stored position.
///
/// ```swift
/// let transport = try DurablePostgresNotificationTransport(configuration: .init(
///     host: "127.0.0.1", username: "app", password: nil, database: "app", consumer: "billing-worker"))
/// let relay = NotificationRelay(transport: transport)
/// relay.forward(orderShipped)
/// ```
///
/// ## How it works
/// - ``publish(_:on:)`` queues the message; a writer connection inserts what has queued up, in order, up to
///   ``Configuration/maximumBatchSize`` rows in one statement (one transaction), and the same statement sends a
///   `NOTIFY` that carries no message: it only wakes the readers. Its payload is this transport's random wake token,
///   so that its own reader is not woken by its own inserts (its relay ignores its own messages; the next read
///   passes them), except when that insert may have held back another writer's rows. Messages of up to
///   ``Configuration/maximumMessageSize`` bytes (1 MiB by default) are carried. An insert the server refuses for a
///   reason that can pass (read-only, a lock timeout, a full disk) is retried with backoff, the messages kept queued
///   (reported once, ``PostgresTransportError/Kind/insertRetrying``); only a message refused because of itself (a
///   data exception) is dropped, reported with `publishFailed` and counted by ``flush()``'s ``FlushResult``.
/// - The insert and the read are prepared once per connection (the insert as PostgresNIO's
///   `PostgresPreparedStatement`, the read with `PREPARE`, its rows read on the event loop: PostgresNIO's row
///   sequence traps when the server closes a connection mid-result); the transport's connections set their
///   `search_path` to ``Configuration/schema`` for them.
/// - A reader connection, named by ``Configuration/consumer``, reads the rows of the channels it listens to in pages
///   of ``Configuration/pageSize``, in `(txid, id)` order, only from transactions older than every transaction still
///   running (so a row that commits late can never appear behind the reader), and hands them to the relay. It saves
///   its position in the `consumers` table lazily: every ``Configuration/pollInterval``, in ``flush()``, and before
///   it would hand over more than a page beyond the saved position. It reads when woken, and every poll interval.
/// - A consumer name that is new for a channel starts at the current end of the outbox: it receives the messages
///   of every transaction that takes its transaction id after the consumer registered (in the reader's first round,
///   so before ``flush()`` returns), and none of a transaction that had one before, whether it had committed (even
///   while an unrelated transaction was still open) or committed later. Afterwards, whatever is stored for that
///   channel reaches it, across restarts of the process, reconnections and server restarts.
/// - Delivery is at least once, in order per sender. A duplicate reaches a process only when the previous process
///   of the same consumer name stopped (crashed, was killed) after handing messages to its relay and before saving
///   its position: at most ``Configuration/pageSize`` messages per channel, once, after the restart. Messages whose
///   insert was interrupted by a lost connection are inserted again; the relay drops those copies, because they carry
///   the same sender and sequence number.
/// - Retention: rows that every consumer of their channel has passed, and rows older than ``Configuration/retentionAge``, are
///   deleted every ``Configuration/retentionInterval`` (see ``enforceRetention()``). A consumer that had not yet
///   received rows deleted for age is told with a `messagesMissed` event whose error is a
///   ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/behindRetention``.
///
/// - One process receives per consumer name at a time: the reader holds a session-level advisory lock on the name.
///   Another process started under the same name waits as a standby (it reports
///   ``PostgresTransportError/Kind/consumerInUse``, receives nothing, still publishes) and takes over from the
///   stored positions when the first one's session ends (``PostgresTransportError/Kind/consumerTakenOver``). A
///   reader session of its own left on the server by a connection lost on this side only is ended, not waited for.
///
/// A transaction that has written to the database and stays open (an idle session in a transaction) holds back
/// delivery until it ends, for every consumer: see the package README. The reader's connection needs a session of
/// its own (not a transaction-pooling PgBouncer), for its `LISTEN` and its lock.
public final class DurablePostgresNotificationTransport: NotificationTransport, @unchecked Sendable {
    /// How the transport connects, who it is, and its limits.
    public struct Configuration: Sendable {
        /// PostgresNIO's connection settings: host, port, user, password, database, TLS. Not used when ``client``
        /// is set.
        public var connection: PostgresConnection.Configuration
        /// The application's `PostgresClient`, when the transport takes its connections from it (see
        /// ``init(client:consumer:)``); `nil`: the transport opens its own from ``connection``.
        public var client: PostgresClient?
        /// The consumer's name, stable across restarts of the process: its positions are stored under it. Give
        /// every process that must receive everything its own name; a second process under a name in use waits as
        /// a standby until the first one stops (see ``PostgresTransportError/Kind/consumerInUse``). Not empty, no
        /// NUL character, and it may not end with `/processing` nor contain `/processing ` (followed by a space):
        /// those names are the processing positions' and locks' (see
        /// ``DurablePostgresNotificationTransport/process(_:options:partitionKey:authenticator:onEvent:_:)``).
        public var consumer: String
        /// The schema of the tables: `notificatable` by default. Quoted as an identifier, so any name of 1 to 63
        /// bytes without a NUL character works.
        public var schema: String = "notificatable"
        /// Whether the transport creates the schema and tables on first use, or migrates them to this release's
        /// schema version (pending migrations in one transaction, under an advisory lock). Set it to false when a
        /// migration tool or `notificatable-pg schema migrate` owns them: the transport then only checks the
        /// version, and reports ``PostgresTransportError/Kind/schemaVersionMismatch`` (and waits) when it differs.
        public var createsSchema: Bool = true
        /// The largest message, in bytes, that is stored: 1 MiB (1,048,576) by default. The relay refuses larger
        /// posts with a `messageTooLarge` event. From 1 to 1,073,741,823 (PostgreSQL's largest text value).
        public var maximumMessageSize: Int = 1_048_576
        /// How many rows the reader reads, and hands over, at a time; also the most duplicates per channel after a
        /// crash. 500 by default; from 1 to 100,000.
        public var pageSize: Int = 500
        /// The most messages inserted in one statement when several are waiting. 256 by default; from 1 to 100,000.
        public var maximumBatchSize: Int = 256
        /// How many messages may wait to be stored (while the server is unreachable, say) before new ones are
        /// refused with ``PostgresTransportError/Kind/queueFull``. From 1 to 100,000,000.
        public var maximumQueuedMessages: Int = 100_000
        /// Rows older than this are deleted even if a consumer has not received them (it is told). `nil` keeps rows
        /// until every consumer of their channel has passed them. Seven days by default; above zero, at most 100
        /// years.
        public var retentionAge: Duration? = .seconds(7 * 86_400)
        /// How often this transport deletes what retention allows; `nil` never (call ``enforceRetention()``, or
        /// let another process do it). One minute by default; above zero, at most a year.
        public var retentionInterval: Duration? = .seconds(60)
        /// How often the reader looks for rows without having been woken: rows whose transaction committed while an
        /// older transaction was still running are found this way once that one ends. One second by default; above
        /// zero, at most an hour.
        public var pollInterval: Duration = .seconds(1)
        /// The wait before the first reconnection attempt; it doubles after each failed attempt.
        public var initialReconnectDelay: Duration = .milliseconds(100)
        /// The longest wait between two reconnection attempts.
        public var maximumReconnectDelay: Duration = .seconds(5)
        /// The longest wait for a connection from ``client`` (for the writer, the reader, each processor, each
        /// handler's transaction, each maintenance call): then the request is given up, reported as
        /// ``PostgresTransportError/Kind/connectionWaiting`` (`warning`), and made again after the backoff, until a
        /// connection comes. PostgresNIO's pool has no timeout of its own and was seen leaving a request waiting for
        /// good after an outage. Ten seconds by default; not used without a client.
        public var leaseTimeout: Duration = .seconds(10)
        /// How long a transaction that has written may stay open, holding delivery back, before the reader reports
        /// ``PostgresTransportError/Kind/deliveryStalled`` with its backend pid (checked every ``pollInterval``,
        /// with the lag). Five seconds by default; `nil` never; above zero, at most a year.
        public var stallThreshold: Duration? = .seconds(5)
        /// What seals and opens the messages, configured once for everything over this transport: a
        /// ``PostgresNotificationService`` gives it to its relay, the transactional ``post(_:on:in:authenticator:)``
        /// seals with it unless told otherwise, and the reader checks every message with it before handing it over.
        /// A message that does not open is reported as `unauthenticatedMessage` and kept: the position saved for its
        /// channel stays before it until the process stops, so a process started with the right key receives it.
        /// `nil` (the default): plain messages. A relay created by hand must be given the same one.
        public var authenticator: (any NotificationMessageAuthenticator)?

        /// Creates a configuration from PostgresNIO's connection settings.
        ///
        /// - Parameters:
        ///   - connection: Where and how to connect.
        ///   - consumer: The consumer name of this process, stable across its restarts.
        public init(connection: PostgresConnection.Configuration, consumer: String) {
            self.connection = connection
            self.consumer = consumer
        }

        /// Creates a configuration whose connections are leased from the application's `PostgresClient`, with its
        /// settings (TLS, credentials, pool limits): the transport opens none of its own.
        ///
        /// ```swift
        /// let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        /// let notifications = try PostgresNotificationService(
        ///     configuration: .init(client: client, consumer: "billing"), logger: logger)
        /// let group = ServiceGroup(services: [client, notifications, app], gracefulShutdownSignals: [.sigterm],
        ///                          logger: logger)
        /// ```
        ///
        /// Which connections it takes, for how long, and why (they need a session of their own):
        /// - the **writer**, one connection for the transport's life (from ``start(handler:)`` to ``stop()``): its
        ///   prepared insert names the tables through the session's `search_path`;
        /// - the **reader**, one connection for the transport's life: its `LISTEN` on the wake channel lasts only as
        ///   long as its session, and the consumer name's advisory lock (one receiving process per name) is
        ///   session-scoped, so it must stay on one connection, which also reads the pages and saves the positions;
        /// - each ``process(_:options:partitionKey:authenticator:onEvent:_:)`` call, one more for as long as it runs
        ///   (its own `LISTEN` and processing lock); ``processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``
        ///   also leases a pooled connection per running handler for each message's transaction, handed back after;
        /// - ``enforceRetention()``, ``deadLetters(channel:limit:)`` and ``redrive(_:)``, one for the call.
        ///
        /// So a transport that is started takes two of the pool's connections (`maximumConnections`, 20 by default)
        /// for as long as it runs; leave room for the application's queries. A connection the transport held is
        /// closed, never handed back, when the transport is done with it (its session holds the lock, a `LISTEN` and
        /// the outbox's `search_path`); the pool opens another as needed.
        ///
        /// The client must run (`client.run()`, or the client in the same `ServiceGroup`): until it does, the
        /// transport waits for its connections (PostgresNIO logs a warning per lease) and what is published stays
        /// queued. A `ServiceGroup` stops its services in reverse order, and a `PostgresClient` that stops closes
        /// every connection, leased ones included: list the client **before** the notification service, so that the
        /// service has flushed and saved its positions when the client closes. A client that stops under a running
        /// transport closes its connections (reported as `connectionLost`) and refuses every lease after: the
        /// transport keeps retrying with backoff until it is stopped.
        ///
        /// - Parameters:
        ///   - client: The application's client.
        ///   - consumer: The consumer name of this process, stable across its restarts.
        public init(client: PostgresClient, consumer: String) {
            // Not used while `client` is set; a placeholder that connects nowhere if `client` is set to nil.
            self.connection = .init(unixSocketPath: "", username: "", password: nil, database: nil)
            self.client = client
            self.consumer = consumer
        }

        /// Creates a configuration for a server reached over TCP without TLS (a loopback or private network).
        ///
        /// - Parameters:
        ///   - host: The server's host name or address.
        ///   - port: The server's port.
        ///   - username: The role to connect as.
        ///   - password: Its password, if the server asks for one.
        ///   - database: The database holding the outbox.
        ///   - consumer: The consumer name of this process, stable across its restarts.
        public init(
            host: String, port: Int = 5432, username: String, password: String?, database: String?, consumer: String
        ) {
            self.init(
                connection: .init(
                    host: host, port: port, username: username, password: password, database: database, tls: .disable),
                consumer: consumer)
        }
    }

    /// The limits the relay checks before publishing: ``Configuration/maximumMessageSize`` bytes per message; no
    /// limit on channel names (they are stored in a column).
    public let limits: NotificationTransportLimits

    /// The configuration.
    public let configuration: Configuration

    let schema: DurableOutboxSchema
    let metrics: NotificationMetrics
    /// The tracer of posts and processing (see ``NotificationTracing``).
    let tracing: NotificationTracing
    /// The processors running on this transport, for ``processingStatus()``.
    let processingMonitors = DurableProcessingMonitors()
    /// The `NOTIFY` payload of this transport's inserts: random, so that its reader can ignore its own wake-ups.
    let wakeToken = UUID().uuidString
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    /// Opens (or leases) every connection of the transport and of its processors, with backoff: shared with the
    /// at-most-once transport.
    let engine: PostgresConnectionEngine
    let lock = NSLock()
    var state = State()

    /// A place in the delivery order: the inserting transaction's id, then the row's id.
    struct Position: Comparable, Hashable, Sendable {
        var txid: Int64
        var id: Int64
        static func < (lhs: Position, rhs: Position) -> Bool { (lhs.txid, lhs.id) < (rhs.txid, rhs.id) }
    }

    enum Outgoing {
        case message(channel: String, text: String)
        case barrier(DurableBarrier)
    }

    struct State {
        var handler: NotificationTransportHandler?
        var started = false
        var stopped = false
        /// Channel → position, for every channel listened to; `nil` until the reader has loaded it.
        var channels: [String: Position?] = [:]
        /// Channel → position, for the channels listened to before and not now: the next ``listen(to:)`` goes on from
        /// there, not from the table, which may hold an older position (positions are saved lazily).
        var parkedPositions: [String: Position] = [:]
        var outgoing: [Outgoing] = []
        var outgoingHead = 0
        var queuedMessages = 0
        var writerWakeUp: CheckedContinuation<Void, Never>?
        var readerWakeUp: CheckedContinuation<Void, Never>?
        var readerSignalled = false
        var readerBarriers: [DurableBarrier] = []
        var connections: [ObjectIdentifier: PostgresConnection] = [:]
        var tasks: [Task<Void, Never>] = []
        var schemaReady = false
        /// Channels whose position advanced since it was last saved, and how many rows were read since.
        var unsavedChannels: Set<String> = []
        var unsavedRows = 0
        /// Set by the poll timer: save the positions at the end of the next round.
        var saveDue = false
        /// Inserts the writer has sent, and those it has seen finish (committed or failed).
        var insertsStarted = 0
        var insertsFinished = 0
        /// Whether a wake-up from another writer arrived since the last read round started; whether a round is
        /// running that such a wake-up caused; and whether a round woken by another writer ran while this
        /// transport's writer had an insert in flight, whose transaction may have held back that writer's rows
        /// (its commit makes them readable).
        var foreignWakeUp = false
        var readingWokenRound = false
        var ownInsertMayHideRows = false
        /// How many read rounds the reader has started (for tests).
        var readRounds = 0
        /// The position last loaded from, or saved to, the `consumers` table per channel: when the table holds
        /// another one, another process of the same consumer name has moved it.
        var savedPositions: [String: Position] = [:]
        /// Whether the reader waits for another session to release the consumer name.
        var standby = false
        /// The server session (backend pid and start time) of the reader connection that last held the consumer
        /// name: if the connection was lost on this side only, that session may still hold it.
        var readerSession: DurableReaderSession?
        /// Test hook: the reader drops its connection without closing it, as a lost network would.
        var abandonReaderConnection = false
        var abandonedConnections: [PostgresConnection] = []
        /// The retention horizon last reported per channel.
        var reportedHorizon: [String: Position] = [:]
        /// Messages refused by `publish` since the last flush, and the last one's error.
        var publishRefusals = 0
        var lastPublishRefusal: PostgresTransportError?
        /// Messages the server refused because of themselves since the writer passed the last flush barrier.
        var writerRefusals = 0
        var lastWriterRefusal: PostgresTransportError?
        /// Refusals that can pass in a row, the current run's; 0 once an insert succeeds.
        var writerRetries = 0
        /// Per channel, the highest position that may be saved: just before the first message refused as
        /// unauthenticated (see ``Configuration/authenticator``).
        var heldPositions: [String: Position] = [:]
        /// The backend pid of the transaction last reported as holding delivery back.
        var reportedStall: Int?
        /// Whether the reader has stopped handing messages over (a service shutting down).
        var deliveryPaused = false
        /// Whether the reader is handing a message over now (checked for `deliveryPaused` first, under the lock).
        var delivering = false
        /// The pauses waiting for the message being handed over, by id.
        var pauseWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextPauseWaiter = 0
        /// What every save of the positions waits for first; a false answer skips the save.
        var saveGate: (@Sendable () async -> Bool)?
    }

    /// Creates a transport. It connects when the relay starts it.
    ///
    /// - Parameters:
    ///   - configuration: Where to connect, the consumer name, the limits.
    ///   - eventLoopGroup: Where the connections run. PostgresNIO's shared group by default.
    ///   - logger: Where PostgresNIO and the transport log, and where a relay over this transport that was given no
    ///     `onEvent:` logs its events (``defaultRelayEventHandler``), each at its severity; the consumer name is added
    ///     to its metadata (`notificatable.consumer`). `Logger(label: "NotificatablePostgres")` by default: the level
    ///     and the destination are your `LoggingSystem`'s.
    ///   - metricsFactory: Where its counters and gauges go (their names and dimensions: see the package README,
    ///     *Metrics*); `MetricsSystem.factory`, what the application bootstrapped, by default.
    ///   - tracer: Where the spans of posts and of processing go, and whose propagation carries a post's context
    ///     in the message (see the Operating article, *Tracing*); `InstrumentationSystem.tracer`, what the
    ///     application bootstrapped, read at each use, by default. With none bootstrapped, nothing is traced.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/invalidConfiguration`` for a
    ///   configuration value out of its range (a ``Configuration/pageSize`` below 1, a ``Configuration/pollInterval``
    ///   of zero, a ``Configuration/consumer`` name that is empty or ends with `/processing` …), naming it.
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = PostgresConnection.defaultEventLoopGroup,
        logger: Logger? = nil,
        metricsFactory: (any MetricsFactory)? = nil,
        tracer: (any Tracer)? = nil
    ) throws {
        try configuration.validate()
        self.tracing = NotificationTracing(configured: tracer)
        self.metrics = NotificationMetrics(
            factory: metricsFactory ?? MetricsSystem.factory, consumer: configuration.consumer)
        self.configuration = configuration
        self.schema = DurableOutboxSchema(configuration.schema)
        self.eventLoopGroup = eventLoopGroup
        var logger = logger ?? Logger(label: "NotificatablePostgres")
        logger[metadataKey: "notificatable.consumer"] = "\(configuration.consumer)"
        self.logger = logger
        self.engine = PostgresConnectionEngine(
            source: configuration.client.map { .client($0, leaseTimeout: configuration.leaseTimeout) }
                ?? .settings(configuration.connection, eventLoop: { eventLoopGroup.next() }),
            backoff: PostgresReconnectBackoff(
                initial: configuration.initialReconnectDelay, maximum: configuration.maximumReconnectDelay),
            logger: logger)
        self.limits = NotificationTransportLimits(
            maximumMessageSize: configuration.maximumMessageSize, maximumChannelLength: nil)
    }

    /// Where the connections come from: the configuration's client, or its connection settings.
    var connectionSource: PostgresConnectionSource { engine.source }

    var horizonCheckDue = false
    var retentionDue = false

    // MARK: - NotificationTransport

    /// Connects the writer and the reader in the background and keeps them connected until ``stop()``.
    ///
    /// - Parameter handler: Receives the messages and the transport's events.
    public func start(handler: NotificationTransportHandler) {
        lock.withLock {
            guard !state.started, !state.stopped else { return }
            state.started = true
            state.handler = handler
            state.tasks = [
                Task { [weak self] in await self?.keepConnected(role: "writer") { try await $0.writeLoop($1) } },
                Task { [weak self] in await self?.keepConnected(role: "reader") { try await $0.readLoop($1) } },
                Task { [weak self] in await self?.tick() },
            ]
        }
    }

    /// Starts delivering the messages stored for `channel` after this consumer's position on it (created at the
    /// current end of the outbox the first time this consumer listens to it). After an ``unlisten(from:)`` in this
    /// process, it goes on from the position this process had reached, so nothing is delivered twice.
    ///
    /// A channel name the database cannot store (it holds a NUL character) is refused: reported with the event kind
    /// `transportError` (a ``PostgresTransportError/Kind/invalidChannelName``), and the other channels go on.
    ///
    /// - Parameter channel: The relay's channel name.
    public func listen(to channel: String) {
        if channel.utf8.contains(0) {
            let error = PostgresTransportError(kind: .invalidChannelName, value: String(reflecting: channel))
            report(NotificationTransportEvent(kind: .transportError, channel: channel, error: error))
            return
        }
        let changed = lock.withLock {
            guard !state.stopped, state.channels[channel] == nil else { return false }
            state.channels[channel] = .some(state.parkedPositions.removeValue(forKey: channel))
            return true
        }
        if changed { signalReader() }
    }

    /// Stops delivering `channel`. Its position stays (in memory, and saved with the others), for the next time
    /// this consumer listens to it.
    ///
    /// - Parameter channel: The relay's channel name.
    public func unlisten(from channel: String) {
        lock.withLock {
            guard let position = state.channels.removeValue(forKey: channel), let position else { return }
            state.parkedPositions[channel] = position
        }
    }

    /// Queues `message` to be stored on `channel`, without waiting for the server. A message that cannot be stored
    /// is reported through the handler with kind `publishFailed` and a ``PostgresTransportError``.
    ///
    /// - Parameters:
    ///   - message: UTF-8 text without NUL bytes, at most ``Configuration/maximumMessageSize`` bytes.
    ///   - channel: The relay's channel name.
    public func publish(_ message: Data, on channel: String) {
        let refusal: PostgresTransportError?
        if channel.utf8.contains(0) {
            refusal = PostgresTransportError(kind: .invalidChannelName, value: String(reflecting: channel))
        } else if message.count > configuration.maximumMessageSize {
            refusal = PostgresTransportError(
                kind: .payloadTooLarge, size: message.count, limit: configuration.maximumMessageSize)
        } else if !message.contains(0), let text = String(data: message, encoding: .utf8) {
            let (accepted, wakeUp) = enqueue(.message(channel: channel, text: text))
            wakeUp?.resume()
            refusal =
                accepted ? nil : PostgresTransportError(kind: .queueFull, limit: configuration.maximumQueuedMessages)
        } else {
            refusal = PostgresTransportError(kind: .payloadNotText, size: message.count)
        }
        if let refusal {
            lock.withLock {
                state.publishRefusals += 1
                state.lastPublishRefusal = refusal
            }
            report(NotificationTransportEvent(kind: .publishFailed, channel: channel, error: refusal))
        }
    }

    /// Stops reading and writing, closes the connections and lets go of the handler. Messages still queued are not
    /// stored: call ``flush()`` first.
    public func stop() {
        let (connections, tasks, wakeUps, barriers):
            ([PostgresConnection], [Task<Void, Never>], [CheckedContinuation<Void, Never>], [DurableBarrier]) =
                lock.withLock {
                    guard !state.stopped else { return ([], [], [], []) }
                    state.stopped = true
                    state.handler = nil
                    var barriers = state.readerBarriers
                    for item in state.outgoing[state.outgoingHead...] {
                        if case .barrier(let barrier) = item { barriers.append(barrier) }
                    }
                    defer {
                        state.outgoing = []
                        state.outgoingHead = 0
                        state.queuedMessages = 0
                        state.readerBarriers = []
                        state.writerWakeUp = nil
                        state.readerWakeUp = nil
                        state.connections = [:]
                        state.abandonedConnections = []
                        state.tasks = []
                    }
                    return (
                        Array(state.connections.values) + state.abandonedConnections, state.tasks,
                        [state.writerWakeUp, state.readerWakeUp].compactMap { $0 }, barriers
                    )
                }
        for wakeUp in wakeUps { wakeUp.resume() }
        for task in tasks { task.cancel() }
        for barrier in barriers { barrier.interrupt() }
        for connection in connections { connection.closeInBackground() }
    }

    /// Waits until every message published before the call is stored, and every channel listened to before the
    /// call has its position (so that whatever is stored from now on reaches this consumer), and the positions of
    /// what was delivered are saved; then says whether all of it was stored.
    ///
    /// ```swift
    /// let flushed = await transport.flush()
    /// if !flushed.isComplete { logger.error("\(flushed.messagesNotStored) messages were not stored") }
    /// ```
    ///
    /// A message refused for good (by ``publish(_:on:)``, or by the server because of the message itself) is counted
    /// in ``FlushResult/messagesNotStored`` of the first flush called after it was published. While the server is
    /// unreachable or refuses for a reason that can pass (read-only after a failover, a lock timeout, a full disk),
    /// the messages stay queued and the flush waits: bound it with a timeout of your own, or ``stop()``, which ends
    /// it with ``FlushResult/stopped``. Returns at once after ``stop()``.
    ///
    /// - Returns: How many of the messages published since the previous flush were not stored, and whether the
    ///   transport stopped first.
    @discardableResult
    public func flush() async -> FlushResult {
        await withCheckedContinuation { (continuation: CheckedContinuation<FlushResult, Never>) in
            let refused = lock.withLock {
                defer {
                    state.publishRefusals = 0
                    state.lastPublishRefusal = nil
                }
                return (count: state.publishRefusals, lastError: state.lastPublishRefusal)
            }
            let writerBarrier = DurableBarrier(count: 2, refused: refused, continuation)
            let (accepted, wakeUp) = enqueue(.barrier(writerBarrier), force: true)
            wakeUp?.resume()
            if !accepted {
                writerBarrier.interrupt()
                writerBarrier.interrupt()
                return
            }
            let (readerAccepted, stopped) = lock.withLock {
                // A standby delivers nothing and keeps no position: only its writer has anything to flush.
                guard !state.stopped, !state.standby else { return (false, state.stopped) }
                state.readerBarriers.append(writerBarrier)
                return (true, false)
            }
            if readerAccepted {
                signalReader()
            } else if stopped {
                writerBarrier.interrupt()
            } else {
                writerBarrier.resume()
            }
        }
    }
}
