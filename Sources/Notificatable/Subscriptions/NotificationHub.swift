import Foundation

/// The one Foundation observer for one (center, name) pair, fanning each post out to its receivers in order.
///
/// Foundation on Linux calls observers in hash order and compares object filters by address. A hub registers a
/// single block observer with `object: nil, queue: nil`, keeps its receivers in registration order, and leaves
/// filtering and queue hops to them.
///
/// The receivers are an immutable array: subscribe and dispose build a new array and swap it in under the lock, and
/// no array is written after it was swapped in. A post reads the current array under the lock (one reference, no
/// copy of the elements) and calls the receivers outside it, so a receiver may post, subscribe or dispose from its
/// handler, and a dispose racing with a post never writes memory the post is reading.
final class NotificationHub: @unchecked Sendable {
    let name: Notification.Name
    /// The identity of the center, kept for the registry key after the center is gone.
    let centerID: ObjectIdentifier
    /// Weak, so that a hub never keeps a center alive; the center keeps the hub alive through its observer block.
    private(set) weak var center: NotificationCenter?

    private let lock = NSLock()
    private var receivers: [Subscription] = []
    private var observation: (any NSObjectProtocol)?

    init(name: Notification.Name, center: NotificationCenter, centerID: ObjectIdentifier) {
        self.name = name
        self.centerID = centerID
        self.center = center
    }

    /// Calls every receiver, in attachment order, with `notification`.
    func deliver(_ notification: Notification) {
        lock.lock()
        let current = receivers
        lock.unlock()
        for receiver in current {
            receiver.receive(notification)
        }
    }

    /// Adds the Foundation observer. Called outside every lock of ours: the center may be a subclass, whose
    /// `addObserver` is user code.
    func startObserving(_ center: NotificationCenter) {
        let token = center.addObserver(forName: name, object: nil, queue: nil) { [self] notification in
            deliver(notification)
        }
        lock.withLock { observation = token }
    }

    /// Removes the Foundation observer of a hub that was never published. Called outside every lock of ours.
    func stopObserving(_ center: NotificationCenter) {
        let token = lock.withLock {
            let token = observation
            observation = nil
            return token
        }
        if let token {
            center.removeObserver(token)
        }
    }

    // MARK: Called by the registry, under its lock

    /// Swaps in a new array that ends with `receiver`; returns the old one, for the caller to release after
    /// unlocking. (Its elements all live on in the new array, so releasing it early would release nothing of the
    /// user's; it goes out anyway, so that the rule needs no argument.)
    func append(_ receiver: Subscription) -> [Subscription] {
        lock.withLock {
            let old = receivers
            var new: [Subscription] = []
            new.reserveCapacity(old.count + 1)
            new.append(contentsOf: old)
            new.append(receiver)
            receivers = new
            return old
        }
    }

    /// Swaps in a new array without `receiver`. Returns the old array, for the caller to release after unlocking,
    /// and, if the hub became empty, the Foundation observation to remove.
    func remove(_ receiver: Subscription) -> (old: [Subscription], emptied: (any NSObjectProtocol)??) {
        lock.withLock {
            let old = receivers
            guard old.contains(where: { $0 === receiver }) else { return (old, nil) }
            // `filter` always builds a new buffer: the old one may be in a post's hands.
            receivers = old.filter { $0 !== receiver }
            guard receivers.isEmpty else { return (old, nil) }
            let token = observation
            observation = nil
            return (old, .some(token))
        }
    }

    var receiverCount: Int { lock.withLock { receivers.count } }
}

/// The process-wide table of hubs, keyed by center identity and name.
///
/// The key uses `ObjectIdentifier(center)`, and the entry also holds the center weakly: a new center allocated at
/// the address of a dead one must not find the dead one's hub. A hub leaves the table, and its Foundation observer
/// is removed, when its last receiver detaches; entries of dead centers are swept as the table grows.
///
/// The lock rule (see the threading article): no user code runs and no user object is released under the lock.
/// A dead center's hub still holds its receivers, their handlers and everything those captured, so every entry
/// that leaves the table leaves the locked region first and is released after unlocking. The center's
/// `addObserver` and `removeObserver` are called outside the lock.
final class HubRegistry: @unchecked Sendable {
    static let shared = HubRegistry()

    private struct Key: Hashable {
        let center: ObjectIdentifier
        let name: Notification.Name
    }

    private struct Entry {
        weak var center: NotificationCenter?
        let hub: NotificationHub
    }

    /// What a locked region hands out, to be released after unlocking.
    private struct Released {
        var entries: [Entry] = []
        var receivers: [Subscription] = []
        /// Centers loaded from weak references while sweeping: one of them may be the last strong reference.
        var centers: [NotificationCenter] = []
    }

    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var sweepThreshold = 64

    /// Attaches `receiver` to the hub of (`center`, `name`), creating the hub and its observer if needed.
    ///
    /// `centerID` stands in for `ObjectIdentifier(center)`, the default; tests pass a dead center's identity to
    /// reach the path taken when the allocator reuses an address.
    func attach(
        _ receiver: Subscription, name: Notification.Name, center: NotificationCenter,
        centerID: ObjectIdentifier? = nil
    ) -> NotificationHub {
        let centerID = centerID ?? ObjectIdentifier(center)
        let key = Key(center: centerID, name: name)
        let existing: (hub: NotificationHub, released: [Subscription])? = lock.withLock {
            // `entry.center` is either `center`, which the caller holds, or gone: loading it releases nothing.
            guard let entry = entries[key], entry.center === center else { return nil }
            receiver.attached(to: entry.hub)
            return (entry.hub, entry.hub.append(receiver))
        }
        if let existing {
            return existing.hub
        }

        // A new hub starts observing before it is published, outside the lock, so that a post made after this
        // call returns always reaches it. A post that reaches it before it is published finds no receiver.
        let created = NotificationHub(name: name, center: center, centerID: centerID)
        created.startObserving(center)
        let (hub, released) = lock.withLock { () -> (NotificationHub, Released) in
            var released = Released()
            if let entry = entries[key], entry.center === center {
                // Another thread published a hub for the same pair meanwhile: join it.
                receiver.attached(to: entry.hub)
                released.receivers = entry.hub.append(receiver)
                return (entry.hub, released)
            }
            sweepIfNeeded(into: &released)
            if let replaced = entries.updateValue(Entry(center: center, hub: created), forKey: key) {
                // A dead center's entry at a reused address.
                released.entries.append(replaced)
            }
            receiver.attached(to: created)
            released.receivers = created.append(receiver)
            return (created, released)
        }
        if hub !== created {
            created.stopObserving(center)
        }
        // Dead centers' hubs, their receivers and handlers, and what those captured, are released here.
        withExtendedLifetime(released) {}
        return hub
    }

    /// Detaches `receiver` from `hub`; removes the hub and its Foundation observer if it became empty.
    func detach(_ receiver: Subscription, from hub: NotificationHub) {
        let center = hub.center
        let (token, old) = lock.withLock { () -> ((any NSObjectProtocol)?, [Subscription]) in
            let (old, emptied) = hub.remove(receiver)
            guard let emptied else { return (nil, old) }
            let key = Key(center: hub.centerID, name: hub.name)
            if entries[key]?.hub === hub {
                // The caller holds `hub`, and the entry holds its center weakly: this releases nothing.
                entries[key] = nil
            }
            return (emptied, old)
        }
        withExtendedLifetime(old) {}
        if let token, let center {
            center.removeObserver(token)
        }
    }

    /// Drops entries whose center is gone, once the table has doubled since the last sweep. What it drops, and the
    /// live centers it loaded to check, go into `released`.
    private func sweepIfNeeded(into released: inout Released) {
        guard entries.count >= sweepThreshold else { return }
        var live: [Key: Entry] = [:]
        live.reserveCapacity(entries.count)
        for (key, entry) in entries {
            if let center = entry.center {
                released.centers.append(center)
                live[key] = entry
            } else {
                released.entries.append(entry)
            }
        }
        entries = live
        sweepThreshold = max(64, entries.count * 2)
    }

    /// The hub of (`center`, `name`), for tests.
    func hub(for name: Notification.Name, center: NotificationCenter) -> NotificationHub? {
        lock.withLock {
            guard let entry = entries[Key(center: ObjectIdentifier(center), name: name)], entry.center === center
            else { return nil }
            return entry.hub
        }
    }
}
