import Dispatch
import Foundation
import Testing

@testable import Notificatable

@Suite struct ConcurrencyTests {
    /// 8 threads post, subscribe and dispose at random on one (center, name). The subscriptions made before the
    /// threads start and kept to the end must see every post exactly once; transient ones never see a post that
    /// began after their `dispose()` returned. (A delivery that began on another thread before `dispose()` returned
    /// may still finish; that is the documented contract.)
    @Test func subscribePostAndDisposeFromEightThreads() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let threads = 8
        let postsPerThread = 300
        let staying = (0..<16).map { _ in Counter() }
        let bag = DisposeBag()
        for counter in staying {
            handle.subscribe(center: center) { _ in counter.increment() }.store(in: bag)
        }
        let lateDeliveries = Counter()
        let transientDeliveries = Counter()
        let sequence = SequenceCounter()
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                var generator = SeededGenerator(seed: UInt64(thread + 1))
                var mine: [(Disposable, DisposedFlag)] = []
                for step in 0..<postsPerThread {
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0:
                        let flag = DisposedFlag()
                        let d = handle.subscribe(center: center) { note in
                            transientDeliveries.increment()
                            if let limit = flag.limit, note.userInfo > limit { lateDeliveries.increment() }
                        }
                        mine.append((d, flag))
                    case 1 where !mine.isEmpty:
                        let (d, flag) = mine.remove(at: Int.random(in: 0..<mine.count, using: &generator))
                        d.dispose()
                        flag.set(sequence.current)
                    default:
                        break
                    }
                    _ = step
                    handle.post(sequence.next(), center: center)
                }
                for (d, flag) in mine {
                    d.dispose()
                    flag.set(sequence.current)
                }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let total = threads * postsPerThread
        #expect(staying.map(\.count) == Array(repeating: total, count: staying.count))
        #expect(lateDeliveries.count == 0)
        #expect(transientDeliveries.count > 0)
        #expect(HubRegistry.shared.hub(for: handle.name, center: center)?.receiverCount == staying.count)
        bag.dispose()
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
    }

    /// Many (center, name) pairs created and torn down from several threads at once.
    @Test func hubsAreCreatedAndRemovedConcurrently() {
        let centers = (0..<4).map { _ in NotificationCenter() }
        let names = (0..<8).map { _ in Notificatable<Int>.name(uniqueName()) }
        let counter = Counter()
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                for round in 0..<200 {
                    let center = centers[(thread + round) % centers.count]
                    let handle = names[round % names.count]
                    let d = handle.subscribe(center: center) { note in
                        if note.userInfo == thread { counter.increment() }
                    }
                    handle.post(thread, center: center)
                    d.dispose()
                }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        // Only a thread posts its own number, and its subscription is live during its post.
        #expect(counter.count == 8 * 200)
        for center in centers {
            for handle in names {
                #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
            }
        }
    }

    @Test func newCenterAtADeadCentersAddressDoesNotReuseItsHub() throws {
        // Whether the allocator hands a dead center's memory to a new center depends on what other threads allocate
        // meanwhile (tests run in parallel), so the scenario is tried several times, alternating two search
        // strategies, and the assertions run on the first reuse. A new center must never reach the dead center's
        // subscription, so the same assertions also hold, more weakly, for a center at another address.
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        var reused: NotificationCenter?
        for attempt in 0..<40 where reused == nil {
            var address: ObjectIdentifier?
            do {
                let center = NotificationCenter()
                address = ObjectIdentifier(center)
                // Dropped on purpose: the center dies with a live subscription.
                _ = handle.subscribe(center: center) { _ in counter.increment() }
            }
            var kept: [NotificationCenter] = []
            for _ in 0..<5_000 {
                let candidate = NotificationCenter()
                if ObjectIdentifier(candidate) == address {
                    reused = candidate
                    break
                }
                // Even attempts free each candidate at once (the per-thread cache returns the last freed block);
                // odd attempts keep them, so every free block of that size is used up.
                if attempt % 2 == 1 { kept.append(candidate) }
            }
        }
        let center = reused ?? NotificationCenter()
        let fresh = Counter()
        let d = handle.subscribe(center: center) { _ in fresh.increment() }
        defer { d.dispose() }
        handle.post(1, center: center)
        #expect(counter.count == 0)
        #expect(fresh.count == 1)
        #expect(HubRegistry.shared.hub(for: handle.name, center: center)?.receiverCount == 1)
    }
}

/// The last post number drawn when a subscription's `dispose()` returned.
final class DisposedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    func set(_ limit: Int) { lock.withLock { value = limit } }
    var limit: Int? { lock.withLock { value } }
}

/// Numbers posts in the order they begin.
final class SequenceCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
    var current: Int { lock.withLock { value } }
}

struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
