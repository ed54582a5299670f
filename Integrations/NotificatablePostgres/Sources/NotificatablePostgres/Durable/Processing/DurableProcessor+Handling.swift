import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// One message through the handler: decoded as a relay would (authenticator, wire reader, the handle's conversion
// chain), handed to the handler, retried with backoff and jitter, parked after the last attempt.
extension DurableProcessor {
    // MARK: - Decoding

    /// Decodes `row` into an item; a message that cannot be used keeps the reason, and is parked when its turn comes.
    func item(_ row: DurableOutboxRow, redriven: Bool, index: Int) -> Item {
        let decoded = decode(row)
        var key: String?
        if case .success(let value) = decoded { key = partitionKey?(value.payload) }
        return Item(
            position: row.position, message: row.message, redriven: redriven, decoded: decoded, key: key, index: index)
    }

    func decode(_ row: DurableOutboxRow) -> Result<Decoded, DurableProcessingError> {
        let id = DurableDeliveryID(row.position)
        func refuse(_ kind: DurableProcessingError.Kind, _ reason: String, _ error: (any Error)? = nil)
            -> Result<Decoded, DurableProcessingError>
        {
            .failure(DurableProcessingError(kind: kind, id: id, channel: channel, reason: reason, underlying: error))
        }
        var data = Data(row.message.utf8)
        if let authenticator {
            do {
                data = try authenticator.open(data)
            } catch {
                return refuse(.unauthenticated, String(describing: error), error)
            }
        }
        let message: NotificationRelayMessage
        do {
            message = try NotificationRelayMessage(decoding: data)
        } catch {
            return refuse(.malformed, String(describing: error), error)
        }
        guard message.name == handle.name else {
            return refuse(
                .malformed, "The message is for \"\(message.name.rawValue)\", not \"\(handle.name.rawValue)\".")
        }
        // Read into a `userInfo` with room to spare (fewer `AnyHashable` comparisons per insertion), as the relay's
        // re-post is.
        let userInfo = message.payloadUserInfo ?? [:]
        do {
            let payload = try handle.payload(from: Notification(name: handle.name, object: nil, userInfo: userInfo))
            return .success(
                Decoded(payload: payload, name: message.name, sender: message.sender, sequence: message.sequence))
        } catch {
            return refuse(.undecodable, String(describing: error), error)
        }
    }

    // MARK: - Handling

    /// Hands `item` to the handler until it succeeds or the attempts run out (then parks it); `.abandoned` if the
    /// processor stops meanwhile. Throws only when the database cannot record a dead letter or a re-drive.
    func handle(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Outcome {
        let decoded: Decoded
        switch item.decoded {
        case .failure(let error):
            try await park(item, error: error, on: watch)
            return .done
        case .success(let value):
            decoded = value
        }
        let id = DurableDeliveryID(item.position)
        var attempt = 1
        while true {
            let acknowledgement = DurableAcknowledgement(
                schema: schema, consumer: consumer, channel: channel, id: id, redriven: item.redriven,
                logger: transport.logger)
            let delivery = DurableDelivery(
                payload: decoded.payload, id: id, attempt: attempt, channel: channel, name: decoded.name,
                sender: decoded.sender, sequence: decoded.sequence, isRedriven: item.redriven,
                acknowledgement: acknowledgement)
            do {
                try await call(delivery)
                if item.redriven && !acknowledgement.attempted { try await deleteDeadLetter(item, on: watch) }
                return .done
            } catch {
                if Task.isCancelled { return .abandoned }
                if acknowledgement.attempted, try await isAcknowledged(item, on: watch) { return .done }
                if attempt >= options.maximumAttempts {
                    let failure = DurableProcessingError(
                        kind: .handlerFailed, id: id, channel: channel, attempts: attempt,
                        reason: Self.describe(error), underlying: error)
                    try await park(item, error: failure, on: watch)
                    return .done
                }
                transport.logger.debug(
                    "handler failed, retrying",
                    metadata: ["channel": "\(channel)", "id": "\(id)", "attempt": "\(attempt)", "error": "\(error)"])
                do {
                    try await Task.sleep(for: Self.retryDelay(after: attempt, options: options))
                } catch {
                    return .abandoned
                }
                attempt += 1
            }
        }
    }

    /// Runs the handler: as it is, or inside a transaction on a connection of the processor's, acknowledged there.
    func call(_ delivery: DurableDelivery<Info>) async throws {
        switch body {
        case .plain(let handler):
            try await handler(delivery)
        case .transactional(let handler):
            try await pool.withConnection { connection in
                try await connection.withTransaction(logger: transport.logger) { connection in
                    try await handler(delivery, connection)
                    if !delivery.acknowledgement.attempted { try await delivery.acknowledge(in: connection) }
                }
            }
        }
    }

    /// The wait before attempt `attempt + 1`: the initial delay doubled per attempt, capped, times a random factor
    /// between 0.5 and 1 (jitter, so that many consumers failing together do not retry together). At most about
    /// 285 years, so that a huge configured delay cannot overflow the conversion to nanoseconds.
    static func retryDelay(after attempt: Int, options: DurableProcessingOptions) -> Duration {
        let initial = DurablePostgresNotificationTransport.seconds(options.initialRetryDelay)
        let maximum = DurablePostgresNotificationTransport.seconds(options.maximumRetryDelay)
        let delay = min(initial * Double(1 << min(max(attempt - 1, 0), 30)), maximum) * Double.random(in: 0.5...1)
        return .nanoseconds(Int64(min(max(0, delay), 9e9) * 1e9))
    }

    /// The handler's own error when PostgresNIO wrapped it in a transaction error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            if let inner = error.closureError { return String(describing: inner) }
            if let inner = error.commitError { return "commit failed: \(String(reflecting: inner))" }
        }
        return String(describing: error)
    }

    // MARK: - Dead letters

    func itemBindings(_ item: Item) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(consumer)
        bindings.append(channel)
        bindings.append(item.position.txid)
        bindings.append(item.position.id)
        return bindings
    }

    /// Stores `item` as a dead letter with `error`, and reports `messageParked`.
    func park(_ item: Item, error: DurableProcessingError, on watch: PostgresConnectionWatch) async throws {
        var bindings = itemBindings(item)
        bindings.append(item.message)
        bindings.append(error.reason)
        bindings.append(Int32(clamping: error.attempts))
        try await transport.storageQuery(schema.park, bindings, on: watch)
        report(NotificationTransportEvent(kind: .messageParked, name: handle.name, channel: channel, error: error))
    }

    func deleteDeadLetter(_ item: Item, on watch: PostgresConnectionWatch) async throws {
        try await transport.storageQuery(schema.deleteDeadLetter, itemBindings(item), on: watch)
    }

    /// Whether the handler's transaction that acknowledged `item` committed.
    func isAcknowledged(_ item: Item, on watch: PostgresConnectionWatch) async throws -> Bool {
        if item.redriven {
            // Acknowledging a re-driven dead letter deletes it.
            return try await transport.storageQuery(schema.deadLetterExists, itemBindings(item), on: watch).isEmpty
        }
        return try await !transport.storageQuery(schema.isAcknowledged, itemBindings(item), on: watch).isEmpty
    }
}

/// The connections on which ``DurablePostgresNotificationTransport/processTransactionally(_:options:partitionKey:authenticator:onEvent:_:)``
/// runs its handlers' transactions: at most one per running handler, kept between messages.
final class DurableProcessingConnections: @unchecked Sendable {
    private let transport: DurablePostgresNotificationTransport
    private let lock = NSLock()
    private var idle: [PostgresConnection] = []

    init(transport: DurablePostgresNotificationTransport) {
        self.transport = transport
    }

    func withConnection(_ body: (PostgresConnection) async throws -> Void) async throws {
        if case .client = transport.connectionSource {
            // The client's pool keeps the connections between messages; a handler's transaction leaves no state.
            do {
                return try await transport.connectionSource.withPooledConnection(
                    id: 0, logger: transport.logger, body)
            } catch let failure as PostgresConnectFailure {
                throw failure.error
            }
        }
        let connection: PostgresConnection
        if let reused = lock.withLock({ idle.popLast() }) {
            connection = reused
        } else {
            connection = try await PostgresConnection.connect(
                on: transport.eventLoopGroup.next(), configuration: transport.configuration.connection,
                id: Int.random(in: 1_000_000...9_999_999), logger: transport.logger)
        }
        do {
            try await body(connection)
            giveBack(connection)
        } catch {
            // A connection whose transaction was cut short by cancellation may be mid-statement: close it.
            if Task.isCancelled { try? await connection.close() } else { giveBack(connection) }
            throw error
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard !connection.isClosed else { return }
        lock.withLock { idle.append(connection) }
    }

    func closeAll() {
        let connections = lock.withLock {
            defer { idle = [] }
            return idle
        }
        for connection in connections { connection.close().whenComplete { _ in } }
    }
}
