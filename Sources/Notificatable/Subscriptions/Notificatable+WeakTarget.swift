import Foundation

// The selector style of NotificationCenter (`addObserver(self, selector:…)`), typed: the handle holds the target
// weakly and hands it to the handler, so there is no `[weak self]` dance, and the subscription ends by itself once
// the target is gone.

extension Notificatable {
    /// Calls `handler` with `target` and the payload of every notification of this name, for as long as `target`
    /// lives, on the posting thread.
    ///
    /// ```swift
    /// final class ProfileController {
    ///     var name = ""
    ///     init(center: NotificationCenter) {
    ///         userDidLogin.subscribe(self, center: center) { controller, user in
    ///             controller.name = user.name
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The subscription holds `target` weakly and never keeps it alive. Once `target` is gone, the handler is never
    /// called again, and the subscription ends by itself, releasing the handler, at the next post of the name (no
    /// hook tells us earlier). You may still dispose of it, or add it to a bag, to end it sooner.
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the target and the payload.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @_disfavoredOverload
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), target, payload, handler)
    }
}

extension Notificatable where Info: Sendable {
    /// Calls `handler` with `target` and the payload, on `queue`, for as long as `target` lives.
    ///
    /// ```swift
    /// userDidLogin.subscribe(self, center: center, queue: .main) { controller, user in
    ///     controller.label.text = user.name
    /// }
    /// ```
    ///
    /// `target` is looked up when the delivery runs on the queue; if it is gone by then, the handler is not called
    /// and the subscription ends. Delivery on a queue is asynchronous, as for the other queue forms.
    ///
    /// `target` must be `Sendable`, because it is handed to the handler on the queue's thread: a main-actor class
    /// is (use ``subscribeOnMainActor(object:center:onFailure:_:)`` from main-actor code), and so is a class that
    /// guards its state with a lock. A plain class is rejected by the compiler, not raced at run time.
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on; `nil` delivers synchronously on the posting thread.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the target and the payload.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @_disfavoredOverload
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }

    /// Calls `handler` with `target` and the payload, on a `DispatchQueue` or another
    /// ``NotificationDeliveryQueue``, for as long as `target` lives.
    ///
    /// ```swift
    /// userDidLogin.subscribe(self, queue: DispatchQueue.main) { controller, user in controller.show(user) }
    /// ```
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the target and the payload.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @_disfavoredOverload
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }
}

extension Notificatable where Info == Never {
    /// Calls `handler` with `target` for every post of this payload-less notification, for as long as `target`
    /// lives, on the posting thread.
    ///
    /// ```swift
    /// didLogout.subscribe(self, center: center) { controller in controller.reset() }
    /// ```
    ///
    /// The target is held weakly; once it is gone the subscription ends at the next post of the name.
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - handler: Receives the target.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        _ handler: @escaping @Sendable (_ target: Target) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center), target, signal) { target, _ in
            handler(target)
        }
    }

    /// Calls `handler` with `target` for every post of this payload-less notification, on `queue`, for as long as
    /// `target` lives.
    ///
    /// ```swift
    /// didLogout.subscribe(self, center: center, queue: .main) { controller in controller.reset() }
    /// ```
    ///
    /// `target` must be `Sendable`, because it is handed to the handler on the queue's thread: a main-actor class
    /// is, and so is a class that guards its state with a lock.
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously; `nil` delivers synchronously on the posting thread.
    ///     `.main` means `OperationQueue.main`.
    ///   - handler: Receives the target.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        _ handler: @escaping @Sendable (_ target: Target) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center, queue: queue), target, signal) { target, _ in
            handler(target)
        }
    }

    /// Calls `handler` with `target` for every post of this payload-less notification, on a `DispatchQueue` or
    /// another ``NotificationDeliveryQueue``, for as long as `target` lives.
    ///
    /// ```swift
    /// didLogout.subscribe(self, queue: DispatchQueue.main) { controller in controller.reset() }
    /// ```
    ///
    /// `target` must be `Sendable`, because it is handed to the handler on the queue's thread.
    ///
    /// - Parameters:
    ///   - target: The object that receives the notifications, held weakly.
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously.
    ///   - handler: Receives the target.
    /// - Returns: The subscription. It may be dropped: it ends by itself once `target` is gone (at the next post of
    ///   the name); keep it (`.store(in: bag)`) to end it sooner.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        _ handler: @escaping @Sendable (_ target: Target) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center, queue: queue), target, signal) { target, _ in
            handler(target)
        }
    }
}

extension Notificatable {
    /// The entry point of the weak-target forms: ``makeSubscription(_:reading:_:)`` with a handler that looks
    /// `target` up on each delivery, and ends the subscription once it is gone.
    func makeSubscription<Target: AnyObject, Reading: DeliveryReading>(
        _ options: SubscribeOptions,
        _ target: Target,
        _ read: Reading,
        _ handler: @escaping @Sendable (Target, Reading.Value) -> Void
    ) -> Disposable {
        let binding = WeakTargetBinding(target)
        return binding.bind(makeSubscription(options, reading: read, binding.deliver(handler)))
    }
}

/// Holds a subscription's target weakly, and ends the subscription once the target is gone.
///
/// The binding holds the subscription's ``Disposable`` strongly; that cycle (subscription → handler → binding →
/// disposable → subscription) is broken when the subscription ends, because ending it drops the handler.
final class WeakTargetBinding<Target: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var target: Target?
    private var subscription: Disposable?
    private var targetWasLost = false

    init(_ target: Target) {
        self.target = target
    }

    /// A handler that looks the target up and calls `handler`, or ends the subscription if the target is gone.
    func deliver<Value>(
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> @Sendable (Value) -> Void {
        { [self] value in
            // A weak load is atomic, and `target` is never reassigned, so this read needs no lock.
            guard let target else {
                endSubscription()
                return
            }
            handler(target, value)
        }
    }

    /// Keeps `subscription`, so that a delivery that finds the target gone can end it; returns it.
    func bind(_ subscription: Disposable) -> Disposable {
        let lost = lock.withLock {
            self.subscription = subscription
            return targetWasLost
        }
        if lost {
            subscription.dispose()
        }
        return subscription
    }

    private func endSubscription() {
        let subscription = lock.withLock {
            targetWasLost = true
            let subscription = self.subscription
            self.subscription = nil
            return subscription
        }
        subscription?.dispose()
    }
}
