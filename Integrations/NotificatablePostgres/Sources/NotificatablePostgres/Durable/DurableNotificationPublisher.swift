import Foundation
import Logging
import Notificatable
import NotificatableRelay
import PostgresNIO
import Tracing

/// Posts typed notifications into the durable outbox inside the application's own transactions, with nothing else
/// running: no relay, no consumer name, no reader, no connection of its own. For a process that only publishes
/// (an API serving requests, a job), beside consumers that run a ``PostgresNotificationService`` or a
/// ``DurablePostgresNotificationTransport`` elsewhere.
///
/// ```swift
/// let publisher = DurableNotificationPublisher(client: client, configuration: .init(authenticator: authenticator))
/// try await publisher.ready()                      // waits for the client; creates the outbox if it is missing
/// try await client.withTransaction(logger: logger) { connection in
///     try await connection.query("UPDATE orders SET paid = true WHERE id = \(orderID)", logger: logger)
///     try await publisher.post(OrderPaid(orderID: orderID), on: orderPaid, in: connection)
/// }
/// ```
///
/// A post is an `INSERT` (and a `NOTIFY` that wakes the readers) on the caller's connection: it is delivered if and
/// only if the caller's transaction commits, in the same form as a relay's message (see
/// ``DurablePostgresNotificationTransport/post(_:on:in:authenticator:)``, which this shares). It takes the client's
/// connections only for ``ready()``, ``prepareSchema()``, ``checkSchema()`` and ``post(_:on:)`` (one pooled
/// connection for the call, handed back), and keeps no session state on them. The client must run (its `run()`,
/// or the client in the application's `ServiceGroup`): until it does, those calls wait.
public final class DurableNotificationPublisher: Sendable {
    /// Where the outbox is, how messages are sealed, and whether the publisher may create the tables.
    public struct Configuration: Sendable {
        /// The schema of the tables: `notificatable` by default, as the transport's. Quoted as an identifier.
        public var schema: String = "notificatable"
        /// What seals the messages: the same as the consumers' ``DurablePostgresNotificationTransport/Configuration/authenticator``.
        /// `nil` (the default): plain messages.
        public var authenticator: (any NotificationMessageAuthenticator)?
        /// Whether ``ready()`` creates the tables when they are missing, or migrates them to this release's schema
        /// version (true, the default), or only checks them and throws ``PostgresTransportError/Kind/schemaMissing``
        /// or ``PostgresTransportError/Kind/schemaVersionMismatch`` (false: a migration tool or
        /// `notificatable-pg schema migrate` owns them).
        public var createsSchema: Bool = true
        /// The largest message, in bytes, that is stored: 1 MiB (1,048,576) by default, as the transport's.
        public var maximumMessageSize: Int = 1_048_576
        /// The longest wait for a connection from the client, for ``post(_:on:)``, ``prepareSchema()`` and
        /// ``checkSchema()`` (posts inside your transaction use your connection): past it they throw a
        /// ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/connectionWaiting`` instead of waiting
        /// for as long as the database is away. Ten seconds by default.
        public var leaseTimeout: Duration = .seconds(10)
        /// Where the `publish <channel>` span of each post goes, and whose propagation carries the post's context
        /// in the message, so that a processor's span continues the trace (see the Operating article, *Tracing*).
        /// `nil` (the default): `InstrumentationSystem.tracer`, what the application bootstrapped, read at each
        /// post; with none bootstrapped, nothing is traced and messages carry no headers.
        public var tracer: (any Tracer)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - schema: The schema of the outbox tables.
        ///   - authenticator: What seals the messages, if the consumers authenticate them.
        public init(schema: String = "notificatable", authenticator: (any NotificationMessageAuthenticator)? = nil) {
            self.schema = schema
            self.authenticator = authenticator
        }
    }

    /// The configuration.
    public let configuration: Configuration
    let client: PostgresClient
    let schema: DurableOutboxSchema
    let logger: Logger
    var tracing: NotificationTracing { NotificationTracing(configured: configuration.tracer) }

    /// Creates a publisher over the application's client. It connects nowhere until it is used.
    ///
    /// - Parameters:
    ///   - client: The application's `PostgresClient`.
    ///   - configuration: The schema, the authenticator, whether it may create the tables.
    ///   - logger: Where the statements it runs log. `Logger(label: "NotificatablePostgres")` by default.
    public init(client: PostgresClient, configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.client = client
        self.configuration = configuration
        self.schema = DurableOutboxSchema(configuration.schema)
        self.logger = logger ?? Logger(label: "NotificatablePostgres")
    }

    // MARK: - Readiness

    /// Waits until the publisher can post: the client hands out a connection and the outbox exists at this
    /// release's schema version. With ``Configuration/createsSchema`` (the default) it creates or migrates the
    /// tables (``prepareSchema()``); without, it only checks them (``checkSchema()``).
    ///
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing`` or
    ///   ``PostgresTransportError/Kind/schemaVersionMismatch``; PostgresNIO's error when the client is closed or
    ///   the server refuses.
    public func ready() async throws {
        if configuration.createsSchema {
            try await prepareSchema()
        } else {
            try await checkSchema()
        }
    }

    /// Creates the schema and the outbox's tables if they do not exist, or migrates them to this release's schema
    /// version (the pending migrations in one transaction, under an advisory lock, so several processes may call
    /// it at once). The same tables as a ``DurablePostgresNotificationTransport`` creates.
    ///
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaVersionMismatch`` when the
    ///   schema is newer than this release; PostgresNIO's error when the client is closed or the server refuses (a
    ///   role without `CREATE`).
    public func prepareSchema() async throws {
        try await withConnection { connection in
            _ = try await DurableSchemaState.ensureCurrent(schema, migrating: true) { query in
                try await connection.rows(query, logger: logger)
            }
        }
    }

    /// Checks that the outbox table exists, this role can see it, and its schema version is this release's.
    ///
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaMissing`` when it does not
    ///   exist, ``PostgresTransportError/Kind/schemaVersionMismatch`` when it is at another version (migrate it
    ///   with `notificatable-pg schema migrate`); PostgresNIO's error when the client is closed.
    public func checkSchema() async throws {
        try await withConnection { connection in
            _ = try await DurableSchemaState.ensureCurrent(schema, migrating: false) { query in
                try await connection.rows(query, logger: logger)
            }
        }
    }

    // MARK: - Posting

    /// Stores a typed notification in the outbox inside the caller's transaction on `connection`: it is delivered
    /// if and only if that transaction commits.
    ///
    /// ```swift
    /// try await client.withTransaction(logger: logger) { connection in
    ///     try await publisher.post(OrderPaid(orderID: 42), on: orderPaid, in: connection)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - payload: The payload.
    ///   - handle: The handle whose name and encoder are used.
    ///   - connection: The connection, inside the caller's transaction (or not: then the post commits at once).
    /// - Throws: The payload's `EncodingError`; the authenticator's error; ``PostgresTransportError`` of kind
    ///   ``PostgresTransportError/Kind/payloadTooLarge``; PostgresNIO's error if the insert fails (which aborts the
    ///   caller's transaction, as any failed statement does).
    public func post<Info: Codable>(_ payload: Info, on handle: Notificatable<Info>, in connection: PostgresConnection)
        async throws
    {
        let message = try DurableOutboxPost.message(
            payload, for: handle, sealedWith: configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(message, name: handle.name, on: connection, logger: logger)
    }

    /// Stores typed notifications in the outbox inside the caller's transaction on `connection`, in the order given,
    /// in one statement: delivered if and only if that transaction commits, each one as ``post(_:on:in:)`` would
    /// store it, and after the caller's earlier posts in the transaction.
    ///
    /// ```swift
    /// try await client.withTransaction(logger: logger) { connection in
    ///     try await publisher.post(contentsOf: orderIDs.map { OrderPaid(orderID: $0) }, on: orderPaid, in: connection)
    /// }
    /// ```
    ///
    /// One round trip however many payloads there are (100 single posts make 100), and one wake-up of the readers.
    /// Every payload is encoded, sealed and checked against ``Configuration/maximumMessageSize`` before anything is
    /// sent: when one of them fails, nothing is written and the transaction is untouched. An empty sequence sends
    /// nothing.
    ///
    /// - Parameters:
    ///   - payloads: The payloads, in the order they are delivered in.
    ///   - handle: The handle whose name and encoder are used.
    ///   - connection: The connection, inside the caller's transaction (or not: then the batch commits at once, all
    ///     or nothing).
    /// - Throws: As ``post(_:on:in:)``, before anything is written for the payload's encoding, the authenticator
    ///   and ``PostgresTransportError/Kind/payloadTooLarge``.
    public func post<Info: Codable>(
        contentsOf payloads: some Sequence<Info>, on handle: Notificatable<Info>, in connection: PostgresConnection
    ) async throws {
        let messages = try DurableOutboxPost.messages(
            payloads, for: handle, sealedWith: configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(messages, name: handle.name, on: connection, logger: logger)
    }

    /// Stores a notification without payload in the outbox inside the caller's transaction; see
    /// ``post(_:on:in:)``.
    ///
    /// - Parameters:
    ///   - handle: The handle.
    ///   - connection: The connection, inside the caller's transaction.
    /// - Throws: The authenticator's error; PostgresNIO's error if the insert fails.
    public func post(_ handle: Notificatable<Never>, in connection: PostgresConnection) async throws {
        let message = try DurableOutboxPost.message(
            for: handle, sealedWith: configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(message, name: handle.name, on: connection, logger: logger)
    }

    /// Stores a typed notification in the outbox in a transaction of its own, on a connection of the client's
    /// pool: for a post that goes with no other change.
    ///
    /// - Parameters:
    ///   - payload: The payload.
    ///   - handle: The handle whose name and encoder are used.
    /// - Throws: As ``post(_:on:in:)``; PostgresNIO's error when the client is closed.
    public func post<Info: Codable>(_ payload: Info, on handle: Notificatable<Info>) async throws {
        let message = try DurableOutboxPost.message(
            payload, for: handle, sealedWith: configuration.authenticator, tracing: tracing)
        try await withConnection { connection in
            try await outboxPost.insert(message, name: handle.name, on: connection, logger: logger)
        }
    }

    /// Runs `body` on a connection of the client's pool, leased with a bounded wait (``Configuration/leaseTimeout``).
    private func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await PostgresLease.withConnection(from: client, timeout: configuration.leaseTimeout, body)
        } catch let failure as PostgresConnectFailure {
            if let timeout = failure.error as? PostgresLeaseTimeout {
                throw PostgresTransportError(
                    kind: .connectionWaiting, underlying: timeout,
                    seconds: PostgresReconnectBackoff.seconds(timeout.waited), role: "publisher")
            }
            throw failure.error
        }
    }

    var outboxPost: DurableOutboxPost {
        DurableOutboxPost(schema: schema, maximumMessageSize: configuration.maximumMessageSize)
    }
}

/// A transactional post: the message a relay forwarding the handle would send, and its insert on the caller's
/// connection. Shared by ``DurableNotificationPublisher`` and the transport's `post(_:on:in:authenticator:)`.
struct DurableOutboxPost: Sendable {
    let schema: DurableOutboxSchema
    let maximumMessageSize: Int

    /// The message of a typed post, with the post's trace context, sealed. Its sender is a fresh id for every call, with sequence number 1: posts
    /// in concurrent transactions commit in any order, so one shared counter would make receivers see gaps.
    static func message<Info: Codable>(
        _ payload: Info, for handle: Notificatable<Info>,
        sealedWith authenticator: (any NotificationMessageAuthenticator)?, tracing: NotificationTracing
    ) throws -> Data {
        let headers = tracing.publishHeaders(
            channel: NotificationChannelName.channel(for: handle.name, maximumLength: nil))
        let message = try NotificationRelayMessage.encoded(
            payload, for: handle, sender: NotificationRelayMessage.randomSender(), sequence: 1, headers: headers)
        return try authenticator?.seal(message) ?? message
    }

    /// The message of a post without payload, sealed.
    static func message(
        for handle: Notificatable<Never>, sealedWith authenticator: (any NotificationMessageAuthenticator)?,
        tracing: NotificationTracing
    ) throws -> Data {
        let headers = tracing.publishHeaders(
            channel: NotificationChannelName.channel(for: handle.name, maximumLength: nil))
        let message = try NotificationRelayMessage.encoded(
            for: handle, sender: NotificationRelayMessage.randomSender(), sequence: 1, headers: headers)
        return try authenticator?.seal(message) ?? message
    }

    /// The messages of a batch of typed posts, each sealed, in order: each one as
    /// ``message(_:for:sealedWith:tracing:)`` makes it, a sender of its own, so that a batch is stored exactly as
    /// that many single posts; one `publish` span for the batch, whose context each message carries.
    static func messages<Info: Codable>(
        _ payloads: some Sequence<Info>, for handle: Notificatable<Info>,
        sealedWith authenticator: (any NotificationMessageAuthenticator)?, tracing: NotificationTracing
    ) throws -> [Data] {
        var messages: [Data] = []
        messages.reserveCapacity(payloads.underestimatedCount)
        var headers: [String: String]?
        for payload in payloads {
            let carried =
                headers
                ?? tracing.publishHeaders(
                    channel: NotificationChannelName.channel(for: handle.name, maximumLength: nil))
            headers = carried
            let message = try NotificationRelayMessage.encoded(
                payload, for: handle, sender: NotificationRelayMessage.randomSender(), sequence: 1, headers: carried)
            messages.append(try authenticator?.seal(message) ?? message)
        }
        return messages
    }

    /// Inserts `message` on the channel a relay uses for `name`, and wakes the readers when the transaction commits.
    func insert(_ message: Data, name: Notification.Name, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await insert([message], name: name, on: connection, logger: logger)
    }

    /// Inserts `messages` in order on the channel a relay uses for `name`, in one statement, and wakes the readers
    /// once when the transaction commits. Checks every size before it sends anything; sends nothing for none.
    func insert(_ messages: [Data], name: Notification.Name, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        guard !messages.isEmpty else { return }
        var texts: [String] = []
        texts.reserveCapacity(messages.count)
        for message in messages {
            guard message.count <= maximumMessageSize else {
                throw PostgresTransportError(kind: .payloadTooLarge, size: message.count, limit: maximumMessageSize)
            }
            texts.append(String(decoding: message, as: UTF8.self))
        }
        let channel = NotificationChannelName.channel(for: name, maximumLength: nil)
        let statements = DurablePostStatementSchema(schema)
        let watch = PostgresConnectionWatch.watching(connection, logger: logger)
        do {
            try await DurablePostStatementSchema.$current.withValue(statements) {
                if texts.count == 1 {
                    try await watch.perform(
                        DurablePostOneStatement(channel: channel, message: texts[0], wakeChannel: schema.wakeChannel))
                } else {
                    try await watch.perform(
                        DurablePostBatchStatement(channel: channel, messages: texts, wakeChannel: schema.wakeChannel))
                }
            }
        } catch {
            DurablePostStatementSchema.renew(schema)
            throw error
        }
    }
}
