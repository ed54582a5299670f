import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// A delivery queue that records, at enqueue time, which subscriber enqueued, then runs the delivery on a serial
/// queue.
struct ExtrasRecordingQueue: NotificationDeliveryQueue {
    let index: Int
    let order: ValueRecorder<Int>
    let runner: DispatchQueue

    func enqueueNotificationDelivery(_ delivery: @escaping @Sendable () -> Void) {
        order.append(index)
        runner.async(execute: delivery)
    }
}

/// A target for weak-target subscriptions.
final class ExtrasTarget: @unchecked Sendable {
    let received = ValueRecorder<Int>()
}

// MARK: - Main actor

@Suite(.timeLimit(.minutes(1))) struct ExtrasMainActorTests {
    /// Swift Testing on Linux services the main queue while a test awaits, so a hop from a background thread arrives.
    @Test func postFromABackgroundThreadIsDeliveredOnTheMainActor() async {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let postReturned = DispatchSemaphore(value: 0)
        let subscription = ExtrasDisposeBox()
        defer { subscription.disposable?.dispose() }
        let mainQueueKey = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: 1)
        let (value, onMainQueue, postHadReturned) = await withCheckedContinuation { continuation in
            subscription.disposable = handle.subscribeOnMainActor(center: center) { value in
                MainActor.assertIsolated()
                let returned = postReturned.wait(timeout: .now() + 10) == .success
                // The main thread, or, where `dispatchMain()` ended it (swift test on Linux), the main queue.
                let onMainQueue = Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == 1
                continuation.resume(returning: (value, onMainQueue, returned))
            }
            Thread {
                handle.post(42, center: center)
                postReturned.signal()
            }.start()
        }
        #expect(value == 42)
        #expect(onMainQueue)
        // The poster did not wait for the main actor: it returned while the handler was still to run.
        #expect(postHadReturned)
    }

    /// On Linux, `swift test` drains the main queue from a thread that is not the main thread; that is the main actor.
    @MainActor @Test func postOnTheMainActorIsDeliveredBeforePostReturns() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let never = Notificatable.withoutPayload(uniqueName())
        let received = ValueRecorder<Int>()
        let sender = Sender()
        let bag = DisposeBag()
        handle.subscribeOnMainActor(center: center) { value in received.append(value) }.store(in: bag)
        handle.subscribeOnMainActor(object: sender, center: center) { value in received.append(value * 10) }
            .store(in: bag)
        never.subscribeOnMainActor(center: center) { received.append(-1) }.store(in: bag)
        handle.post(1, center: center)
        handle.post(2, object: sender, center: center)
        never.post(center: center)
        #expect(received.values == [1, 2, 20, -1])
    }

    @MainActor @Test func disposeBeforeTheEnqueuedCallRunsPreventsIt() async {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let received = ValueRecorder<String>()
        let disposed = handle.subscribeOnMainActor(center: center) { _ in received.append("disposed") }
        let kept = handle.subscribeOnMainActor(center: center) { _ in received.append("kept") }
        let posted = DispatchSemaphore(value: 0)
        // The main actor is busy with this test, so both calls wait in the main queue.
        Thread {
            handle.post(1, center: center)
            posted.signal()
        }.start()
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(received.values.isEmpty)
        disposed.dispose()
        await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume() }
        }
        #expect(received.values == ["kept"])
        kept.dispose()
    }

    @Test func hopsKeepSubscriptionOrderAndNeverHandlesHopToo() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let never = Notification.Name(name).notificatable()
        let order = ValueRecorder<Int>()
        let bag = DisposeBag()
        let sender = Sender()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<20 {
                if index.isMultiple(of: 2) {
                    handle.subscribeOnMainActor(center: center) { _ in
                        MainActor.assertIsolated()
                        order.append(index)
                    }.store(in: bag)
                } else {
                    never.subscribeOnMainActor(object: sender, center: center) {
                        MainActor.assertIsolated()
                        order.append(index)
                    }.store(in: bag)
                }
            }
            handle.subscribeOnMainActor(center: center) { _ in continuation.resume() }.store(in: bag)
            Thread { handle.post(1, object: sender, center: center) }.start()
        }
        #expect(order.values == Array(0..<20))
    }

    @Test func failuresAreReportedOnThePostingThread() async {
        let center = NotificationCenter()
        let name = uniqueName()
        let failures = ValueRecorder<Bool>()
        let d = Notificatable<User>.name(name).subscribeOnMainActor(
            center: center,
            onFailure: { _ in failures.append(Thread.isMainThread) }
        ) { _ in }
        defer { d.dispose() }
        let done = DispatchSemaphore(value: 0)
        Thread {
            Notificatable<Int>.name(name).post(1, center: center)
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(failures.values == [false])
    }
}

// MARK: - Weak targets

@Suite(.timeLimit(.minutes(1))) struct ExtrasWeakTargetTests {
    @Test func deliversTargetAndPayloadWithoutKeepingTheTargetAlive() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        var target: ExtrasTarget? = ExtrasTarget()
        weak let weakTarget = target
        var probe: Probe? = Probe()
        weak let weakProbe = probe
        let d = handle.subscribe(target ?? ExtrasTarget(), center: center) { [probe] target, value in
            _ = probe
            target.received.append(value)
        }
        probe = nil
        #expect(weakProbe != nil)  // the handler holds it
        handle.post(1, center: center)
        handle.post(2, center: center)
        #expect(target?.received.values == [1, 2])
        #expect(d.isActive)
        target = nil
        #expect(weakTarget == nil)  // the subscription never held it
        #expect(d.isActive)  // not noticed yet
        handle.post(3, center: center)  // noticed here
        #expect(!d.isActive)
        #expect(!extrasHubExists(name, center))
        #expect(weakProbe == nil)  // the handler and its captures are released
    }

    @Test func objectFilterAndFailureHandlerWork() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let target = ExtrasTarget()
        let sender = Sender()
        let failures = FailureRecorder()
        let d = handle.subscribe(target, object: sender, center: center, onFailure: failures.handler) { t, v in
            t.received.append(v)
        }
        defer { d.dispose() }
        handle.post(1, object: sender, center: center)
        handle.post(2, object: Sender(), center: center)
        Notificatable<String>.name(name).post("x", object: sender, center: center)
        #expect(target.received.values == [1])
        #expect(failures.count == 1)
    }

    @Test func queueFormsLookTheTargetUpOnTheQueue() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let dispatchQueue = DispatchQueue(label: "extras.weak")
        let operationQueue = OperationQueue()
        operationQueue.maxConcurrentOperationCount = 1
        var target: ExtrasTarget? = ExtrasTarget()
        let kept = ExtrasTarget()
        let onDispatch = handle.subscribe(target ?? ExtrasTarget(), center: center, queue: dispatchQueue) { t, v in
            t.received.append(v)
        }
        let onOperations = handle.subscribe(kept, center: center, queue: operationQueue) { t, v in
            t.received.append(v * 10)
        }
        dispatchQueue.suspend()
        handle.post(1, center: center)  // enqueued while the target is alive
        target = nil  // gone before the queue runs the delivery
        dispatchQueue.resume()
        dispatchQueue.sync {}
        operationQueue.waitUntilAllOperationsAreFinished()
        #expect(!onDispatch.isActive)  // ended on the queue, when the lookup failed
        #expect(onOperations.isActive)
        #expect(kept.received.values == [10])
        onOperations.dispose()
        #expect(!extrasHubExists(name, center))
    }

    @Test func neverHandleForms() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notification.Name(name).notificatable()
        let queue = DispatchQueue(label: "extras.weak.never")
        let target = ExtrasTarget()
        let sender = Sender()
        let bag = DisposeBag()
        handle.subscribe(target, center: center) { t in t.received.append(1) }.store(in: bag)
        handle.subscribe(target, object: sender, center: center, queue: queue) { t in t.received.append(2) }
            .store(in: bag)
        handle.subscribe(target, center: center, queue: nil) { t in t.received.append(3) }.store(in: bag)
        queue.suspend()
        handle.post(object: sender, center: center)
        queue.resume()
        queue.sync {}
        #expect(target.received.values == [1, 3, 2])
    }

    @Test func aDeadTargetEndsAQueuedNeverSubscription() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notification.Name(name).notificatable()
        let queue = OperationQueue()
        var target: ExtrasTarget? = ExtrasTarget()
        let d = handle.subscribe(target ?? ExtrasTarget(), center: center, queue: queue) { t in t.received.append(1) }
        target = nil
        handle.post(center: center)
        queue.waitUntilAllOperationsAreFinished()
        #expect(!d.isActive)
        #expect(!extrasHubExists(name, center))
    }
}

// MARK: - Posting asynchronously with a priority

@Suite(.timeLimit(.minutes(1))) struct ExtrasPriorityPostTests {
    @Test func postReturnsBeforeDeliveryAndSubscribersSeePayloadAndObject() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let sender = Sender()
        let gate = DispatchSemaphore(value: 0)
        let delivered = DispatchSemaphore(value: 0)
        let received = ValueRecorder<(Int, Bool, Bool, Bool)>()
        let postingThread = ObjectIdentifier(Thread.current)
        let d = handle.subscribe(center: center) { note in
            // If postAsync delivered synchronously, the test would only signal the gate after this wait timed out.
            let gateOpened = gate.wait(timeout: .now() + 10) == .success
            received.append(
                (
                    note.userInfo, (note.object as AnyObject?) === sender, gateOpened,
                    ObjectIdentifier(Thread.current) == postingThread
                ))
            delivered.signal()
        }
        defer { d.dispose() }
        handle.postAsync(7, object: sender, center: center, priority: .userInitiated)
        #expect(received.count == 0)
        gate.signal()
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        let value = received.values.first
        #expect(value?.0 == 7)
        #expect(value?.1 == true)
        #expect(value?.2 == true)
        #expect(value?.3 == false)
    }

    @Test func postsOfOnePriorityKeepTheirOrder() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let received = ValueRecorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let d = handle.subscribe(center: center) { note in
            received.append(note.userInfo)
            if note.userInfo == 99 { done.signal() }
        }
        defer { d.dispose() }
        for value in 0..<100 {
            handle.postAsync(value, center: center, priority: .utility)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.values == Array(0..<100))
    }

    @Test func everyPriorityDeliversAndNeverHandlesPostAsynchronously() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let never = Notification.Name(name).notificatable()
        let sender = Sender()
        let received = ValueRecorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let bag = DisposeBag()
        handle.subscribe(center: center) { note in
            received.append(note.userInfo)
            done.signal()
        }.store(in: bag)
        never.subscribe(object: sender, center: center) {
            received.append(-1)
            done.signal()
        }.store(in: bag)
        let priorities: [DispatchQoS.QoSClass] = [
            .userInteractive, .userInitiated, .default, .utility, .background, .unspecified,
        ]
        for (index, priority) in priorities.enumerated() {
            handle.postAsync(index, center: center, priority: priority)
        }
        never.postAsync(object: sender, center: center, priority: .background)
        for _ in 0...priorities.count {
            #expect(done.wait(timeout: .now() + 10) == .success)
        }
        // The typed posts carry no object, so the Never subscriber, filtered on `sender`, sees only its own post.
        #expect(received.values.sorted() == [-1] + Array(0..<priorities.count))
    }
}

// MARK: - Is-active, owners, order

@Suite struct ExtrasSubscriptionStateTests {
    @Test func isActiveFollowsEveryWayASubscriptionEnds() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let explicit = handle.subscribe(center: center) { _ in }
        #expect(explicit.isActive && !explicit.isDisposed)
        explicit.dispose()
        #expect(!explicit.isActive && explicit.isDisposed)
        explicit.dispose()
        #expect(!explicit.isActive)

        var sender: Sender? = Sender()
        let filtered = handle.subscribe(object: sender ?? Sender(), center: center) { _ in }
        sender = nil
        #expect(filtered.isActive)  // not noticed until the next post of the name
        handle.post(1, center: center)
        #expect(!filtered.isActive)

        let bag = DisposeBag()
        let bagged = handle.subscribe(center: center) { _ in }
        bagged.store(in: bag)
        #expect(bagged.isActive)
        bag.dispose()
        #expect(!bagged.isActive)

        let selfDisposing = ExtrasDisposeBox()
        selfDisposing.disposable = handle.subscribe(center: center) { _ in selfDisposing.disposable?.dispose() }
        handle.post(2, center: center)
        #expect(selfDisposing.disposable?.isActive == false)

        let custom = Disposable {}
        #expect(custom.isActive)
        custom.dispose()
        #expect(!custom.isActive)
        #expect(!extrasHubExists(name, center))
    }

    /// Seeds 000 and 003 remove every observer of one owner at once; a bag per owner does that.
    @Test func aBagPerOwnerRemovesEverySubscriptionOfThatOwnerAtOnce() {
        final class Owner: @unchecked Sendable {
            let bag = DisposeBag()
            let counter = Counter()
        }
        let center = NotificationCenter()
        let names = (0..<4).map { _ in uniqueName() }
        let queue = DispatchQueue(label: "extras.owner")
        let owner = Owner()
        let other = Owner()
        let users = Notificatable<User>.name(names[0])
        let ints = Notificatable<Int>.name(names[1])
        let never = Notificatable.withoutPayload(names[2])
        let targeted = Notificatable<Int>.name(names[3])
        for member in [owner, other] {
            users.subscribe(center: center) { _ in member.counter.increment() }.store(in: member.bag)
            ints.subscribe(center: center, queue: queue) { _ in member.counter.increment() }.store(in: member.bag)
            never.subscribe(center: center) { _ in member.counter.increment() }.store(in: member.bag)
            targeted.subscribe(member, center: center) { m, _ in m.counter.increment() }.store(in: member.bag)
        }
        owner.bag.dispose()
        users.post(User(name: "Ada", age: 36), center: center)
        ints.post(1, center: center)
        never.post(center: center)
        targeted.post(2, center: center)
        queue.sync {}
        #expect(owner.counter.count == 0)
        #expect(other.counter.count == 4)
        #expect(names.map { extrasReceiverCount($0, center) } == [1, 1, 1, 1])
        other.bag.dispose()
        #expect(names.allSatisfy { !extrasHubExists($0, center) })
    }

    /// Handlers are invoked, or enqueued, in subscription order, whatever their form.
    @Test func hundredSubscribersOfEveryFormAreCalledOrEnqueuedInSubscriptionOrder() {
        let center = NotificationCenter()
        let name = uniqueName()
        let handle = Notificatable<Int>.name(name)
        let never = Notification.Name(name).notificatable()
        let sender = Sender()
        let target = ExtrasTarget()
        let order = ValueRecorder<Int>()
        let runner = DispatchQueue(label: "extras.order.runner")
        var subscriptions: [Disposable] = []

        func subscribe(_ index: Int) -> Disposable {
            let queue = ExtrasRecordingQueue(index: index, order: order, runner: runner)
            switch index % 7 {
            case 0: return handle.subscribe(center: center) { _ in order.append(index) }
            case 1: return handle.subscribe(object: sender, center: center) { _ in order.append(index) }
            case 2: return handle.subscribe(center: center, queue: queue) { _ in }
            case 3: return never.subscribe(center: center) { _ in order.append(index) }
            case 4: return never.subscribe(object: sender, center: center, queue: queue) {}
            case 5: return handle.subscribe(target, center: center) { _, _ in order.append(index) }
            default: return handle.subscribe(object: sender, center: center, queue: queue) { _ in }
            }
        }

        for index in 0..<100 {
            subscriptions.append(subscribe(index))
        }
        let posted = DispatchSemaphore(value: 0)
        Thread {
            handle.post(1, object: sender, center: center)
            posted.signal()
        }.start()
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(order.values == Array(0..<100))

        // Removing some and adding more keeps the survivors' order, followed by the newcomers.
        for index in stride(from: 0, to: 100, by: 3) {
            subscriptions[index].dispose()
        }
        for index in 100..<120 {
            subscriptions.append(subscribe(index))
        }
        let before = order.count
        handle.post(2, object: sender, center: center)
        let expected = (0..<120).filter { $0 >= 100 || !$0.isMultiple(of: 3) }
        #expect(Array(order.values.dropFirst(before)) == expected)
        runner.sync {}
        subscriptions.forEach { $0.dispose() }
        #expect(!extrasHubExists(name, center))
    }
}

/// Holds a disposable that its own handler disposes.
final class ExtrasDisposeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Disposable?

    var disposable: Disposable? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
