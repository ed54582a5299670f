import Foundation

/// A thread-safe list of weakly held observers that conform to a protocol, notified in registration order.
///
/// The protocol is the key: declare what observers can do, register them, and call them all with a closure.
///
/// ```swift
/// protocol ThemeObserver: AnyObject {
///     func themeDidChange(to theme: Theme)
/// }
///
/// let themeObservers = ObserverRegistry<any ThemeObserver>()
///
/// final class SettingsScreen: ThemeObserver {
///     init() { themeObservers.register(self) }
///     func themeDidChange(to theme: Theme) { apply(theme) }
/// }
///
/// themeObservers.notify { $0.themeDidChange(to: .dark) }
/// ```
///
/// - Observers are held **weakly**: registering never keeps an observer alive, and an observer that is gone is
///   skipped and removed. There is nothing to unregister in `deinit`.
/// - ``register(_:)`` is idempotent: registering the same instance (`===`) again changes nothing, and the observer
///   keeps its original place in the order.
/// - ``notify(_:)`` calls the live observers in the order they were first registered, on the calling thread,
///   **outside** the registry's lock: an observer may register, unregister or notify from inside the call.
///   Observers registered or unregistered during a `notify` take effect from the next one.
/// - Every method may be called from any thread. Observers are handed to `notify`'s closure on the calling thread,
///   as `NotificationCenter` hands over a notification's object: notify from the thread or actor your observers
///   expect.
///
/// The registry is a direct list rather than a notification name on a `NotificationCenter`: a protocol call needs
/// no name, payload or center, and going through a post would box every call into a `userInfo` for nothing. It
/// follows the same rules as the handles' delivery: one `NSLock`, a snapshot taken under it, calls made in order
/// outside it.
///
/// To drop every registration of one owner at once, unregister it (``unregister(_:)``), or let it go: weak entries
/// disappear with their observer.
public final class ObserverRegistry<Observer: AnyObject>: @unchecked Sendable {
    private struct Entry {
        weak var observer: Observer?
    }

    private let lock = NSLock()
    private var entries: [Entry] = []

    /// Creates an empty registry.
    public init() {}

    /// Adds `observer` at the end of the order, unless it is already registered.
    ///
    /// ```swift
    /// themeObservers.register(self)
    /// ```
    ///
    /// - Parameter observer: The observer, held weakly.
    /// - Returns: `true` if it was added, `false` if it was already registered.
    @discardableResult
    public func register(_ observer: Observer) -> Bool {
        lock.withLock {
            var isRegistered = false
            entries.removeAll { entry in
                guard let existing = entry.observer else { return true }
                if existing === observer { isRegistered = true }
                return false
            }
            if !isRegistered {
                entries.append(Entry(observer: observer))
            }
            return !isRegistered
        }
    }

    /// Removes `observer`.
    ///
    /// ```swift
    /// themeObservers.unregister(self)
    /// ```
    ///
    /// - Parameter observer: The observer to remove.
    /// - Returns: `true` if it was registered.
    @discardableResult
    public func unregister(_ observer: Observer) -> Bool {
        lock.withLock {
            var wasRegistered = false
            entries.removeAll { entry in
                guard let existing = entry.observer else { return true }
                if existing === observer {
                    wasRegistered = true
                    return true
                }
                return false
            }
            return wasRegistered
        }
    }

    /// Whether `observer` is registered (the seed's `hasObserver`).
    ///
    /// - Parameter observer: The observer to look for.
    /// - Returns: `true` if it is registered.
    public func contains(_ observer: Observer) -> Bool {
        lock.withLock { entries.contains { $0.observer === observer } }
    }

    /// The live observers, in registration order. Removes the entries of observers that are gone.
    public var observers: [Observer] {
        lock.withLock { liveObservers() }
    }

    /// How many live observers are registered.
    public var count: Int {
        observers.count
    }

    /// Calls `body` with every live observer, in registration order, on the calling thread, outside the lock.
    ///
    /// ```swift
    /// themeObservers.notify { observer in
    ///     observer.themeDidChange(to: theme)
    /// }
    /// ```
    ///
    /// The observers are held strongly for the duration of the call, so none of them goes away halfway. If `body`
    /// throws, the remaining observers are not called and the error is rethrown.
    ///
    /// - Parameter body: Called once for each observer.
    public func notify(_ body: (Observer) throws -> Void) rethrows {
        let snapshot = lock.withLock { liveObservers() }
        for observer in snapshot {
            try body(observer)
        }
    }

    /// Under the lock: the live observers, after dropping the entries of dead ones.
    private func liveObservers() -> [Observer] {
        var live: [Observer] = []
        live.reserveCapacity(entries.count)
        var hasDead = false
        for entry in entries {
            if let observer = entry.observer {
                live.append(observer)
            } else {
                hasDead = true
            }
        }
        if hasDead {
            entries.removeAll { $0.observer == nil }
        }
        return live
    }
}
