import Foundation

/// A subscription, or any other resource, that ends when you call ``dispose()``.
///
/// Every `subscribe` method returns one:
///
/// ```swift
/// let subscription = userDidLogin.subscribe { note in show(note.userInfo) }
/// // …
/// subscription.dispose()
/// ```
///
/// - Important: Dropping a `Disposable` does **not** end its subscription: it keeps delivering until you call
///   ``dispose()``, or until a ``DisposeBag`` it was added to is disposed or deinitialized. So `subscribe` is not
///   `@discardableResult`, and the compiler warns about a subscription whose result is dropped ("result of call to
///   'subscribe(…)' is unused"): tie it to its owner with ``store(in:)-(DisposeBag)``.
///
/// ``dispose()`` is idempotent and thread-safe, and may be called from inside the subscription's own handler. What
/// it guarantees, exactly:
///
/// - **No new call.** Once it returns, the handler is not called for any post made afterwards, and a delivery still
///   waiting on a queue does nothing when it runs. A delivery that was already under way on another thread when
///   ``dispose()`` was called may still call the handler, and may still be running when ``dispose()`` returns.
/// - **The handler is let go.** The subscription drops its handler and its `onFailure:` handler. If no call is under
///   way, they, and everything they captured, are released before ``dispose()`` returns; a call under way (on
///   another thread, or the very call that disposes from inside the handler) keeps them until it returns.
/// - **What is not released yet.** A delivery waiting on a queue holds the payload and the notification's object,
///   not the handler, until the queue runs it (on a suspended queue, until it resumes). The subscription's queue and
///   the converters of its handle stay with the `Disposable`, and go when it, and any bag holding it, is released.
public final class Disposable: @unchecked Sendable {
    private let resource: any DisposableResource

    /// Creates a disposable that runs `dispose` once, the first time ``dispose()`` is called.
    ///
    /// ```swift
    /// let timer = Disposable { source.cancel() }
    /// timer.store(in: bag)
    /// ```
    ///
    /// - Parameter dispose: The work that ends the resource.
    public init(_ dispose: @escaping @Sendable () -> Void) {
        resource = DisposeAction(dispose)
    }

    init(_ resource: any DisposableResource) {
        self.resource = resource
    }

    /// Ends the subscription. Calling it again does nothing.
    public func dispose() {
        resource.dispose()
    }

    /// Whether ``dispose()`` has not been called yet.
    ///
    /// A subscription with an object filter also ends by itself once the object is gone; ``isActive`` turns
    /// `false` when the subscription notices that, at the next post of its name.
    public var isActive: Bool {
        resource.isActive
    }

    /// Whether ``dispose()`` has been called. The opposite of ``isActive``.
    public var isDisposed: Bool { !isActive }

    /// Keeps this disposable in `bag`, which disposes it when the bag is disposed or deinitialized.
    ///
    /// ```swift
    /// final class ProfileViewModel {
    ///     private let bag = DisposeBag()
    ///     init() {
    ///         userDidLogin.subscribe { [weak self] note in self?.update(note.userInfo) }.store(in: bag)
    ///     }
    /// }
    /// ```
    ///
    /// The name is Combine's (`AnyCancellable.store(in:)`): the subscription is kept in the bag, and ends with it.
    /// If the bag is already disposed, this disposable is disposed at once.
    ///
    /// - Parameter bag: The bag that owns this disposable from now on.
    public func store(in bag: DisposeBag) {
        bag.insert(self)
    }

    /// Keeps this disposable in a set, as Combine's `AnyCancellable.store(in:)` does.
    ///
    /// ```swift
    /// var subscriptions = Set<Disposable>()
    /// userDidLogin.subscribe { note in show(note.userInfo) }.store(in: &subscriptions)
    /// ```
    ///
    /// - Important: Unlike an `AnyCancellable`, a `Disposable` does not end its subscription when it is released, so
    ///   a set that goes away ends nothing. Dispose its members yourself (`subscriptions.forEach { $0.dispose() }`),
    ///   or keep them in a ``DisposeBag``, which disposes them when it is deinitialized.
    ///
    /// - Parameter set: The set to insert this disposable into.
    public func store(in set: inout Set<Disposable>) {
        set.insert(self)
    }

    /// Appends this disposable to a collection, such as an array, as Combine's `AnyCancellable.store(in:)` does.
    ///
    /// As with a set, releasing the collection ends nothing.
    ///
    /// - Parameter collection: The collection to append this disposable to.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == Disposable {
        collection.append(self)
    }

    /// Combine's spelling of ``dispose()``; the compiler offers the rename as a fix-it.
    @available(*, unavailable, renamed: "dispose()")
    public func cancel() {
        dispose()
    }

    /// Renamed ``store(in:)-(DisposeBag)``: this spelling read like "dispose now". The compiler offers the rename as a fix-it.
    ///
    /// - Parameter bag: The bag that would own this disposable.
    @available(*, unavailable, renamed: "store(in:)")
    public func dispose(by bag: DisposeBag) {
        store(in: bag)
    }

    /// RxSwift's spelling; here it is ``store(in:)-(DisposeBag)``. The compiler offers the rename as a fix-it.
    ///
    /// - Parameter bag: The bag that would own this disposable.
    @available(*, unavailable, renamed: "store(in:)")
    public func disposed(by bag: DisposeBag) {
        store(in: bag)
    }
}

/// What a ``Disposable`` ends: a subscription, or a closure.
protocol DisposableResource: AnyObject, Sendable {
    /// Ends the resource; idempotent and thread-safe.
    func dispose()
    var isActive: Bool { get }
}

/// A closure that runs once.
private final class DisposeAction: DisposableResource, @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    func dispose() {
        let action = lock.withLock {
            let action = self.action
            self.action = nil
            return action
        }
        action?()
    }

    var isActive: Bool {
        lock.withLock { action != nil }
    }
}

// MARK: - Hashable

extension Disposable: Hashable {
    /// Two disposables are equal when they are the same object, as two `AnyCancellable`s are.
    public static func == (lhs: Disposable, rhs: Disposable) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
