import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// MARK: - The outgoing queue

/// A continuation resumed once, when the sender reaches it (or the transport stops).
final class Barrier: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func resume() {
        let continuation = lock.withLock {
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }
}

/// What the sender does next.
enum SenderStep {
    case messages([(serverChannel: String, payload: String)])
    case barrier(Barrier)
    case connectionClosed
    case stopped
}

enum Outgoing {
    case message(serverChannel: String, payload: String)
    case barrier(Barrier)
}

/// A FIFO of outgoing items with O(1) amortized removal from the front.
struct OutgoingQueue {
    private var items: [Outgoing] = []
    private var head = 0
    private(set) var messageCount = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ item: Outgoing) {
        if case .message = item { messageCount += 1 }
        items.append(item)
    }

    mutating func prepend(_ item: Outgoing) {
        if case .message = item { messageCount += 1 }
        if head > 0 {
            head -= 1
            items[head] = item
        } else {
            items.insert(item, at: 0)
        }
    }

    /// Everything removed; the barriers are returned so their waiters can be resumed.
    mutating func removeAll() -> [Barrier] {
        var barriers: [Barrier] = []
        for item in items[head...] {
            if case .barrier(let barrier) = item { barriers.append(barrier) }
        }
        items = []
        head = 0
        messageCount = 0
        return barriers
    }

    /// A barrier alone, or up to `maximumCount` messages that stop before the next barrier and before a repeated
    /// (channel, payload) pair (PostgreSQL delivers identical notifications of one transaction only once). Nil when
    /// empty.
    mutating func takeBatch(maximumCount: Int) -> SenderStep? {
        guard !isEmpty else { return nil }
        if case .barrier(let barrier) = items[head] {
            advance(by: 1)
            return .barrier(barrier)
        }
        var batch: [(serverChannel: String, payload: String)] = []
        var seen = Set<Int>()
        var index = head
        while index < items.count, batch.count < maximumCount, case .message(let channel, let payload) = items[index] {
            var hasher = Hasher()
            hasher.combine(channel)
            hasher.combine(payload)
            if !seen.insert(hasher.finalize()).inserted && batch.contains(where: { $0 == (channel, payload) }) {
                break
            }
            batch.append((channel, payload))
            index += 1
        }
        messageCount -= batch.count
        advance(by: batch.count)
        return .messages(batch)
    }

    private mutating func advance(by count: Int) {
        head += count
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
