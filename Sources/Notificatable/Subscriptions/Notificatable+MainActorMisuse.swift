import Foundation

// `subscribe(queue: .main) { … }` from main-actor code: the handler of the queue forms is not isolated, so a handler
// that is main-actor code cannot be one. The fix is `subscribeOnMainActor`, and the declarations below make the
// compiler say so where overload resolution can see that the handler is main-actor code: a closure marked
// `{ @MainActor note in … }`, or a main-actor function or method passed as the handler. The first line the compiler
// prints is then "'subscribe(…)' is deprecated: A main-actor handler: use subscribeOnMainActor(…) { … }".
//
// How: one twin per queue form, taking a `@MainActor` handler, with one more (defaulted) parameter, and, like the
// general form, `@_disfavoredOverload`. Among two disfavored forms the type checker prefers the general one for a
// closure that is not marked, and the twin for a handler whose type says `@MainActor` (converting it to the general
// form's handler would lose its global actor). Each twin is deprecated, with the fix as its message, and isolated to
// the global actor `UseSubscribeOnMainActor`, which no caller is on, so that the call is also an error (the technique
// of Notificatable+NoPayloadMisuse.swift, whose comment says why `@available(*, unavailable)` cannot do it).
//
// What no declaration can catch: an unmarked closure that touches main-actor state. Its isolation is inferred after
// overload resolution, so the general form is chosen and the compiler reports the access ("main actor-isolated
// property … can not be mutated from a Sendable closure"). The queue forms' documentation and the threading article
// name `subscribeOnMainActor` for that error. Tests/NotificatableTests/SubscriptionCompileCheckTests.swift
// type-checks both cases against the built module.

/// The global actor that the main-actor twins of the queue forms are isolated to, so that calling one is a compile
/// error whose text names ``Notificatable/subscribeOnMainActor(object:center:onFailure:_:)``. No code runs on it.
@_documentation(visibility: internal)
@globalActor
public actor UseSubscribeOnMainActor {
    /// The actor's one instance.
    public static let shared = UseSubscribeOnMainActor()
}

extension Notificatable where Info: Sendable {
    /// Not a form to use: a main-actor handler belongs in `subscribeOnMainActor(object:center:onFailure:) { … }`.
    ///
    /// Reached anyway (with `await`), it delivers as `subscribeOnMainActor` does; `queue` is not used.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A main-actor handler: use subscribeOnMainActor(object:center:onFailure:) { … }, which calls it on the main actor"
    )
    @UseSubscribeOnMainActor
    @_disfavoredOverload
    public func subscribe(
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useSubscribeOnMainActor: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeMainActorTwinSubscription(SubscribeOptions(center: center, onFailure: onFailure), handler)
    }

    /// Not a form to use: a main-actor handler belongs in `subscribeOnMainActor(object:center:onFailure:) { … }`.
    ///
    /// Reached anyway (with `await`), it delivers as `subscribeOnMainActor` does; `queue` is not used.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A main-actor handler: use subscribeOnMainActor(object:center:onFailure:) { … }, which calls it on the main actor"
    )
    @UseSubscribeOnMainActor
    @_disfavoredOverload
    public func subscribe(
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useSubscribeOnMainActor: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ notification: TypedNotification<Info>) -> Void
    ) -> Disposable {
        makeMainActorTwinSubscription(SubscribeOptions(center: center, onFailure: onFailure), handler)
    }

    /// Not a form to use: a main-actor handler belongs in `subscribeOnMainActor(object:center:onFailure:) { … }`.
    ///
    /// Reached anyway (with `await`), it delivers as `subscribeOnMainActor` does; `queue` is not used.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A main-actor handler: use subscribeOnMainActor(object:center:onFailure:) { … }, which calls it on the main actor"
    )
    @UseSubscribeOnMainActor
    @_disfavoredOverload
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: OperationQueue?,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useSubscribeOnMainActor: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }

    /// Not a form to use: a main-actor handler belongs in `subscribeOnMainActor(object:center:onFailure:) { … }`.
    ///
    /// Reached anyway (with `await`), it delivers as `subscribeOnMainActor` does; `queue` is not used.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "A main-actor handler: use subscribeOnMainActor(object:center:onFailure:) { … }, which calls it on the main actor"
    )
    @UseSubscribeOnMainActor
    @_disfavoredOverload
    public func subscribe(
        object: AnyObject,
        center: NotificationCenter = .default,
        queue: some NotificationDeliveryQueue,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        useSubscribeOnMainActor: Void = (),
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }

    /// The main-actor delivery of a twin whose handler takes the whole notification.
    func makeMainActorTwinSubscription(
        _ options: SubscribeOptions,
        _ handler: @escaping @MainActor @Sendable (TypedNotification<Info>) -> Void
    ) -> Disposable {
        var options = options
        options.hop = mainActorHop
        return makeSubscription(options, reading: typedNotification) { note in
            MainActor.assumeIsolated { handler(note) }
        }
    }
}
