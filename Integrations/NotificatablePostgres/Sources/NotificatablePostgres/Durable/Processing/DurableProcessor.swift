import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// Processes one handle's channel for one consumer: reads the outbox from the stored processing position, decodes
/// each message as a relay would, hands it to the handler (retrying, then parking), and stores the position of the
/// oldest message not finished. See `DurablePostgresNotificationTransport+Processing.swift` for the public entry.
final class DurableProcessor<Info: Codable & Sendable>: Sendable {
    typealias Position = DurablePostgresNotificationTransport.Position

    enum Body: Sendable {
        case plain(@Sendable (DurableDelivery<Info>) async throws -> Void)
        case transactional(@Sendable (DurableDelivery<Info>, PostgresConnection) async throws -> Void)
        /// Up to `maximum` messages in one transaction (``DurablePostgresNotificationTransport/processTransactionally(_:maximumBatchSize:options:partitionKey:authenticator:onEvent:_:)``).
        case batch(maximum: Int, @Sendable ([DurableDelivery<Info>], PostgresConnection) async throws -> Void)
    }

    /// One message to hand to the handler: read from the outbox, or a dead letter to re-drive.
    struct Item: Sendable {
        var position: Position
        var message: String
        var redriven: Bool
        var decoded: Result<Decoded, DurableProcessingError>
        var key: String?
        /// Its partition (see ``DurablePartitionLayout``).
        var partition: Int
        /// Its index in its partition's window (outbox messages only).
        var index: Int
        /// How many messages of its partition were read before it since the partition was taken (outbox messages
        /// only; see ``countsFirstStart(_:)``).
        var ordinal: Int
        /// Whether its partition's last holder ended without giving it back (outbox messages only).
        var countsStarts = true
    }

    struct Decoded: Sendable {
        var payload: Info
        var name: Notification.Name
        var sender: String
        var sequence: Int
        /// The message's headers: the post's trace context, if it was traced.
        var headers: [String: String]
    }

    enum Outcome: Sendable {
        /// Processed, or parked: the position may pass it.
        case done
        /// Given up because the processor is stopping: it is delivered again.
        case abandoned
    }

    enum Event: Sendable {
        /// A read: the rows after `after`, in order (every row stored after it up to the last one, so a partition
        /// that has read up to `after` or further may take them), dead letters to re-drive, the horizon.
        case fetched(
            [DurableOutboxRow], after: Position, redriven: [DurableOutboxRow], redrives: DurableRedriveCursor,
            serial: Int, horizon: Position?)
        case finished(Item, Outcome)
        /// A batch's items and the outcome of each, in order.
        case finishedBatch([Item], [Outcome])
        /// Positions stored: per partition, how many of its window's messages they cover.
        case saved([(number: Int, count: Int, position: Position)])
        case measured
        /// A look at the group: the partitions taken, and this process's share.
        case rebalanced([TakenPartition], share: Int)
        /// A partition given back.
        case released(Int)
    }

    let transport: DurablePostgresNotificationTransport
    let handle: Notificatable<Info>
    let options: DurableProcessingOptions
    let partitionKey: (@Sendable (Info) -> String)?
    let authenticator: (any NotificationMessageAuthenticator)?
    let onEvent: (@Sendable (NotificationTransportEvent) -> Void)?
    let body: Body
    let channel: String
    let consumer: String
    /// In channel order, or in partitions shared by the processes under the consumer name.
    let layout: DurablePartitionLayout
    let pool: DurableProcessingConnections
    /// The messages finished since the last attempt count (see ``countAttempt(_:on:)``).
    let finishedCounts = DurableFinishedCounts()
    /// Its metrics and where it stands (``DurablePostgresNotificationTransport/processingStatus()``).
    let monitor: DurableProcessingMonitor
    /// Reports handler calls that run past ``DurableProcessingOptions/handlerStallThreshold`` (without a timeout).
    let stallWatch = DurableStallWatch()

    init(
        transport: DurablePostgresNotificationTransport, handle: Notificatable<Info>, options: DurableProcessingOptions,
        partitionKey: (@Sendable (Info) -> String)?, authenticator: (any NotificationMessageAuthenticator)?,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)?, body: Body
    ) throws {
        try options.validate()
        let channel = NotificationChannelName.channel(
            for: handle.name, maximumLength: transport.limits.maximumChannelLength)
        if channel.utf8.contains(0) {
            throw PostgresTransportError(kind: .invalidChannelName, value: String(reflecting: channel))
        }
        self.transport = transport
        self.handle = handle
        self.options = options
        self.partitionKey = partitionKey
        self.authenticator = authenticator
        self.onEvent = onEvent
        self.body = body
        self.channel = channel
        self.consumer = transport.configuration.consumer
        self.layout = DurablePartitionLayout(options: options, hasPartitionKey: partitionKey != nil)
        self.pool = DurableProcessingConnections(transport: transport)
        self.monitor = DurableProcessingMonitor(
            consumer: transport.configuration.consumer, channel: channel,
            stallThreshold: options.handlerStallThreshold, factory: transport.metrics.factory)
    }

    var schema: DurableOutboxSchema { transport.schema }
    var pageSize: Int { max(1, transport.configuration.pageSize) }

    /// Reports `event` to the relay's handler (when a relay started the transport) and to `onEvent`. With no relay,
    /// it is counted (the metrics of missed messages and reconnections) and, with no `onEvent` either, logged at its
    /// severity, as the default handler would: nothing is silent.
    func report(_ event: NotificationTransportEvent) {
        let event = event.graded
        let handler = transport.lock.withLock { transport.state.handler }
        handler?.report(event)
        onEvent?(event)
        if handler == nil {
            transport.metrics.record(event)
            if onEvent == nil { transport.logger.log(event) }
        }
    }

    // MARK: - Connecting

    /// Runs sessions until the task is cancelled or the transport stops, through the transport's connection engine
    /// (role `processor`: reconnects with backoff, reports the outage once and `reconnected` after it).
    func run() async {
        defer { pool.closeAll() }
        await transport.engine.keepConnected(
            role: "processor", channel: channel, isStopped: { [transport] in transport.isStopped },
            report: { [self] in report($0) }
        ) { connection, established in
            try await session(
                PostgresConnectionWatch.watching(connection, logger: transport.logger), connected: established)
        }
    }

    /// Takes the processing lock of this consumer and channel, waiting (polling, so that cancellation ends the wait)
    /// while another session holds it; false if cancelled meanwhile.
    func holdLock(on connection: PostgresConnectionWatch) async throws -> Bool {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(channelOrderLock)
        return try await standingBy(on: connection) {
            try await transport.storageQuery(schema.tryConsumerLock, bindings, on: connection).first?
                .decode(Bool.self) == true
        }
    }

    /// Calls `attempt` until it succeeds, every poll interval (so that cancellation ends the wait): the first time it
    /// fails, the processor stands by (`consumerStandby`, naming the session that holds the channel-order lock); when
    /// it succeeds after that, it reports `consumerTakenOver`. False if cancelled meanwhile.
    func standingBy(on connection: PostgresConnectionWatch, until attempt: () async throws -> Bool) async throws -> Bool
    {
        var reported = false
        while !Task.isCancelled {
            if try await attempt() {
                if reported {
                    let error = PostgresTransportError(kind: .consumerTakenOver)
                    report(NotificationTransportEvent(kind: .consumerTakenOver, channel: channel, error: error))
                }
                return true
            }
            if !reported {
                reported = true
                monitor.standingBy()
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(channelOrderLock)
                let holders = try await transport.storageQuery(schema.consumerLockHolder, bindings, on: connection)
                var pid: Int32 = 0
                if let row = holders.first { (pid, _) = try row.decode((Int32, String).self) }
                let error = PostgresTransportError(kind: .consumerInUse, count: Int(pid), backendPID: Int(pid))
                report(NotificationTransportEvent(kind: .consumerStandby, channel: channel, error: error))
            }
            try? await Task.sleep(for: transport.configuration.pollInterval)
        }
        return false
    }

    /// The index in `pending` of the first message that may start: the first, without a partition key; with one,
    /// the first whose key has no message running and none waiting before it.
    func nextStartable(
        _ pending: DurablePendingItems<Item>, runningKeys: [String: Int], joining batchKeys: Set<String> = []
    ) -> Int? {
        guard partitionKey != nil else { return pending.isEmpty ? nil : 0 }
        var blocked = Set<String>()
        for (offset, item) in pending.items.enumerated() {
            guard let key = item.key else { return offset }
            // A key running only in the batch being put together may join it: its items stay in order there.
            if (runningKeys[key] == nil || batchKeys.contains(key)) && !blocked.contains(key) { return offset }
            blocked.insert(key)
        }
        return nil
    }

    // MARK: - Reading and storing

    var consumerBindings: PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(schema.processingConsumer(consumer))
        bindings.append(channel)
        return bindings
    }

    /// The stored processing position, created at the current end of the outbox (or before the oldest stored
    /// message) the first time; in a transaction that holds the registrations' lock, as the relay's reader does
    /// (see ``DurableOutboxSchema/lockRegistrations``), so that the deletion of passed rows, which does not see a
    /// registration before it commits, never removes a row the new position should reach.
    func loadPosition(on watch: PostgresConnectionWatch) async throws -> Position {
        let sql = options.startsAtOldestStored ? schema.registerPositionAtOldest : schema.registerPosition
        var schemaName = PostgresBindings(capacity: 1)
        schemaName.append(schema.quoted)
        try await transport.storageQuery("BEGIN", on: watch)
        try await transport.storageQuery(schema.lockRegistrations, schemaName, on: watch)
        // The positions of a consumer group that ran under this name before are taken over (at the lowest).
        try await adoptLayoutPositions(on: watch)
        let rows = try await transport.storageQuery(sql, consumerBindings, on: watch)
        try await transport.storageQuery("COMMIT", on: watch)
        guard let row = rows.first else { throw PostgresTransportError(kind: .storageFailed) }
        let (txid, id) = try row.decode((Int64, Int64).self)
        return Position(txid: txid, id: id)
    }

    /// The messages after `start` acknowledged inside handlers' transactions before this session.
    func loadAcknowledged(after start: Position, on watch: PostgresConnectionWatch) async throws -> Set<Position> {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(start.txid)
        bindings.append(start.id)
        var done: Set<Position> = []
        for row in try await transport.storageQuery(schema.acknowledgedAfter, bindings, on: watch) {
            let (txid, id) = try row.decode((Int64, Int64).self)
            done.insert(Position(txid: txid, id: id))
        }
        return done
    }

    /// Reads the next page after `after` and, when a poll interval has passed since the last look (or the last look
    /// found a full batch: then at once, from where it stopped), a batch of dead letters to re-drive
    /// (``Configuration/pageSize`` at most), and the retention horizon; waits for a wake-up or the poll interval
    /// while there is nothing. Returns empty when cancelled. Re-drives are looked for while others run: the
    /// session's loop skips those already running and those that finished after this fetch began.
    func fetch(
        after: Position, redrives: DurableRedriveCursor, serial: Int, signal: DurableProcessingSignal,
        rewind: DurableFetchRewind, on watch: PostgresConnectionWatch
    ) async throws -> Event {
        let interval = transport.configuration.pollInterval
        var cursor = redrives
        var horizon: Position?
        while true {
            var redriven: [DurableOutboxRow] = []
            if cursor.more || ContinuousClock.now - cursor.checkedAt >= interval {
                redriven = try await fetchRedrives(after: cursor.more ? cursor.after : nil, on: watch)
                cursor.checkedAt = ContinuousClock.now
                cursor.more = redriven.count >= pageSize
                cursor.after = redriven.last?.position ?? Position(txid: 0, id: 0)
                horizon = try await readHorizon(on: watch)
            }
            let statement = DurableReadPageStatement(channels: [channel], after: after, limit: pageSize)
            let rows = try await transport.storage { try await watch.readPage(statement) }
            if !rows.isEmpty || !redriven.isEmpty || horizon != nil || Task.isCancelled {
                return .fetched(
                    rows, after: after, redriven: redriven, redrives: cursor, serial: serial, horizon: horizon)
            }
            await signal.wait(timeout: interval)
            if Task.isCancelled || rewind.isSet {
                return .fetched([], after: after, redriven: [], redrives: cursor, serial: serial, horizon: nil)
            }
        }
    }

    /// The highest position deleted for age, if any.
    func readHorizon(on watch: PostgresConnectionWatch) async throws -> Position? {
        guard let row = try await transport.storageQuery(schema.readHorizon, on: watch).first else { return nil }
        let (txid, id) = try row.decode((Int64, Int64).self)
        return Position(txid: txid, id: id)
    }

    /// The dead letters asked to be re-driven, oldest first, after `after` (from the first when `nil`).
    func fetchRedrives(after: Position?, on watch: PostgresConnectionWatch) async throws -> [DurableOutboxRow] {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(pageSize)
        bindings.append(after?.txid ?? 0)
        bindings.append(after?.id ?? 0)
        return try await transport.storageQuery(schema.redriveRequested, bindings, on: watch).map { row in
            let (txid, id, message) = try row.decode((Int64, Int64, String).self)
            return DurableOutboxRow(position: Position(txid: txid, id: id), channel: channel, message: message)
        }
    }

    /// After a poll interval, sets the lag gauges (``DurableProcessingMetrics``) from the position that may be stored:
    /// how many messages of the channel are stored after it, and the age of the oldest. Returns at once when
    /// cancelled.
    func measureLag(on watch: PostgresConnectionWatch) async throws {
        guard (try? await Task.sleep(for: transport.configuration.pollInterval)) != nil,
            let position = monitor.position
        else { return }
        let (channels, txids, ids): ([String], [Int64], [Int64]) = ([channel], [position.txid], [position.id])
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(channels)
        bindings.append(txids)
        bindings.append(ids)
        for row in try await transport.storageQuery(schema.consumerLag, bindings, on: watch) {
            let (_, messages, seconds) = try row.decode((String, Int64, Double).self)
            monitor.lag(messages: Int(messages), seconds: seconds)
        }
    }

    /// Stores the channel-order position, and deletes the acknowledgements and attempt counts it passes.
    func save(_ position: Position, on watch: PostgresConnectionWatch) async throws {
        let statement = DurableSavePositionStatement(
            row: schema.processingConsumer(consumer), channel: channel, position: position, consumer: consumer)
        try await transport.storage { try await watch.perform(statement) }
    }
}

/// Where a processor's look for dead letters to re-drive stands: when it last looked, and whether that look found a
/// full batch (then the next one goes on after `after` at once).
struct DurableRedriveCursor: Sendable {
    var checkedAt: ContinuousClock.Instant
    var more = false
    var after = DurablePostgresNotificationTransport.Position(txid: 0, id: 0)
}
