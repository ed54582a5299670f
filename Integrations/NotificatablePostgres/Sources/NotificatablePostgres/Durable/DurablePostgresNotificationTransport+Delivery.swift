import Foundation
import Logging
import NotificatableRelay
import PostgresNIO

// What the reader may hand over, and when its positions may be saved: refused messages are kept (the saved position
// stays before the first one), delivery can be paused for a graceful shutdown, and a service can hold the saves
// until its handlers have handled what they were handed.
extension DurablePostgresNotificationTransport {
    /// Whether the reader may hand `message` over. With an ``Configuration/authenticator``, a message that does not
    /// open is refused: reported as `unauthenticatedMessage` (severity `error`), not handed over, and the position
    /// saved for `channel` stays before it until the process stops, so a process started with the right key
    /// receives it (and, again, what came after it on that channel).
    func admits(_ message: String, on channel: String, at position: Position) -> Bool {
        guard let authenticator = configuration.authenticator else { return true }
        do {
            _ = try authenticator.open(Data(message.utf8))
            return true
        } catch {
            let floor = Position(txid: position.txid, id: position.id - 1)
            lock.withLock {
                if let held = state.heldPositions[channel], held <= floor { return }
                state.heldPositions[channel] = floor
            }
            report(NotificationTransportEvent(kind: .unauthenticatedMessage, channel: channel, error: error))
            return false
        }
    }

    /// The position that may be saved for `channel` when the reader is at `position`: never past a refused message.
    /// Called with the lock held.
    func savablePosition(_ position: Position, for channel: String) -> Position {
        guard let held = state.heldPositions[channel] else { return position }
        return min(held, position)
    }

    /// Stops handing messages over: the reader reads no further, and its positions stay at the last message handed
    /// over. Returns once a message being handed over meanwhile has been (a subscriber without a queue has it), or
    /// when the task is cancelled. Used by ``PostgresNotificationService`` when it shuts down: it finishes its
    /// handlers after this, so no message reaches a finished handler and is then passed by a saved position.
    func pauseDelivery() async {
        let id: Int = lock.withLock {
            state.deliveryPaused = true
            state.nextPauseWaiter += 1
            return state.nextPauseWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = lock.withLock {
                    guard state.delivering, !Task.isCancelled else { return true }
                    state.pauseWaiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { state.pauseWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    var isDeliveryPaused: Bool { lock.withLock { state.deliveryPaused } }

    /// Makes every save of the positions wait for `gate` first, and skip the save when it answers false.
    func holdSaves(until gate: @escaping @Sendable () async -> Bool) {
        lock.withLock { state.saveGate = gate }
    }

    /// Whether the positions may be saved now, after waiting for the gate if there is one.
    func mayTakeSave() async -> Bool {
        guard let gate = lock.withLock({ state.saveGate }) else { return true }
        return await gate()
    }

    /// The handler a relay over this transport uses when it is given no `onEvent:`: the transport's logger.
    public var defaultRelayEventHandler: (@Sendable (NotificationTransportEvent) -> Void)? {
        let (logger, metrics) = (self.logger, self.metrics)
        return { event in
            metrics.record(event)
            logger.log(event)
        }
    }

    /// Sets the lag gauges of every channel with a position: how many messages are stored after it, and the age of
    /// the oldest of them. One statement, every poll interval, after a read round (so normally over few rows).
    func measureLag(on connection: PostgresConnectionWatch) async throws {
        try await checkStall(on: connection)
        let positions: [String: Position] = lock.withLock { state.channels.compactMapValues { $0 } }
        guard !positions.isEmpty else { return }
        let channels = positions.keys.sorted()
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(channels)
        bindings.append(channels.compactMap { positions[$0]?.txid })
        bindings.append(channels.compactMap { positions[$0]?.id })
        for row in try await storageQuery(schema.consumerLag, bindings, on: connection) {
            let (channel, messages, seconds) = try row.decode((String, Int64, Double).self)
            metrics.lag(channel: channel, messages: Int(messages), seconds: seconds)
        }
    }

    /// Reports ``PostgresTransportError/Kind/deliveryStalled`` once per transaction that has held delivery back for
    /// longer than ``Configuration/stallThreshold``.
    func checkStall(on connection: PostgresConnectionWatch) async throws {
        guard let threshold = configuration.stallThreshold else { return }
        let channels: [String] = lock.withLock { Array(state.channels.keys) }
        guard !channels.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(Self.seconds(threshold))
        bindings.append(channels)
        let rows = try await storageQuery(schema.stallingTransaction, bindings, on: connection)
        let stall = try rows.first.map { try $0.decode((Int32, Double).self) }
        let report: Bool = lock.withLock {
            let pid = stall.map { Int($0.0) }
            defer { state.reportedStall = pid }
            return pid != nil && pid != state.reportedStall
        }
        if report, let stall {
            let error = PostgresTransportError(kind: .deliveryStalled, backendPID: Int(stall.0), seconds: stall.1)
            self.report(NotificationTransportEvent(kind: .transportError, error: error))
        }
    }
}
