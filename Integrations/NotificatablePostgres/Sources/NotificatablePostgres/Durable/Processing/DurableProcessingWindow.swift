import Foundation

/// The messages a processor has read from the outbox and not yet passed with its stored position, in delivery
/// order: which are started, which are finished, the position that may be stored (just before the oldest message
/// not finished), and how many started messages a crash would hand out again (those after the stored position).
///
/// Indexes are absolute (they keep counting as the front is dropped).
struct DurableProcessingWindow {
    typealias Position = DurablePostgresNotificationTransport.Position

    private var positions: [Position] = []
    private var finished: [Bool] = []
    private var started: [Bool] = []
    /// The absolute index of `positions[0]`.
    private var base = 0
    /// Every message before this absolute index is finished.
    private(set) var finishedCount = 0
    /// Every message before this absolute index is covered by the stored position.
    private(set) var savedCount = 0
    /// The position that may be stored: the last message of the finished prefix.
    private(set) var acknowledged: Position
    /// The position stored.
    private(set) var saved: Position
    /// Started messages after the stored position: at most these are processed again after a crash.
    private(set) var unsavedStarted = 0

    init(start: Position) {
        acknowledged = start
        saved = start
    }

    /// How many messages are held.
    var count: Int { positions.count }

    /// Whether the finished prefix is ahead of the stored position.
    var needsSaving: Bool { finishedCount > savedCount }

    /// Adds the next message read; returns its index. `finished` for one acknowledged before (by a committed
    /// transaction of a handler, before a crash).
    mutating func append(_ position: Position, finished isFinished: Bool) -> Int {
        positions.append(position)
        finished.append(isFinished)
        started.append(false)
        let index = base + positions.count - 1
        advance()
        return index
    }

    /// The message at `index` was handed to its handler.
    mutating func markStarted(_ index: Int) {
        guard index >= savedCount, index - base < started.count else { return }
        started[index - base] = true
        unsavedStarted += 1
    }

    /// The message at `index` is finished (processed or parked).
    mutating func markFinished(_ index: Int) {
        guard index >= base, index - base < finished.count else { return }
        finished[index - base] = true
        advance()
    }

    private mutating func advance() {
        while finishedCount - base < finished.count, finished[finishedCount - base] {
            acknowledged = positions[finishedCount - base]
            finishedCount += 1
        }
    }

    /// The stored position now covers the first `count` messages, up to `position`.
    mutating func saved(upTo count: Int, position: Position) {
        guard count > savedCount else { return }
        for index in savedCount..<count where started[index - base] { unsavedStarted -= 1 }
        savedCount = count
        saved = position
        // Drop the covered front once it is large, so memory follows what is held, not what was read.
        let covered = savedCount - base
        if covered >= 1_024, covered * 2 >= positions.count {
            positions.removeFirst(covered)
            finished.removeFirst(covered)
            started.removeFirst(covered)
            base = savedCount
        }
    }
}

/// Wakes a processor's reader: a `NOTIFY` on the outbox's wake channel, a re-drive, or the end of its wait.
final class DurableProcessingSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0

    /// Wakes the waiters, or the next one to wait.
    func fire() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            guard !waiters.isEmpty else {
                fired = true
                return []
            }
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Waits until fired (returns at once if it was fired since the last wait), or `timeout` passes, or the task is
    /// cancelled.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.next() }
            await group.next()
            group.cancelAll()
        }
    }

    private func next() async {
        let id = lock.withLock {
            nextID += 1
            return nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = lock.withLock {
                    if fired || Task.isCancelled {
                        fired = false
                        return true
                    }
                    waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// The items read and not yet handed out, in order: taking the first is O(1) (an array's `remove(at: 0)` moved every
/// item behind it, a page's worth, for each message), taking a later one (a partition key held back the ones before
/// it) keeps the order of the rest.
struct DurablePendingItems<Element> {
    private var elements: [Element?] = []
    /// The offset in `elements` of the first item.
    private var head = 0

    /// How many items wait.
    var count: Int { elements.count - head }

    /// Whether none waits.
    var isEmpty: Bool { head == elements.count }

    /// The waiting items, first to last.
    var items: some Sequence<Element> { elements[head...].lazy.compactMap { $0 } }

    mutating func append(_ element: Element) { elements.append(element) }

    /// Removes every waiting item `predicate` picks; returns them, in order.
    mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        let waiting = Array(items)
        let removed = waiting.filter(predicate)
        guard !removed.isEmpty else { return [] }
        elements = waiting.filter { !predicate($0) }
        head = 0
        return removed
    }

    /// Takes the item `offset` places from the first.
    mutating func remove(at offset: Int) -> Element? {
        let index = head + offset
        guard index < elements.count else { return nil }
        if offset > 0 { return elements.remove(at: index) }
        defer {
            elements[index] = nil
            head += 1
            if head == elements.count {
                elements.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 256, head * 2 >= elements.count {
                elements.removeFirst(head)
                head = 0
            }
        }
        return elements[index]
    }
}
