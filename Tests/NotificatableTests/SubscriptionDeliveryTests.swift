import Dispatch
import Foundation
import Testing

@testable import Notificatable

@Suite struct SubscriptionDeliveryTests {
    @Test func typedPostReachesTypedSubscriberWithObject() {
        let center = NotificationCenter()
        let sender = Sender()
        let handle = Notificatable<User>.name(uniqueName())
        let received = ValueRecorder<(User, Bool)>()
        let d = handle.subscribe(center: center) { note in
            received.append((note.userInfo, (note.object as AnyObject?) === sender))
        }
        defer { d.dispose() }
        handle.post(User(name: "Ada", age: 36), object: sender, center: center)
        #expect(received.count == 1)
        #expect(received.values.first?.0 == User(name: "Ada", age: 36))
        #expect(received.values.first?.1 == true)
    }

    @Test func synchronousDeliveryHappensBeforePostReturnsOnPostingThread() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let threads = ValueRecorder<Bool>()
        let d = handle.subscribe(center: center) { _ in threads.append(Thread.isMainThread) }
        defer { d.dispose() }
        let done = DispatchSemaphore(value: 0)
        let seenInsidePost = Counter()
        Thread {
            handle.post(1, center: center)
            if threads.count == 1 { seenInsidePost.increment() }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seenInsidePost.count == 1)
        #expect(threads.values == [false])
    }

    @Test func nonSendablePayloadIsDeliveredAsIs() {
        let center = NotificationCenter()
        let handle = Notificatable<OpaqueBox>.name(uniqueName())
        let box = OpaqueBox(1)
        let d = handle.subscribe(center: center) { note in note.userInfo.value += 1 }
        defer { d.dispose() }
        handle.post(box, center: center)
        #expect(box.value == 2)
    }

    @Test func deliveryFollowsRegistrationOrder() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let order = ValueRecorder<Int>()
        let bag = DisposeBag()
        for index in 0..<50 {
            handle.subscribe(center: center) { _ in order.append(index) }.store(in: bag)
        }
        handle.post(0, center: center)
        #expect(order.values == Array(0..<50))
    }

    @Test func orderIsKeptAfterRemovalsAndAcrossPayloadAndNeverHandles() {
        let center = NotificationCenter()
        let name = uniqueName()
        let typed = Notificatable<Int>.name(name)
        let never = Notification.Name(name).notificatable()
        let order = ValueRecorder<Int>()
        var disposables: [Disposable] = []
        for index in 0..<20 {
            if index.isMultiple(of: 2) {
                disposables.append(typed.subscribe(center: center) { _ in order.append(index) })
            } else {
                disposables.append(never.subscribe(center: center) { _ in order.append(index) })
            }
        }
        for index in stride(from: 0, to: 20, by: 3) { disposables[index].dispose() }
        typed.post(7, center: center)
        #expect(order.values == (0..<20).filter { !$0.isMultiple(of: 3) })
        disposables.forEach { $0.dispose() }
    }

    @Test func neverHandleFiresForEveryPostWhateverTheUserInfo() {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let never = name.notificatable()
        let objects = ValueRecorder<String?>()
        let d = never.subscribe(center: center) { object in objects.append(object as? String) }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: nil)
        center.post(name: name, object: "a", userInfo: ["x": 1])
        center.post(name: name, object: nil, userInfo: [NotificatableUserInfoKey: "not a Never"])
        never.post(object: "b", center: center)
        #expect(objects.values == [nil, "a", nil, "b"])
    }

    @Test func otherNamesAndOtherCentersAreNotDelivered() {
        let center = NotificationCenter()
        let other = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let otherHandle = Notificatable<Int>.name(uniqueName())
        let counter = Counter()
        let d = handle.subscribe(center: center) { _ in counter.increment() }
        defer { d.dispose() }
        otherHandle.post(1, center: center)
        handle.post(1, center: other)
        #expect(counter.count == 0)
        handle.post(1, center: center)
        #expect(counter.count == 1)
    }

    @Test func postingFromInsideAHandlerIsDelivered() {
        let center = NotificationCenter()
        let first = Notificatable<Int>.name(uniqueName())
        let second = Notificatable.withoutPayload(uniqueName())
        let counter = Counter()
        let bag = DisposeBag()
        first.subscribe(center: center) { _ in second.post(center: center) }.store(in: bag)
        second.subscribe(center: center) { _ in counter.increment() }.store(in: bag)
        first.post(1, center: center)
        #expect(counter.count == 1)
    }
}

// MARK: - Object filter

@Suite struct SubscriptionObjectFilterTests {
    @Test func filterComparesIdentityNotEquality() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sender = Sender()
        let equalButOther = Sender()
        #expect(sender == equalButOther)
        let received = ValueRecorder<Int>()
        let d = handle.subscribe(object: sender, center: center) { value in received.append(value) }
        defer { d.dispose() }
        handle.post(1, object: equalButOther, center: center)
        handle.post(2, center: center)
        handle.post(3, object: sender, center: center)
        handle.post(4, object: "a value", center: center)
        #expect(received.values == [3])
        withExtendedLifetime(sender) {}
    }

    @Test func neverFilterComparesIdentity() {
        let center = NotificationCenter()
        let never = Notificatable.withoutPayload(uniqueName())
        let sender = Sender()
        let counter = Counter()
        let d = never.subscribe(object: sender, center: center) { counter.increment() }
        defer { d.dispose() }
        never.post(object: Sender(), center: center)
        never.post(center: center)
        never.post(object: sender, center: center)
        #expect(counter.count == 1)
        withExtendedLifetime(sender) {}
    }

    @Test func filterDoesNotKeepTheObjectAlive() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        weak var weakSender: Sender?
        let d: Disposable
        do {
            let sender = Sender()
            weakSender = sender
            d = handle.subscribe(object: sender, center: center) { _ in }
        }
        #expect(weakSender == nil)
        handle.post(1, center: center)
        // The subscription noticed at this post that its object is gone, and ended.
        #expect(d.isDisposed)
    }

    /// Foundation on Linux compares filter objects by address: a new object at a dead one's address matches. Ours
    /// must not. The loop allocates until the allocator hands out the dead object's address again.
    @Test func deadFilterObjectIsNotMatchedByANewObjectAtTheSameAddress() throws {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let never = Notificatable.withoutPayload(uniqueName())
        let counter = Counter()
        var address: ObjectIdentifier?
        var disposables: [Disposable] = []
        do {
            let sender = Sender()
            address = ObjectIdentifier(sender)
            disposables.append(handle.subscribe(object: sender, center: center) { _ in counter.increment() })
            disposables.append(never.subscribe(object: sender, center: center) { counter.increment() })
        }
        var keep: [Sender] = []
        var reused: Sender?
        for _ in 0..<100_000 {
            let candidate = Sender()
            if ObjectIdentifier(candidate) == address {
                reused = candidate
                break
            }
            keep.append(candidate)
        }
        let impostor = try #require(reused, "the allocator never reused the address")
        handle.post(1, object: impostor, center: center)
        never.post(object: impostor, center: center)
        #expect(counter.count == 0)
        #expect(disposables.allSatisfy { $0.isDisposed })
        _ = keep
    }
}

// MARK: - Queues

@Suite struct SubscriptionQueueTests {
    @Test func operationQueueDeliveryRunsOnTheQueue() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let done = DispatchSemaphore(value: 0)
        let onQueue = ValueRecorder<Bool>()
        let d = handle.subscribe(center: center, queue: queue) { note in
            onQueue.append(OperationQueue.current === queue && note.userInfo == 5)
            done.signal()
        }
        defer { d.dispose() }
        handle.post(5, center: center)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(onQueue.values == [true])
    }

    @Test func dispatchQueueDeliveryRunsOnTheQueue() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = DispatchQueue(label: "delivery")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let done = DispatchSemaphore(value: 0)
        let onQueue = ValueRecorder<Bool>()
        let sender = Sender()
        let bag = DisposeBag()
        handle.subscribe(center: center, queue: queue) { note in
            onQueue.append(DispatchQueue.getSpecific(key: key) == 42 && note.userInfo == 5)
            done.signal()
        }.store(in: bag)
        handle.subscribe(object: sender, center: center, queue: queue) { value in
            onQueue.append(DispatchQueue.getSpecific(key: key) == 42 && value == 5)
            done.signal()
        }.store(in: bag)
        handle.post(5, object: sender, center: center)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(onQueue.values == [true, true])
    }

    @Test func neverHandleQueueDelivery() {
        let center = NotificationCenter()
        let never = Notificatable.withoutPayload(uniqueName())
        let queue = DispatchQueue(label: "never")
        let operations = OperationQueue()
        let done = DispatchSemaphore(value: 0)
        let sender = Sender()
        let bag = DisposeBag()
        never.subscribe(center: center, queue: queue) { object in
            if (object as AnyObject?) === sender { done.signal() }
        }.store(in: bag)
        never.subscribe(object: sender, center: center, queue: operations) { done.signal() }.store(in: bag)
        never.post(object: sender, center: center)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(done.wait(timeout: .now() + 10) == .success)
    }

    /// Foundation on Linux makes the poster wait until the OperationQueue ran the block; we never wait.
    @Test func posterDoesNotWaitForQueuedDelivery() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = OperationQueue()
        queue.isSuspended = true
        let dispatchQueue = DispatchQueue(label: "suspended")
        dispatchQueue.suspend()
        let counter = Counter()
        let bag = DisposeBag()
        handle.subscribe(center: center, queue: queue) { _ in counter.increment() }.store(in: bag)
        handle.subscribe(center: center, queue: dispatchQueue) { _ in counter.increment() }.store(in: bag)
        let posted = DispatchSemaphore(value: 0)
        Thread {
            handle.post(1, center: center)
            posted.signal()
        }.start()
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(counter.count == 0)
        queue.isSuspended = false
        dispatchQueue.resume()
        queue.waitUntilAllOperationsAreFinished()
        dispatchQueue.sync {}
        #expect(counter.count == 2)
    }

    @Test func queuedDeliveriesKeepSubscriptionOrder() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = DispatchQueue(label: "ordered")
        let order = ValueRecorder<Int>()
        let bag = DisposeBag()
        for index in 0..<30 {
            handle.subscribe(center: center, queue: queue) { _ in order.append(index) }.store(in: bag)
        }
        handle.post(1, center: center)
        queue.sync {}
        #expect(order.values == Array(0..<30))
    }
}
