import Dispatch

/// A queue, other than `OperationQueue`, on which a subscription can deliver: `DispatchQueue` conforms.
///
/// ```swift
/// let queue = DispatchQueue(label: "sync")
/// userDidLogin.subscribe(queue: queue) { note in store(note.userInfo) }
/// ```
///
/// `queue: .main` always means `OperationQueue.main`, exactly as in Foundation's
/// `addObserver(forName:object:queue:using:)`; write `queue: DispatchQueue.main` to deliver through Dispatch.
///
/// Delivery on a queue is asynchronous: the poster never waits for it, on every platform. (Foundation on Linux
/// makes the poster wait until an `OperationQueue` has run the block; Notificatable enqueues the delivery itself.)
/// Conform your own type to deliver elsewhere.
public protocol NotificationDeliveryQueue: Sendable {
    /// Runs `delivery` asynchronously, later, on this queue. Deliveries enqueued in order should run in order.
    func enqueueNotificationDelivery(_ delivery: @escaping @Sendable () -> Void)
}

extension DispatchQueue: NotificationDeliveryQueue {
    /// Runs `delivery` with `async(execute:)`.
    public func enqueueNotificationDelivery(_ delivery: @escaping @Sendable () -> Void) {
        async(execute: delivery)
    }
}
