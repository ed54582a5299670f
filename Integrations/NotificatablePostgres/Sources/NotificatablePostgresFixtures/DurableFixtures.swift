// What the durable-delivery tests, the peer and the benchmark share.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatableRelay

/// One message of the durable tests: who published it, on which of its streams (threads), its index there, and
/// optional filler.
public struct DurableItem: Codable, Sendable, Equatable {
    /// The publishing process's name.
    public var publisher: String
    /// The publisher's stream (thread) that posted it.
    public var stream: Int
    /// 0, 1, 2, … in the order the stream posted.
    public var index: Int
    /// Filler, to make large messages.
    public var blob: String?

    /// Creates an item.
    public init(publisher: String, stream: Int, index: Int, blob: String? = nil) {
        self.publisher = publisher
        self.stream = stream
        self.index = index
        self.blob = blob
    }

    /// The item as one output line: `item PUBLISHER STREAM INDEX`.
    public var line: String { "item \(publisher) \(stream) \(index)" }
}

/// The durable tests' handle.
public enum DurableHandles {
    /// The item handle.
    public static let item = Notificatable<DurableItem>.name("NotificatablePostgres.DurableItem")
}

extension TestServer {
    /// A durable transport configuration for the test server, or nil when NOTIFICATABLE_PG_PORT is not set.
    ///
    /// - Parameters:
    ///   - consumer: The consumer name.
    ///   - schema: The schema of the outbox tables.
    /// - Returns: The configuration, reconnecting quickly and polling often.
    public static func durableConfiguration(consumer: String, schema: String)
        -> DurablePostgresNotificationTransport.Configuration?
    {
        guard let plain = configuration else { return nil }
        var configuration = DurablePostgresNotificationTransport.Configuration(
            connection: plain.connection, consumer: consumer)
        configuration.schema = schema
        configuration.initialReconnectDelay = .milliseconds(50)
        configuration.maximumReconnectDelay = .milliseconds(500)
        configuration.pollInterval = .milliseconds(200)
        configuration.retentionInterval = nil
        return configuration
    }
}
