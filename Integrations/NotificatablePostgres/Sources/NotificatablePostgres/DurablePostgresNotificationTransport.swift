import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// A `NotificationTransport` that stores every message in a PostgreSQL outbox table, so that nothing is lost: a
/// listener that was down, disconnected, or whose server restarted catches up from its stored position.
///
/// ```swift
/// let transport = DurablePostgresNotificationTransport(configuration: .init(
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
///   ``Configuration/maximumMessageSize`` bytes (1 MiB by default) are carried.
/// - The insert and the read are prepared once per connection (PostgresNIO's `PostgresPreparedStatement`); the
///   transport's connections set their `search_path` to ``Configuration/schema`` for them.
/// - A reader connection, named by ``Configuration/consumer``, reads the rows of the channels it listens to in pages
///   of ``Configuration/pageSize``, in `(txid, id)` order, only from transactions older than every transaction still
///   running (so a row that commits late can never appear behind the reader), and hands them to the relay. It saves
///   its position in the `consumers` table lazily: every ``Configuration/pollInterval``, in ``flush()``, and before
///   it would hand over more than a page beyond the saved position. It reads when woken, and every poll interval.
/// - A consumer name that is new for a channel starts at the current end of the outbox. Afterwards, whatever is
///   stored for that channel reaches it, across restarts of the process, reconnections and server restarts.
/// - Delivery is at least once, in order per sender. A duplicate reaches a process only when the previous process
///   of the same consumer name stopped (crashed, was killed) after handing messages to its relay and before saving
///   its position: at most ``Configuration/pageSize`` messages per channel, once, after the restart. Messages whose
///   insert was interrupted by a lost connection are inserted again; the relay drops those copies, because they carry
///   the same sender and sequence number.
/// - Retention: rows that every consumer has passed, and rows older than ``Configuration/retentionAge``, are
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
        /// PostgresNIO's connection settings: host, port, user, password, database, TLS.
        public var connection: PostgresConnection.Configuration
        /// The consumer's name, stable across restarts of the process: its positions are stored under it. Give
        /// every process that must receive everything its own name; a second process under a name in use waits as
        /// a standby until the first one stops (see ``PostgresTransportError/Kind/consumerInUse``).
        public var consumer: String
        /// The schema of the tables: `notificatable` by default. Quoted as an identifier, so any name works.
        public var schema: String = "notificatable"
        /// Whether the transport creates the schema and tables on first use (`CREATE … IF NOT EXISTS`). Set it to
        /// false when a migration tool creates them (the SQL is in the package README).
        public var createsSchema: Bool = true
        /// The largest message, in bytes, that is stored: 1 MiB (1,048,576) by default. The relay refuses larger
        /// posts with a `messageTooLarge` event.
        public var maximumMessageSize: Int = 1_048_576
        /// How many rows the reader reads, and hands over, at a time; also the most duplicates per channel after a
        /// crash. 500 by default.
        public var pageSize: Int = 500
        /// The most messages inserted in one statement when several are waiting.
        public var maximumBatchSize: Int = 256
        /// How many messages may wait to be stored (while the server is unreachable, say) before new ones are
        /// refused with ``PostgresTransportError/Kind/queueFull``.
        public var maximumQueuedMessages: Int = 100_000
        /// Rows older than this are deleted even if a consumer has not received them (it is told). `nil` keeps rows
        /// until every consumer has passed them. Seven days by default.
        public var retentionAge: Duration? = .seconds(7 * 86_400)
        /// How often this transport deletes what retention allows; `nil` never (call ``enforceRetention()``, or
        /// let another process do it). One minute by default.
        public var retentionInterval: Duration? = .seconds(60)
        /// How often the reader looks for rows without having been woken: rows whose transaction committed while an
        /// older transaction was still running are found this way once that one ends. One second by default.
        public var pollInterval: Duration = .seconds(1)
        /// The wait before the first reconnection attempt; it doubles after each failed attempt.
        public var initialReconnectDelay: Duration = .milliseconds(100)
        /// The longest wait between two reconnection attempts.
        public var maximumReconnectDelay: Duration = .seconds(5)

        /// Creates a configuration from PostgresNIO's connection settings.
        ///
        /// - Parameters:
        ///   - connection: Where and how to connect.
        ///   - consumer: The consumer name of this process, stable across its restarts.
        public init(connection: PostgresConnection.Configuration, consumer: String) {
            self.connection = connection
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
    /// The `NOTIFY` payload of this transport's inserts: random, so that its reader can ignore its own wake-ups.
    let wakeToken = UUID().uuidString
    private let eventLoopGroup: any EventLoopGroup
    let logger: Logger
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
    }

    /// Creates a transport. It connects when the relay starts it.
    ///
    /// - Parameters:
    ///   - configuration: Where to connect, the consumer name, the limits.
    ///   - eventLoopGroup: Where the connections run. PostgresNIO's shared group by default.
    ///   - logger: Where PostgresNIO and the transport log; nothing below `warning` by default.
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = PostgresConnection.defaultEventLoopGroup,
        logger: Logger? = nil
    ) {
        self.configuration = configuration
        self.schema = DurableOutboxSchema(configuration.schema)
        self.eventLoopGroup = eventLoopGroup
        self.logger =
            logger
            ?? {
                var logger = Logger(label: "NotificatablePostgres.Durable")
                logger.logLevel = .warning
                return logger
            }()
        self.limits = NotificationTransportLimits(
            maximumMessageSize: configuration.maximumMessageSize, maximumChannelLength: nil)
    }

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
    /// current end of the outbox the first time this consumer listens to it).
    ///
    /// - Parameter channel: The relay's channel name.
    public func listen(to channel: String) {
        let changed = lock.withLock {
            guard !state.stopped, state.channels[channel] == nil else { return false }
            state.channels[channel] = .some(nil)
            return true
        }
        if changed { signalReader() }
    }

    /// Stops delivering `channel`. Its stored position stays, for the next time this consumer listens to it.
    ///
    /// - Parameter channel: The relay's channel name.
    public func unlisten(from channel: String) {
        lock.withLock { _ = state.channels.removeValue(forKey: channel) }
    }

    /// Queues `message` to be stored on `channel`, without waiting for the server. A message that cannot be stored
    /// is reported through the handler with kind `publishFailed` and a ``PostgresTransportError``.
    ///
    /// - Parameters:
    ///   - message: UTF-8 text without NUL bytes, at most ``Configuration/maximumMessageSize`` bytes.
    ///   - channel: The relay's channel name.
    public func publish(_ message: Data, on channel: String) {
        let refusal: PostgresTransportError?
        if message.count > configuration.maximumMessageSize {
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
        for barrier in barriers { barrier.resume() }
        for connection in connections { connection.close().whenComplete { _ in } }
    }

    /// Waits until every message published before the call is stored, and every channel listened to before the
    /// call has its position (so that whatever is stored from now on reaches this consumer), and the positions of
    /// what was delivered are saved. Returns at once after ``stop()``.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let writerBarrier = DurableBarrier(count: 2, continuation)
            let (accepted, wakeUp) = enqueue(.barrier(writerBarrier), force: true)
            wakeUp?.resume()
            if !accepted {
                writerBarrier.resume()
                writerBarrier.resume()
                return
            }
            let readerAccepted = lock.withLock {
                // A standby delivers nothing and keeps no position: only its writer has anything to flush.
                guard !state.stopped, !state.standby else { return false }
                state.readerBarriers.append(writerBarrier)
                return true
            }
            if readerAccepted { signalReader() } else { writerBarrier.resume() }
        }
    }

    // MARK: - Writing

    private func enqueue(_ item: Outgoing, force: Bool = false) -> (Bool, CheckedContinuation<Void, Never>?) {
        lock.withLock {
            guard !state.stopped else { return (false, nil) }
            if case .message = item {
                guard force || state.queuedMessages < configuration.maximumQueuedMessages else { return (false, nil) }
                state.queuedMessages += 1
            }
            state.outgoing.append(item)
            defer { state.writerWakeUp = nil }
            return (true, state.writerWakeUp)
        }
    }

    /// What the writer does next.
    private enum WriterStep {
        case messages([(channel: String, text: String)])
        case barrier(DurableBarrier)
        case stopped
    }

    /// Takes a barrier alone, or up to `maximumBatchSize` messages, waiting while the queue is empty.
    private func nextWrite() async -> WriterStep {
        while true {
            let step: WriterStep? = lock.withLock {
                if state.stopped { return .stopped }
                guard state.outgoingHead < state.outgoing.count else { return nil }
                if case .barrier(let barrier) = state.outgoing[state.outgoingHead] {
                    advanceOutgoing(by: 1)
                    return .barrier(barrier)
                }
                var batch: [(channel: String, text: String)] = []
                var index = state.outgoingHead
                while index < state.outgoing.count, batch.count < configuration.maximumBatchSize,
                    case .message(let channel, let text) = state.outgoing[index]
                {
                    batch.append((channel, text))
                    index += 1
                }
                state.queuedMessages -= batch.count
                advanceOutgoing(by: batch.count)
                return .messages(batch)
            }
            if let step { return step }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if state.stopped || state.outgoingHead < state.outgoing.count { return true }
                    state.writerWakeUp = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Called with the lock held.
    private func advanceOutgoing(by count: Int) {
        state.outgoingHead += count
        if state.outgoingHead == state.outgoing.count {
            state.outgoing.removeAll(keepingCapacity: true)
            state.outgoingHead = 0
        } else if state.outgoingHead > 4096 && state.outgoingHead * 2 > state.outgoing.count {
            state.outgoing.removeFirst(state.outgoingHead)
            state.outgoingHead = 0
        }
    }

    /// Puts a step that could not be completed back at the front of the queue, to be retried on the next
    /// connection.
    private func requeue(_ step: WriterStep) {
        let orphan: DurableBarrier? = lock.withLock {
            guard !state.stopped else {
                if case .barrier(let barrier) = step { return barrier }
                return nil
            }
            var items: [Outgoing]
            switch step {
            case .messages(let batch):
                items = batch.map { .message(channel: $0.channel, text: $0.text) }
                state.queuedMessages += batch.count
            case .barrier(let barrier): items = [.barrier(barrier)]
            case .stopped: items = []
            }
            items.append(contentsOf: state.outgoing[state.outgoingHead...])
            state.outgoing = items
            state.outgoingHead = 0
            return nil
        }
        orphan?.resume()
    }

    private func writeLoop(_ connection: DurableConnectionWatch) async throws {
        while true {
            let step = await nextWrite()
            do {
                switch step {
                case .stopped:
                    return
                case .barrier(let barrier):
                    _ = try await connection.run("SELECT 1")
                    barrier.resume()
                case .messages(let batch):
                    try await insert(batch, on: connection)
                }
            } catch {
                requeue(step)
                throw error
            }
        }
    }

    private func insert(_ batch: [(channel: String, text: String)], on connection: DurableConnectionWatch) async throws
    {
        let statement = DurableInsertBatchStatement(
            channels: batch.map(\.channel), messages: batch.map(\.text), wakeChannel: schema.wakeChannel,
            wakeToken: wakeToken)
        lock.withLock { state.insertsStarted += 1 }
        defer { lock.withLock { state.insertsFinished += 1 } }
        do {
            _ = try await connection.execute(statement)
        } catch {
            if connection.connection.isClosed || Self.isConnectionError(error) { throw error }
            // Refused by the server: store each message alone to find the culprit, report it, keep the others.
            guard batch.count > 1 else {
                report(
                    NotificationTransportEvent(
                        kind: .publishFailed, channel: batch[0].channel,
                        error: PostgresTransportError(kind: .serverRefused, wrapping: error)))
                return
            }
            for message in batch { try await insert([message], on: connection) }
        }
    }

    // MARK: - Reading

    private func readLoop(_ connection: DurableConnectionWatch) async throws {
        guard try await holdConsumerName(on: connection) else { return }
        let listener = connection.connection.addListener(channel: schema.wakeChannel) { [weak self] _, notification in
            self?.wokenUp(by: notification.payload)
        }
        defer { listener.stop() }
        _ = try await connection.run("SELECT 1")  // the LISTEN is in effect
        // Positions in memory stay, unless another process of this consumer name moved them meanwhile.
        try await reconcilePositions(on: connection)
        var checkHorizon = true
        while true {
            if lock.withLock({ state.abandonReaderConnection }) { throw PostgresTransportError(kind: .connectionLost) }
            let barriers: [DurableBarrier] = lock.withLock {
                defer { state.readerBarriers = [] }
                return state.readerBarriers
            }
            let (startedBefore, finishedBefore, woken) = lock.withLock {
                state.readingWokenRound = state.foreignWakeUp
                state.foreignWakeUp = false
                state.readRounds += 1
                return (state.insertsStarted, state.insertsFinished, state.readingWokenRound)
            }
            do {
                try await loadPositions(on: connection)
                if checkHorizon || takeHorizonCheck() {
                    try await checkRetentionHorizon(on: connection)
                    checkHorizon = false
                }
                while try await readPage(on: connection) {}
            } catch {
                lock.withLock {
                    state.readingWokenRound = false
                    state.ownInsertMayHideRows = true
                }
                handBack(barriers)
                throw error
            }
            lock.withLock {
                state.readingWokenRound = false
                // Another writer's rows can be held back only by an insert of ours that took its xid before theirs,
                // so was in flight when they committed, before their wake-up arrived. Such an insert overlapped the
                // round that wake-up caused (then the insert's own wake-up must be honoured) or had finished (and
                // committed) before the round began (then the round read those rows).
                let overlapped = startedBefore > finishedBefore || state.insertsStarted > startedBefore
                if overlapped && woken {
                    state.ownInsertMayHideRows = true
                } else if startedBefore == finishedBefore {
                    state.ownInsertMayHideRows = false
                }
            }
            if !barriers.isEmpty || lock.withLock({ state.saveDue }) {
                lock.withLock { state.saveDue = false }
                do {
                    try await savePositions(on: connection)
                } catch {
                    handBack(barriers)
                    throw error
                }
            }
            for barrier in barriers { barrier.resume() }
            if takeRetentionDue() { try await deleteExpired(on: connection) }
            guard await waitForReaderSignal() else { return }
        }
    }

    /// Gives the flushes that a failed read or save was serving back to the reader, for the next connection to
    /// serve; once the transport is stopped, releases them instead.
    private func handBack(_ barriers: [DurableBarrier]) {
        let orphans: [DurableBarrier] = lock.withLock {
            guard !state.stopped else { return barriers }
            state.readerBarriers.insert(contentsOf: barriers, at: 0)
            return []
        }
        for barrier in orphans { barrier.resume() }
    }

    /// Loads (or creates at the head) the position of every channel that has none yet.
    private func loadPositions(on connection: DurableConnectionWatch) async throws {
        let missing = lock.withLock { state.channels.filter { $0.value == nil }.map(\.key) }
        for channel in missing {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(configuration.consumer)
            bindings.append(channel)
            let rows = try await storageQuery(schema.registerPosition, bindings, on: connection)
            guard let row = rows.first else { continue }
            let (txid, id) = try row.decode((Int64, Int64).self)
            lock.withLock {
                if let current = state.channels[channel], current == nil {
                    state.channels[channel] = Position(txid: txid, id: id)
                    state.savedPositions[channel] = Position(txid: txid, id: id)
                }
            }
        }
    }

    /// Reads and delivers one page; true if the page was full (there may be more).
    private func readPage(on connection: DurableConnectionWatch) async throws -> Bool {
        let positions: [String: Position] = lock.withLock {
            state.channels.compactMapValues { $0 }
        }
        guard let start = positions.values.min() else { return false }
        let statement = DurableReadPageStatement(
            channels: Array(positions.keys), after: start, limit: configuration.pageSize)
        let rows = try await storage { try await connection.execute(statement) }
        guard !rows.isEmpty else { return false }
        // Positions are saved lazily (every save is a transaction that takes an xid, and holds back every reader's
        // snapshot xmin while it runs), but never more than one page behind what was delivered.
        if lock.withLock({ state.unsavedRows > 0 && state.unsavedRows + rows.count > configuration.pageSize }) {
            try await savePositions(on: connection)
        }
        var last = start
        for row in rows {
            let (position, channel, message) = (row.position, row.channel, row.message)
            last = position
            guard let channelPosition = positions[channel], channelPosition < position else { continue }
            let handler: NotificationTransportHandler? = lock.withLock {
                guard !state.stopped, state.channels[channel] != nil else { return nil }
                return state.handler
            }
            handler?.receive(Data(message.utf8), on: channel)
        }
        // Every channel read has been covered up to `last`.
        let advanced: [String] = lock.withLock {
            var advanced: [String] = []
            for channel in positions.keys {
                guard let current = state.channels[channel], let current, current < last else { continue }
                state.channels[channel] = last
                advanced.append(channel)
            }
            return advanced
        }
        if !advanced.isEmpty {
            lock.withLock {
                state.unsavedChannels.formUnion(advanced)
                state.unsavedRows += rows.count
            }
        }
        return rows.count == configuration.pageSize
    }

    /// Saves the in-memory position of every channel delivered since the last save.
    private func savePositions(on connection: DurableConnectionWatch) async throws {
        let unsaved: [String: Position] = lock.withLock {
            var unsaved: [String: Position] = [:]
            for channel in state.unsavedChannels {
                if let position = state.channels[channel], let position { unsaved[channel] = position }
            }
            state.unsavedChannels = []
            state.unsavedRows = 0
            return unsaved
        }
        do {
            for (position, channels) in Dictionary(grouping: unsaved.keys.sorted(), by: { unsaved[$0] }) {
                guard let position else { continue }
                var save = PostgresBindings(capacity: 4)
                save.append(configuration.consumer)
                save.append(position.txid)
                save.append(position.id)
                save.append(channels)
                try await storageQuery(schema.savePositions, save, on: connection)
                lock.withLock { for channel in channels { state.savedPositions[channel] = position } }
            }
        } catch {
            lock.withLock { state.unsavedChannels.formUnion(unsaved.keys) }
            throw error
        }
    }

    /// Reports `messagesMissed` for every channel whose position is behind rows deleted for age.
    private func checkRetentionHorizon(on connection: DurableConnectionWatch) async throws {
        let rows = try await storageQuery(schema.readHorizon, on: connection)
        guard let row = rows.first else { return }
        let (txid, id) = try row.decode((Int64, Int64).self)
        let horizon = Position(txid: txid, id: id)
        let behind: [String] = lock.withLock {
            var behind: [String] = []
            for (channel, position) in state.channels {
                guard let position, position < horizon, state.reportedHorizon[channel] != horizon else { continue }
                state.reportedHorizon[channel] = horizon
                behind.append(channel)
            }
            return behind
        }
        for channel in behind.sorted() {
            report(
                NotificationTransportEvent(
                    kind: .messagesMissed, channel: channel, error: PostgresTransportError(kind: .behindRetention)))
        }
    }

    // MARK: - Retention

    /// Deletes the rows every consumer has passed and, with a ``Configuration/retentionAge``, the rows older than
    /// it, on a connection of its own. The transport calls it every ``Configuration/retentionInterval``; call it
    /// yourself from a maintenance job when that is `nil`.
    ///
    /// - Returns: How many rows were deleted.
    /// - Throws: PostgresNIO's error when the server cannot be reached or refuses.
    @discardableResult
    public func enforceRetention() async throws -> Int {
        let connection = try await PostgresConnection.connect(
            on: eventLoopGroup.next(), configuration: configuration.connection, id: 0, logger: logger)
        do {
            let deleted = try await deleteExpired(on: DurableConnectionWatch(connection, logger: logger))
            try await connection.close()
            return deleted
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @discardableResult
    private func deleteExpired(on connection: DurableConnectionWatch) async throws -> Int {
        var deleted = 0
        for row in try await connection.run(PostgresQuery(unsafeSQL: schema.deletePassed)) {
            deleted += Int(try row.decode(Int64.self))
        }
        if let age = configuration.retentionAge {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(Self.seconds(age))
            let query = PostgresQuery(unsafeSQL: schema.deleteOlder, binds: bindings)
            for row in try await connection.run(query) {
                deleted += Int(try row.decode(Int64.self))
            }
        }
        return deleted
    }

    /// How many read rounds the reader has started: each one reads what is readable on every channel.
    var readRounds: Int { lock.withLock { state.readRounds } }

    // MARK: - Signals and timers

    /// A `NOTIFY` on the wake channel. One from this transport's own writer is ignored when no read could have
    /// skipped rows because of that insert: the rows are this relay's own messages, which it ignores anyway, and
    /// the next read passes them. This keeps a sending process from reading back everything it sends. Rows of
    /// another writer can be held back only by an insert of ours that took its xid first, so was in flight when
    /// they committed and their wake-up arrived: a round woken by another writer that overlapped an insert of ours
    /// marks the next own wake-up as needed; a round that began with no insert of ours in flight clears the mark.
    private func wokenUp(by payload: String) {
        let ignore = lock.withLock {
            guard payload == wakeToken else {
                state.foreignWakeUp = true
                return false
            }
            // During a round woken by another writer, the round's outcome is not known yet: honour it.
            return !state.readingWokenRound && !state.ownInsertMayHideRows
        }
        if !ignore { signalReader() }
    }

    func signalReader() {
        let wakeUp: CheckedContinuation<Void, Never>? = lock.withLock {
            if let wakeUp = state.readerWakeUp {
                state.readerWakeUp = nil
                return wakeUp
            }
            state.readerSignalled = true
            return nil
        }
        wakeUp?.resume()
    }

    /// Waits for a wake-up, a listen, a flush, the poll timer or a closed connection; false once stopped.
    private func waitForReaderSignal() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock {
                if state.stopped || state.readerSignalled {
                    state.readerSignalled = false
                    return true
                }
                state.readerWakeUp = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return !isStopped
    }

    private var horizonCheckDue = false
    private var retentionDue = false

    private func takeHorizonCheck() -> Bool {
        lock.withLock {
            defer { horizonCheckDue = false }
            return horizonCheckDue
        }
    }

    private func takeRetentionDue() -> Bool {
        lock.withLock {
            defer { retentionDue = false }
            return retentionDue
        }
    }

    /// Wakes the reader every poll interval, and marks the retention due every retention interval.
    private func tick() async {
        let poll = Self.seconds(configuration.pollInterval)
        let retention = configuration.retentionInterval.map(Self.seconds)
        var sinceRetention = 0.0
        while !isStopped {
            do { try await Task.sleep(nanoseconds: UInt64(max(poll, 0.001) * 1e9)) } catch { return }
            sinceRetention += poll
            lock.withLock {
                horizonCheckDue = true
                state.saveDue = true
                if let retention, sinceRetention >= retention {
                    retentionDue = true
                    sinceRetention = 0
                }
            }
            signalReader()
        }
    }

    // MARK: - Connecting

    /// Connects, creates the schema if asked, runs `body` until it throws or returns (stopped), and reconnects with
    /// backoff. Reports `connectionLost` and `reconnected`.
    private func keepConnected(
        role: String,
        _ body: @escaping @Sendable (DurablePostgresNotificationTransport, DurableConnectionWatch) async throws -> Void
    ) async {
        var attempt = 0
        var wasConnected = false
        var reportedFailure = false
        var connectionID = role == "writer" ? 1 : 2
        while !isStopped {
            connectionID += 2
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    on: eventLoopGroup.next(), configuration: configuration.connection, id: connectionID,
                    logger: logger)
            } catch {
                if !reportedFailure && !wasConnected {
                    reportedFailure = true
                    report(
                        NotificationTransportEvent(
                            kind: .transportError, error: PostgresTransportError(kind: .connectFailed, wrapping: error))
                    )
                }
                if await !backoff(attempt: &attempt) { return }
                continue
            }
            let key = ObjectIdentifier(connection)
            let stopped = lock.withLock {
                if !state.stopped { state.connections[key] = connection }
                return state.stopped
            }
            if stopped {
                try? await connection.close()
                return
            }
            connection.closeFuture.whenComplete { [weak self] _ in
                if role == "reader" { self?.signalReader() }
            }
            let watch = DurableConnectionWatch(connection, logger: logger)
            do {
                _ = try await storage { try await watch.run(schema.setSearchPath) }
                try await ensureSchema(on: watch)
                if wasConnected { report(NotificationTransportEvent(kind: .reconnected)) }
                wasConnected = true
                reportedFailure = false
                attempt = 0
                try await body(self, watch)
                lock.withLock { _ = state.connections.removeValue(forKey: key) }
                try? await connection.close()
                return  // stopped
            } catch {
                let abandoned: Bool = lock.withLock {
                    _ = state.connections.removeValue(forKey: key)
                    guard role == "reader", state.abandonReaderConnection else { return false }
                    state.abandonReaderConnection = false
                    state.abandonedConnections.append(connection)
                    return true
                }
                if !abandoned { try? await connection.close() }
                if isStopped { return }
                if let error = error as? PostgresTransportError, error.kind == .storageFailed {
                    report(NotificationTransportEvent(kind: .transportError, error: error))
                } else if wasConnected {
                    report(
                        NotificationTransportEvent(
                            kind: .connectionLost, error: PostgresTransportError(kind: .connectionLost, wrapping: error)
                        ))
                }
                if await !backoff(attempt: &attempt) { return }
            }
        }
    }

    private func ensureSchema(on connection: DurableConnectionWatch) async throws {
        guard configuration.createsSchema, !lock.withLock({ state.schemaReady }) else { return }
        try await storageQuery(schema.creationBlock, on: connection)
        lock.withLock { state.schemaReady = true }
    }

    /// Runs `sql` with `bindings` on `connection` as a statement on the tables (see ``storage(_:)``).
    @discardableResult
    func storageQuery(
        _ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: DurableConnectionWatch
    ) async throws -> [PostgresRow] {
        try await storage { try await connection.run(PostgresQuery(unsafeSQL: sql, binds: bindings)) }
    }

    /// Runs a statement on the tables; a refusal by the server (not a lost connection) becomes a
    /// ``PostgresTransportError/Kind/storageFailed``.
    func storage<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if Self.isConnectionError(error) { throw error }
            throw PostgresTransportError(kind: .storageFailed, wrapping: error)
        }
    }

    private func backoff(attempt: inout Int) async -> Bool {
        let delay = min(
            Self.seconds(configuration.initialReconnectDelay) * Double(1 << min(attempt, 16)),
            Self.seconds(configuration.maximumReconnectDelay))
        attempt += 1
        let nanoseconds = delay * Double.random(in: 1...1.25) * 1e9
        do { try await Task.sleep(nanoseconds: UInt64(nanoseconds)) } catch { return false }
        return !isStopped
    }

    var isStopped: Bool { lock.withLock { state.stopped } }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Whether `error` means the connection is gone rather than the statement refused.
    static func isConnectionError(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransportError { return error.kind == .connectionLost }
        guard let error = error as? PSQLError else { return true }
        guard error.code == .server else { return true }
        let sqlState = error.serverInfo?[.sqlState] ?? ""
        return sqlState.hasPrefix("57") || sqlState.hasPrefix("08")
    }

    func report(_ event: NotificationTransportEvent) {
        let handler = lock.withLock { state.handler }
        handler?.report(event)
    }
}

/// A continuation resumed once `count` parts have resumed it (or the transport stops).
final class DurableBarrier: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private var continuation: CheckedContinuation<Void, Never>?

    init(count: Int, _ continuation: CheckedContinuation<Void, Never>) {
        self.remaining = count
        self.continuation = continuation
    }

    func resume() {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            remaining -= 1
            guard remaining <= 0 else { return nil }
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }
}
