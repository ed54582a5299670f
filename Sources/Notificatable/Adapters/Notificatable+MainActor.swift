import Dispatch
import Foundation

// A distinct base name, not a `subscribe(…, onMainActor:)` label: with a trailing closure the label disappears, and
// `handle.subscribe(center: c) { value in … }` would then silently prefer this form over the existing general one.

extension Notificatable where Info: Sendable {
    /// Calls `handler` on the main actor with the payload of every notification of this name.
    ///
    /// ```swift
    /// @MainActor final class ProfileViewModel {
    ///     var name = ""
    ///     private let bag = DisposeBag()
    ///     init(center: NotificationCenter) {
    ///         userDidLogin.subscribeOnMainActor(center: center) { [weak self] user in
    ///             self?.name = user.name            // main-actor state, no `await`, no hop by hand
    ///         }.store(in: bag)
    ///     }
    /// }
    /// ```
    ///
    /// **Where and when.** A post made on the main actor (the main thread, or a block of the main queue) calls
    /// `handler` synchronously, before `post` returns, in subscription order with the other subscribers (as UIKit's
    /// keyboard notifications need). A post made on any other thread converts the payload there (failures are reported there), then enqueues the call on the main
    /// queue and returns without waiting. Enqueued calls run in the order they were enqueued; a post made on the
    /// main actor may therefore run before an earlier post from another thread that is still waiting in the queue.
    ///
    /// After ``Disposable/dispose()`` returns, no enqueued call begins.
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    ///   - handler: Receives the payload on the main actor.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    @_disfavoredOverload
    public func subscribeOnMainActor(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        _ handler: @escaping @MainActor @Sendable (_ userInfo: Info) -> Void
    ) -> Disposable {
        makeMainActorSubscription(SubscribeOptions(object: object, center: center, onFailure: onFailure), handler)
    }
}

extension Notificatable where Info == Never {
    /// Calls `handler` on the main actor for every post of this payload-less notification.
    ///
    /// ```swift
    /// didLogout.subscribeOnMainActor(center: center) {
    ///     rootViewController.showLogin()
    /// }.store(in: bag)
    /// ```
    ///
    /// A post on the main actor calls `handler` before `post` returns; a post elsewhere enqueues it on the main
    /// queue, as described in ``Notificatable/subscribeOnMainActor(object:center:onFailure:_:)``.
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - handler: Called on the main actor for each matching post.
    /// - Returns: The subscription: keep it (`.store(in: bag)`); the compiler warns when it is dropped, since a
    ///   dropped subscription keeps observing until the process ends.
    public func subscribeOnMainActor(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        _ handler: @escaping @MainActor @Sendable () -> Void
    ) -> Disposable {
        makeSubscription(SubscribeOptions(object: object, center: center, hop: mainActorHop), reading: signal) { _ in
            MainActor.assumeIsolated { handler() }
        }
    }
}

extension Notificatable where Info: Sendable {
    /// The entry point of the main-actor forms with a payload: ``makeSubscription(_:reading:_:)`` with
    /// ``mainActorHop``, calling `handler` on the main actor.
    func makeMainActorSubscription(
        _ options: SubscribeOptions,
        _ handler: @escaping @MainActor @Sendable (Info) -> Void
    ) -> Disposable {
        var options = options
        options.hop = mainActorHop
        return makeSubscription(options, reading: payload) { info in MainActor.assumeIsolated { handler(info) } }
    }
}

/// Runs a delivery now if the post happens on the main actor, otherwise enqueues it on the main queue.
///
/// "On the main actor" means on the main thread, or inside a block of the main queue. The second matters on Linux:
/// a program that calls `dispatchMain()`, as an async `main` and `swift test` do, ends its main thread, and the main
/// queue, which is the main actor's executor there, is then drained by other threads. Both cases are where
/// `MainActor.assumeIsolated` in the handlers above holds, and both paths run deliveries only there.
let mainActorHop: DeliveryHop = { delivery in
    if MainQueueMarker.isOnMainActor {
        delivery()
    } else {
        DispatchQueue.main.async(execute: delivery)
    }
}

/// Tells whether the current code runs on the main thread or in a block of the main queue.
final class MainQueueMarker: @unchecked Sendable {
    private static let shared = MainQueueMarker()

    private let key = DispatchSpecificKey<Bool>()

    private init() {
        DispatchQueue.main.setSpecific(key: key, value: true)
    }

    static var isOnMainActor: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: shared.key) == true
    }
}
