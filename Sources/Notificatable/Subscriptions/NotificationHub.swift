import Foundation

/// The one Foundation observer for one (center, name) pair, fanning each post out to its receivers in order.
///
/// Foundation on Linux calls observers in hash order and compares object filters by address. A hub registers a
/// single block observer with `object: nil, queue: nil`, keeps its receivers in registration order, and leaves
/// filtering and queue hops to them. A post takes the hub's lock only to copy the receiver array (no allocation),
/// then calls the receivers outside the lock, so a receiver may post, subscribe or dispose from its handler.
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
        let snapshot = receivers
        lock.unlock()
        for receiver in snapshot {
            receiver.receive(notification)
        }
    }

    // MARK: Called by the registry, under its lock

    func startObserving(_ center: NotificationCenter) {
        let token = center.addObserver(forName: name, object: nil, queue: nil) { [self] notification in
            deliver(notification)
        }
        lock.withLock { observation = token }
    }

    func append(_ receiver: Subscription) {
        lock.withLock { receivers.append(receiver) }
    }

    /// Removes `receiver`; returns the Foundation observation to remove if the hub became empty.
    func remove(_ receiver: Subscription) -> (any NSObjectProtocol)?? {
        lock.withLock {
            guard let index = receivers.firstIndex(where: { $0 === receiver }) else { return nil }
            receivers.remove(at: index)
            guard receivers.isEmpty else { return nil }
            let token = observation
            observation = nil
            return .some(token)
        }
    }

    var receiverCount: Int { lock.withLock { receivers.count } }
}

/// The process-wide table of hubs, keyed by center identity and name.
///
/// The key uses `ObjectIdentifier(center)`, and the entry also holds the center weakly: a new center allocated at
/// the address of a dead one must not find the dead one's hub. A hub leaves the table, and its Foundation observer
/// is removed, when its last receiver detaches; entries of dead centers are swept as the table grows.
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
        return lock.withLock {
            if let entry = entries[key], entry.center === center {
                receiver.attached(to: entry.hub)
                entry.hub.append(receiver)
                return entry.hub
            }
            sweepIfNeeded()
            let hub = NotificationHub(name: name, center: center, centerID: centerID)
            receiver.attached(to: hub)
            hub.append(receiver)
            entries[key] = Entry(center: center, hub: hub)
            hub.startObserving(center)
            return hub
        }
    }

    /// Detaches `receiver` from `hub`; removes the hub and its Foundation observer if it became empty.
    func detach(_ receiver: Subscription, from hub: NotificationHub) {
        let center = hub.center
        let token: (any NSObjectProtocol)? = lock.withLock {
            guard let emptied = hub.remove(receiver) else { return nil }
            let key = Key(center: hub.centerID, name: hub.name)
            if entries[key]?.hub === hub {
                entries[key] = nil
            }
            return emptied
        }
        if let token, let center {
            center.removeObserver(token)
        }
    }

    /// Drops entries whose center is gone, once the table has doubled since the last sweep.
    private func sweepIfNeeded() {
        guard entries.count >= sweepThreshold else { return }
        entries = entries.filter { $0.value.center != nil }
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
