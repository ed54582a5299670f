import Foundation

// A `Notificatable<Never>` has no payload. The general forms, written for handles with a payload, still apply to it
// (Swift cannot exclude `Never` from a generic), and each of them would subscribe a handler that is never called:
// every post fails its conversion. The declarations below make each such call fail to compile.
//
// Why pairs, and not `@available(*, unavailable, message:)`: the type checker ranks an unavailable declaration
// below every available one, so with the general form available beside it, an unavailable overload is never
// chosen and the call compiles silently. Instead, each general form gets two available twins for `Info == Never`,
// equal in rank, more specialized than the general form (which is `@_disfavoredOverload`), and less specialized than
// the right forms, which take no payload. A call that only a general form accepts is therefore ambiguous between the
// twins: the error "ambiguous use of 'subscribe'", with notes that point here, at a label pair that reads
// "this handle has no payload, so this form never delivers", under a comment naming the right form.
// Tests/NotificatableTests/NoPayloadMisuseTests.swift type-checks each misuse against the built module.
//
// The twins are hidden from the documentation. Called with their label spelled out, they behave as the general
// form does: every post is reported as a `noConversion` failure.

extension Notificatable where Info == Never {
    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), reading: payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), reading: payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), reading: payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), target, payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), target, payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, queue: queue, onFailure: onFailure), target, payload,
            handler
        )
    }

    // A Notificatable<Never> has no payload: use `subscribeOnMainActor(object:center:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribeOnMainActor(object:center:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribeOnMainActor(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }

    // A Notificatable<Never> has no payload: use `subscribeOnMainActor(object:center:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribeOnMainActor(object:center:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @discardableResult
    public func subscribeOnMainActor(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }

    // A Notificatable<Never> has no payload: use `notifications(object:center:bufferingPolicy:)`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this sequence would never produce an element.
    /// Use `notifications(object:center:bufferingPolicy:)`.
    @_documentation(visibility: internal)
    public func payloads(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        bufferingPolicy: NotificationBufferingPolicy = .unbounded,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = ()
    ) -> NotificationSequence<Info> {
        makePayloadSequence(object: object, center: center, bufferingPolicy: bufferingPolicy, onFailure: onFailure)
    }

    // A Notificatable<Never> has no payload: use `notifications(object:center:bufferingPolicy:)`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this sequence would never produce an element.
    /// Use `notifications(object:center:bufferingPolicy:)`.
    @_documentation(visibility: internal)
    public func payloads(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        bufferingPolicy: NotificationBufferingPolicy = .unbounded,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = ()
    ) -> NotificationSequence<Info> {
        makePayloadSequence(object: object, center: center, bufferingPolicy: bufferingPolicy, onFailure: onFailure)
    }
}
