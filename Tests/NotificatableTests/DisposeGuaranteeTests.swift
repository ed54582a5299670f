import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// A weak reference that a test reads from several threads.
final class WeakWatch: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
    var isAlive: Bool { lock.withLock { object != nil } }
}

/// Pins what `dispose()` guarantees, as the threading article and `Disposable` state it: no new call begins after it
/// returns; the handler and its captures are released by it unless a call is under way; a delivery waiting on a
/// queue holds the payload's object, not the handler.
@Suite("dispose() guarantees")
struct DisposeGuaranteeTests {
    /// A handler that captures `probe`, on a suspended queue, with one delivery waiting.
    private func subscribeOnSuspendedQueue(
        _ handle: Notificatable<Int>, center: NotificationCenter, queue: OperationQueue, calls: Counter
    ) -> (Disposable, handler: WeakWatch, object: WeakWatch) {
        let captured = Probe()
        let object = Probe()
        let d = handle.subscribe(center: center, queue: queue) { [captured] _ in
            _ = captured
            calls.increment()
        }
        handle.post(1, object: object, center: center)
        return (d, WeakWatch(captured), WeakWatch(object))
    }

    @Test func aWaitingDeliveryHoldsTheObjectButNotTheHandlerAndDoesNothingWhenItRuns() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let calls = Counter()
        let (d, handler, object) = subscribeOnSuspendedQueue(handle, center: center, queue: queue, calls: calls)
        #expect(handler.isAlive)
        #expect(object.isAlive)  // the waiting delivery holds it
        d.dispose()
        #expect(!handler.isAlive)  // released when dispose() returned, although a delivery still waits
        #expect(object.isAlive)  // still waiting on the suspended queue
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(calls.count == 0)  // the waiting delivery did nothing
        // The operation queue may keep the finished operation a little longer, so the object's release is not
        // pinned here; the delivery itself no longer needs it.
    }

    /// A handler running on another thread keeps its captures until it returns, and dispose() does not wait for it.
    @Test func aCallUnderWayKeepsTheHandlerUntilItReturns() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let posted = DispatchSemaphore(value: 0)
        let (d, handler): (Disposable, WeakWatch) = {
            let captured = Probe()
            let d = handle.subscribe(center: center) { [captured] _ in
                _ = captured
                entered.signal()
                proceed.wait()
            }
            return (d, WeakWatch(captured))
        }()
        Thread {
            handle.post(1, center: center)
            posted.signal()
        }.start()
        entered.wait()
        d.dispose()  // returns while the call is still running
        #expect(handler.isAlive)  // the running call holds the handler
        proceed.signal()
        posted.wait()
        #expect(!handler.isAlive)  // released when the call returned
    }

    /// Disposing from inside the handler: the running call keeps the handler until it returns; later posts don't call it.
    @Test func disposingFromInsideTheHandlerReleasesItWhenTheCallReturns() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let own = ValueRecorder<Disposable>()
        let aliveInsideTheCall = ValueRecorder<Bool>()
        let handler: WeakWatch = {
            let captured = Probe()
            let watch = WeakWatch(captured)
            let d = handle.subscribe(center: center) { [captured] _ in
                _ = captured
                own.values.first?.dispose()
                aliveInsideTheCall.append(watch.isAlive)
            }
            own.append(d)
            return watch
        }()
        handle.post(1, center: center)
        #expect(aliveInsideTheCall.values == [true])
        #expect(!handler.isAlive)
        handle.post(2, center: center)
        #expect(aliveInsideTheCall.values == [true])  // not called again
    }
}
