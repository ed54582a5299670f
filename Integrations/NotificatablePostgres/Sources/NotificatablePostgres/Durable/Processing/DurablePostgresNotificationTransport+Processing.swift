import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// How ``DurablePostgresNotificationTransport/process(_:options:partitionKey:authenticator:onEvent:_:)`` retries,
/// how many messages it handles at once, and how far it may run past an unfinished one.
///
/// ```swift
/// try await transport.process(orderPlaced, options: .init(maximumAttempts: 5, maximumConcurrency: 8)) { delivery in
///     try await billing.charge(delivery.payload)
/// }
/// ```
public struct DurableProcessingOptions: Sendable {
    /// How many times the handler is called with one message before the message is parked in the dead letters.
    /// 5 by default; from 1 to 1,000,000. Attempts are counted in the database before the handler is called, so a
    /// handler that ends the process (a crash, `exit`, an out-of-memory kill) uses one up each time: after this many
    /// starts the message is parked (error "the handler did not finish …") and the others go on. The count before
    /// a message's first call is written only where a crash can have left messages unfinished (the first
    /// ``maximumUnacknowledged`` a process hands out, where every message stands in the runs after one that ended
    /// on it); further on, a handler that ends the process on its first call gets one start more before parking.
    public var maximumAttempts: Int
    /// How many messages are handled at once. 1 by default: one after the other, in the channel's order (a failing
    /// message holds back the next ones until it succeeds or is parked). With more, messages are handled in any
    /// order, unless a partition key keeps the order per key. From 1 to 10,000.
    public var maximumConcurrency: Int
    /// How many messages handed to the handler may wait for their acknowledgement to be stored: after a crash, at
    /// most this many are handed out again; handing out stops while a slow message holds this many behind it.
    /// 64 by default; from ``maximumConcurrency`` to 1,000,000.
    public var maximumUnacknowledged: Int = 64
    /// The wait before the first retry; it doubles after each failed attempt, and each wait is multiplied by a
    /// random factor between 0.5 and 1. 100 ms by default; from zero to a day.
    public var initialRetryDelay: Duration = .milliseconds(100)
    /// The longest wait between two attempts. 30 seconds by default; from ``initialRetryDelay`` to a day.
    public var maximumRetryDelay: Duration = .seconds(30)
    /// Where a consumer that processes a channel for the first time starts: true (the default) at the oldest
    /// message still stored, so that nothing stored before its first run is missed; false at the current end of the
    /// outbox, as a relay's consumer does (what was stored before the first run is never processed: choose it only
    /// when that is what you want). Once the consumer has a position, it goes on from there either way.
    public var startsAtOldestStored = true
    /// How long one call of the handler may run: past it, the handler's task is cancelled and the attempt counts as
    /// failed (retried, then parked, as a thrown error is; the error is a ``DurableProcessingError`` of kind
    /// ``DurableProcessingError/Kind/handlerTimedOut``). A handler that ignores cancellation goes on running in the
    /// background, but no longer holds the message. `nil` (the default): no limit. Above zero, at most a year.
    public var handlerTimeout: Duration?
    /// How long one call of the handler may run before it is reported, once per call, with the event kind
    /// `handlerStalled` (the message's id and the seconds; the handler goes on). 30 seconds by default; `nil`
    /// never. Above zero, at most a year.
    public var handlerStallThreshold: Duration? = .seconds(30)
    /// How many partitions the channel is split into when its messages need not be handled in the channel's order
    /// (a partition key, or ``maximumConcurrency`` above 1): the processes under one consumer name share the
    /// partitions, each holding about as many, so at most this many processes work at once. Every process of the
    /// group must use the same count: a process with another count stands by until none with the old one runs, then
    /// takes over their positions (see the *Processing* article's consumer groups). 16 by default; from 2 to 1,024.
    public var partitionCount = 16
    /// How long after a process of a consumer group falls silent (its host lost, its network cut) the server ends its
    /// session, so that the other processes take its partitions over: the server's TCP keepalives and user timeout
    /// on the processor's connection. A process that ends (a crash, a kill) closes its connection at once, and its
    /// partitions are taken within one ``DurablePostgresNotificationTransport/Configuration/pollInterval``. 10 seconds
    /// by default; from 3 seconds to an hour. TCP connections only (a Unix socket has no keepalives).
    public var sessionTimeout: Duration = .seconds(10)

    /// Creates options. Every value is checked when `process` starts: one out of its range throws a
    /// ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/invalidConfiguration``.
    ///
    /// - Parameters:
    ///   - maximumAttempts: Calls of the handler per message before it is parked.
    ///   - maximumConcurrency: Messages handled at once.
    public init(maximumAttempts: Int = 5, maximumConcurrency: Int = 1) {
        self.maximumAttempts = maximumAttempts
        self.maximumConcurrency = maximumConcurrency
    }
}

extension DurablePostgresNotificationTransport {
    /// Processes every message stored for `handle`, acknowledging each one only once `handler` has returned: the
    /// consumer's processing position passes a message after its handler returned, so a process killed at any
    /// moment loses nothing (the next process under the same ``Configuration/consumer`` name gets again every
    /// message whose handler had not returned: at most ``DurableProcessingOptions/maximumUnacknowledged``).
    ///
    /// ```swift
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask {
    ///         try await transport.process(orderPlaced, options: .init(maximumAttempts: 5)) { delivery in
    ///             try await billing.charge(delivery.payload, idempotencyKey: delivery.id.description)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - A handler that throws is called again after a backoff (``DurableProcessingOptions``), up to
    ///   ``DurableProcessingOptions/maximumAttempts`` times; then the message is parked in the `dead_letters` table
    ///   with the error's description, a `messageParked` event is reported, and processing goes on. A message that
    ///   cannot be used at all (refused by `authenticator`, malformed, or whose payload does not decode as `Info`) is
    ///   parked at once, with the reason. See ``deadLetters(channel:limit:)`` and ``redrive(_:)``.
    /// - Messages are decoded exactly as a relay forwarding `handle` decodes them (same authenticator, wire format
    ///   and conversion chain); they do not go through a `NotificationCenter`, and need no relay: a transport that
    ///   no relay started can process.
    /// - The position is a row of its own in the `consumers` table (the consumer name plus `/processing`, a name no
    ///   relay's consumer can have), apart from the position of a relay forwarding the same handle. The first call for
    ///   a consumer starts at the oldest stored message (``DurableProcessingOptions/startsAtOldestStored``).
    /// - Several processes under one consumer name: in channel order (concurrency 1, no `partitionKey`) one process
    ///   at a time works, another waits as a standby (the event kind `consumerStandby`) and takes over
    ///   (`consumerTakenOver`) when the first one's session ends. With a `partitionKey` or a concurrency above 1, they
    ///   form a consumer group: the channel is split into ``DurableProcessingOptions/partitionCount`` partitions
    ///   (by the key's hash, or by message without a key), each with its own position row and lock, and each process
    ///   holds about its share; a process that joins takes a share, one that leaves or dies has its share taken over
    ///   (within a ``Configuration/pollInterval`` after its session ends, see
    ///   ``DurableProcessingOptions/sessionTimeout``). A key's messages stay in order, on one process at a time.
    /// - Messages deleted by the retention (``Configuration/retentionAge``) before this consumer read them are
    ///   reported with the event kind `messagesMissed` (a ``PostgresTransportError/Kind/behindRetention``), once per
    ///   retention horizon, as a relay's reader reports them.
    /// - It reads one page (``Configuration/pageSize``) ahead at most, so memory stays bounded whatever the backlog.
    ///
    /// It runs on a connection of its own until its task is cancelled (then it stops handing out messages, waits for
    /// the running handlers, stores the position and returns) or the transport is stopped; it reconnects after a lost
    /// connection, reporting `connectionLost` and `reconnected`. Events go to the relay's `onEvent:` (when a relay
    /// started the transport) and to `onEvent`.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - options: Attempts, concurrency, backoff.
    ///   - partitionKey: With ``DurableProcessingOptions/maximumConcurrency`` above 1, a key per payload (an order
    ///     id, say): messages of one key are handled one at a time, in order; messages of different keys at once.
    ///   - authenticator: The authenticator of the relays that post these messages, if they have one.
    ///   - onEvent: Called with every event of processing: `messageParked`, connection events.
    ///   - handler: Called with each message; return to acknowledge it, throw to have it retried.
    /// - Throws: ``DurableProcessingError`` of kind ``DurableProcessingError/Kind/alreadyProcessing`` when this
    ///   transport already processes `handle`'s channel; ``PostgresTransportError`` of kind
    ///   ``PostgresTransportError/Kind/invalidConfiguration`` for an option out of its range,
    ///   ``PostgresTransportError/Kind/invalidChannelName`` for a handle whose channel cannot be stored (a NUL
    ///   character), and ``PostgresTransportError/Kind/transportStopped`` when the transport is stopped (its relay
    ///   released, say) while this runs.
    public func process<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        authenticator: (any NotificationMessageAuthenticator)? = nil,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)? = nil,
        _ handler: @escaping @Sendable (DurableDelivery<Info>) async throws -> Void
    ) async throws {
        try await runProcessor(
            try DurableProcessor(
                transport: self, handle: handle, options: options, partitionKey: partitionKey,
                authenticator: authenticator, onEvent: onEvent, body: .plain(handler)))
    }

    /// Processes every message stored for `handle` inside a transaction per message: `handler` gets a connection in
    /// an open transaction, and the acknowledgement is written in that transaction before it commits, so the
    /// handler's writes and the acknowledgement are stored together or not at all: each message's effect exactly
    /// once, whatever crashes, with no idempotency table of yours.
    ///
    /// ```swift
    /// try await transport.processTransactionally(orderPlaced) { delivery, connection in
    ///     try await connection.query(
    ///         "INSERT INTO invoices (order_id, amount) VALUES (\(delivery.payload.orderID), \(delivery.payload.total))",
    ///         logger: logger)
    /// }
    /// ```
    ///
    /// Everything else is as ``process(_:options:partitionKey:authenticator:onEvent:_:)``: retries, dead letters,
    /// concurrency (one connection per running handler, on ``Configuration/connection``). A handler that throws
    /// rolls its transaction back. Writes of the handler outside that connection (a call to another service) are
    /// not covered: they happen at least once.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - options: Attempts, concurrency, backoff.
    ///   - partitionKey: A key per payload to keep the order per key with concurrency.
    ///   - authenticator: The authenticator of the relays that post these messages, if they have one.
    ///   - onEvent: Called with every event of processing.
    ///   - handler: Called with each message and the connection of its transaction.
    /// - Throws: ``DurableProcessingError`` of kind ``DurableProcessingError/Kind/alreadyProcessing`` when this
    ///   transport already processes `handle`'s channel; ``PostgresTransportError`` of kind
    ///   ``PostgresTransportError/Kind/invalidConfiguration`` for an option out of its range,
    ///   ``PostgresTransportError/Kind/invalidChannelName`` for a handle whose channel cannot be stored (a NUL
    ///   character), and ``PostgresTransportError/Kind/transportStopped`` when the transport is stopped (its relay
    ///   released, say) while this runs.
    public func processTransactionally<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        authenticator: (any NotificationMessageAuthenticator)? = nil,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)? = nil,
        _ handler: @escaping @Sendable (DurableDelivery<Info>, PostgresConnection) async throws -> Void
    ) async throws {
        try await runProcessor(
            try DurableProcessor(
                transport: self, handle: handle, options: options, partitionKey: partitionKey,
                authenticator: authenticator, onEvent: onEvent, body: .transactional(handler)))
    }

    /// Processes the messages stored for `handle` in batches, each batch in one transaction: `handler` gets up to
    /// `maximumBatchSize` deliveries, in order, and a connection in an open transaction, and every delivery is
    /// acknowledged in that transaction before it commits. Each message's effect happens exactly once, as with
    /// ``processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``, for one commit per batch instead
    /// of one per message.
    ///
    /// ```swift
    /// try await transport.processTransactionally(orderPlaced, maximumBatchSize: 100) { deliveries, connection in
    ///     for delivery in deliveries {
    ///         try await connection.query(
    ///             "INSERT INTO invoices (order_id) VALUES (\(delivery.payload.orderID))", logger: logger)
    ///     }
    /// }
    /// ```
    ///
    /// - A batch holds the next messages that may start, in channel order: with a `partitionKey`, the messages of
    ///   one key stay in order (in one batch, or in batches one after the other), never in two transactions at
    ///   once; with ``DurableProcessingOptions/maximumConcurrency`` above 1, that many batches run at once. A batch
    ///   is handed out with what has been read, so under a light load it holds a message or two.
    /// - A batch whose handler throws is rolled back and split in two halves, handled in order, until the failing
    ///   message is alone: it is then retried and parked as one message is (``DurableProcessingOptions``); the
    ///   others of its batch are processed, and their failed batches do not count as attempts.
    /// - Each message's start is counted before its batch runs: after a process ended during a batch, its messages
    ///   are handled one at a time, so that a message that ends the process is parked after
    ///   ``DurableProcessingOptions/maximumAttempts`` starts, as with one message per transaction.
    /// - Re-driven dead letters and messages that cannot be used are handled alone, at their place.
    /// - ``DurableProcessingOptions/handlerTimeout`` and the stall threshold apply to a batch's call.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - maximumBatchSize: The most messages in one transaction, 1 to 10,000.
    ///   - options: Attempts, concurrency (batches at once), backoff.
    ///   - partitionKey: A key per payload to keep the order per key with concurrency.
    ///   - authenticator: The authenticator of the relays that post these messages, if they have one.
    ///   - onEvent: Called with every event of processing.
    ///   - handler: Called with each batch, in order, and the connection of its transaction; return to commit the
    ///     writes with the acknowledgements, throw to roll the batch back.
    /// - Throws: As ``processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``;
    ///   ``PostgresTransportError/Kind/invalidConfiguration`` for a `maximumBatchSize` out of its range.
    public func processTransactionally<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        maximumBatchSize: Int,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        authenticator: (any NotificationMessageAuthenticator)? = nil,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)? = nil,
        _ handler: @escaping @Sendable ([DurableDelivery<Info>], PostgresConnection) async throws -> Void
    ) async throws {
        try PostgresConfigurationCheck(prefix: "").count("maximumBatchSize", maximumBatchSize, in: 1...10_000)
        try await runProcessor(
            try DurableProcessor(
                transport: self, handle: handle, options: options, partitionKey: partitionKey,
                authenticator: authenticator, onEvent: onEvent, body: .batch(maximum: maximumBatchSize, handler)))
    }

    private func runProcessor<Info>(_ processor: DurableProcessor<Info>) async throws {
        let key = DurableProcessingClaims.Key(transport: ObjectIdentifier(self), channel: processor.channel)
        guard DurableProcessingClaims.shared.claim(key) else {
            throw DurableProcessingError(kind: .alreadyProcessing, id: nil, channel: processor.channel)
        }
        defer { DurableProcessingClaims.shared.release(key) }
        processingMonitors.add(processor.monitor)
        defer { processingMonitors.remove(processor.monitor) }
        await processor.run()
        if isStopped && !Task.isCancelled {
            // Stopped under the processor (a relay released by the app stops its transport): say so, loudly.
            let error = PostgresTransportError(kind: .transportStopped)
            logger.error(
                "\(error)",
                metadata: ["notificatable.channel": "\(processor.channel)", "notificatable.error": "\(error.kind)"])
            throw error
        }
    }
}

/// One message parked by a consumer: it failed every attempt, or could not be used at all.
///
/// ```swift
/// for letter in try await transport.deadLetters() {
///     print(letter.id, letter.error)
///     try await transport.redrive(letter)
/// }
/// ```
public struct DurableDeadLetter: Sendable {
    /// The consumer that parked it (``DurablePostgresNotificationTransport/Configuration/consumer``).
    public let consumer: String
    /// The channel it was stored on.
    public let channel: String
    /// Where it was stored in the outbox.
    public let id: DurableDeliveryID
    /// The stored message, exactly as in the outbox (sealed, if the relays authenticate).
    public let message: String
    /// The description of the last error.
    public let error: String
    /// How many times the handler was called (0 for a message that could not be used at all).
    public let attempts: Int
    /// When it was parked.
    public let parkedAt: Date
    /// Whether a re-drive was asked for and has not happened yet.
    public let redriveRequested: Bool
}

/// The channels each transport processes now, so that a second `process` of one channel fails at once instead of
/// waiting as a standby of itself.
final class DurableProcessingClaims: @unchecked Sendable {
    struct Key: Hashable {
        var transport: ObjectIdentifier
        var channel: String
    }

    static let shared = DurableProcessingClaims()
    private let lock = NSLock()
    private var claimed: Set<Key> = []

    func claim(_ key: Key) -> Bool { lock.withLock { claimed.insert(key).inserted } }

    func release(_ key: Key) { _ = lock.withLock { claimed.remove(key) } }
}
