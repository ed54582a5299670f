import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Receiving: listeners, the bounded receive buffer and the delivery queue that hands messages to the relay.
extension PostgresNotificationTransport {
    // MARK: - Receiving

    /// Registers a listener; PostgresNIO sends `LISTEN "<serverChannel>"`, a statement `serverChannel` cannot break
    /// (see ``serverChannel(for:)``). Called with the lock held: it only queues work on the connection's event loop.
    func addListener(on connection: PostgresConnection, serverChannel: String) -> PostgresListener {
        PostgresListener(connection, channel: serverChannel) { [weak self] notification in
            self?.received(notification.payload, on: notification.channel)
        }
    }

    /// What the transport has received so far, and what waits for the relay.
    public var receiveStatistics: ReceiveStatistics {
        lock.withLock {
            var statistics = state.statistics
            statistics.buffered = state.inbox.count
            statistics.bufferedBytes = state.inbox.bytes
            return statistics
        }
    }

    /// Runs on the connection's event loop (the same one for every connection), in the order the server sent. Only
    /// queues the message for the delivery queue, so that the event loop goes on reading whatever subscribers do.
    func received(_ payload: String, on serverChannel: String) {
        if configuration.deliversOnEventLoop {
            let delivery: (handler: NotificationTransportHandler, channel: String)? = lock.withLock {
                guard !state.stopped, let handler = state.handler, let channel = state.channels[serverChannel] else {
                    return nil
                }
                state.statistics.received += 1
                state.statistics.delivered += 1
                return (handler, channel)
            }
            delivery?.handler.receive(Data(payload.utf8), on: delivery?.channel ?? serverChannel)
            return
        }
        let limit = configuration.maximumReceiveBufferBytes
        let (startDrain, bufferFull): (Bool, Bool) = lock.withLock {
            guard !state.stopped, state.handler != nil, let channel = state.channels[serverChannel] else {
                return (false, false)
            }
            state.statistics.received += 1
            switch state.inbox.append(channel: channel, payload: payload, limit: limit) {
            case .appended(let startDrain):
                return (startDrain, false)
            case .dropped(let firstOfEpisode):
                state.statistics.dropped += 1
                return (false, firstOfEpisode)
            }
        }
        if startDrain {
            deliveryQueue.async { [weak self] in self?.drain() }
        }
        if bufferFull {
            report(
                NotificationTransportEvent(
                    kind: .transportError, error: PostgresTransportError(kind: .receiveBufferFull, limit: limit)))
        }
    }

    /// Runs on the delivery queue: hands the waiting messages to the handler, in order, outside the lock, until none
    /// is left.
    func drain() {
        while true {
            let next: (handler: NotificationTransportHandler, batch: [ReceivedMessage])? = lock.withLock {
                guard !state.stopped, let handler = state.handler else {
                    state.inbox.removeAll()
                    return nil
                }
                let batch = state.inbox.takeBatch(maximumCount: 256)
                return batch.isEmpty ? nil : (handler, batch)
            }
            guard let next else { return }
            var bytes = 0
            var count = 0
            for message in next.batch {
                if isStopped { break }
                bytes += message.payload.utf8.count
                count += 1
                next.handler.receive(Data(message.payload.utf8), on: message.channel)
            }
            let limit = configuration.maximumReceiveBufferBytes
            let dropped: Int? = lock.withLock {
                state.statistics.delivered += count
                return state.inbox.delivered(count: next.batch.count, bytes: bytes, limit: limit)
            }
            if let dropped {
                report(
                    NotificationTransportEvent(
                        kind: .transportError, error: PostgresTransportError(kind: .messagesDropped, count: dropped)))
            }
        }
    }

    func report(_ event: NotificationTransportEvent) {
        let handler = lock.withLock { state.handler }
        handler?.report(event.graded)
    }
}
