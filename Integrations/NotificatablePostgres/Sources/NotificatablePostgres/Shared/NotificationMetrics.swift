import CoreMetrics
import Foundation
import NotificatableRelay

/// The swift-metrics counters and gauges of a durable transport, or of the service that owns one, per consumer name
/// and channel. They go to the `MetricsFactory` given to the transport (`MetricsSystem.factory`, what the
/// application bootstrapped, by default).
///
/// | Label | Kind | Dimensions | What it counts |
/// |---|---|---|---|
/// | `notificatable_messages_sent_total` | counter | `consumer`, `channel` | messages this process stored in the outbox (its writer's inserts) |
/// | `notificatable_messages_received_total` | counter | `consumer`, `channel` | messages the reader read for a channel it receives |
/// | `notificatable_messages_delivered_total` | counter | `consumer`, `channel` | of those, handed to the relay |
/// | `notificatable_messages_refused_total` | counter | `consumer`, `channel` | of those, refused: they did not open with the configuration's authenticator |
/// | `notificatable_duplicates_dropped_total` | counter | `consumer`, `channel` | messages the relay dropped as duplicates |
/// | `notificatable_messages_missed_total` | counter | `consumer`, `channel` | messages reported missing (a sequence gap: its count; rows deleted for age: 1 per report) |
/// | `notificatable_reconnects_total` | counter | `consumer` | connections regained after a loss (writer and reader each count) |
/// | `notificatable_consumer_lag_messages` | gauge | `consumer`, `channel` | messages stored after the consumer's position, measured every poll interval after a read round |
/// | `notificatable_consumer_lag_seconds` | gauge | `consumer`, `channel` | the age of the oldest of them, 0 when there are none |
///
/// The three event counts (duplicates, missed, reconnects) are taken from the events on their way to the relay's
/// event handler when that is the service's or the transport's default one (see ``record(_:)``).
struct NotificationMetrics: Sendable {
    let factory: any MetricsFactory
    let consumer: String

    static let sent = "notificatable_messages_sent_total"
    static let received = "notificatable_messages_received_total"
    static let delivered = "notificatable_messages_delivered_total"
    static let refused = "notificatable_messages_refused_total"
    static let duplicates = "notificatable_duplicates_dropped_total"
    static let missed = "notificatable_messages_missed_total"
    static let reconnects = "notificatable_reconnects_total"
    static let lagMessages = "notificatable_consumer_lag_messages"
    static let lagSeconds = "notificatable_consumer_lag_seconds"

    /// Counts per channel, for a page: one counter update per channel rather than per message.
    func count(_ label: String, _ perChannel: [String: Int]) {
        for (channel, amount) in perChannel { count(label, channel: channel, by: amount) }
    }

    func count(_ label: String, channel: String?, by amount: Int = 1) {
        guard amount > 0 else { return }
        var dimensions = [("consumer", consumer)]
        if let channel { dimensions.append(("channel", channel)) }
        Counter(label: label, dimensions: dimensions, factory: factory).increment(by: amount)
    }

    func lag(channel: String, messages: Int, seconds: Double) {
        let dimensions = [("consumer", consumer), ("channel", channel)]
        Gauge(label: Self.lagMessages, dimensions: dimensions, factory: factory).record(messages)
        Gauge(label: Self.lagSeconds, dimensions: dimensions, factory: factory).record(seconds)
    }

    /// Counts what an event on its way to the relay's handler says: duplicates dropped, messages missed,
    /// reconnections.
    func record(_ event: NotificationTransportEvent) {
        switch event.kind {
        case .duplicatesDropped:
            let amount = (event.error as? NotificationRelayError)?.duplicateCount ?? 1
            count(Self.duplicates, channel: event.channel, by: amount)
        case .messagesMissed:
            let amount = (event.error as? NotificationRelayError)?.missedCount ?? 1
            count(Self.missed, channel: event.channel, by: amount)
        case .reconnected:
            count(Self.reconnects, channel: nil)
        default:
            break
        }
    }
}
