import CoreMetrics
import Foundation
import Logging
import Notificatable
import NotificatableRelay
import ServiceLifecycle
import Tracing

/// One swift-service-lifecycle `Service` that owns a ``DurablePostgresNotificationTransport`` and the
/// `NotificationRelay` over it: put it in your `ServiceGroup`, tell it what to receive and send, and it gives both
/// their lifetime and the right shutdown order.
///
/// ```swift
/// let notifications = try PostgresNotificationService(
///     configuration: .init(client: client, consumer: "billing"), logger: logger)
/// notifications.receive(orderPlaced) { order in            // awaited, one at a time, in order
///     await billing.charge(order)
/// }
/// notifications.send(invoiceSent)                          // local posts of it go to every process
/// let group = ServiceGroup(
///     services: [client, notifications, app], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// With a configuration made from the application's `PostgresClient`
/// (``DurablePostgresNotificationTransport/Configuration/init(client:consumer:)``), the service leases two of its
/// connections for as long as it runs (the reader, the writer; each ``process(_:options:partitionKey:_:)`` one
/// more) and closes them when done: see that initializer for why and what happens when the client is not running.
/// List the client before the service: a stopping client closes every connection, leased ones included.
///
/// The transport connects when the service is created (so posts made before the group runs are stored); ``run()``
/// holds the lifetime. On graceful shutdown it stops taking new messages from the outbox, lets every handler given
/// to ``receive(_:handler:)`` finish what it was handed, saves the consumer's positions and stores what was posted
/// (`flush()`), then stops the relay and closes the connections. Positions are never saved past a message whose
/// handler has not returned, even while running, so a crash repeats such messages rather than losing them. The
/// service runs its handlers itself, so where it stands in the group does not matter for receiving; a service that
/// posts through it while stopping must stop before it: list the notification service first (a group stops in
/// reverse order).
///
/// A service with nothing to receive or send when ``run()`` begins reports a `nothingForwarded` event, once.
public final class PostgresNotificationService: Service, @unchecked Sendable {
    /// The transport, with the configuration it was given.
    public let transport: DurablePostgresNotificationTransport
    /// The relay: it seals with the configuration's authenticator, and posts what it receives on ``center``.
    public let relay: NotificationRelay
    /// Where received notifications are posted, and whose posts of the handles sent are forwarded.
    public var center: NotificationCenter { relay.center }

    let report: @Sendable (NotificationTransportEvent) -> Void
    let lock = NSLock()
    /// How many handles were given to receive or send. Guarded by `lock`, as are the fields below.
    var forwarded = 0
    var receivers: [any ServiceReceiver] = []
    var shuttingDown = false
    /// Whether the handlers were stopped with messages unhandled (cancellation rather than graceful shutdown).
    var abandoned = false
    /// Feeds ``run()`` the handlers registered while it runs.
    var newReceivers: AsyncStream<any ServiceReceiver>.Continuation?

    /// Creates the service, its transport and its relay; the transport connects now.
    ///
    /// - Parameters:
    ///   - configuration: The durable transport's configuration: the connection (or the application's client,
    ///     ``DurablePostgresNotificationTransport/Configuration/init(client:consumer:)``), the consumer name and, if the
    ///     messages are authenticated, the ``DurablePostgresNotificationTransport/Configuration/authenticator``,
    ///     which the relay, the transport and its transactional posts all use.
    ///   - center: The local center. `NotificationCenter.default` by default.
    ///   - logger: Where the connections log and where every event goes (see `Logger.log(_:)`); the consumer name
    ///     is added to its metadata. `Logger(label: "NotificatablePostgres")` by default.
    ///   - metricsFactory: Where the counters and gauges go (see the package README, *Metrics*);
    ///     `MetricsSystem.factory` by default.
    ///   - tracer: Where the spans of posts and of ``process(_:options:partitionKey:_:)`` go (see the Operating
    ///     article, *Tracing*); `InstrumentationSystem.tracer`, read at each use, by default.
    ///   - onEvent: Called with every event instead of logging it.
    ///   - onFailure: Called with every received message that could not be decoded; the global
    ///     `NotificationDecodingFailure.handler` by default.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/invalidConfiguration`` for a
    ///   configuration value out of its range, naming it.
    public init(
        configuration: DurablePostgresNotificationTransport.Configuration,
        center: NotificationCenter = .default,
        logger: Logger? = nil,
        metricsFactory: (any MetricsFactory)? = nil,
        tracer: (any Tracer)? = nil,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)? = nil,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) throws {
        let transport = try DurablePostgresNotificationTransport(
            configuration: configuration, logger: logger, metricsFactory: metricsFactory, tracer: tracer)
        self.transport = transport
        let (eventLogger, metrics) = (transport.logger, transport.metrics)
        let report: @Sendable (NotificationTransportEvent) -> Void = { event in
            metrics.record(event)
            if let onEvent { onEvent(event) } else { eventLogger.log(event) }
        }
        self.report = report
        self.relay = NotificationRelay(
            transport: transport, center: center, authenticator: configuration.authenticator, onEvent: report,
            onFailure: onFailure)
        transport.holdSaves { [weak self] in await self?.handlersCaughtUp() ?? true }
    }

    // MARK: - What to receive and send

    /// Receives `handle`: every message for it in the outbox reaches ``center``, typed, from this consumer's
    /// position on. Subscribe there as usual; a subscriber without a queue of its own runs before the position may
    /// pass the message. Local posts of it are sent too.
    ///
    /// - Parameter handle: The handle.
    /// - Returns: A disposable that stops receiving it (its position stays stored).
    @discardableResult
    public func receive<Info: Codable>(_ handle: Notificatable<Info>) -> Disposable {
        lock.withLock { forwarded += 1 }
        return relay.forward(handle)
    }

    /// Receives `handle` and hands every payload to `handler`, one at a time in delivery order, awaiting each: the
    /// consumer's position passes a message only once its handler has returned, and graceful shutdown waits for the
    /// handler to finish what it was handed.
    ///
    /// ```swift
    /// notifications.receive(orderPlaced) { order in await billing.charge(order) }
    /// ```
    ///
    /// - Parameters:
    ///   - handle: The handle.
    ///   - handler: Runs in a child task of ``run()``.
    public func receive<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>, handler: @escaping @Sendable (Info) async -> Void
    ) {
        let receiver = AwaitedReceiver<Info>(handler: handler)
        receiver.subscription = handle.subscribe(center: center) { note in receiver.enqueue(note.userInfo) }
        let (feed, accepted) = lock.withLock { () -> (AsyncStream<any ServiceReceiver>.Continuation?, Bool) in
            guard !shuttingDown else { return (nil, false) }
            forwarded += 1
            receivers.append(receiver)
            return (newReceivers, true)
        }
        guard accepted else {
            receiver.finish()
            receiver.subscription?.dispose()
            return
        }
        feed?.yield(receiver)
        relay.forward(handle)
    }

    /// Receives `handle`, a notification without payload; see ``receive(_:)``.
    ///
    /// - Parameter handle: The handle.
    /// - Returns: A disposable that stops receiving it.
    @discardableResult
    public func receive(_ handle: Notificatable<Never>) -> Disposable {
        lock.withLock { forwarded += 1 }
        return relay.forward(handle)
    }

    /// Sends `handle`: every local post of it on ``center`` is stored in the outbox for every consumer. (Through
    /// the relay, which also listens to the handle's channel: posts of other processes reach ``center`` too.)
    ///
    /// - Parameter handle: The handle.
    /// - Returns: A disposable that stops sending it.
    @discardableResult
    public func send<Info: Codable>(_ handle: Notificatable<Info>) -> Disposable {
        receive(handle)
    }

    /// Sends `handle`, a notification without payload; see ``send(_:)``.
    ///
    /// - Parameter handle: The handle.
    /// - Returns: A disposable that stops sending it.
    @discardableResult
    public func send(_ handle: Notificatable<Never>) -> Disposable {
        receive(handle)
    }
}
