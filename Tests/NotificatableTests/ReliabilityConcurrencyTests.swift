import Dispatch
import Foundation
import Testing

@testable import Notificatable

// Races for ThreadSanitizer (`scripts/tsan.sh` selects the suites whose names contain "Concurrency", and the
// failure-hook race below, which lives in the serialized suite that owns the global handler). Each test also checks
// an outcome that a race would break, so it is a test without TSan too.

/// Runs `body(thread)` on `threads` threads at once and waits for them.
private func reliabilityRunThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for thread in 0..<threads {
        group.enter()
        Thread {
            body(thread)
            group.leave()
        }.start()
    }
    return group.wait(timeout: .now() + 120) == .success
}

/// The highest post number a handler must not see: set when `dispose()` (or a bag's deinit) has returned.
private final class ReliabilityLimit: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    func set(_ limit: Int) { lock.withLock { value = limit } }
    var limit: Int? { lock.withLock { value } }
}

@Suite("Concurrency: races between subscribe, post, dispose and bags")
struct ReliabilityConcurrencyTests {
    /// Queued and object-filtered subscriptions, made, posted to and disposed from four threads, while their filter
    /// objects die: a post that begins after `dispose()` returned is never delivered, and the hub ends empty.
    @Test func queuedAndFilteredSubscriptionsRaceTheirPostsAndDisposal() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sequence = SequenceCounter()
        let late = Counter()
        let delivered = Counter()
        let queue = DispatchQueue(label: "reliability.race", attributes: .concurrent)
        let finished = reliabilityRunThreads(4) { thread in
            for round in 0..<150 {
                let limit = ReliabilityLimit()
                var sender: Sender? = Sender()
                let check: @Sendable (Int) -> Void = { number in
                    delivered.increment()
                    if let limit = limit.limit, number > limit { late.increment() }
                }
                let subscription: Disposable
                switch (thread + round) % 3 {
                case 0: subscription = handle.subscribe(object: sender ?? Sender(), center: center, queue: queue, check)
                case 1: subscription = handle.subscribe(center: center, queue: queue) { check($0.userInfo) }
                default: subscription = handle.subscribe(object: sender ?? Sender(), center: center, check)
                }
                handle.post(sequence.next(), object: sender, center: center)
                if round.isMultiple(of: 2) {
                    sender = nil  // the filter object dies; the next post ends the filtered subscription
                    handle.post(sequence.next(), center: center)
                }
                subscription.dispose()
                limit.set(sequence.current)
                handle.post(sequence.next(), object: sender, center: center)
            }
        }
        #expect(finished)
        queue.sync(flags: .barrier) {}
        #expect(late.count == 0)
        #expect(delivered.count > 0)
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
    }

    /// Bags are filled and dropped on three threads while a fourth posts: once a bag's deinit returns, no post that
    /// begins later reaches its subscriptions, and every subscription ends up detached.
    @Test func bagDeinitRacesAPost() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sequence = SequenceCounter()
        let late = Counter()
        let delivered = Counter()
        let stop = ReliabilityLimit()
        let finished = reliabilityRunThreads(4) { thread in
            if thread == 0 {
                while stop.limit == nil { handle.post(sequence.next(), center: center) }
                return
            }
            for _ in 0..<300 {
                let limit = ReliabilityLimit()
                do {
                    let bag = DisposeBag()
                    for _ in 0..<4 {
                        handle.subscribe(center: center) { note in
                            delivered.increment()
                            if let limit = limit.limit, note.userInfo > limit { late.increment() }
                        }.store(in: bag)
                    }
                    handle.post(sequence.next(), center: center)
                }
                limit.set(sequence.current)
            }
            if thread == 1 { stop.set(0) }
        }
        stop.set(0)
        #expect(finished)
        #expect(late.count == 0)
        #expect(delivered.count >= 3 * 300 * 4)
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
    }

    /// A `Disposable` disposed from several threads at once, while it is being delivered to: exactly one ends it.
    @Test func disposeFromManyThreadsWhileDelivering() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let ended = Counter()
        for _ in 0..<100 {
            let subscription = handle.subscribe(center: center) { _ in }
            let action = Disposable { ended.increment() }
            let finished = reliabilityRunThreads(3) { thread in
                if thread == 0 {
                    for number in 0..<20 { handle.post(number, center: center) }
                } else {
                    subscription.dispose()
                    action.dispose()
                }
            }
            #expect(finished)
            #expect(subscription.isDisposed)
        }
        #expect(ended.count == 100)
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
    }
}

extension HandleDefaultCenterTests {
    /// The global failure handler is replaced over and over while another thread posts notifications that fail:
    /// every failure reaches exactly one of the handlers installed during the race.
    ///
    /// It lives in this `.serialized` suite because it replaces global state that the suite's other tests read.
    @Test func concurrencyFailureHookRacesAPost() {
        let center = NotificationCenter()
        let name = uniqueName()
        let subscription = Notificatable<User>.name(name).subscribe(center: center) { _ in
            Issue.record("a wrong payload must not be delivered")
        }
        defer { subscription.dispose() }
        let first = Counter()
        let second = Counter()
        let firstHandler: NotificationDecodingFailure.Handler = { failure in
            if failure.name.rawValue == name { first.increment() }
        }
        let secondHandler: NotificationDecodingFailure.Handler = { failure in
            if failure.name.rawValue == name { second.increment() }
        }
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = firstHandler
        let posts = 3000
        let stop = ReliabilityLimit()
        let finished = reliabilityRunThreads(2) { thread in
            if thread == 0 {
                for number in 0..<posts { Notificatable<Int>.name(name).post(number, center: center) }
                stop.set(0)
            } else {
                var flip = false
                while stop.limit == nil {
                    NotificationDecodingFailure.handler = flip ? firstHandler : secondHandler
                    flip.toggle()
                }
            }
        }
        NotificationDecodingFailure.handler = previous
        #expect(finished)
        #expect(first.count + second.count == posts)
    }
}
