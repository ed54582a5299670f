import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Acknowledged processing under the service: the transport's `process`, run as a child of the service's `run()`,
// stopped in the service's shutdown order.
extension PostgresNotificationService {
    /// Processes every message stored for `handle` with acknowledgements (the transport's
    /// ``DurablePostgresNotificationTransport/process(_:options:partitionKey:authenticator:onEvent:_:)``): the
    /// consumer's processing position passes a message only once `handler` has returned; a handler that throws is
    /// retried with backoff, then the message is parked in the dead letters (a `messageParked` event).
    ///
    /// ```swift
    /// notifications.process(orderPlaced) { order, delivery in
    ///     try await billing.charge(order, idempotencyKey: delivery.id.description)
    /// }
    /// ```
    ///
    /// It runs while the service runs, with the configuration's authenticator, on a connection of its own (leased
    /// from ``DurablePostgresNotificationTransport/Configuration/client`` when set). On graceful shutdown it
    /// stops handing out messages, lets the handlers running finish (they are not cancelled), stores the position,
    /// and only then does the service flush and close; cancelled instead (the group's shutdown timeout), the
    /// handlers are cancelled and the messages they held are processed again by the next process of this consumer.
    /// Its events (`messageParked`, connection events) go where the service's go.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - options: Attempts, concurrency, backoff (``DurableProcessingOptions``).
    ///   - partitionKey: With ``DurableProcessingOptions/maximumConcurrency`` above 1, a key per payload whose
    ///     messages are handled one at a time, in order.
    ///   - handler: Called with each payload and its ``DurableDelivery`` (id, attempt); return to acknowledge it,
    ///     throw to have it retried.
    public func process<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        _ handler: @escaping @Sendable (Info, DurableDelivery<Info>) async throws -> Void
    ) {
        let transport = self.transport
        registerProcessor(for: handle) { shield in
            try await transport.process(
                handle, options: options, partitionKey: partitionKey,
                authenticator: transport.configuration.authenticator
            ) { delivery in
                try await shield { try await handler(delivery.payload, delivery) }
            }
        }
    }

    /// Processes every message stored for `handle` exactly once in effect: `handler` gets a connection in an open
    /// transaction, and the message is acknowledged in that transaction before it commits (the transport's
    /// ``DurablePostgresNotificationTransport/processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``).
    ///
    /// ```swift
    /// notifications.processTransactionally(orderPlaced) { order, delivery, connection in
    ///     try await connection.query(
    ///         "INSERT INTO invoices (order_id, total) VALUES (\(order.orderID), \(order.total))", logger: logger)
    /// }
    /// ```
    ///
    /// The handler's writes on `connection` and the acknowledgement are stored together or not at all, whatever
    /// crashes, so no idempotency table of yours is needed; a handler that throws rolls its transaction back and is
    /// retried, then parked, as with ``process(_:options:partitionKey:_:)``. Lifetime, authenticator, events and
    /// shutdown order are those of ``process(_:options:partitionKey:_:)``. Each running handler holds a connection
    /// of ``DurablePostgresNotificationTransport/Configuration/connection`` (leased from the configuration's client
    /// when set) for its transaction.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - options: Attempts, concurrency, backoff (``DurableProcessingOptions``).
    ///   - partitionKey: With ``DurableProcessingOptions/maximumConcurrency`` above 1, a key per payload whose
    ///     messages are handled one at a time, in order.
    ///   - handler: Called with each payload, its ``DurableDelivery`` and the connection of its transaction; return
    ///     to commit the writes with the acknowledgement, throw to roll back and have it retried.
    public func processTransactionally<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        _ handler: @escaping @Sendable (Info, DurableDelivery<Info>, PostgresConnection) async throws -> Void
    ) {
        let transport = self.transport
        registerProcessor(for: handle) { shield in
            try await transport.processTransactionally(
                handle, options: options, partitionKey: partitionKey,
                authenticator: transport.configuration.authenticator
            ) { delivery, connection in
                try await shield { try await handler(delivery.payload, delivery, connection) }
            }
        }
    }

    /// Processes every message stored for `handle` in batches of up to `maximumBatchSize`, each batch in one
    /// transaction with its acknowledgements (the transport's
    /// ``DurablePostgresNotificationTransport/processTransactionally(_:maximumBatchSize:options:partitionKey:authenticator:onEvent:_:)``,
    /// which gives the batching, splitting and ordering rules): exactly-once effects at one commit per batch.
    ///
    /// ```swift
    /// notifications.processTransactionally(orderPlaced, maximumBatchSize: 100) { deliveries, connection in
    ///     for delivery in deliveries {
    ///         try await connection.query(
    ///             "INSERT INTO invoices (order_id) VALUES (\(delivery.payload.orderID))", logger: logger)
    ///     }
    /// }
    /// ```
    ///
    /// Lifetime, authenticator, events and shutdown order are those of ``process(_:options:partitionKey:_:)``; a
    /// `maximumBatchSize` out of range (1 to 10,000) ends this processing with a `transportError` event.
    ///
    /// - Parameters:
    ///   - handle: The handle whose messages to process.
    ///   - maximumBatchSize: The most messages in one transaction.
    ///   - options: Attempts, concurrency (batches at once), backoff (``DurableProcessingOptions``).
    ///   - partitionKey: A key per payload whose messages stay in order.
    ///   - handler: Called with each batch and the connection of its transaction; return to commit, throw to roll
    ///     the batch back (it is then split until the failing message is alone).
    public func processTransactionally<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>,
        maximumBatchSize: Int,
        options: DurableProcessingOptions = DurableProcessingOptions(),
        partitionKey: (@Sendable (Info) -> String)? = nil,
        _ handler: @escaping @Sendable ([DurableDelivery<Info>], PostgresConnection) async throws -> Void
    ) {
        let transport = self.transport
        registerProcessor(for: handle) { shield in
            try await transport.processTransactionally(
                handle, maximumBatchSize: maximumBatchSize, options: options, partitionKey: partitionKey,
                authenticator: transport.configuration.authenticator
            ) { deliveries, connection in
                try await shield { try await handler(deliveries, connection) }
            }
        }
    }

    /// Runs `body` (one of the transport's processing calls) while the service runs, reporting how it ended if it
    /// threw.
    private func registerProcessor<Info>(
        for handle: Notificatable<Info>,
        _ body: @escaping @Sendable (@escaping ServiceProcessor.Shield) async throws -> Void
    ) {
        let report = self.report
        let processor = ServiceProcessor { shield in
            do {
                try await body(shield)
            } catch {
                report(NotificationTransportEvent(kind: .transportError, name: handle.name, error: error))
            }
        }
        register(processor)
    }

    /// Adds a handler to what ``run()`` runs, or finishes it at once when the service is already stopping.
    func register(_ receiver: any ServiceReceiver) {
        let (feed, accepted) = lock.withLock { () -> (AsyncStream<any ServiceReceiver>.Continuation?, Bool) in
            guard !shuttingDown else { return (nil, false) }
            forwarded += 1
            receivers.append(receiver)
            return (newReceivers, true)
        }
        guard accepted else {
            receiver.finish()
            return
        }
        feed?.yield(receiver)
    }
}

/// Runs one `process` call for the service: its task is cancelled to stop it gracefully (the processor stops handing
/// out messages, waits for the running handlers and stores the position); the handlers themselves run in tasks of
/// their own, which only ``abandon()`` cancels, so that a graceful stop lets them finish.
final class ServiceProcessor: ServiceReceiver, @unchecked Sendable {
    /// Runs a handler call in a task of its own that the processor's cancellation does not reach.
    typealias Shield = @Sendable (@escaping @Sendable () async throws -> Void) async throws -> Void

    private let body: @Sendable (@escaping Shield) async -> Void
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var stopped = false
    private var abandoned = false
    private var handlers: [Int: Task<Void, any Error>] = [:]
    private var nextHandler = 0

    init(_ body: @escaping @Sendable (@escaping Shield) async -> Void) {
        self.body = body
    }

    func run() async {
        let task: Task<Void, Never>? = lock.withLock {
            guard !stopped else { return nil }
            let body = self.body
            let task = Task { await body(self.shield) }
            self.task = task
            return task
        }
        guard let task else { return }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            abandon()
        }
    }

    private func shield(_ call: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await call() }
        let (id, cancelNow): (Int, Bool) = lock.withLock {
            nextHandler += 1
            handlers[nextHandler] = task
            return (nextHandler, abandoned)
        }
        defer { lock.withLock { _ = handlers.removeValue(forKey: id) } }
        if cancelNow { task.cancel() }
        try await task.value
    }

    func finish() {
        let task: Task<Void, Never>? = lock.withLock {
            stopped = true
            return self.task
        }
        task?.cancel()
    }

    func abandon() {
        let (task, handlers): (Task<Void, Never>?, [Task<Void, any Error>]) = lock.withLock {
            stopped = true
            abandoned = true
            return (self.task, Array(self.handlers.values))
        }
        for handler in handlers { handler.cancel() }
        task?.cancel()
    }

    /// The relay's positions do not wait for processing, which keeps a position of its own.
    func waitUntilIdle() async -> Bool { true }
}
