import Foundation

// Overload design: `subscribe(center:queue:_:)` of a `Never` handle takes `(Any?) -> Void`, and the general form
// takes `(TypedNotification<Info>) -> Void`; a `{ object in }` closure fits both, so the general unfiltered forms are
// `@_disfavoredOverload`. Queues other than `OperationQueue` come in through the `NotificationDeliveryQueue`
// protocol rather than a concrete `DispatchQueue` parameter, so that `queue: .main` finds only
// `OperationQueue.main`, as in Foundation.

// MARK: - Delivering on the posting thread

extension Notificatable {
    /// Calls `handler` with every notification of this name, on the posting thread, before `post` returns.
    ///
    /// ```swift
    /// let subscription = userDidLogin.subscribe(center: center) { note in
    ///     show(note.userInfo, from: note.object)
    /// }
    /// ```
    ///
    /// Subscribers of one name on one center are called in the order they subscribed, on every platform. A
    /// notification that cannot be turned into an `Info` (see ``addingConverter(_:)``) does not reach `handler`;
    /// it is reported to `onFailure`, or to ``NotificationDecodingFailure/handler`` if `onFailure` is `nil`.
    ///
    /// This form accepts any payload type; the forms with a `queue:` parameter require `Info: Sendable`.
    ///
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the notification with its payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, onFailure: onFailure), reading: typedNotification, handler)
    }

    /// Calls `handler` with the payload of every notification of this name posted with `object`, on the posting
    /// thread.
    ///
    /// ```swift
    /// userDidLogin.subscribe(object: session, center: center) { user in
    ///     show(user)
    /// }
    /// ```
    ///
    /// Only posts whose object is `object` itself (`===`) are delivered. The subscription holds `object` weakly;
    /// once it is gone, the subscription ends and never fires again, even for a new object that happens to live
    /// at the same address.
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), reading: payload, handler)
    }
}

// MARK: - Delivering on a queue

extension Notificatable where Info: Sendable {
    /// Calls `handler` with every notification of this name, on `queue`, or on the posting thread if `queue` is
    /// `nil`.
    ///
    /// ```swift
    /// userDidLogin.subscribe(center: center, queue: .main) { note in
    ///     label.text = note.userInfo.name
    /// }
    /// ```
    ///
    /// With a queue, delivery is asynchronous: the payload is converted on the posting thread (failures are
    /// reported there), then the handler is enqueued, in subscription order, and the poster does not wait for it.
    /// The notification's object is handed to the queue as it is, as Foundation does.
    ///
    /// From main-actor code, use ``subscribeOnMainActor(object:center:onFailure:_:)``: this handler is not isolated,
    /// even when `queue` is the main queue, so a closure that touches main-actor state does not compile here.
    ///
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on; `nil` delivers synchronously on the posting thread.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the notification with its payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler
        )
    }

    /// Calls `handler` with every notification of this name, on a `DispatchQueue` or another
    /// ``NotificationDeliveryQueue``.
    ///
    /// ```swift
    /// userDidLogin.subscribe(center: center, queue: DispatchQueue.main) { note in show(note.userInfo) }
    /// ```
    ///
    /// Delivery is asynchronous, as with an `OperationQueue`.
    ///
    /// From main-actor code, use ``subscribeOnMainActor(object:center:onFailure:_:)``: this handler is not isolated,
    /// even when `queue` is the main queue, so a closure that touches main-actor state does not compile here.
    ///
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the notification with its payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler
        )
    }

    /// Calls `handler` with the payload of every notification of this name posted with `object`, on `queue`, or on
    /// the posting thread if `queue` is `nil`.
    ///
    /// ```swift
    /// userDidLogin.subscribe(object: session, center: center, queue: .main) { user in show(user) }
    /// ```
    ///
    /// The filter is by identity and weak, as in ``subscribe(object:center:onFailure:_:)``; delivery on a queue
    /// is asynchronous.
    ///
    /// From main-actor code, use ``subscribeOnMainActor(object:center:onFailure:_:)``: this handler is not isolated,
    /// even when `queue` is the main queue, so a closure that touches main-actor state does not compile here.
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on; `nil` delivers synchronously on the posting thread.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }

    /// Calls `handler` with the payload of every notification of this name posted with `object`, on a
    /// `DispatchQueue` or another ``NotificationDeliveryQueue``.
    ///
    /// ```swift
    /// userDidLogin.subscribe(object: session, queue: DispatchQueue.main) { user in show(user) }
    /// ```
    ///
    /// From main-actor code, use ``subscribeOnMainActor(object:center:onFailure:_:)``: this handler is not isolated,
    /// even when `queue` is the main queue, so a closure that touches main-actor state does not compile here.
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    @inlinable
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }
}

// MARK: - Notifications without payload

extension Notificatable where Info == Never {
    /// Calls `handler` with the object of every notification of this name, whatever its `userInfo`.
    ///
    /// ```swift
    /// didLogout.subscribe(center: center) { object in
    ///     print("logged out by", object as Any)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously; `nil`, the default, delivers synchronously on the
    ///     posting thread. `.main` means `OperationQueue.main`.
    ///   - handler: Receives the notification's object.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue? = nil,
        _ handler: @escaping @Sendable (_ object: Any?) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, queue: queue), reading: postedObject, handler)
    }

    /// Calls `handler` with the object of every notification of this name, on a `DispatchQueue` or another
    /// ``NotificationDeliveryQueue``.
    ///
    /// ```swift
    /// didLogout.subscribe(queue: DispatchQueue.main) { object in reset() }
    /// ```
    ///
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously.
    ///   - handler: Receives the notification's object.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        _ handler: @escaping @Sendable (_ object: Any?) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, queue: queue), reading: postedObject, handler)
    }

    /// Calls `handler` for every notification of this name posted with `object`.
    ///
    /// ```swift
    /// didLogout.subscribe(object: session, center: center) {
    ///     print("this session ended")
    /// }
    /// ```
    ///
    /// The filter is by identity (`===`) and holds `object` weakly; once it is gone the subscription ends.
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously; `nil`, the default, delivers synchronously on the
    ///     posting thread. `.main` means `OperationQueue.main`.
    ///   - handler: Called for each matching post.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue? = nil,
        _ handler: @escaping @Sendable () -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center, queue: queue), reading: signal, handler)
    }

    /// Calls `handler` for every notification of this name posted with `object`, on a `DispatchQueue` or another
    /// ``NotificationDeliveryQueue``.
    ///
    /// ```swift
    /// didLogout.subscribe(object: session, queue: DispatchQueue.main) { close() }
    /// ```
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on, asynchronously.
    ///   - handler: Called for each matching post.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        _ handler: @escaping @Sendable () -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center, queue: queue), reading: signal, handler)
    }
}

// MARK: - The one entry point behind every form

// Every subscribe form above, and the weak-target, main-actor and async-sequence forms, is one call of
// `makeSubscription(_:reading:_:)`: the options say where and when (object filter, center, queue, failure handler),
// the reading says what the handler receives. A new delivery option is a field of `SubscribeOptions`, one
// initializer, and a line in `makeSubscription`.
//
// The entry point is `@inlinable`, so that the delivery closure (conversion, failure report, queue hop, call) is
// specialized for the caller's payload type: unspecialized generic code costs runtime metadata lookups on every
// post. The hub, the registry and the subscription stay internal.

/// Runs a delivery later on a queue.
@usableFromInline
typealias DeliveryHop = @Sendable (@escaping @Sendable () -> Void) -> Void

/// Reads what a handler receives out of a posted notification, or the reason it cannot.
///
/// A protocol that ``Notificatable/makeSubscription(_:reading:_:)`` takes as a generic parameter, rather than a
/// closure, so that the reading is inlined into the delivery closure and specialized with it: no call through a
/// closure context, and the `Result` never leaves registers. A `Result`, not a `throws(NotificationDecodingFailure)`
/// requirement, so that nothing here ever needs the metadata of a function type with typed throws, which the
/// Swift 6 runtime (macOS 15, iOS 18) introduced and our deployment targets predate.
@usableFromInline
protocol DeliveryReading<Value>: Sendable {
    /// What the handler receives.
    associatedtype Value
    /// What the handler receives from `notification`, or the failure to report instead.
    func read(_ notification: Notification) -> Result<Value, NotificationDecodingFailure>
}

/// The payload, converted by the handle's conversion chain.
@usableFromInline
struct PayloadReading<Info>: DeliveryReading {
    @usableFromInline let conversion: PayloadConversion<Info>
    @usableFromInline let name: Notification.Name

    @inlinable
    init(conversion: PayloadConversion<Info>, name: Notification.Name) {
        self.conversion = conversion
        self.name = name
    }

    @inlinable
    func read(_ notification: Notification) -> Result<Info, NotificationDecodingFailure> {
        do throws(NotificationDecodingFailure) {
            return .success(try conversion.payload(from: notification, name: name))
        } catch {
            return .failure(error)
        }
    }
}

/// The notification with its converted payload.
@usableFromInline
struct TypedNotificationReading<Info>: DeliveryReading {
    @usableFromInline let conversion: PayloadConversion<Info>
    @usableFromInline let name: Notification.Name

    @inlinable
    init(conversion: PayloadConversion<Info>, name: Notification.Name) {
        self.conversion = conversion
        self.name = name
    }

    @inlinable
    func read(_ notification: Notification) -> Result<TypedNotification<Info>, NotificationDecodingFailure> {
        do throws(NotificationDecodingFailure) {
            let payload = try conversion.payload(from: notification, name: name)
            return .success(TypedNotification(name: notification.name, object: notification.object, userInfo: payload))
        } catch {
            return .failure(error)
        }
    }
}

/// The notification's object, whatever its `userInfo`: for `Never` handles.
struct PostedObjectReading: DeliveryReading {
    func read(_ notification: Notification) -> Result<Any?, NotificationDecodingFailure> {
        .success(notification.object)
    }
}

/// Nothing but the fact of the post: for `Never` handles.
struct SignalReading: DeliveryReading {
    func read(_ notification: Notification) -> Result<Void, NotificationDecodingFailure> {
        .success(())
    }
}

/// Everything a subscribe form chooses besides its handler and what the handler receives.
@usableFromInline
struct SubscribeOptions {
    /// Only posts whose object is this instance (`===`) are delivered; the subscription holds it weakly.
    @usableFromInline var object: AnyObject?
    @usableFromInline var center: NotificationCenter
    /// Where the handler runs; `nil` runs it on the posting thread, before `post` returns.
    @usableFromInline var hop: DeliveryHop?
    /// Receives the notifications that cannot be read; `nil` reports them to the global handler.
    @usableFromInline var onFailure: NotificationDecodingFailure.Handler?

    @inlinable
    init(
        object: AnyObject? = nil,
        center: NotificationCenter,
        hop: DeliveryHop? = nil,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) {
        self.object = object
        self.center = center
        self.hop = hop
        self.onFailure = onFailure
    }

    /// Delivers on `queue` with `addOperation`, or on the posting thread if `queue` is `nil`.
    @inlinable
    init(
        object: AnyObject? = nil,
        center: NotificationCenter,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) {
        self.init(object: object, center: center, onFailure: onFailure)
        if let queue {
            hop = { delivery in queue.addOperation(delivery) }
        }
    }

    /// Delivers on `queue` through ``NotificationDeliveryQueue/enqueueNotificationDelivery(_:)``.
    @inlinable
    init(
        object: AnyObject? = nil,
        center: NotificationCenter,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) {
        let hop: DeliveryHop = { delivery in queue.enqueueNotificationDelivery(delivery) }
        self.init(object: object, center: center, hop: hop, onFailure: onFailure)
    }
}

extension Notificatable {
    /// The one entry point: subscribes `handler` to this name with `options`, handing it what `read` makes of each
    /// post.
    ///
    /// On each post that passes the object filter: `read` runs on the posting thread; a failure goes to the
    /// subscription's failure handler and stops there; otherwise the handler is called on the posting thread, or
    /// enqueued through the options' hop. A handler that the subscription dropped (it ended) is never called.
    @inlinable
    func makeSubscription<Reading: DeliveryReading>(
        _ options: SubscribeOptions,
        reading: Reading,
        _ handler: @escaping @Sendable (Reading.Value) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: options.onFailure)
        let hop = options.hop
        return attach(object: options.object, center: options.center, slot: slot) { notification in
            let value: Reading.Value
            switch reading.read(notification) {
            case .success(let read): value = read
            case .failure(let failure):
                slot.report(failure)
                return
            }
            guard let hop else {
                slot.invoke(value)
                return
            }
            let transfer = UncheckedTransfer(value: value)
            hop { slot.invoke(transfer.value) }
        }
    }

    /// Creates a subscription for `slot` and attaches it to the hub of (`center`, ``name``).
    @usableFromInline
    func attach(
        object: AnyObject?,
        center: NotificationCenter,
        slot: any DeliverySlot,
        deliver: @escaping @Sendable (Notification) -> Void
    ) -> Disposable {
        let subscription = Subscription(object: object, slot: slot, deliver: deliver)
        _ = HubRegistry.shared.attach(subscription, name: name, center: center)
        return Disposable(subscription)
    }

    // MARK: What a handler receives

    /// The payload, converted by the handle's conversion chain.
    @inlinable
    var payload: PayloadReading<Info> {
        PayloadReading(conversion: conversion, name: name)
    }

    /// The notification with its converted payload.
    @inlinable
    var typedNotification: TypedNotificationReading<Info> {
        TypedNotificationReading(conversion: conversion, name: name)
    }

    /// The notification's object, whatever its `userInfo`: for `Never` handles.
    var postedObject: PostedObjectReading { PostedObjectReading() }

    /// Nothing but the fact of the post: for `Never` handles.
    var signal: SignalReading { SignalReading() }
}
