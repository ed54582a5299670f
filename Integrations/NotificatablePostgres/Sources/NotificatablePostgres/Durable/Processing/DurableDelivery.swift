import Foundation
import NotificatableRelay
import PostgresNIO

/// Where a message is stored in the outbox: the inserting transaction's id and the row's id. The same on every
/// delivery of the message (after a retry, a crash, a re-drive), so a handler can use it to be idempotent.
///
/// ```swift
/// try await transport.process(orderPlaced) { delivery in
///     try await billing.charge(delivery.payload, idempotencyKey: delivery.id.description)
/// }
/// ```
public struct DurableDeliveryID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id of the transaction that stored the message (the outbox row's `txid`).
    public let transactionID: Int64
    /// The outbox row's `id`.
    public let rowID: Int64

    /// Creates an id from the outbox row's `txid` and `id`.
    ///
    /// - Parameters:
    ///   - transactionID: The row's `txid`.
    ///   - rowID: The row's `id`.
    public init(transactionID: Int64, rowID: Int64) {
        self.transactionID = transactionID
        self.rowID = rowID
    }

    init(_ position: DurablePostgresNotificationTransport.Position) {
        self.init(transactionID: position.txid, rowID: position.id)
    }

    var position: DurablePostgresNotificationTransport.Position { .init(txid: transactionID, id: rowID) }

    /// Delivery order: by transaction id, then row id.
    ///
    /// - Parameters:
    ///   - lhs: One id.
    ///   - rhs: Another id.
    /// - Returns: Whether `lhs` is delivered before `rhs`.
    public static func < (lhs: DurableDeliveryID, rhs: DurableDeliveryID) -> Bool {
        (lhs.transactionID, lhs.rowID) < (rhs.transactionID, rhs.rowID)
    }

    /// `TXID:ID`, such as `1234:56`.
    public var description: String { "\(transactionID):\(rowID)" }
}

/// One message handed to the handler of ``DurablePostgresNotificationTransport/process(_:options:partitionKey:authenticator:onEvent:_:)``:
/// the typed payload, where it is stored, and which attempt this is.
///
/// ```swift
/// try await transport.process(orderPlaced) { delivery in
///     logger.info("order \(delivery.payload.orderID), attempt \(delivery.attempt), id \(delivery.id)")
///     try await billing.charge(delivery.payload)
/// }
/// ```
public struct DurableDelivery<Info: Sendable>: Sendable {
    /// The payload, decoded through the handle's conversion chain, as a relay would post it.
    public let payload: Info
    /// Where the message is stored: the same on every delivery of it.
    public let id: DurableDeliveryID
    /// 1 for the first call of the handler with this message, 2 for the first retry, and so on, counted in the
    /// database, so across restarts too (a process that ended during a call counted it). It starts at 1 again for a
    /// re-driven dead letter.
    public let attempt: Int
    /// The channel the message was stored on.
    public let channel: String
    /// The notification's name.
    public let name: Notification.Name
    /// The sending relay's id (a fresh one per transactional post), and its sequence number: together they identify
    /// a post even when a writer re-inserted it after losing its connection (then the copy has another ``id``).
    public let sender: String
    /// The sender's sequence number for this name.
    public let sequence: Int
    /// Whether this is a dead letter re-driven (``DurablePostgresNotificationTransport/redrive(_:)``).
    public let isRedriven: Bool

    let acknowledgement: DurableAcknowledgement

    /// Acknowledges the message inside the caller's transaction on `connection`: it counts as processed if and
    /// only if that transaction commits, so the handler's writes in the same transaction happen exactly once.
    ///
    /// ```swift
    /// try await transport.process(orderPlaced) { delivery in
    ///     try await connection.withTransaction(logger: logger) { connection in
    ///         try await connection.query("INSERT INTO invoices (order_id) VALUES (\(delivery.payload.orderID))",
    ///                                    logger: logger)
    ///         try await delivery.acknowledge(in: connection)
    ///     }
    /// }
    /// ```
    ///
    /// ``DurablePostgresNotificationTransport/processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``
    /// does this for you. The connection must reach the outbox's database; the statement names the schema in full.
    ///
    /// - Parameter connection: A connection inside the caller's transaction.
    /// - Throws: A ``DurableProcessingError`` of kind ``DurableProcessingError/Kind/alreadyAcknowledged`` when the
    ///   message was acknowledged by another transaction already (then let the transaction roll back); PostgresNIO's
    ///   error if the statement fails (which aborts the transaction).
    public func acknowledge(in connection: PostgresConnection) async throws {
        try await acknowledgement.acknowledge(in: connection)
    }

    /// Runs `body` in a transaction on a connection leased from `client`, and acknowledges the message in that
    /// transaction before it commits: `body`'s writes and the acknowledgement are stored together or not at all.
    ///
    /// ```swift
    /// try await transport.process(orderPlaced) { delivery in
    ///     try await delivery.withTransaction(on: client, logger: logger) { connection in
    ///         try await connection.query("INSERT INTO invoices (order_id) VALUES (\(delivery.payload.orderID))",
    ///                                    logger: logger)
    ///     }
    /// }
    /// ```
    ///
    /// Unlike `client.withTransaction` with ``acknowledge(in:)`` inside, the errors arrive as they were thrown, not
    /// wrapped in PostgresNIO's `PostgresTransactionError`: `body`'s own error, a ``DurableProcessingError`` of kind
    /// ``DurableProcessingError/Kind/alreadyAcknowledged`` when another transaction acknowledged the message first,
    /// or the error of `BEGIN` or `COMMIT`. The transaction is rolled back on any of them. If `body` acknowledges
    /// itself, the message is not acknowledged twice.
    ///
    /// - Parameters:
    ///   - client: The client to lease the connection from; it must reach the outbox's database.
    ///   - logger: The logger for the transaction's statements.
    ///   - body: The work to store together with the acknowledgement.
    /// - Returns: What `body` returns.
    /// - Throws: `body`'s error, ``DurableProcessingError``, or PostgresNIO's error for `BEGIN` or `COMMIT`.
    public func withTransaction<Result: Sendable>(
        on client: PostgresClient, logger: Logger,
        _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            do {
                return try await acknowledgement.inTransaction(on: connection, logger: logger, body)
            } catch let error as PostgresTransactionError {
                throw error.closureError ?? error.beginError ?? error.commitError ?? error
            }
        }
    }
}

/// How one delivery is acknowledged inside a transaction of the handler's, and whether the handler tried to.
final class DurableAcknowledgement: @unchecked Sendable {
    let schema: DurableOutboxSchema
    let consumer: String
    let channel: String
    let id: DurableDeliveryID
    let redriven: Bool
    let logger: Logger
    private let lock = NSLock()
    private var attemptedStorage = false
    private var callsStorage = 0

    init(
        schema: DurableOutboxSchema, consumer: String, channel: String, id: DurableDeliveryID, redriven: Bool,
        logger: Logger
    ) {
        self.schema = schema
        self.consumer = consumer
        self.channel = channel
        self.id = id
        self.redriven = redriven
        self.logger = logger
    }

    /// Whether ``acknowledge(in:)`` was called: then whether it counted depends on the caller's commit.
    var attempted: Bool { lock.withLock { attemptedStorage } }
    /// How many times ``acknowledge(in:)`` was called, so that a transaction can tell whether its own body did.
    var acknowledgeCalls: Int { lock.withLock { callsStorage } }

    var bindings: PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(id.transactionID)
        bindings.append(id.rowID)
        return bindings
    }

    /// Runs `body` in a transaction on `connection`, acknowledges the message in it unless `body` did, and commits.
    /// Errors come in PostgresNIO's `PostgresTransactionError`.
    func inTransaction<Result>(
        on connection: PostgresConnection, logger: Logger,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await connection.withTransaction(logger: logger) { connection in
            let before = acknowledgeCalls
            let result = try await body(connection)
            if acknowledgeCalls == before { try await acknowledge(in: connection) }
            return result
        }
    }

    /// Notes that the message is acknowledged in a transaction of the caller's (a batch's one statement).
    func noteAttempted() { lock.withLock { attemptedStorage = true } }

    func acknowledge(in connection: PostgresConnection) async throws {
        lock.withLock {
            attemptedStorage = true
            callsStorage += 1
        }
        let sql = redriven ? schema.acknowledgeRedriven : schema.acknowledge
        let rows = try await connection.rows(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        if rows.isEmpty {
            throw DurableProcessingError(kind: .alreadyAcknowledged, id: id, channel: channel)
        }
    }
}

/// Why a message could not be processed: reported with the event kind `messageParked` when a message goes to the
/// dead letters, and thrown by ``DurableDelivery/acknowledge(in:)`` for a message acknowledged already.
///
/// ```swift
/// try await transport.process(orderPlaced, onEvent: { event in
///     if let error = event.error as? DurableProcessingError { logger.error("parked \(error.id!): \(error.reason)") }
/// }) { delivery in … }
/// ```
public struct DurableProcessingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. New kinds may be added; compare with `==` rather than switching exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The handler threw on every attempt (``DurableProcessingOptions/maximumAttempts``); ``reason`` is the last
        /// error's description. The message was parked.
        public static let handlerFailed = Kind("handlerFailed")
        /// The authenticator refused the message (no tag, an unknown key, a tag that does not match). Parked.
        public static let unauthenticated = Kind("unauthenticated")
        /// The message is not a relay message of a version this library reads, or is for another name. Parked.
        public static let malformed = Kind("malformed")
        /// The message's payload cannot be decoded as the handle's type; ``reason`` gives the coding path. Parked.
        public static let undecodable = Kind("undecodable")
        /// ``DurableDelivery/acknowledge(in:)`` found the message acknowledged by another transaction already.
        public static let alreadyAcknowledged = Kind("alreadyAcknowledged")
        /// `process` was called for a handle whose channel this transport already processes.
        public static let alreadyProcessing = Kind("alreadyProcessing")
        /// The handler ran for longer than ``DurableProcessingOptions/handlerTimeout``: its task was cancelled and
        /// the attempt counted as failed (the message is parked with this kind when it was the last attempt).
        public static let handlerTimedOut = Kind("handlerTimedOut")
        /// The handler was started ``DurableProcessingOptions/maximumAttempts`` times with the message and never
        /// returned nor threw: the process ended during each call (a crash, `exit`, a kill). Parked without another
        /// start, so that one message cannot stop a consumer by ending it again and again.
        public static let handlerDidNotReturn = Kind("handlerDidNotReturn")
        /// The handler has been running on the message for ``DurableProcessingError/seconds`` (past
        /// ``DurableProcessingOptions/handlerStallThreshold``), and still runs: reported with the event kind
        /// `handlerStalled`, once per call. Nothing was given up.
        public static let handlerStalled = Kind("handlerStalled")

        /// The name of the kind, such as `handlerFailed`.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The message concerned, if any.
    public let id: DurableDeliveryID?
    /// The channel concerned.
    public let channel: String?
    /// How many times the handler was called with the message (0 for a message that could not be used at all).
    public let attempts: Int
    /// The description of the error that caused it, as stored in the dead letter's `error` column.
    public let reason: String
    /// That error, if any.
    public let underlying: (any Error)?
    /// How long the handler had been running, in seconds, for ``Kind/handlerStalled`` and ``Kind/handlerTimedOut``.
    public let seconds: Double?

    init(
        kind: Kind, id: DurableDeliveryID?, channel: String?, attempts: Int = 0, reason: String = "",
        underlying: (any Error)? = nil, seconds: Double? = nil
    ) {
        self.seconds = seconds
        self.kind = kind
        self.id = id
        self.channel = channel
        self.attempts = attempts
        self.reason = reason
        self.underlying = underlying
    }

    /// A sentence that says what went wrong.
    public var description: String {
        let message = id.map { "message \($0)" } ?? "the message"
        switch kind {
        case .handlerFailed:
            return "The handler failed \(attempts) time\(attempts == 1 ? "" : "s") on \(message); parked: \(reason)"
        case .unauthenticated:
            return "The authenticator refused \(message); parked: \(reason)"
        case .malformed:
            return "\(message.prefix(1).uppercased() + message.dropFirst()) is not a message of this handle; parked: "
                + reason
        case .undecodable:
            return "The payload of \(message) cannot be decoded; parked: \(reason)"
        case .handlerTimedOut:
            return "The handler ran on \(message) for longer than its timeout of \(Int(seconds ?? 0)) s; cancelled"
                + (reason.isEmpty ? "." : ": \(reason)")
        case .handlerDidNotReturn:
            return "The handler was started \(attempts) time\(attempts == 1 ? "" : "s") on \(message) and never "
                + "returned (the process ended during each); parked: \(reason)"
        case .handlerStalled:
            return "The handler has been running on \(message) for \(Int(seconds ?? 0)) s (attempt \(attempts)); it "
                + "still runs."
        case .alreadyAcknowledged:
            return "\(message.prefix(1).uppercased() + message.dropFirst()) was acknowledged already, by another "
                + "transaction; roll this one back."
        default:
            return "This transport already processes channel \"\(channel ?? "")\"; call process once per handle."
        }
    }
}
