import Foundation

// Every configuration value checked where the transport, the service or a processor is created: a value out of its
// range throws `invalidConfiguration` naming it, rather than trapping, being clamped, or failing every round later.
// The connection engine's settings (the reconnect delays, the lease timeout) are checked by `connection(...)`, the
// same for both transports.

/// Checks configuration values one by one; the first that is out of range throws.
struct PostgresConfigurationCheck {
    /// The prefix of every setting named, such as `DurableProcessingOptions.`.
    let prefix: String

    func fail(_ setting: String, _ value: String, _ requirement: String) -> PostgresTransportError {
        PostgresTransportError(
            kind: .invalidConfiguration, setting: prefix + setting, value: value, requirement: requirement)
    }

    func count(_ setting: String, _ value: Int, in range: ClosedRange<Int>) throws {
        guard range.contains(value) else {
            throw fail(setting, "\(value)", "between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    /// A duration strictly above zero (or zero, when `zeroAllowed`) and at most `maximum`.
    func duration(_ setting: String, _ value: Duration?, maximum: Duration, zeroAllowed: Bool = false) throws {
        guard let value else { return }
        let valid = (zeroAllowed ? value >= .zero : value > .zero) && value <= maximum
        guard valid else {
            throw fail(
                setting, "\(value)",
                "\(zeroAllowed ? "at least 0" : "above 0") and at most \(Self.describe(maximum))")
        }
    }

    /// The connection engine's settings, the same for both transports: the reconnect delays within
    /// ``PostgresReconnectBackoff/longestDelay`` (zero allowed: the engine waits at least a millisecond), the maximum
    /// not below the initial delay, and a lease timeout above zero.
    func connection(initialReconnectDelay: Duration, maximumReconnectDelay: Duration, leaseTimeout: Duration) throws {
        let longest = PostgresReconnectBackoff.longestDelay
        try duration("initialReconnectDelay", initialReconnectDelay, maximum: longest, zeroAllowed: true)
        try duration("maximumReconnectDelay", maximumReconnectDelay, maximum: longest, zeroAllowed: true)
        if maximumReconnectDelay < initialReconnectDelay {
            throw fail(
                "maximumReconnectDelay", "\(maximumReconnectDelay)",
                "at least initialReconnectDelay (\(initialReconnectDelay))")
        }
        try duration("leaseTimeout", leaseTimeout, maximum: longest)
    }

    /// Text the database can store: no NUL character (PostgreSQL's `text` holds none).
    func storable(_ setting: String, _ value: String, allowsEmpty: Bool = false) throws {
        if !allowsEmpty && value.isEmpty { throw fail(setting, "empty", "a non-empty name") }
        if value.utf8.contains(0) { throw fail(setting, String(reflecting: value), "text without NUL characters") }
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds >= 86_400, seconds % 86_400 == 0 { return "\(seconds / 86_400) days" }
        if seconds >= 3_600, seconds % 3_600 == 0 { return "\(seconds / 3_600) hours" }
        return "\(duration)"
    }
}

extension DurablePostgresNotificationTransport.Configuration {
    /// The suffix of the processing positions' consumer names (see ``DurableOutboxSchema/processingConsumer(_:)``):
    /// a relay's consumer name must never end with it, nor hold it followed by a space (the processing lock names),
    /// so that no consumer name reaches a processor's position or lock.
    static let processingSuffix = "/processing"

    /// Throws ``PostgresTransportError/Kind/invalidConfiguration`` for the first value out of its range.
    func validate() throws {
        let check = PostgresConfigurationCheck(prefix: "")
        try check.storable("consumer", consumer)
        let suffix = Self.processingSuffix
        if consumer.hasSuffix(suffix) || consumer.contains(suffix + " ") {
            throw check.fail(
                "consumer", String(reflecting: consumer),
                "a name that does not end with \"\(suffix)\" nor contain \"\(suffix) \" (reserved for the processing "
                    + "positions and locks of acknowledged processing)")
        }
        try check.storable("schema", schema)
        if schema.utf8.count > 63 {
            throw check.fail(
                "schema", String(reflecting: schema), "at most 63 bytes (PostgreSQL truncates longer identifiers)")
        }
        try check.count("maximumMessageSize", maximumMessageSize, in: 1...1_073_741_823)
        try check.count("pageSize", pageSize, in: 1...100_000)
        try check.count("maximumBatchSize", maximumBatchSize, in: 1...100_000)
        try check.count("maximumQueuedMessages", maximumQueuedMessages, in: 1...100_000_000)
        try check.duration("retentionAge", retentionAge, maximum: .seconds(100 * 365 * 86_400))
        try check.duration("retentionInterval", retentionInterval, maximum: .seconds(365 * 86_400))
        try check.duration("pollInterval", pollInterval, maximum: .seconds(3_600))
        try check.duration("stallThreshold", stallThreshold, maximum: .seconds(365 * 86_400))
        try check.connection(
            initialReconnectDelay: initialReconnectDelay, maximumReconnectDelay: maximumReconnectDelay,
            leaseTimeout: leaseTimeout)
    }
}

extension DurableProcessingOptions {
    /// Throws ``PostgresTransportError/Kind/invalidConfiguration`` for the first value out of its range.
    func validate() throws {
        let check = PostgresConfigurationCheck(prefix: "DurableProcessingOptions.")
        try check.count("maximumAttempts", maximumAttempts, in: 1...1_000_000)
        try check.count("maximumConcurrency", maximumConcurrency, in: 1...10_000)
        try check.count("maximumUnacknowledged", maximumUnacknowledged, in: maximumConcurrency...1_000_000)
        try check.duration("initialRetryDelay", initialRetryDelay, maximum: .seconds(86_400), zeroAllowed: true)
        try check.duration("maximumRetryDelay", maximumRetryDelay, maximum: .seconds(86_400), zeroAllowed: true)
        if maximumRetryDelay < initialRetryDelay {
            throw check.fail(
                "maximumRetryDelay", "\(maximumRetryDelay)", "at least initialRetryDelay (\(initialRetryDelay))")
        }
        try check.duration("handlerTimeout", handlerTimeout, maximum: .seconds(365 * 86_400))
        try check.duration("handlerStallThreshold", handlerStallThreshold, maximum: .seconds(365 * 86_400))
        try check.count("partitionCount", partitionCount, in: 2...1_024)
        try check.duration("sessionTimeout", sessionTimeout, maximum: .seconds(3_600))
        if sessionTimeout < .seconds(3) {
            throw check.fail("sessionTimeout", "\(sessionTimeout)", "at least 3 seconds")
        }
    }
}

extension PostgresNotificationTransport.Configuration {
    /// Throws ``PostgresTransportError/Kind/invalidConfiguration`` for the first value out of its range.
    func validate() throws {
        let check = PostgresConfigurationCheck(prefix: "")
        try check.count("maximumPayloadSize", maximumPayloadSize, in: 1...1_073_741_823)
        try check.count("maximumQueuedMessages", maximumQueuedMessages, in: 1...100_000_000)
        try check.count("maximumBatchSize", maximumBatchSize, in: 1...100_000)
        try check.duration("notificationQueueCheckInterval", notificationQueueCheckInterval, maximum: .seconds(86_400))
        let threshold = notificationQueueUsageThreshold
        if !(threshold > 0 && threshold <= 1) {
            throw check.fail("notificationQueueUsageThreshold", "\(threshold)", "above 0 and at most 1")
        }
        try check.count("maximumReceiveBufferBytes", maximumReceiveBufferBytes, in: 1...(1 << 40))
        try check.connection(
            initialReconnectDelay: initialReconnectDelay, maximumReconnectDelay: maximumReconnectDelay,
            leaseTimeout: leaseTimeout)
    }
}
