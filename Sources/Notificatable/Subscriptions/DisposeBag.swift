import Foundation

/// A collection of ``Disposable``s that are disposed together, when the bag is disposed or deinitialized.
///
/// Keep a bag in the object whose lifetime should bound the subscriptions:
///
/// ```swift
/// final class SessionController {
///     private let bag = DisposeBag()
///
///     init(center: NotificationCenter) {
///         didLogout.subscribe(center: center) { [weak self] _ in self?.reset() }.store(in: bag)
///     }
/// }
/// ```
///
/// To remove every subscription of one owner at once, give the owner its own bag and call ``dispose()``.
///
/// A bag is thread-safe. Once disposed, it stays disposed: a disposable added later is disposed at once.
///
/// ## Next to RxSwift
///
/// RxSwift has a `DisposeBag` too, so in a file that imports both modules `DisposeBag()` is ambiguous, and
/// `Notificatable.DisposeBag()` does not help: `Notificatable` names the handle type before the module. Write
/// ``NotificatableDisposeBag``, or, with Swift 6.3's module selectors, `Notificatable::DisposeBag()`.
public final class DisposeBag: @unchecked Sendable {
    private let lock = NSLock()
    private var disposables: [Disposable] = []
    private var disposed = false

    /// Creates an empty bag.
    public init() {}

    deinit {
        dispose()
    }

    /// Adds a disposable to the bag; if the bag is already disposed, disposes it at once.
    ///
    /// ```swift
    /// bag.insert(userDidLogin.subscribe { _ in })
    /// ```
    ///
    /// - Parameter disposable: The disposable to own.
    public func insert(_ disposable: Disposable) {
        let (accepted, pruned) = lock.withLock { () -> (Bool, [Disposable]) in
            if disposed { return (false, []) }
            // Keep the bag from growing without bound when its members are disposed one by one. The pruned members
            // leave the locked region and are released after unlocking (see "Locks and your code" in the threading
            // article): the last reference to a subscription releases its queue and converters, user objects.
            var pruned: [Disposable] = []
            if disposables.count >= 64, disposables.count.isMultiple(of: 64) {
                var kept: [Disposable] = []
                kept.reserveCapacity(disposables.count + 1)
                for member in disposables {
                    if member.isDisposed {
                        pruned.append(member)
                    } else {
                        kept.append(member)
                    }
                }
                disposables = kept
            }
            disposables.append(disposable)
            return (true, pruned)
        }
        withExtendedLifetime(pruned) {}
        if !accepted {
            disposable.dispose()
        }
    }

    /// Disposes every disposable in the bag, in the order they were added, and marks the bag disposed.
    public func dispose() {
        let members = lock.withLock {
            disposed = true
            let members = disposables
            disposables = []
            return members
        }
        for member in members {
            member.dispose()
        }
    }

    /// Whether ``dispose()`` has been called, or the bag is being deinitialized.
    public var isDisposed: Bool {
        lock.withLock { disposed }
    }
}

/// ``DisposeBag`` under a name no other module uses, for files that also import RxSwift, whose `DisposeBag` makes the
/// short name ambiguous.
///
/// ```swift
/// import Notificatable
/// import RxSwift
///
/// let bag = NotificatableDisposeBag()
/// userDidLogin.subscribe { note in show(note.userInfo) }.store(in: bag)
/// ```
public typealias NotificatableDisposeBag = DisposeBag
