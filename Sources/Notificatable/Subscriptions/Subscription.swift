import Foundation

/// One subscriber of a hub: the object filter, and a delivery closure that converts, reports, hops and invokes.
///
/// The delivery closure is built by the `@inlinable` subscribe methods, so it is specialized for the caller's
/// payload type; this class itself is not generic.
final class Subscription: DisposableResource, @unchecked Sendable {
    private let lock = NSLock()
    /// Weak: the hub owns its receivers. Set once, before the first delivery.
    private weak var hub: NotificationHub?

    private let isFiltered: Bool
    /// The filter object, held weakly and compared with `===`. Foundation on Linux compares addresses instead,
    /// so a new object at a dead one's address would match there.
    private weak var filterObject: AnyObject?
    private let slot: any DeliverySlot
    private let deliver: @Sendable (Notification) -> Void

    init(object: AnyObject?, slot: any DeliverySlot, deliver: @escaping @Sendable (Notification) -> Void) {
        isFiltered = object != nil
        filterObject = object
        self.slot = slot
        self.deliver = deliver
    }

    /// Called once, under the registry's lock, before the first delivery.
    func attached(to hub: NotificationHub) {
        lock.withLock { self.hub = hub }
    }

    /// Called by the hub on the posting thread, outside every lock, in subscription order.
    func receive(_ notification: Notification) {
        if isFiltered {
            guard let filterObject else {
                // The object is gone: no later post can come from it, so end for good.
                dispose()
                return
            }
            // `as? AnyObject` costs a fraction of `as AnyObject` on Linux; a value type boxes into a new object,
            // which is never identical to the filter.
            guard let object = notification.object, conditionalCast(object, to: AnyObject.self) === filterObject
            else { return }
        }
        deliver(notification)
    }

    func dispose() {
        guard slot.end() else { return }
        let hub = lock.withLock {
            let hub = self.hub
            self.hub = nil
            return hub
        }
        if let hub {
            HubRegistry.shared.detach(self, from: hub)
        }
    }

    var isActive: Bool { slot.isActive }
}

/// The handler end of a subscription, seen without its value type.
@usableFromInline
protocol DeliverySlot: AnyObject, Sendable {
    /// Drops the handler; returns `false` if it was already dropped.
    func end() -> Bool
    var isActive: Bool { get }
}

/// Holds a subscription's handler and failure handler until the subscription ends.
///
/// The handler is read under the lock right before each call, so a delivery that was queued before `dispose()`
/// does not begin after it. Dropping the handler on `end()` releases everything it captured.
@usableFromInline
final class HandlerSlot<Value>: DeliverySlot, @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    // Both are read and written only under `lock`, which already makes every access exclusive: the runtime's
    // dynamic exclusivity check would cost each delivery a thread-local access set insert and removal.
    @exclusivity(unchecked) @usableFromInline var handler: (@Sendable (Value) -> Void)?
    @exclusivity(unchecked) @usableFromInline var onFailure: NotificationDecodingFailure.Handler?

    @inlinable
    init(handler: @escaping @Sendable (Value) -> Void, onFailure: NotificationDecodingFailure.Handler?) {
        self.handler = handler
        self.onFailure = onFailure
    }

    /// Calls the handler unless the subscription ended.
    @inlinable
    func invoke(_ value: Value) {
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler?(value)
    }

    /// Reports a failure to `onFailure` or the global handler, unless the subscription ended.
    @usableFromInline
    func report(_ failure: NotificationDecodingFailure) {
        let (isActive, onFailure) = lock.withLock { (handler != nil, self.onFailure) }
        if isActive {
            failure.report(to: onFailure)
        }
    }

    @usableFromInline
    func end() -> Bool {
        let ended = lock.withLock {
            let ended = (handler, onFailure)
            handler = nil
            onFailure = nil
            return ended
        }
        // Release the handlers, and everything they captured, here, outside the lock.
        return ended.0 != nil
    }

    @usableFromInline
    var isActive: Bool {
        lock.withLock { handler != nil }
    }
}

/// Carries a value into a queue hop. Used only where the payload type is `Sendable`; the notification's object,
/// which is `Any?`, crosses with it exactly as it does in Foundation's queued observers.
@usableFromInline
struct UncheckedTransfer<Value>: @unchecked Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(value: Value) {
        self.value = value
    }
}

/// `value as? T`, written generically because the compiler rejects the direct `as? AnyObject` as always succeeding,
/// while the unconditional `as AnyObject` takes a much slower bridging path on Linux.
@inline(__always)
private func conditionalCast<T>(_ value: Any, to type: T.Type) -> T? {
    value as? T
}
