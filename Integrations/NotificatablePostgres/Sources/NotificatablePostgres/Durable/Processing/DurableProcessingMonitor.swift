import CoreMetrics
import Foundation

/// The swift-metrics of one `process` call, per consumer name and channel, to the transport's `MetricsFactory`:
///
/// | Label | Kind | Dimensions | What it measures |
/// |---|---|---|---|
/// | `notificatable_processing_attempts_total` | counter | `consumer`, `channel`, `outcome` (`succeeded`, `failed`) | calls of the handler that returned, and that threw or timed out |
/// | `notificatable_processing_parked_total` | counter | `consumer`, `channel` | messages parked in the dead letters |
/// | `notificatable_processing_redriven_total` | counter | `consumer`, `channel` | dead letters handed to the handler again (once per re-drive) |
/// | `notificatable_processing_duration_seconds` | timer | `consumer`, `channel` | each call of the handler |
/// | `notificatable_processing_in_flight` | gauge | `consumer`, `channel` | messages handed out and not finished (retry waits included) |
/// | `notificatable_processing_lag_messages` | gauge | `consumer`, `channel` | messages stored after the processing position, every poll interval |
/// | `notificatable_processing_lag_seconds` | gauge | `consumer`, `channel` | the age of the oldest of them, 0 when there are none |
///
/// The metric objects are made once per processor, so a message costs a few atomic updates in the factory's
/// handlers, no lookup.
struct DurableProcessingMetrics: Sendable {
    static let attempts = "notificatable_processing_attempts_total"
    static let parked = "notificatable_processing_parked_total"
    static let redriven = "notificatable_processing_redriven_total"
    static let duration = "notificatable_processing_duration_seconds"
    static let inFlight = "notificatable_processing_in_flight"
    static let lagMessages = "notificatable_processing_lag_messages"
    static let lagSeconds = "notificatable_processing_lag_seconds"

    let succeeded: Counter
    let failed: Counter
    let parkedMessages: Counter
    let redrivenMessages: Counter
    let handlerDuration: CoreMetrics.Timer
    let inFlightMessages: Gauge
    let lagInMessages: Gauge
    let lagInSeconds: Gauge

    init(factory: any MetricsFactory, consumer: String, channel: String) {
        let dimensions = [("consumer", consumer), ("channel", channel)]
        succeeded = Counter(
            label: Self.attempts, dimensions: dimensions + [("outcome", "succeeded")], factory: factory)
        failed = Counter(label: Self.attempts, dimensions: dimensions + [("outcome", "failed")], factory: factory)
        parkedMessages = Counter(label: Self.parked, dimensions: dimensions, factory: factory)
        redrivenMessages = Counter(label: Self.redriven, dimensions: dimensions, factory: factory)
        handlerDuration = CoreMetrics.Timer(
            label: Self.duration, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
        inFlightMessages = Gauge(label: Self.inFlight, dimensions: dimensions, factory: factory)
        lagInMessages = Gauge(label: Self.lagMessages, dimensions: dimensions, factory: factory)
        lagInSeconds = Gauge(label: Self.lagSeconds, dimensions: dimensions, factory: factory)
    }
}

/// Where one processor stands, for ``DurablePostgresNotificationTransport/processingStatus()`` and the in-flight
/// gauge: connected or not, standing by, how many messages it holds, when it last made progress, its lag.
final class DurableProcessingMonitor: @unchecked Sendable {
    typealias Position = DurablePostgresNotificationTransport.Position

    let consumer: String
    let channel: String
    let stallThreshold: Duration?
    let metrics: DurableProcessingMetrics

    private let lock = NSLock()
    private var state = DurableProcessingStatus.State.connecting
    private var running = 0
    private var waiting = 0
    /// When the processor last finished a message, or went from idle to having messages to handle.
    private var progressAt = ContinuousClock.now
    private var acknowledged: Position?
    private var lagMessages: Int?
    private var lagSeconds: Double?
    private var partitions: [Int] = []
    private var partitionCount = 1

    init(consumer: String, channel: String, stallThreshold: Duration?, factory: any MetricsFactory) {
        self.consumer = consumer
        self.channel = channel
        self.stallThreshold = stallThreshold
        self.metrics = DurableProcessingMetrics(factory: factory, consumer: consumer, channel: channel)
    }

    /// The session waits for another process that holds the consumer name.
    func standingBy() {
        lock.withLock {
            state = .standingBy
            partitions = []
        }
    }

    /// The session holds `partitions` of `count`.
    func holding(_ partitions: [Int], of count: Int) {
        lock.withLock { (self.partitions, partitionCount) = (partitions, count) }
    }

    /// The session holds the consumer name and starts at `position`.
    func processing(from position: Position) {
        lock.withLock {
            state = .processing
            acknowledged = position
            progressAt = .now
        }
    }

    /// The session ended (the connection failed, or processing stopped): nothing runs any more.
    func disconnected() {
        lock.withLock {
            state = .connecting
            partitions = []
            running = 0
            waiting = 0
        }
        metrics.inFlightMessages.record(0)
    }

    /// What the session's loop holds now: `running` handed out, `waiting` read and not handed out yet, and the
    /// position that may be stored.
    func update(running: Int, waiting: Int, acknowledged: Position) {
        let changed: Bool = lock.withLock {
            let (wasBusy, changed) = (isBusy, self.running != running)
            (self.running, self.waiting, self.acknowledged) = (running, waiting, acknowledged)
            if !wasBusy && isBusy { progressAt = .now }
            return changed
        }
        if changed { metrics.inFlightMessages.record(running) }
    }

    /// Whether messages wait: handed out, read, or stored after the position. Called under `lock`.
    private var isBusy: Bool { running > 0 || waiting > 0 || (lagMessages ?? 0) > 0 }

    /// Records one call of the handler that started at `start`.
    func recordDuration(since start: ContinuousClock.Instant) {
        let elapsed = (ContinuousClock.now - start).components
        let nanoseconds = elapsed.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue &+ elapsed.attoseconds / 1_000_000_000
        metrics.handlerDuration.recordNanoseconds(max(0, total))
    }

    /// A message was finished: processed or parked.
    func progressed() { lock.withLock { progressAt = .now } }

    var position: Position? { lock.withLock { acknowledged } }

    func lag(messages: Int, seconds: Double) {
        lock.withLock {
            let wasBusy = isBusy
            (lagMessages, lagSeconds) = (messages, seconds)
            if !wasBusy && isBusy { progressAt = .now }
        }
        metrics.lagInMessages.record(messages)
        metrics.lagInSeconds.record(seconds)
    }

    func status(now: ContinuousClock.Instant = .now) -> DurableProcessingStatus {
        lock.withLock {
            let busy = isBusy
            let idle = now - progressAt
            var current = state
            if current == .processing, busy, let stallThreshold, idle >= stallThreshold { current = .stalled }
            var status = DurableProcessingStatus(
                consumer: consumer, channel: channel, state: current, inFlight: running, lagMessages: lagMessages,
                lagSeconds: lagSeconds,
                secondsWithoutProgress: busy ? DurablePostgresNotificationTransport.seconds(idle) : 0)
            (status.partitions, status.partitionCount) = (partitions, partitionCount)
            return status
        }
    }
}

/// The processors of one transport, for its status.
final class DurableProcessingMonitors: @unchecked Sendable {
    private let lock = NSLock()
    private var monitors: [ObjectIdentifier: DurableProcessingMonitor] = [:]

    func add(_ monitor: DurableProcessingMonitor) { lock.withLock { monitors[ObjectIdentifier(monitor)] = monitor } }

    func remove(_ monitor: DurableProcessingMonitor) {
        _ = lock.withLock { monitors.removeValue(forKey: ObjectIdentifier(monitor)) }
    }

    var all: [DurableProcessingMonitor] { lock.withLock { Array(monitors.values) } }
}
