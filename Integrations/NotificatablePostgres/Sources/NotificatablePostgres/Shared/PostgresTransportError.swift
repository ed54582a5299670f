import Foundation
import PostgresNIO

/// An error that ``PostgresNotificationTransport`` reports in a `NotificationTransportEvent`.
///
/// ```swift
/// let relay = NotificationRelay(transport: transport, onEvent: { event in
///     if let error = event.error as? PostgresTransportError, error.kind == .payloadTooLarge { … }
/// })
/// ```
public struct PostgresTransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. New kinds may be added; compare with `==` rather than switching exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The message is larger than the transport's ``PostgresNotificationTransport/Configuration/maximumPayloadSize``.
        /// It was not sent, nor truncated.
        public static let payloadTooLarge = Kind("payloadTooLarge")
        /// The message is not text that PostgreSQL can carry: not UTF-8, or it holds a NUL byte. It was not sent.
        public static let payloadNotText = Kind("payloadNotText")
        /// More messages were waiting to be sent than ``PostgresNotificationTransport/Configuration/maximumQueuedMessages``
        /// (the server has been unreachable for a while). The message was not sent.
        public static let queueFull = Kind("queueFull")
        /// The server refused `pg_notify` (or, for a ``DurablePostgresNotificationTransport``, refused to store the
        /// message because of the message itself: SQLSTATE classes 22, 23 and 54);
        /// ``PostgresTransportError/serverMessage`` says why. The message was not sent.
        public static let serverRefused = Kind("serverRefused")
        /// The connection was lost while the message was being sent: it may or may not have reached the server.
        public static let connectionLostWhileSending = Kind("connectionLostWhileSending")
        /// Connecting to the server failed; the transport keeps trying, with backoff.
        public static let connectFailed = Kind("connectFailed")
        /// The connection was lost; the transport reconnects with backoff and listens again.
        public static let connectionLost = Kind("connectionLost")
        /// No connection came from the application's `PostgresClient` within the lease timeout
        /// (``DurablePostgresNotificationTransport/Configuration/leaseTimeout``,
        /// ``PostgresNotificationTransport/Configuration/leaseTimeout``): the request was given up and is made again
        /// after the backoff. ``PostgresTransportError/role`` says which connection waits (`writer`, `reader`,
        /// `processor`, `sender`…), ``PostgresTransportError/seconds`` how long it has waited in all. Reported with
        /// the event kind `transportError` at severity `warning`, at every timeout, until a connection comes. The
        /// client is not running yet, has stopped, cannot reach the server, or its pool is exhausted
        /// (`maximumConnections`).
        public static let connectionWaiting = Kind("connectionWaiting")
        /// The application's `PostgresClient` has stopped (a client runs once): the transport cannot connect again,
        /// so it stops too, and whatever it had queued and not stored is lost (a flush returns it as not stored);
        /// positions not yet saved are delivered again to the next process of the consumer name. In a
        /// `ServiceGroup`, list the client **before** the notification service: services stop in reverse order, so
        /// the service then stops (flushes, saves) while the client still runs. Reported with the event kind
        /// `transportError` (severity `error`), once per connection role (``PostgresTransportError/role``).
        public static let clientStopped = Kind("clientStopped")
        /// A ``DurablePostgresNotificationTransport`` consumer is behind the retention: messages it had not yet
        /// received were deleted because they were older than
        /// ``DurablePostgresNotificationTransport/Configuration/retentionAge``. Reported with the event kind
        /// `messagesMissed`, once per channel and deletion; the consumer goes on with what is still stored.
        public static let behindRetention = Kind("behindRetention")
        /// A ``DurablePostgresNotificationTransport`` could not create its tables, or read or save its position;
        /// ``PostgresTransportError/serverMessage`` says why. It retries after reconnecting, with backoff.
        public static let storageFailed = Kind("storageFailed")
        /// A ``DurablePostgresNotificationTransport``'s insert was refused for a reason that can pass: the server is
        /// read-only (after a failover, SQLSTATE 25006), a lock timed out (55P03), the disk is full (53100), the
        /// table or a privilege is missing (class 42), and the like (``PostgresTransportError/serverMessage`` says
        /// which). Nothing is dropped: the messages stay queued, in order, and the insert is tried again with
        /// backoff (``DurablePostgresNotificationTransport/Configuration/initialReconnectDelay`` doubling up to
        /// ``DurablePostgresNotificationTransport/Configuration/maximumReconnectDelay``); new messages are refused
        /// with ``queueFull`` once ``DurablePostgresNotificationTransport/Configuration/maximumQueuedMessages`` wait.
        /// Reported with the event kind `transportError`, once per run of refusals.
        public static let insertRetrying = Kind("insertRetrying")
        /// The server's notification queue (one for the whole server, 8 GB) is at least
        /// ``PostgresNotificationTransport/Configuration/notificationQueueUsageThreshold`` full
        /// (``PostgresTransportError/queueUsage``): some session listens but does not read (a stalled process, a
        /// transaction left open). When the queue is full, every `NOTIFY` of the database fails. Reported once when
        /// the usage reaches the threshold, then ``notificationQueueBelowThreshold`` when it falls back under it.
        public static let notificationQueueFilling = Kind("notificationQueueFilling")
        /// The server's notification queue is under the threshold again, after ``notificationQueueFilling``.
        public static let notificationQueueBelowThreshold = Kind("notificationQueueBelowThreshold")
        /// Received messages waiting for the relay reached
        /// ``PostgresNotificationTransport/Configuration/maximumReceiveBufferBytes``: a subscriber is slower than the
        /// traffic. The transport keeps reading the connection and drops what arrives until the relay has caught up,
        /// then reports ``messagesDropped`` with the count.
        public static let receiveBufferFull = Kind("receiveBufferFull")
        /// Received messages were dropped because the receive buffer was full (``PostgresTransportError/count`` of
        /// them); reported when the relay has caught up, after ``receiveBufferFull``.
        public static let messagesDropped = Kind("messagesDropped")

        /// Another session holds this ``DurablePostgresNotificationTransport``'s consumer name (another process
        /// runs under the same ``DurablePostgresNotificationTransport/Configuration/consumer``): this transport waits
        /// as a standby, receiving nothing, and takes over when that session ends. It still publishes meanwhile.
        /// ``PostgresTransportError/count`` is the holding session's backend pid. Reported with the event kind
        /// `consumerStandby` (severity `notice`), once per wait.
        public static let consumerInUse = Kind("consumerInUse")
        /// The consumer name this transport waited for (after ``consumerInUse``) is free: it holds it now and
        /// receives from the stored positions. Reported with the event kind `consumerTakenOver` (severity `notice`).
        public static let consumerTakenOver = Kind("consumerTakenOver")

        /// Delivery of a ``DurablePostgresNotificationTransport`` is held back by a transaction that has written and
        /// stays open (``PostgresTransportError/backendPID`` is its session, ``PostgresTransportError/seconds`` how
        /// long it has been open): committed messages wait until it ends. Reported with the event kind
        /// `transportError` at severity `warning`, once per such transaction, when it has been open for longer than
        /// ``DurablePostgresNotificationTransport/Configuration/stallThreshold``. End it, or set the server's
        /// `idle_in_transaction_session_timeout`.
        public static let deliveryStalled = Kind("deliveryStalled")

        /// The outbox table does not exist (or the role cannot see it): thrown by
        /// ``DurableNotificationPublisher/checkSchema()``, and by ``DurableNotificationPublisher/ready()`` when the
        /// publisher is not allowed to create it (``DurableNotificationPublisher/Configuration/createsSchema`` false).
        /// Create it with ``DurableNotificationPublisher/prepareSchema()``, a running
        /// ``DurablePostgresNotificationTransport``, or `notificatable-pg schema migrate`.
        public static let schemaMissing = Kind("schemaMissing")
        /// The outbox's tables are at another schema version than this release reads and writes:
        /// ``PostgresTransportError/foundSchemaVersion`` is the schema's (0: created before versions were recorded),
        /// ``PostgresTransportError/expectedSchemaVersion`` this release's. An older schema is migrated when the
        /// process may create the schema (``DurablePostgresNotificationTransport/Configuration/createsSchema``, on by
        /// default), and refused otherwise: migrate it with `notificatable-pg schema migrate` (or
        /// ``PostgresNotificationAdministration/migrateSchema()``). A newer one is always refused: a newer release
        /// migrated it. The transport reports it with the event kind `transportError` and tries again after the
        /// backoff, so it starts once the schema is migrated; ``DurableNotificationPublisher/ready()`` throws it.
        public static let schemaVersionMismatch = Kind("schemaVersionMismatch")

        /// A configuration value is out of its range (a page size below 1, a negative or absurd duration, a consumer
        /// name the tables cannot tell apart from another one …): ``PostgresTransportError/setting`` names it,
        /// ``PostgresTransportError/value`` is what was given. Thrown when the transport, the service or a `process`
        /// call is created, never later; nothing is clamped silently.
        public static let invalidConfiguration = Kind("invalidConfiguration")
        /// A channel name the database cannot store (it contains a NUL character): refused when it is registered
        /// (a relay forwarding its handle, or `process`), reported with the event kind `transportError` (or thrown by
        /// `process`); the consumer's other channels go on.
        public static let invalidChannelName = Kind("invalidChannelName")
        /// The transport was stopped (``DurablePostgresNotificationTransport/stop()``: by hand, or by a
        /// `NotificationRelay` that was released or stopped) while something still used it: `process` throws it
        /// rather than return as if it had finished, and it is logged at `error`.
        public static let transportStopped = Kind("transportStopped")

        /// The name of the kind, such as `payloadTooLarge`.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The message's size in bytes, for ``Kind/payloadTooLarge``.
    public let size: Int?
    /// The limit in bytes, for ``Kind/payloadTooLarge`` and ``Kind/receiveBufferFull``, or the queue's capacity,
    /// for ``Kind/queueFull``.
    public let limit: Int?
    /// How many messages, for ``Kind/messagesDropped``; the holding session's backend pid, for ``Kind/consumerInUse``
    /// (also in ``backendPID``).
    public let count: Int?
    /// The server session concerned (its backend pid, as in `pg_stat_activity.pid`): the session holding the
    /// consumer name, for ``Kind/consumerInUse``.
    public let backendPID: Int?
    /// How long, in seconds: for ``Kind/deliveryStalled``, how long the transaction holding delivery back has been
    /// open; for ``Kind/connectionWaiting``, how long the connection has been waited for.
    public let seconds: Double?
    /// Which of the transport's connections the error concerns (`writer`, `reader`, `processor`, `sender`…), for
    /// ``Kind/connectionWaiting``.
    public let role: String?
    /// The fraction of the server's notification queue in use (0 to 1, `pg_notification_queue_usage()`), for
    /// ``Kind/notificationQueueFilling`` and ``Kind/notificationQueueBelowThreshold``.
    public let queueUsage: Double?
    /// The threshold it was compared with, for the same kinds.
    public let queueUsageThreshold: Double?
    /// The outbox's schema, quoted as an identifier, for ``Kind/schemaMissing`` and ``Kind/schemaVersionMismatch``.
    public let schema: String?
    /// The schema version found in the database (0: created before versions were recorded), for
    /// ``Kind/schemaVersionMismatch``.
    public let foundSchemaVersion: Int?
    /// The schema version this release reads and writes, for ``Kind/schemaVersionMismatch``.
    public let expectedSchemaVersion: Int?
    /// What the server said, when it refused a statement: its message and SQLSTATE code.
    public let serverMessage: String?
    /// The configuration value concerned, for ``Kind/invalidConfiguration``, such as `pageSize` or
    /// `DurableProcessingOptions.maximumAttempts`.
    public let setting: String?
    /// The value given, as text, for ``Kind/invalidConfiguration``; the channel name (its Swift literal form), for
    /// ``Kind/invalidChannelName``.
    public let value: String?
    /// What the value must be, for ``Kind/invalidConfiguration``, such as `at least 1`.
    public let requirement: String?
    /// The underlying error from PostgresNIO, if any.
    public let underlying: (any Error)?

    init(
        kind: Kind, size: Int? = nil, limit: Int? = nil, count: Int? = nil, queueUsage: Double? = nil,
        queueUsageThreshold: Double? = nil, serverMessage: String? = nil, underlying: (any Error)? = nil,
        backendPID: Int? = nil, seconds: Double? = nil, schema: String? = nil, role: String? = nil,
        setting: String? = nil, value: String? = nil, requirement: String? = nil, foundSchemaVersion: Int? = nil,
        expectedSchemaVersion: Int? = nil
    ) {
        self.foundSchemaVersion = foundSchemaVersion
        self.expectedSchemaVersion = expectedSchemaVersion
        self.setting = setting
        self.value = value
        self.requirement = requirement
        self.seconds = seconds
        self.role = role
        self.schema = schema
        self.kind = kind
        self.size = size
        self.limit = limit
        self.count = count
        self.backendPID = backendPID
        self.queueUsage = queueUsage
        self.queueUsageThreshold = queueUsageThreshold
        self.serverMessage = serverMessage
        self.underlying = underlying
    }

    /// Wraps an error thrown by PostgresNIO, keeping the server's message where there is one. One of ours is not
    /// nested in the new one (its sentence would repeat): its server message and underlying error are taken over.
    init(kind: Kind, wrapping error: any Error) {
        if let error = error as? PostgresTransportError {
            self.init(kind: kind, serverMessage: error.serverMessage, underlying: error.underlying)
        } else {
            self.init(kind: kind, serverMessage: Self.serverMessage(of: error), underlying: error)
        }
    }

    /// The server's message and SQLSTATE, such as `payload string too long (SQLSTATE 22023)`.
    static func serverMessage(of error: any Error) -> String? {
        guard let error = error as? PSQLError, let info = error.serverInfo, let message = info[.message] else {
            return nil
        }
        return info[.sqlState].map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// A sentence that says what went wrong.
    public var description: String {
        switch kind {
        case .payloadTooLarge:
            return "The message is \(size ?? 0) bytes, over the transport's limit of \(limit ?? 0) bytes; "
                + "it was not sent (nothing is ever truncated)."
        case .payloadNotText:
            return "The message is not UTF-8 text without NUL bytes, which a NOTIFY payload must be; it was not sent."
        case .queueFull:
            return "\(limit ?? 0) messages are already waiting for the server; this one was not sent."
        case .serverRefused:
            return "The server refused the message\(because); it was not sent (nor stored)."
        case .connectionLostWhileSending:
            return "The connection was lost while sending\(because); the message may or may not have been delivered."
        case .behindRetention:
            return "Messages this consumer had not received yet were deleted by the retention (older than its age "
                + "limit); they will not be delivered."
        case .insertRetrying:
            return "The server refused to store messages for a reason that can pass\(because); they stay queued "
                + "and are tried again with backoff."
        case .storageFailed:
            return "The outbox tables could not be used\(because); retrying after reconnecting."
        case .notificationQueueFilling:
            return "The server's notification queue is \(percent(queueUsage)) full (threshold "
                + "\(percent(queueUsageThreshold))): a session listens but does not read; when the queue is full, "
                + "every NOTIFY in the database fails."
        case .notificationQueueBelowThreshold:
            return "The server's notification queue is \(percent(queueUsage)) full, under the threshold of "
                + "\(percent(queueUsageThreshold)) again."
        case .receiveBufferFull:
            return "Received messages waiting for the relay reached \(limit ?? 0) bytes: a subscriber is slower than "
                + "the traffic; messages are dropped until it catches up."
        case .messagesDropped:
            return "\(count ?? 0) received message\(count == 1 ? " was" : "s were") dropped while the receive buffer "
                + "was full."
        case .consumerInUse:
            return
                "Another session (backend pid \(backendPID ?? count ?? 0)) receives under this consumer name; this transport "
                + "waits as a standby and takes over when that session ends."
        case .deliveryStalled:
            return "Delivery is held back by a transaction open for \(Int(seconds ?? 0)) s (backend pid "
                + "\(backendPID ?? 0)): it has written and not ended, so messages committed after it began wait."
        case .consumerTakenOver:
            return "The consumer name is free again; this transport now receives under it, from the stored positions."
        case .schemaMissing:
            return "The outbox table \(schema ?? "?").outbox does not exist (or this role cannot see it): create it "
                + "with prepareSchema(), a running durable transport, or `notificatable-pg schema migrate`."
        case .schemaVersionMismatch:
            let found = foundSchemaVersion ?? 0
            let expected = expectedSchemaVersion ?? 0
            let named = "The outbox schema \(schema ?? "?") is at version \(found)"
            if found > expected {
                return named + ", newer than version \(expected) that this release knows: a newer release migrated "
                    + "it; run that release (schemas are not migrated down)."
            }
            return named + (found == 0 ? " (created before versions were recorded)" : "")
                + ", older than version \(expected) that this release needs: migrate it with "
                + "`notificatable-pg schema migrate` (or let a process with createsSchema on do it)."
        case .connectFailed:
            return "Could not connect to PostgreSQL\(because); retrying with backoff."
        case .clientStopped:
            return "The PostgresClient has stopped, so the \(role ?? "transport")'s connection cannot be had again: "
                + "the transport stops (in a ServiceGroup, list the client before the notification service)."
        case .connectionWaiting:
            return "The \(role ?? "transport")'s connection has been waited for \(Int((seconds ?? 0).rounded())) s: "
                + "the PostgresClient gave none within the lease timeout; asking again with backoff."
        case .invalidConfiguration:
            return "The configuration value \(setting ?? "?") is \(value ?? "?"); it must be \(requirement ?? "valid")."
        case .invalidChannelName:
            return "The channel name \(value ?? "?") cannot be stored (PostgreSQL text holds no NUL character); it "
                + "was refused, and the consumer's other channels go on."
        case .transportStopped:
            return "The transport was stopped (stop() was called, or the NotificationRelay that started it was "
                + "released or stopped) while it was still used; keep the relay, or the service, for as long as "
                + "anything processes through the transport."
        default:
            return "The connection to PostgreSQL was lost\(because); reconnecting."
        }
    }

    private func percent(_ fraction: Double?) -> String {
        guard let fraction else { return "?" }
        return String(format: "%.3g %%", fraction * 100)
    }

    /// ` (what the server said)`, or ` (the underlying error)`, or nothing: the reason inside a sentence.
    private var because: String {
        let reason: String
        if let serverMessage {
            reason = serverMessage
        } else if let error = underlying as? PSQLError {
            reason = "PSQLError \(error.code)"
        } else if let underlying {
            reason = String(describing: underlying)
        } else {
            return ""
        }
        var trimmed = Substring(reason)
        while let last = trimmed.last, last == "." || last == " " { trimmed = trimmed.dropLast() }
        return trimmed.isEmpty ? "" : " (\(trimmed))"
    }
}
