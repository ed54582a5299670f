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
/// `Observer` is meant to be a class-bound protocol's existential, such as `any ThemeObserver`, or a class. (Swift
/// does not let a generic parameter require "a class-bound existential", so the registry keeps each observer as a
/// weak `AnyObject` and casts it back when it notifies.) A value of a value type has no identity to hold weakly:
/// ``register(_:)`` refuses it and returns `false`.
public final class ObserverRegistry<Observer>: @unchecked Sendable {
    private struct Entry {
        weak var object: AnyObject?
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
    /// - Returns: `true` if it was added; `false` if it was already registered, or is not a class instance.
    @discardableResult
    public func register(_ observer: Observer) -> Bool {
        guard let object = Self.object(observer) else { return false }
        let (added, loaded) = lock.withLock { () -> (Bool, [AnyObject]) in
            let loaded = pruneAndLoad()
            let isRegistered = loaded.contains { $0 === object }
            if !isRegistered {
                entries.append(Entry(object: object))
            }
            return (!isRegistered, loaded)
        }
        withExtendedLifetime(loaded) {}
        return added
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
        guard let object = Self.object(observer) else { return false }
        let (wasRegistered, loaded) = lock.withLock { () -> (Bool, [AnyObject]) in
            let loaded = pruneAndLoad()
            let wasRegistered = loaded.contains { $0 === object }
            if wasRegistered {
                // `object` is held by the caller; the other entries' objects are in `loaded`.
                entries.removeAll { $0.object === object }
            }
            return (wasRegistered, loaded)
        }
        withExtendedLifetime(loaded) {}
        return wasRegistered
    }

    /// Whether `observer` is registered (the seed's `hasObserver`).
    ///
    /// - Parameter observer: The observer to look for.
    /// - Returns: `true` if it is registered.
    public func contains(_ observer: Observer) -> Bool {
        guard let object = Self.object(observer) else { return false }
        let loaded = lock.withLock { pruneAndLoad() }
        return loaded.contains { $0 === object }
    }

    /// The live observers, in registration order. Removes the entries of observers that are gone.
    public var observers: [Observer] {
        Self.observers(lock.withLock { pruneAndLoad() })
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
        let snapshot = Self.observers(lock.withLock { pruneAndLoad() })
        for observer in snapshot {
            try body(observer)
        }
    }

    /// The loaded objects as observers. The cast cannot fail: every entry was registered as an `Observer`.
    private static func observers(_ loaded: [AnyObject]) -> [Observer] {
        loaded.compactMap { $0 as? Observer }
    }

    /// Under the lock: drops the entries of dead observers and returns the live ones, in order, held strongly.
    ///
    /// Loading a weak reference makes a strong one, and if another thread drops the observer meanwhile, that
    /// strong reference is the last: releasing it would run the observer's deinit under the lock. So every
    /// observer loaded under the lock is returned, and the caller releases them after unlocking.
    private func pruneAndLoad() -> [AnyObject] {
        var live: [AnyObject] = []
        live.reserveCapacity(entries.count)
        var hasDead = false
        for entry in entries {
            if let object = entry.object {
                live.append(object)
            } else {
                hasDead = true
            }
        }
        if hasDead {
            // Loads nothing new: `== nil` on a live entry makes a strong reference to an object `live` holds.
            entries.removeAll { $0.object == nil }
        }
        return live
    }

    /// The class instance inside `observer`, or `nil` for a value, which `as AnyObject` would box anew each time.
    private static func object(_ observer: Observer) -> AnyObject? {
        guard type(of: observer as Any) is AnyClass else { return nil }
        return observer as AnyObject
    }
}
