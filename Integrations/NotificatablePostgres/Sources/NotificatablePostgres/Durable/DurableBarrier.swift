import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// A flush's continuation, resumed once `count` parts (the writer, the reader) have resumed it, or the transport
/// stops; it collects what the flush reports.
final class DurableBarrier: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private var result: DurablePostgresNotificationTransport.FlushResult
    private var continuation: CheckedContinuation<DurablePostgresNotificationTransport.FlushResult, Never>?

    /// - Parameters:
    ///   - count: How many parts must resume it.
    ///   - refused: The messages refused by `publish` since the previous flush, and the last one's error.
    ///   - continuation: The flush's continuation.
    init(
        count: Int, refused: (count: Int, lastError: PostgresTransportError?),
        _ continuation: CheckedContinuation<DurablePostgresNotificationTransport.FlushResult, Never>
    ) {
        self.remaining = count
        self.result = .init(messagesNotStored: refused.count, lastError: refused.lastError, stopped: false)
        self.continuation = continuation
    }

    /// One part is done.
    func resume() {
        finish { _ in }
    }

    /// The writer's part is done; `refused` messages before the barrier were dropped, the last with `lastError`.
    func resume(with refused: (count: Int, lastError: PostgresTransportError?)) {
        finish { result in
            result.messagesNotStored += refused.count
            if let lastError = refused.lastError { result.lastError = lastError }
        }
    }

    /// One part ends because the transport stopped before it was done.
    func interrupt() {
        finish { $0.stopped = true }
    }

    private func finish(_ update: (inout DurablePostgresNotificationTransport.FlushResult) -> Void) {
        typealias Outcome = DurablePostgresNotificationTransport.FlushResult
        let done: (CheckedContinuation<Outcome, Never>, Outcome)? = lock.withLock {
            update(&result)
            remaining -= 1
            guard remaining <= 0, let continuation else { return nil }
            self.continuation = nil
            return (continuation, result)
        }
        if let done { done.0.resume(returning: done.1) }
    }
}
