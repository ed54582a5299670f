import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

extension DurablePostgresNotificationTransport {
    /// Stores a typed notification in the outbox inside the caller's own transaction on `connection`: it is
    /// delivered if and only if that transaction commits (the outbox pattern).
    ///
    /// ```swift
    /// try await connection.withTransaction(logger: logger) { connection in
    ///     try await connection.query("UPDATE orders SET shipped = true WHERE id = \(orderID)", logger: logger)
    ///     try await transport.post(OrderShipped(orderID: orderID), on: orderShipped, in: connection)
    /// }
    /// ```
    ///
    /// The message is exactly what a relay forwarding `handle` sends (see
    /// `NotificationRelayMessage.encoded(_:for:sender:sequence:)`), written with the handle's encoder, on the channel
    /// a relay uses for the handle's name. Its sender is a fresh id for every call, with sequence number 1: posts in
    /// concurrent transactions commit in any order, so one shared counter would make receivers see gaps, or drop a
    /// post as older than one already received. So a receiver never drops a transactional post as a duplicate of
    /// another, and the order of two transactional posts is their commit order (strictly: the order of their
    /// transactions' ids among committed transactions).
    ///
    /// The tables must exist (created by a running transport of the same schema, a ``DurableNotificationPublisher``'s
    /// ``DurableNotificationPublisher/ready()``, or a migration). A process that only posts needs no transport:
    /// see ``DurableNotificationPublisher``. A transaction
    /// that has written stays open until it commits: as long as it is open, it holds back delivery for every
    /// consumer (see the package README), so keep transactions short.
    ///
    /// The stored message is sealed with ``Configuration/authenticator`` (the one the receiving relays use), as a
    /// relay's would be, unless another `authenticator` is passed.
    ///
    /// - Parameters:
    ///   - payload: The payload.
    ///   - handle: The handle whose name and encoder are used.
    ///   - connection: The connection, inside the caller's transaction (or not: then the post commits at once).
    ///   - authenticator: Seals the message instead of ``Configuration/authenticator``; `nil` (the default): that
    ///     one, if the configuration has one.
    /// - Throws: The payload's `EncodingError`; the authenticator's error; a ``PostgresTransportError`` of kind
    ///   ``PostgresTransportError/Kind/payloadTooLarge`` over ``Configuration/maximumMessageSize``; PostgresNIO's
    ///   error if the insert fails (which aborts the caller's transaction, as any failed statement does).
    public func post<Info: Codable>(
        _ payload: Info, on handle: Notificatable<Info>, in connection: PostgresConnection,
        authenticator: (any NotificationMessageAuthenticator)? = nil
    ) async throws {
        let message = try DurableOutboxPost.message(
            payload, for: handle, sealedWith: authenticator ?? configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(message, name: handle.name, on: connection, logger: logger)
    }

    /// Stores typed notifications in the outbox inside the caller's own transaction on `connection`, in the order
    /// given, in one statement: each one exactly as ``post(_:on:in:authenticator:)`` stores it (a sender of its own),
    /// delivered if and only if that transaction commits, in the order given and after the transaction's earlier
    /// posts.
    ///
    /// ```swift
    /// try await connection.withTransaction(logger: logger) { connection in
    ///     try await transport.post(contentsOf: shipped.map { OrderShipped(orderID: $0) }, on: orderShipped, in: connection)
    /// }
    /// ```
    ///
    /// One round trip and one wake-up of the readers for the whole batch. Every payload is encoded, sealed and
    /// checked against ``Configuration/maximumMessageSize`` before anything is sent: when one of them fails, nothing
    /// is written. An empty sequence sends nothing.
    ///
    /// - Parameters:
    ///   - payloads: The payloads, in the order they are delivered in.
    ///   - handle: The handle whose name and encoder are used.
    ///   - connection: The connection, inside the caller's transaction (or not: then the batch commits at once).
    ///   - authenticator: Seals the messages instead of ``Configuration/authenticator``; `nil` by default.
    /// - Throws: As ``post(_:on:in:authenticator:)``, before anything is written for the encoding, the sealing and
    ///   ``PostgresTransportError/Kind/payloadTooLarge``.
    public func post<Info: Codable>(
        contentsOf payloads: some Sequence<Info>, on handle: Notificatable<Info>, in connection: PostgresConnection,
        authenticator: (any NotificationMessageAuthenticator)? = nil
    ) async throws {
        let messages = try DurableOutboxPost.messages(
            payloads, for: handle, sealedWith: authenticator ?? configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(messages, name: handle.name, on: connection, logger: logger)
    }

    /// Stores a notification without payload in the outbox inside the caller's transaction on `connection`; see
    /// ``post(_:on:in:authenticator:)``.
    ///
    /// ```swift
    /// try await transport.post(cacheInvalidated, in: connection)
    /// ```
    ///
    /// - Parameters:
    ///   - handle: The handle.
    ///   - connection: The connection, inside the caller's transaction.
    ///   - authenticator: Seals the message instead of ``Configuration/authenticator``; `nil` by default.
    /// - Throws: The authenticator's error; PostgresNIO's error if the insert fails.
    public func post(
        _ handle: Notificatable<Never>, in connection: PostgresConnection,
        authenticator: (any NotificationMessageAuthenticator)? = nil
    ) async throws {
        let message = try DurableOutboxPost.message(
            for: handle, sealedWith: authenticator ?? configuration.authenticator, tracing: tracing)
        try await outboxPost.insert(message, name: handle.name, on: connection, logger: logger)
    }

    var outboxPost: DurableOutboxPost {
        DurableOutboxPost(schema: schema, maximumMessageSize: configuration.maximumMessageSize)
    }

    /// The trace context of a post by a relay over this transport, in the poster's task: a `publish <channel>`
    /// producer span's, a child of `ServiceContext.current`, injected by the transport's tracer (see the `tracer:`
    /// of ``init(configuration:eventLoopGroup:logger:metricsFactory:tracer:)``). Empty when nothing is traced.
    ///
    /// - Parameters:
    ///   - name: The notification's name.
    ///   - channel: The channel the message is stored on.
    /// - Returns: The message's headers.
    public func headers(forPostOf name: Notification.Name, on channel: String) -> [String: String] {
        tracing.publishHeaders(channel: channel)
    }
}
