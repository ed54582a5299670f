import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// Whether (`name`, `center`) still has a hub, that is, a Foundation observer with at least one receiver.
func extrasHubExists(_ name: String, _ center: NotificationCenter) -> Bool {
    HubRegistry.shared.hub(for: Notification.Name(name), center: center) != nil
}

func extrasReceiverCount(_ name: String, _ center: NotificationCenter) -> Int {
    HubRegistry.shared.hub(for: Notification.Name(name), center: center)?.receiverCount ?? 0
}

@Suite(.timeLimit(.minutes(1))) struct ExtrasAsyncSequenceTests {
    @Test func payloadsArriveInOrderAndTheObjectFilterIsByIdentity() async {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sender = Sender()
        var all = handle.payloads(center: center).makeAsyncIterator()
        var filtered = handle.payloads(object: sender, center: center).makeAsyncIterator()
        handle.post(1, object: sender, center: center)
        handle.post(2, object: Sender(), center: center)  // equal by ==, not identical
        handle.post(3, object: sender, center: center)
        #expect(await all.next() == 1)
        #expect(await all.next() == 2)
        #expect(await all.next() == 3)
        #expect(await filtered.next() == 1)
        #expect(await filtered.next() == 3)
    }

    @Test func eachIteratorIsItsOwnObserver() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let sequence = handle.payloads(center: center)
        #expect(extrasReceiverCount(name, center) == 0)  // a sequence alone observes nothing
        var first = sequence.makeAsyncIterator()
        var second = sequence.makeAsyncIterator()
        #expect(extrasReceiverCount(name, center) == 2)
        handle.post(5, center: center)
        #expect(await first.next() == 5)
        #expect(await second.next() == 5)
    }

    @Test func decodeFailureIsReportedAndNeverEndsTheSequence() async throws {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<User>.name(name)
        let failures = FailureRecorder()
        var iterator = handle.payloads(center: center, onFailure: failures.handler).makeAsyncIterator()
        Notificatable<Int>.name(name).post(5, center: center)  // wrong payload type
        center.post(name: Notification.Name(name), object: nil, userInfo: ["name": 1])  // undecodable legacy post
        handle.post(User(name: "Ada", age: 36), center: center)
        #expect(await iterator.next() == User(name: "Ada", age: 36))
        #expect(failures.count == 2)
        #expect(failures.values.map(\.kind) == [.payloadTypeMismatch, .decodingFailed])
        #expect(extrasReceiverCount(name, center) == 1)
    }

    @Test func cancellingTheConsumingTaskRemovesTheObserver() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let sequence = handle.payloads(center: center)
        let (events, sink) = AsyncStream<Int>.makeStream()
        let task = Task {
            var iterator = sequence.makeAsyncIterator()
            sink.yield(-1)  // observing from here on
            while let value = await iterator.next() {
                sink.yield(value)
            }
            // The loop ended by cancellation while the iterator is still alive: the observer must be gone already.
            return extrasHubExists(name, center)
        }
        var received = events.makeAsyncIterator()
        #expect(await received.next() == -1)
        weak let hub = HubRegistry.shared.hub(for: Notification.Name(name), center: center)
        #expect(hub != nil)
        handle.post(7, center: center)
        #expect(await received.next() == 7)
        task.cancel()
        #expect(await task.value == false)
        #expect(hub == nil)  // the hub, and the Foundation observer, are released
        handle.post(8, center: center)
    }

    @Test func droppingTheIteratorRemovesTheObserverWhileADroppedDisposableKeepsObserving() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let counter = Counter()
        _ = handle.subscribe(center: center) { _ in counter.increment() }  // dropped at once
        do {
            var iterator = handle.payloads(center: center).makeAsyncIterator()
            #expect(extrasReceiverCount(name, center) == 2)
            handle.post(1, center: center)
            #expect(await iterator.next() == 1)
        }
        #expect(extrasReceiverCount(name, center) == 1)  // only the dropped Disposable's subscription is left
        handle.post(2, center: center)
        #expect(counter.count == 2)
    }

    @Test func droppedIteratorReleasesWhatTheSubscriptionHeld() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        var probe: Probe? = Probe()
        weak let weakProbe = probe
        weak var weakHub: NotificationHub?
        do {
            // The failure handler, like the yield closure, lives in the subscription's slot.
            var iterator = handle.payloads(center: center, onFailure: { [probe] _ in _ = probe })
                .makeAsyncIterator()
            probe = nil
            #expect(weakProbe != nil)
            weakHub = HubRegistry.shared.hub(for: Notification.Name(name), center: center)
            handle.post(1, center: center)
            #expect(await iterator.next() == 1)
        }
        #expect(weakHub == nil)
        #expect(weakProbe == nil)
    }

    @Test func bufferingPolicies() async {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        var unbounded = handle.payloads(center: center).makeAsyncIterator()
        var newest = handle.payloads(center: center, bufferingPolicy: .bufferingNewest(2)).makeAsyncIterator()
        var oldest = handle.payloads(center: center, bufferingPolicy: .bufferingOldest(2)).makeAsyncIterator()
        for value in 1...5 {
            handle.post(value, center: center)
        }
        var all: [Int] = []
        for _ in 1...5 {
            if let value = await unbounded.next() { all.append(value) }
        }
        #expect(all == [1, 2, 3, 4, 5])
        #expect(await newest.next() == 4)
        #expect(await newest.next() == 5)
        #expect(await oldest.next() == 1)
        #expect(await oldest.next() == 2)
        handle.post(6, center: center)
        #expect(await newest.next() == 6)
        #expect(await oldest.next() == 6)
        #expect(NotificationSequence<Int>.BufferingPolicy.bufferingNewest(-3) == .bufferingNewest(0))
        #expect(handle.payloads(center: center).bufferingPolicy == .unbounded)
    }

    @Test func theSequenceEndsOnceTheFilterObjectIsGone() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        var sender: Sender? = Sender()
        weak let weakSender = sender
        var iterator = handle.payloads(object: sender, center: center).makeAsyncIterator()
        handle.post(1, object: sender, center: center)
        #expect(await iterator.next() == 1)
        sender = nil
        #expect(weakSender == nil)
        handle.post(2, center: center)  // the subscription notices here
        #expect(await iterator.next() == nil)
        #expect(!extrasHubExists(name, center))
    }

    @Test func aSequenceWhoseFilterObjectDiedBeforeIterationIsEmpty() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        var sender: Sender? = Sender()
        let sequence = handle.payloads(object: sender, center: center)
        let never = Notification.Name(name).notificatable().notifications(object: sender, center: center)
        sender = nil
        var iterator = sequence.makeAsyncIterator()
        var neverIterator = never.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        #expect(await neverIterator.next() == nil)
        #expect(!extrasHubExists(name, center))
    }

    @Test func neverHandleSequence() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notification.Name(name).notificatable()
        let sender = Sender()
        var all = handle.notifications(center: center).makeAsyncIterator()
        var filtered = handle.notifications(object: sender, center: center, bufferingPolicy: .bufferingOldest(8))
            .makeAsyncIterator()
        handle.post(center: center)
        handle.post(object: sender, center: center)
        center.post(name: Notification.Name(name), object: sender, userInfo: ["anything": 1])
        var count = 0
        for _ in 0..<3 where await all.next() != nil {
            count += 1
        }
        #expect(count == 3)
        #expect(await filtered.next() != nil)
        #expect(await filtered.next() != nil)
        #expect(extrasReceiverCount(name, center) == 2)
    }

    @Test func forAwaitLoopEndsWithBreakAndRemovesTheObserver() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let poster = Thread {
            // Posts until the loop has started and ended again; posts before it started are lost, which is fine.
            var started = false
            for value in 0..<10_000_000 {
                if extrasHubExists(name, center) {
                    started = true
                } else if started {
                    return
                }
                handle.post(value, center: center)
                usleep(50)
            }
        }
        var seen: [Int] = []
        poster.start()
        for await value in handle.payloads(center: center) {
            seen.append(value)
            if seen.count == 3 { break }
        }
        #expect(seen.count == 3)
        #expect(seen == seen.sorted())
        #expect(!extrasHubExists(name, center))
    }
}
