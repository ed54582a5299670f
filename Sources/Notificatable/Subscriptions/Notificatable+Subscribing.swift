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
    @inlinable
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: nil, center: center, typedNotificationTo: slot, hop: nil)
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
    @inlinable
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: object, center: center, payloadTo: slot, hop: nil)
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
    @inlinable
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: nil, center: center, typedNotificationTo: slot, hop: hop(queue))
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
    @inlinable
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: nil, center: center, typedNotificationTo: slot, hop: hop(queue))
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
    @inlinable
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: object, center: center, payloadTo: slot, hop: hop(queue))
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
    @inlinable
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: onFailure)
        return attach(object: object, center: center, payloadTo: slot, hop: hop(queue))
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
        attach(object: nil, center: center, hop: hop(queue), extract: { $0.object }, handler)
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
        attach(object: nil, center: center, hop: hop(queue), extract: { $0.object }, handler)
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
        attach(object: object, center: center, hop: hop(queue), extract: { _ in () }, handler)
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
        attach(object: object, center: center, hop: hop(queue), extract: { _ in () }, handler)
    }
}

// MARK: - The one mechanism behind every form

// The payload forms are `@inlinable`, so that the delivery closure (conversion, failure report, queue hop, call) is
// specialized for the caller's payload type: unspecialized generic code costs runtime metadata lookups on every
// post. The hub, the registry and the subscription stay internal.

/// Runs a delivery later on a queue.
@usableFromInline
typealias DeliveryHop = @Sendable (@escaping @Sendable () -> Void) -> Void

extension Notificatable {
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

    /// Delivers each notification as a ``TypedNotification``.
    @inlinable
    func attach(
        object: AnyObject?,
        center: NotificationCenter,
        typedNotificationTo slot: HandlerSlot<TypedNotification<Info>>,
        hop: DeliveryHop?
    ) -> Disposable {
        let conversion = self.conversion
        let name = self.name
        guard let hop else {
            return attach(object: object, center: center, slot: slot) { notification in
                let payload: Info
                do throws(NotificationDecodingFailure) {
                    payload = try conversion.payload(from: notification, name: name)
                } catch {
                    slot.report(error)
                    return
                }
                slot.invoke(TypedNotification(name: notification.name, object: notification.object, userInfo: payload))
            }
        }
        return attach(object: object, center: center, slot: slot) { notification in
            let payload: Info
            do throws(NotificationDecodingFailure) {
                payload = try conversion.payload(from: notification, name: name)
            } catch {
                slot.report(error)
                return
            }
            let transfer = UncheckedTransfer(
                value: TypedNotification(name: notification.name, object: notification.object, userInfo: payload)
            )
            hop { slot.invoke(transfer.value) }
        }
    }

    /// Delivers each notification's payload.
    @inlinable
    func attach(
        object: AnyObject?,
        center: NotificationCenter,
        payloadTo slot: HandlerSlot<Info>,
        hop: DeliveryHop?
    ) -> Disposable {
        let conversion = self.conversion
        let name = self.name
        guard let hop else {
            return attach(object: object, center: center, slot: slot) { notification in
                let payload: Info
                do throws(NotificationDecodingFailure) {
                    payload = try conversion.payload(from: notification, name: name)
                } catch {
                    slot.report(error)
                    return
                }
                slot.invoke(payload)
            }
        }
        return attach(object: object, center: center, slot: slot) { notification in
            let payload: Info
            do throws(NotificationDecodingFailure) {
                payload = try conversion.payload(from: notification, name: name)
            } catch {
                slot.report(error)
                return
            }
            let transfer = UncheckedTransfer(value: payload)
            hop { slot.invoke(transfer.value) }
        }
    }

    /// Delivers a value that cannot fail, for `Never` handles.
    func attach<Value>(
        object: AnyObject?,
        center: NotificationCenter,
        hop: DeliveryHop?,
        extract: @escaping @Sendable (Notification) -> Value,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Disposable {
        let slot = HandlerSlot(handler: handler, onFailure: nil)
        guard let hop else {
            return attach(object: object, center: center, slot: slot) { notification in
                slot.invoke(extract(notification))
            }
        }
        return attach(object: object, center: center, slot: slot) { notification in
            let transfer = UncheckedTransfer(value: extract(notification))
            hop { slot.invoke(transfer.value) }
        }
    }

    @usableFromInline
    func hop(_ queue: OperationQueue?) -> DeliveryHop? {
        guard let queue else { return nil }
        return { delivery in queue.addOperation(delivery) }
    }

    @usableFromInline
    func hop(_ queue: some NotificationDeliveryQueue) -> DeliveryHop {
        { delivery in queue.enqueueNotificationDelivery(delivery) }
    }
}
