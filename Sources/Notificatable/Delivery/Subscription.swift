import Foundation

/// One subscriber of a hub: object filter, payload extraction, failure reporting, queue hop and the handler.
///
/// `Value` is what the handler receives: a ``TypedNotification``, a payload, the object, or nothing.
final class Subscription<Value>: NotificationReceiver, DisposableResource, @unchecked Sendable {
    typealias Extract = @Sendable (Notification) throws(NotificationDecodingFailure) -> Value
    typealias Hop = @Sendable (@escaping @Sendable () -> Void) -> Void

    private let lock = NSLock()
    /// `nil` once the subscription ended; dropping it releases everything the handler captured.
    private var handler: (@Sendable (Value) -> Void)?
    private var onFailure: NotificationDecodingFailure.Handler?
    /// Weak: the hub owns its receivers.
    private weak var hub: NotificationHub?

    private let isFiltered: Bool
    /// The filter object, held weakly and compared with `===`. Foundation on Linux compares addresses instead,
    /// so a new object at a dead one's address would match there.
    private weak var filterObject: AnyObject?
    private let extract: Extract
    private let hop: Hop?

    init(
        object: AnyObject?,
        hop: Hop?,
        extract: @escaping Extract,
        onFailure: NotificationDecodingFailure.Handler?,
        handler: @escaping @Sendable (Value) -> Void
    ) {
        isFiltered = object != nil
        filterObject = object
        self.hop = hop
        self.extract = extract
        self.onFailure = onFailure
        self.handler = handler
    }

    func attached(to hub: NotificationHub) {
        lock.withLock { self.hub = hub }
    }

    func receive(_ notification: Notification) {
        if isFiltered {
            guard let filterObject else {
                // The object is gone: no later post can come from it, so end for good.
                dispose()
                return
            }
            guard let object = notification.object, (object as AnyObject) === filterObject else { return }
        }
        let value: Value
        do {
            value = try extract(notification)
        } catch {
            let onFailure = lock.withLock { handler == nil ? nil : Optional(self.onFailure) }
            // A subscription that ended reports nothing; otherwise its own handler, or the global one.
            if let onFailure {
                error.report(to: onFailure)
            }
            return
        }
        if let hop {
            // Only the subscribe forms that require a `Sendable` payload create a hop; the object travels with it
            // as it does in Foundation's queued delivery.
            let transfer = UncheckedTransfer(value: value)
            hop { [self] in invoke(transfer.value) }
        } else {
            invoke(value)
        }
    }

    /// Calls the handler unless the subscription ended; checked right before the call, so a delivery that was
    /// queued before `dispose()` does not begin after it.
    private func invoke(_ value: Value) {
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler?(value)
    }

    func dispose() {
        let (handler, onFailure, hub) = lock.withLock {
            let ended = (self.handler, self.onFailure, self.hub)
            self.handler = nil
            self.onFailure = nil
            self.hub = nil
            return ended
        }
        guard handler != nil else { return }
        if let hub {
            HubRegistry.shared.detach(self, from: hub)
        }
        // Release the handler and everything it captured here, outside the lock.
        _ = (handler, onFailure)
    }

    var isActive: Bool {
        lock.withLock { handler != nil }
    }
}

/// Carries a value into a queue hop. Used only where the payload type is `Sendable`; the notification's object,
/// which is `Any?`, crosses with it exactly as it does in Foundation's queued observers.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
