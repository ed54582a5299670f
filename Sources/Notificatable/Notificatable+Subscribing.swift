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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @_disfavoredOverload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        attach(object: nil, center: center, hop: nil, extract: typedNotification, onFailure: onFailure, handler)
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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        attach(object: object, center: center, hop: nil, extract: payload, onFailure: onFailure, handler)
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
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on; `nil` delivers synchronously on the posting thread.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the notification with its payload.
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @_disfavoredOverload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        attach(object: nil, center: center, hop: hop(queue), extract: typedNotification, onFailure: onFailure, handler)
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
    /// - Parameters:
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the notification with its payload.
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @_disfavoredOverload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        attach(object: nil, center: center, hop: hop(queue), extract: typedNotification, onFailure: onFailure, handler)
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
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on; `nil` delivers synchronously on the posting thread.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload.
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        attach(object: object, center: center, hop: hop(queue), extract: payload, onFailure: onFailure, handler)
    }

    /// Calls `handler` with the payload of every notification of this name posted with `object`, on a
    /// `DispatchQueue` or another ``NotificationDeliveryQueue``.
    ///
    /// ```swift
    /// userDidLogin.subscribe(object: session, queue: DispatchQueue.main) { user in show(user) }
    /// ```
    ///
    /// - Parameters:
    ///   - object: The sender to listen to.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - queue: The queue to deliver on.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload.
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        attach(object: object, center: center, hop: hop(queue), extract: payload, onFailure: onFailure, handler)
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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue? = nil,
        _ handler: @escaping @Sendable (_ object: Any?) -> Void
    ) -> Disposable {
        attach(object: nil, center: center, hop: hop(queue), extract: { $0.object }, onFailure: nil, handler)
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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        _ handler: @escaping @Sendable (_ object: Any?) -> Void
    ) -> Disposable {
        attach(object: nil, center: center, hop: hop(queue), extract: { $0.object }, onFailure: nil, handler)
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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue? = nil,
        _ handler: @escaping @Sendable () -> Void
    ) -> Disposable {
        attach(object: object, center: center, hop: hop(queue), extract: { _ in () }, onFailure: nil, handler)
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
    /// - Returns: The subscription. It stays active until you dispose of it, even if you drop it.
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        _ handler: @escaping @Sendable () -> Void
    ) -> Disposable {
        attach(object: object, center: center, hop: hop(queue), extract: { _ in () }, onFailure: nil, handler)
    }
}

// MARK: - The one mechanism behind every form

extension Notificatable {
    /// Creates a subscription and attaches it to the hub of (`center`, ``name``).
    func attach<Value>(
        object: AnyObject?,
        center: NotificationCenter,
        hop: Subscription<Value>.Hop?,
        extract: @escaping Subscription<Value>.Extract,
        onFailure: NotificationDecodingFailure.Handler?,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Disposable {
        let subscription = Subscription(
            object: object,
            hop: hop,
            extract: extract,
            onFailure: onFailure,
            handler: handler
        )
        _ = HubRegistry.shared.attach(subscription, name: name, center: center)
        return Disposable(subscription)
    }

    /// Converts a notification into a ``TypedNotification``.
    var typedNotification: Subscription<TypedNotification<Info>>.Extract {
        { [conversion, name] notification throws(NotificationDecodingFailure) in
            TypedNotification(
                name: notification.name,
                object: notification.object,
                userInfo: try conversion.payload(from: notification, name: name)
            )
        }
    }

    /// Converts a notification into its payload.
    var payload: Subscription<Info>.Extract {
        { [conversion, name] notification throws(NotificationDecodingFailure) in
            try conversion.payload(from: notification, name: name)
        }
    }

    func hop(_ queue: OperationQueue?) -> (@Sendable (@escaping @Sendable () -> Void) -> Void)? {
        guard let queue else { return nil }
        return { delivery in queue.addOperation(delivery) }
    }

    func hop(_ queue: some NotificationDeliveryQueue) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
        { delivery in queue.enqueueNotificationDelivery(delivery) }
    }
}
