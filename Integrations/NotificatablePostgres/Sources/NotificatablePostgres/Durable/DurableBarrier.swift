import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

/// A continuation resumed once `count` parts have resumed it (or the transport stops).
final class DurableBarrier: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private var continuation: CheckedContinuation<Void, Never>?

    init(count: Int, _ continuation: CheckedContinuation<Void, Never>) {
        self.remaining = count
        self.continuation = continuation
    }

    func resume() {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            remaining -= 1
            guard remaining <= 0 else { return nil }
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }
}
