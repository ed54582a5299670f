import Dispatch
import Foundation
import Testing

@testable import Notificatable

@Suite struct DisposableTests {
    @Test func disposeBeforeAPostPreventsDelivery() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        let d = handle.subscribe(center: center) { _ in counter.increment() }
        #expect(d.isActive)
        d.dispose()
        #expect(!d.isActive)
        handle.post(1, center: center)
        #expect(counter.count == 0)
    }

    @Test func disposeAfterAPostStopsLaterDeliveries() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        let d = handle.subscribe(center: center) { _ in counter.increment() }
        handle.post(1, center: center)
        d.dispose()
        d.dispose()
        handle.post(2, center: center)
        #expect(counter.count == 1)
    }

    @Test func disposeFromInsideTheHandler() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        let later = Counter()
        let slot = ValueRecorder<Disposable>()
        let d = handle.subscribe(center: center) { _ in
            counter.increment()
            slot.values.first?.dispose()
        }
        slot.append(d)
        let other = handle.subscribe(center: center) { _ in later.increment() }
        defer { other.dispose() }
        handle.post(1, center: center)
        handle.post(2, center: center)
        #expect(counter.count == 1)
        #expect(later.count == 2)
        #expect(d.isDisposed)
    }

    @Test func disposeWhileDeliveriesAreQueuedOnAnOperationQueue() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = OperationQueue()
        queue.isSuspended = true
        let disposed = Counter()
        let kept = Counter()
        let d = handle.subscribe(center: center, queue: queue) { _ in disposed.increment() }
        let control = handle.subscribe(center: center, queue: queue) { _ in kept.increment() }
        defer { control.dispose() }
        handle.post(1, center: center)
        handle.post(2, center: center)
        #expect(queue.operationCount == 4)
        d.dispose()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(disposed.count == 0)
        #expect(kept.count == 2)
    }

    @Test func disposeWhileDeliveriesAreQueuedOnADispatchQueue() {
        let center = NotificationCenter()
        let never = Notificatable.withoutPayload(uniqueName())
        let queue = DispatchQueue(label: "queued")
        queue.suspend()
        let disposed = Counter()
        let kept = Counter()
        let d = never.subscribe(center: center, queue: queue) { _ in disposed.increment() }
        let control = never.subscribe(center: center, queue: queue) { _ in kept.increment() }
        defer { control.dispose() }
        never.post(center: center)
        d.dispose()
        queue.resume()
        queue.sync {}
        #expect(disposed.count == 0)
        #expect(kept.count == 1)
    }

    @Test func disposingTheLastSubscriptionRemovesTheHub() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let a = handle.subscribe(center: center) { _ in }
        let b = handle.subscribe(center: center) { _ in }
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) != nil)
        a.dispose()
        #expect(HubRegistry.shared.hub(for: handle.name, center: center)?.receiverCount == 1)
        b.dispose()
        #expect(HubRegistry.shared.hub(for: handle.name, center: center) == nil)
        // And a new subscription after that works again.
        let counter = Counter()
        let c = handle.subscribe(center: center) { _ in counter.increment() }
        handle.post(1, center: center)
        c.dispose()
        #expect(counter.count == 1)
    }

    @Test func customDisposableRunsItsActionOnce() {
        let counter = Counter()
        let d = Disposable { counter.increment() }
        d.dispose()
        d.dispose()
        #expect(counter.count == 1)
        #expect(d.isDisposed)
    }

    @Test func droppedDisposableKeepsItsSubscription() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        do {
            _ = handle.subscribe(center: center) { _ in counter.increment() }
        }
        handle.post(1, center: center)
        #expect(counter.count == 1)
        // Clean up through the hub, since the disposable is gone.
        let d = handle.subscribe(center: center) { _ in }
        d.dispose()
    }
}

@Suite struct DisposeBagTests {
    @Test func bagDeinitDisposesItsSubscriptions() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        var disposable: Disposable?
        do {
            let bag = DisposeBag()
            let d = handle.subscribe(center: center) { _ in counter.increment() }
            d.store(in: bag)
            disposable = d
            handle.post(1, center: center)
        }
        handle.post(2, center: center)
        #expect(counter.count == 1)
        #expect(disposable?.isDisposed == true)
    }

    @Test func bagDisposeDisposesAllAndAddingLaterDisposesAtOnce() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        let bag = DisposeBag()
        for _ in 0..<3 {
            handle.subscribe(center: center) { _ in counter.increment() }.store(in: bag)
        }
        handle.post(1, center: center)
        bag.dispose()
        handle.post(2, center: center)
        #expect(counter.count == 3)

        let late = handle.subscribe(center: center) { _ in counter.increment() }
        #expect(late.isActive)
        late.store(in: bag)
        #expect(late.isDisposed)
        handle.post(3, center: center)
        #expect(counter.count == 3)
        #expect(bag.isDisposed)
    }

    @Test func bagDropsMembersDisposedElsewhere() {
        let bag = DisposeBag()
        let counter = Counter()
        for _ in 0..<1000 {
            let d = Disposable { counter.increment() }
            d.store(in: bag)
            d.dispose()
        }
        bag.dispose()
        #expect(counter.count == 1000)
    }
}

@Suite struct DisposalMemoryTests {
    @Test func disposeReleasesHandlerAndCapturedValues() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        weak var weakProbe: Probe?
        let d: Disposable
        do {
            let probe = Probe()
            weakProbe = probe
            d = handle.subscribe(center: center) { _ in withExtendedLifetime(probe) {} }
        }
        handle.post(1, center: center)
        #expect(weakProbe != nil)  // alive while subscribed: the check below can fail
        d.dispose()
        #expect(weakProbe == nil)
        _ = d
    }

    @Test func bagDeinitReleasesHandlerAndCapturedValues() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sender = Sender()
        weak var weakProbe: Probe?
        weak var weakFailureProbe: Probe?
        var bag: DisposeBag? = DisposeBag()
        do {
            let probe = Probe()
            let failureProbe = Probe()
            weakProbe = probe
            weakFailureProbe = failureProbe
            if let bag {
                handle.subscribe(
                    object: sender, center: center,
                    onFailure: { _ in
                        withExtendedLifetime(failureProbe) {}
                    }
                ) { _ in withExtendedLifetime(probe) {} }.store(in: bag)
            }
        }
        #expect(weakProbe != nil)
        #expect(weakFailureProbe != nil)
        bag = nil
        #expect(weakProbe == nil)
        #expect(weakFailureProbe == nil)
        withExtendedLifetime(sender) {}
    }

    @Test func queuedDeliveryDoesNotKeepHandlerAliveAfterDispose() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = OperationQueue()
        queue.isSuspended = true
        weak var weakProbe: Probe?
        let d: Disposable
        do {
            let probe = Probe()
            weakProbe = probe
            d = handle.subscribe(center: center, queue: queue) { _ in withExtendedLifetime(probe) {} }
        }
        handle.post(1, center: center)
        d.dispose()
        #expect(weakProbe == nil)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
    }
}
