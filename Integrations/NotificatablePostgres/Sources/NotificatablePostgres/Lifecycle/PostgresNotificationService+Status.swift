import Foundation

// What a readiness endpoint serves: where the service's processors stand.
extension PostgresNotificationService {
    /// Where a ``PostgresNotificationService`` stands: running or not, and each processor's state and lag.
    ///
    /// ```swift
    /// let status = notifications.status()
    /// return status.isHealthy ? 200 : 503
    /// ```
    public struct Status: Sendable {
        /// Whether the transport still runs: false once it was stopped (the service stopped, or the application's
        /// client stopped under it).
        public let isRunning: Bool
        /// Each ``process(_:options:partitionKey:_:)`` running now, sorted by channel.
        public let processing: [DurableProcessingStatus]

        /// Whether a readiness check should pass: the transport runs and every processor is processing or standing
        /// by (``DurableProcessingStatus/isHealthy``); none is connecting or stalled.
        public var isHealthy: Bool { isRunning && processing.allSatisfy(\.isHealthy) }
    }

    /// Where the service stands now, read from memory (no query): serve it on a readiness endpoint.
    ///
    /// A processor is ``DurableProcessingStatus/State-swift.struct/stalled`` when messages have waited for
    /// ``DurableProcessingOptions/handlerStallThreshold`` (30 s by default) without one finishing, and
    /// ``DurableProcessingStatus/State-swift.struct/connecting`` while its connection is down.
    ///
    /// - Returns: The status.
    public func status() -> Status {
        Status(isRunning: !transport.isStopped, processing: transport.processingStatus())
    }
}
