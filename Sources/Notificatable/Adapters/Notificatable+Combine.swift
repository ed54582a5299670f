// Combine publishers for handles, on the platforms that have Combine.
//
// This one file is also compiled against OpenCombine by the CI-only package in Tests/CombineCheck (see
// scripts/check-combine.sh), which sets NOTIFICATABLE_OPENCOMBINE_CHECK; that build uses only public API, from
// outside the module. The flag, rather than `canImport(OpenCombine)`, selects OpenCombine: inside that package the
// OpenCombine module may sit next to the Notificatable module in the build folder, and `canImport` would then
// compile the adapter into the library too, depending on build order.
//
// The Notificatable module has an internal class named `Subscription`, which shadows Combine's protocol inside the
// module, so the protocol is named through its module here. (The check package declares a `Subscription` of its own
// next to this file, so that a bare use fails there too.)
#if canImport(Combine)  // apple-check: Combine is Apple-only; scripts/check-combine.sh compiles this file with OpenCombine
import Combine
private typealias CombineSubscription = Combine.Subscription
#elseif NOTIFICATABLE_OPENCOMBINE_CHECK
import OpenCombine
private typealias CombineSubscription = OpenCombine.Subscription
#endif

#if canImport(Combine) || NOTIFICATABLE_OPENCOMBINE_CHECK  // apple-check: as above
import Foundation
#if NOTIFICATABLE_OPENCOMBINE_CHECK
import Notificatable
#endif

@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
extension Notificatable {
    /// A publisher of the payloads of this notification.
    ///
    /// ```swift
    /// userDidLogin.publisher(center: center)
    ///     .receive(on: DispatchQueue.main)
    ///     .sink { user in show(user) }
    ///     .store(in: &cancellables)
    /// ```
    ///
    /// Each subscriber gets its own subscription to the center, made when it subscribes and removed when it cancels.
    /// Payloads are sent on the posting thread, before `post` returns; a payload posted while the subscriber has
    /// no outstanding demand is dropped, as Foundation's `NotificationCenter.Publisher` does.
    ///
    /// A notification that cannot be turned into `Info` is reported to `onFailure`, or to
    /// ``NotificationDecodingFailure/handler``, and skipped: the publisher never fails, and a failure never
    /// completes it. It completes only when its `object` filter is gone (noticed at the next post of the name).
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are published; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    /// - Returns: A publisher that never fails.
    @_disfavoredOverload
    public func publisher(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) -> AnyPublisher<Info, Never> {
        makePayloadPublisher(self, object: object, center: center, onFailure: onFailure)
    }
}

/// The publisher of a handle's payloads. A free generic function, so that the calls inside it resolve to the general
/// forms for any `Info`, `Never` included (the misuse twins below would make them ambiguous in a `Never` extension).
@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
private func makePayloadPublisher<Info>(
    _ handle: Notificatable<Info>,
    object: AnyObject?,
    center: NotificationCenter,
    onFailure: NotificationDecodingFailure.Handler?
) -> AnyPublisher<Info, Never> {
    let filter = NotificatablePublisherFilter(object)
    return NotificatablePublisher<Info> { send in
        guard filter.isFiltered else {
            return handle.subscribe(center: center, onFailure: onFailure) { note in send(note.userInfo) }
        }
        guard let object = filter.object else { return nil }
        return handle.subscribe(object: object, center: center, onFailure: onFailure, send)
    }
    .eraseToAnyPublisher()
}

@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
extension Notificatable where Info == Never {
    /// A publisher that sends `()` for every post of this payload-less notification.
    ///
    /// ```swift
    /// didLogout.publisher(center: center)
    ///     .sink { _ in reset() }
    ///     .store(in: &cancellables)
    /// ```
    ///
    /// It behaves as ``Notificatable/publisher(object:center:onFailure:)`` does, without failures.
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are published; held weakly.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    /// - Returns: A publisher that never fails.
    public func publisher(
        object: AnyObject? = nil,
        center: NotificationCenter = .default
    ) -> AnyPublisher<Void, Never> {
        let handle = self
        let filter = NotificatablePublisherFilter(object)
        return NotificatablePublisher<Void> { send in
            guard filter.isFiltered else {
                return handle.subscribe(center: center) { _ in send(()) }
            }
            guard let object = filter.object else { return nil }
            return handle.subscribe(object: object, center: center) { send(()) }
        }
        .eraseToAnyPublisher()
    }
}

// A `Notificatable<Never>` has no payload, so the general `publisher(object:center:onFailure:)` would publish nothing,
// ever: every post fails its conversion. As for the `subscribe` forms (see the comment at the top of
// Subscriptions/Notificatable+NoPayloadMisuse.swift for why a pair, and not `@available(*, unavailable)`), two
// available twins for `Info == Never`, equal in rank, make a call that only the general form accepts (one with
// `onFailure:`, or one whose result must be an `AnyPublisher<Never, Never>`) ambiguous: a compile error whose notes
// point here. `publisher(object:center:)` above, which publishes `()` for every post, is more specialized than the
// twins and wins every call it accepts. Tests/NotificatableTests/NoPayloadMisuseTests.swift (on platforms with
// Combine) and PublisherMisuseTests in Tests/CombineCheck (against OpenCombine) type-check the misuse.
@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
extension Notificatable where Info == Never {
    // A Notificatable<Never> has no payload: use `publisher(object:center:)`, which publishes `()` for every post.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this publisher would never publish. Use
    /// `publisher(object:center:)`, which publishes `()` for every post.
    @_documentation(visibility: internal)
    public func publisher(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        thisHandleHasNoPayload: Void = ()
    ) -> AnyPublisher<Info, Never> {
        makePayloadPublisher(self, object: object, center: center, onFailure: onFailure)
    }

    // A Notificatable<Never> has no payload: use `publisher(object:center:)`, which publishes `()` for every post.
    /// Not a form to use: a `Notificatable<Never>` has no payload, so this publisher would never publish. Use
    /// `publisher(object:center:)`, which publishes `()` for every post.
    @_documentation(visibility: internal)
    public func publisher(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        onFailure: NotificationDecodingFailure.Handler? = nil,
        soThisFormNeverDelivers: Void = ()
    ) -> AnyPublisher<Info, Never> {
        makePayloadPublisher(self, object: object, center: center, onFailure: onFailure)
    }
}

/// The optional object filter of a publisher, held weakly.
private final class NotificatablePublisherFilter: @unchecked Sendable {
    let isFiltered: Bool
    private(set) weak var object: AnyObject?

    init(_ object: AnyObject?) {
        isFiltered = object != nil
        self.object = object
    }
}

/// Subscribes to the center once per Combine subscriber.
@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
private struct NotificatablePublisher<Output>: Publisher {
    typealias Failure = Never

    /// Subscribes `send` and returns the subscription, or `nil` if nothing can ever be sent.
    let start: @Sendable (_ send: @escaping @Sendable (Output) -> Void) -> Disposable?

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        // Erased here, outside any `@Sendable` closure: the closures below then use no conformance of `S`, which
        // might be isolated to an actor.
        let subscription = NotificatablePublisherSubscription(downstream: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
        subscription.start(start)
    }
}

/// One Combine subscriber's subscription: demand, cancellation, and the handle subscription behind it.
@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
private final class NotificatablePublisherSubscription<Output>: CombineSubscription, @unchecked Sendable {
    typealias Downstream = AnySubscriber<Output, Never>

    private let lock = NSLock()
    private var downstream: Downstream?
    private var demand = Subscribers.Demand.none
    private var disposable: Disposable?

    init(downstream: Downstream) {
        self.downstream = downstream
    }

    func start(_ start: (_ send: @escaping @Sendable (Output) -> Void) -> Disposable?) {
        // The handler holds the completer: when the handle subscription ends by itself (its filter object is gone),
        // the handler is released, and the completer finishes the downstream. After `cancel()` it does nothing.
        let completer = NotificatablePublisherCompleter(self)
        let disposable = start { value in completer.subscription.send(value) }
        let cancelled = lock.withLock {
            guard downstream != nil else { return true }
            self.disposable = disposable
            return false
        }
        if cancelled {
            disposable?.dispose()
        }
    }

    func request(_ demand: Subscribers.Demand) {
        lock.withLock { self.demand += demand }
    }

    func cancel() {
        // The subscriber and the handle subscription leave the locked region and are released after unlocking.
        let (disposable, subscriber) = lock.withLock {
            let taken = (self.disposable, downstream)
            downstream = nil
            self.disposable = nil
            return taken
        }
        disposable?.dispose()
        withExtendedLifetime(subscriber) {}
    }

    fileprivate func send(_ value: Output) {
        let target: Downstream? = lock.withLock {
            guard let downstream, demand > 0 else { return nil }
            demand -= 1
            return downstream
        }
        guard let target else { return }
        let more = target.receive(value)
        if more > 0 {
            lock.withLock { demand += more }
        }
    }

    fileprivate func finish() {
        let (target, disposable) = lock.withLock {
            let taken = (downstream, self.disposable)
            downstream = nil
            self.disposable = nil
            return taken
        }
        target?.receive(completion: .finished)
        withExtendedLifetime(disposable) {}
    }
}

/// Finishes a publisher subscription when the handle subscription releases its handler.
@available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
private final class NotificatablePublisherCompleter<Output>: @unchecked Sendable {
    let subscription: NotificatablePublisherSubscription<Output>

    init(_ subscription: NotificatablePublisherSubscription<Output>) {
        self.subscription = subscription
    }

    deinit {
        subscription.finish()
    }
}
#endif
