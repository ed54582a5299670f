import NotificatableRelay
import ServiceLifecycle

/// The at-most-once transport as a swift-service-lifecycle `Service`, so that it runs in a `ServiceGroup` and stops
/// gracefully.
///
/// ```swift
/// let transport = try PostgresNotificationTransport(configuration: configuration)
/// let relay = NotificationRelay(transport: transport)          // starts the transport
/// let group = ServiceGroup(services: [transport, app], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// The relay starts the transport, as before; ``run()`` holds its lifetime. On graceful shutdown it waits until
/// the messages already published have reached the server (``flush()``), then stops the transport; if its task is
/// cancelled first (the group's shutdown timeout), it stops at once and what is still queued is dropped.
extension PostgresNotificationTransport: Service {
    /// Waits for graceful shutdown (or cancellation), then flushes what is queued and stops the transport.
    public func run() async throws {
        await runUntilShutdown(flush: { await self.flush() }, stop: { self.stop() })
    }
}

/// The durable transport as a swift-service-lifecycle `Service`; see `PostgresNotificationTransport`'s conformance
/// for the lifecycle, which is the same: on graceful shutdown the messages already published are stored
/// and the consumer's positions saved (``DurablePostgresNotificationTransport/flush()``), then the transport stops, so
/// a restart goes on from there.
extension DurablePostgresNotificationTransport: Service {
    /// Waits for graceful shutdown (or cancellation), then flushes what is queued and stops the transport.
    public func run() async throws {
        await runUntilShutdown(flush: { await self.flush() }, stop: { self.stop() })
    }
}

/// Waits for graceful shutdown or cancellation; on graceful shutdown runs `flush`, cut short by cancellation through
/// `stop`, which releases every waiting flush; then `stop`.
private func runUntilShutdown(flush: @escaping @Sendable () async -> Void, stop: @escaping @Sendable () -> Void) async {
    // Throws CancellationError when the task is cancelled rather than shut down gracefully.
    if (try? await gracefulShutdown()) != nil, !Task.isCancelled {
        await withTaskCancellationHandler {
            await flush()
        } onCancel: {
            stop()
        }
    }
    stop()
}
