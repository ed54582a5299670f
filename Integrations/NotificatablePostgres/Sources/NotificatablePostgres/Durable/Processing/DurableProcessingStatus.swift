import Foundation

/// Where one running `process` (or `processTransactionally`) call stands: what a readiness endpoint serves.
///
/// ```swift
/// for status in transport.processingStatus() where !status.isHealthy {
///     logger.warning("\(status.channel): \(status.state), \(status.lagMessages ?? 0) messages waiting")
/// }
/// ```
///
/// The state is read from memory (no query); the lag is the one measured every
/// ``DurablePostgresNotificationTransport/Configuration/pollInterval`` for the
/// `notificatable_processing_lag_*` gauges, `nil` before the first measurement.
public struct DurableProcessingStatus: Hashable, Sendable {
    /// What a processor is doing: ``connecting``, ``standingBy``, ``processing`` or ``stalled``.
    public struct State: Hashable, Sendable, CustomStringConvertible {
        enum Value: Hashable, Sendable {
            case connecting, standingBy, processing, stalled
        }

        let value: Value

        /// Not connected: connecting for the first time, or again after the connection was lost (the database is
        /// down or unreachable, or the application's client has no connection to lease).
        public static let connecting = State(value: .connecting)
        /// Connected, and waiting while another process holds this consumer name and channel: it takes over when
        /// that one stops. Healthy: this is what a second replica does.
        public static let standingBy = State(value: .standingBy)
        /// Connected, holding the consumer name, and making progress (or idle with nothing to do).
        public static let processing = State(value: .processing)
        /// Holding the consumer name with messages waiting, and no message finished (processed or parked) for
        /// ``DurableProcessingOptions/handlerStallThreshold``: a handler hangs, or keeps failing with long retry
        /// waits.
        public static let stalled = State(value: .stalled)

        /// `connecting`, `standing by`, `processing` or `stalled`.
        public var description: String {
            switch value {
            case .connecting: "connecting"
            case .standingBy: "standing by"
            case .processing: "processing"
            case .stalled: "stalled"
            }
        }
    }

    /// The consumer name (``DurablePostgresNotificationTransport/Configuration/consumer``).
    public let consumer: String
    /// The channel processed.
    public let channel: String
    /// What it is doing.
    public let state: State
    /// Messages handed to the handler and not finished, retry waits included.
    public let inFlight: Int
    /// Messages stored after the processing position at the last measurement; `nil` before the first one.
    public let lagMessages: Int?
    /// The age of the oldest of them, in seconds (0 when there are none); `nil` before the first measurement.
    public let lagSeconds: Double?
    /// How long messages have waited without one finishing, in seconds; 0 when nothing waits.
    public let secondsWithoutProgress: Double
    /// The partitions of the channel this process holds, of ``partitionCount`` (see the *Processing* article's
    /// consumer groups): `[0]` of 1 in channel order while it works, empty while it stands by or connects.
    public var partitions: [Int] = []
    /// How many partitions the channel is split into for this consumer: 1 in channel order, else
    /// ``DurableProcessingOptions/partitionCount``.
    public var partitionCount = 1

    /// Whether a readiness check should pass: ``State-swift.struct/processing`` or
    /// ``State-swift.struct/standingBy``; not ``State-swift.struct/connecting`` nor
    /// ``State-swift.struct/stalled``.
    public var isHealthy: Bool { state == .processing || state == .standingBy }
}

extension DurablePostgresNotificationTransport {
    /// Where each `process` and `processTransactionally` call running on this transport stands, sorted by channel:
    /// serve it on a readiness endpoint. Empty when nothing is processed. Cheap: read from memory.
    ///
    /// ```swift
    /// let healthy = transport.processingStatus().allSatisfy(\.isHealthy)
    /// ```
    ///
    /// - Returns: One status per running processor.
    public func processingStatus() -> [DurableProcessingStatus] {
        processingMonitors.all.map { $0.status() }.sorted { $0.channel < $1.channel }
    }
}
