import Foundation

// A `Notificatable<Never>` has no payload. The general forms, written for handles with a payload, still apply to it
// (Swift cannot exclude `Never` from a generic), and each of them would subscribe a handler that is never called:
// every post fails its conversion. The declarations below make each such call fail to compile, with diagnostics that
// name the right call.
//
// How: each general form gets one twin for `Info == Never`, more specialized than the general form (which is
// `@_disfavoredOverload`) and less specialized than the right forms (it has one more, defaulted, parameter), so a
// call that only a general form accepts resolves to the twin. The twin is
// - deprecated, with the right call as its message: the compiler's first line for the misuse is
//   "warning: 'subscribe(…)' is deprecated: A Notificatable<Never> has no payload: use subscribe(center:queue:)
//   { object in … }";
// - isolated to the global actor `ThisHandleHasNoPayload`, which no caller is on, so the call is also an error:
//   "call to global actor 'ThisHandleHasNoPayload'-isolated instance method
//   'subscribe(center:onFailure:useTheClosureThatTakesTheObject:_:)' in a synchronous … context".
// Neither `@available(*, unavailable)` (the type checker ranks an unavailable declaration below every available one,
// so the general form would be chosen and the call would compile silently) nor an ambiguity between two twins (whose
// first line, "ambiguous use of 'subscribe'", names nothing) can do that.
// Tests/NotificatableTests/NoPayloadMisuseTests.swift type-checks each misuse against the built module.
//
// The twins are hidden from the documentation. Reached anyway (with `await`, from an async context), they behave as
// the general form does: every post is reported as a `noConversion` failure.

/// The global actor that the misuse twins of a `Notificatable<Never>` are isolated to, so that calling one is a
/// compile error whose text says that the handle has no payload. No code runs on it.
@_documentation(visibility: internal)
@globalActor
public actor ThisHandleHasNoPayload {
    /// The actor's one instance.
    public static let shared = ThisHandleHasNoPayload()
}

extension Notificatable where Info == Never {
    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(center:queue:) { object in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesTheObject: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(center: center, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(center:queue:) { object in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesTheObject: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(center:queue:) { object in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(center:queue:) { object in … }`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(center:queue:) { object in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesTheObject: Void = (),
        _ handler: @escaping @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(center: center, queue: queue, onFailure: onFailure), reading: typedNotification, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A Notificatable<Never> has no payload: use subscribe(object:center:queue:) { … }, whose closure takes no argument"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesNoArgument: Void = (),
        _ handler: @escaping @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), reading: payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(object:center:queue:) { … }, whose closure takes no argument`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A Notificatable<Never> has no payload: use subscribe(object:center:queue:) { … }, whose closure takes no argument"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesNoArgument: Void = (),
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
    @available(
        *, deprecated,
        message:
            "A Notificatable<Never> has no payload: use subscribe(object:center:queue:) { … }, whose closure takes no argument"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesNoArgument: Void = (),
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
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(_:object:center:queue:) { target in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesOnlyTheTarget: Void = (),
        _ handler: @escaping @Sendable (_ target: Target, _ userInfo: Info) -> Void
    ) -> Disposable {
        makeSubscription(
            SubscribeOptions(object: object, center: center, onFailure: onFailure), target, payload, handler)
    }

    // A Notificatable<Never> has no payload: use `subscribe(_:object:center:queue:) { target in … }`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this form would never deliver. Use
    /// `subscribe(_:object:center:queue:) { target in … }`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(_:object:center:queue:) { target in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesOnlyTheTarget: Void = (),
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
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use subscribe(_:object:center:queue:) { target in … }"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribe<Target: AnyObject>(
        _ target: Target,
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesOnlyTheTarget: Void = (),
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
    @available(
        *, deprecated,
        message:
            "A Notificatable<Never> has no payload: use subscribeOnMainActor(object:center:) { … }, whose closure takes no argument"
    )
    @ThisHandleHasNoPayload
    @discardableResult
    public func subscribeOnMainActor(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useTheClosureThatTakesNoArgument: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }

    // A Notificatable<Never> has no payload: use `notifications(object:center:bufferingPolicy:)`.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this sequence would never produce an element.
    /// Use `notifications(object:center:bufferingPolicy:)`.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message: "A Notificatable<Never> has no payload: use notifications(object:center:bufferingPolicy:)"
    )
    @ThisHandleHasNoPayload
    public func payloads(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        bufferingPolicy: NotificationBufferingPolicy = .unbounded,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useNotificationsInstead: Void = ()
    ) -> NotificationSequence<Info> {
        makePayloadSequence(object: object, center: center, bufferingPolicy: bufferingPolicy, onFailure: onFailure)
    }

}
