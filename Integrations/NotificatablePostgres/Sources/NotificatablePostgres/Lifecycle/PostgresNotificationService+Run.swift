import Foundation
import Logging
import Notificatable
import NotificatableRelay
import ServiceLifecycle

// The service's lifetime: the handlers' tasks, the check that something is forwarded, and the shutdown order.
extension PostgresNotificationService {
    /// Runs the handlers given to ``receive(_:handler:)`` and the processors of ``process(_:options:partitionKey:_:)``
    /// until graceful shutdown, then stops in order: no new messages are taken from the outbox, the handlers finish
    /// what they were handed (processors store their positions once their running handlers return), the positions are saved and
    /// what was posted is stored (the transport's `flush()`), and the relay and the transport stop. Cancelled
    /// instead (the group's shutdown timeout), it stops at once: positions stay where they were last saved, so the
    /// messages being handled are delivered again to the next process of this consumer name.
    public func run() async throws {
        let feed: AsyncStream<any ServiceReceiver> = lock.withLock {
            let (stream, continuation) = AsyncStream<any ServiceReceiver>.makeStream()
            for receiver in receivers { continuation.yield(receiver) }
            newReceivers = continuation
            return stream
        }
        if lock.withLock({ forwarded == 0 }) {
            report(NotificationTransportEvent(kind: .nothingForwarded, error: PostgresServiceError.nothingForwarded))
        }
        let graceful = await withTaskGroup(of: Void.self, returning: Bool.self) { group in
            group.addTask { [self] in
                // Throws CancellationError when the task is cancelled rather than shut down gracefully.
                let graceful = (try? await gracefulShutdown()) != nil && !Task.isCancelled
                await beginShutdown(graceful: graceful)
            }
            for await receiver in feed {
                group.addTask { await receiver.run() }
            }
            await group.waitForAll()
            return lock.withLock { !abandoned }
        }
        if graceful {
            let flushed = await withTaskCancellationHandler {
                await self.transport.flush()
            } onCancel: {
                self.transport.stop()
            }
            logStop(flushed)
        }
        relay.stop()
    }

    /// The one line a graceful stop logs: at `info` when everything was stored and saved, at `error` when the
    /// transport stopped first (its client stopped, say) or messages were not stored.
    private func logStop(_ flushed: DurablePostgresNotificationTransport.FlushResult) {
        let handlers = lock.withLock { receivers.count }
        let metadata: Logger.Metadata = [
            "notificatable.event": "stopped", "notificatable.handlers": "\(handlers)",
            "notificatable.count": "\(flushed.messagesNotStored)",
        ]
        if flushed.isComplete {
            transport.logger.info(
                "Notification service stopped: handlers finished, positions saved, everything posted stored.",
                metadata: metadata)
        } else {
            let reason = flushed.stopped ? ", the transport had stopped first" : ""
            transport.logger.error(
                "Notification service stopped without storing everything: \(flushed.messagesNotStored) posted message(s) not stored\(reason).",
                metadata: metadata)
        }
    }

    /// Stops taking messages from the outbox and lets the handlers end: after what they hold (graceful), or now.
    /// The pause returns once a message being handed over meanwhile has reached its handler's queue.
    private func beginShutdown(graceful: Bool) async {
        await transport.pauseDelivery()
        let (receivers, feed) = lock.withLock {
            shuttingDown = true
            if !graceful { abandoned = true }
            defer { newReceivers = nil }
            return (self.receivers, newReceivers)
        }
        feed?.finish()
        for receiver in receivers {
            if graceful { receiver.finish() } else { receiver.abandon() }
        }
    }

    /// Whether the positions may be saved: true once every message handed to a handler has been handled; false
    /// when the handlers were abandoned with messages unhandled.
    func handlersCaughtUp() async -> Bool {
        for receiver in lock.withLock({ receivers }) {
            guard await receiver.waitUntilIdle() else { return false }
        }
        return true
    }
}

/// An error in a `nothingForwarded` event.
public struct PostgresServiceError: Error, Sendable, CustomStringConvertible {
    private let text: String

    /// The service was started with no handle to receive or send.
    public static let nothingForwarded = PostgresServiceError(
        text: "The notification service runs but receives and sends nothing: call receive(_:) or send(_:) before "
            + "the group runs.")

    /// The sentence.
    public var description: String { text }
}

/// A handler run by the service.
protocol ServiceReceiver: AnyObject, Sendable {
    /// Hands the payloads over, awaiting each, until finished or abandoned.
    func run() async
    /// No more payloads will come: ``run()`` returns once it has handled those it holds.
    func finish()
    /// ``run()`` returns now; what it holds is not handled.
    func abandon()
    /// Waits until everything handed over has been handled (true), or the handler was abandoned first (false).
    func waitUntilIdle() async -> Bool
}

/// The payloads of one handle, waiting for its awaited handler.
final class AwaitedReceiver<Info: Sendable>: ServiceReceiver, @unchecked Sendable {
    private let handler: @Sendable (Info) async -> Void
    private let lock = NSLock()
    private var queue: [Info] = []
    private var head = 0
    private var busy = false
    private var finished = false
    private var abandoned = false
    private var waiter: CheckedContinuation<Info?, Never>?
    private var idleWaiters: [CheckedContinuation<Bool, Never>] = []
    var subscription: Disposable?

    init(handler: @escaping @Sendable (Info) async -> Void) {
        self.handler = handler
    }

    /// Queues a payload (on the thread that posted it).
    func enqueue(_ payload: Info) {
        let waiter: CheckedContinuation<Info?, Never>? = lock.withLock {
            guard !finished, !abandoned else { return nil }
            if let waiter = self.waiter {
                self.waiter = nil
                busy = true
                return waiter
            }
            queue.append(payload)
            return nil
        }
        waiter?.resume(returning: payload)
    }

    func run() async {
        while let payload = await next() {
            await handler(payload)
            let idle: [CheckedContinuation<Bool, Never>] = lock.withLock {
                busy = false
                guard head == queue.count else { return [] }
                defer { idleWaiters = [] }
                return idleWaiters
            }
            for waiter in idle { waiter.resume(returning: true) }
        }
        subscription?.dispose()
    }

    private func next() async -> Info? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Info?, Never>) in
                let (resume, payload): (Bool, Info?) = lock.withLock {
                    if abandoned { return (true, nil) }
                    if head < queue.count {
                        let payload = queue[head]
                        head += 1
                        if head == queue.count {
                            queue.removeAll(keepingCapacity: true)
                            head = 0
                        }
                        busy = true
                        return (true, payload)
                    }
                    if finished { return (true, nil) }
                    waiter = continuation
                    return (false, nil)
                }
                if resume { continuation.resume(returning: payload) }
            }
        } onCancel: {
            abandon()
        }
    }

    func finish() {
        let waiter: CheckedContinuation<Info?, Never>? = lock.withLock {
            finished = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }

    func abandon() {
        let (waiter, idle): (CheckedContinuation<Info?, Never>?, [CheckedContinuation<Bool, Never>]) = lock.withLock {
            abandoned = true
            defer {
                self.waiter = nil
                idleWaiters = []
            }
            return (self.waiter, idleWaiters)
        }
        waiter?.resume(returning: nil)
        for waiter in idle { waiter.resume(returning: false) }
    }

    func waitUntilIdle() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = lock.withLock {
                if abandoned { return false }
                if !busy && head == queue.count { return true }
                idleWaiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}
