import Dispatch
import Foundation

extension Notificatable where Info: Sendable {
    /// Posts the notification later, from a queue of the given quality of service, and returns at once.
    ///
    /// ```swift
    /// // The caller does not wait for the subscribers; they run on a user-initiated background queue.
    /// catalogDidSync.postAsync(summary, object: store, center: center, priority: .userInitiated)
    /// ```
    ///
    /// The post itself, ``post(_:object:center:)``, happens on a serial queue that targets the global queue of
    /// `priority`: subscribers without a queue run there, subscribers with a queue are enqueued from there, and
    /// they see the payload and the object as with any post. Asynchronous posts of the same priority are posted in
    /// the order they were made; posts of different priorities, or mixed with synchronous posts, are not ordered
    /// with respect to each other. `.unspecified` means `.default`.
    ///
    /// The object is handed to the queue as it is, as Foundation's queued observers do.
    ///
    /// - Parameters:
    ///   - info: The payload.
    ///   - object: The object to post with, usually the sender. Defaults to `nil`.
    ///   - center: The center to post to. Defaults to `NotificationCenter.default`.
    ///   - priority: The quality of service of the posting queue. Defaults to `.default`.
    public func postAsync(
        _ info: Info,
        object: Any? = nil,
        center: NotificationCenter = .default,
        priority: DispatchQoS.QoSClass = .default
    ) {
        let handle = self
        let transfer = UncheckedTransfer(value: (info, object))
        PostingQueues.queue(for: priority).async {
            handle.post(transfer.value.0, object: transfer.value.1, center: center)
        }
    }
}

extension Notificatable where Info == Never {
    /// Posts the payload-less notification later, from a queue of the given quality of service, and returns at
    /// once.
    ///
    /// ```swift
    /// cacheDidPurge.postAsync(object: cache, priority: .utility)
    /// ```
    ///
    /// See ``Notificatable/postAsync(_:object:center:priority:)`` for the queues and the order.
    ///
    /// - Parameters:
    ///   - object: The object to post with, usually the sender. Defaults to `nil`.
    ///   - center: The center to post to. Defaults to `NotificationCenter.default`.
    ///   - priority: The quality of service of the posting queue. Defaults to `.default`.
    public func postAsync(
        object: Any? = nil,
        center: NotificationCenter = .default,
        priority: DispatchQoS.QoSClass = .default
    ) {
        let handle = self
        let transfer = UncheckedTransfer(value: object)
        PostingQueues.queue(for: priority).async {
            handle.post(object: transfer.value, center: center)
        }
    }
}

/// One serial posting queue per quality of service, so that asynchronous posts of one priority keep their order.
enum PostingQueues {
    private static let userInteractive = make(.userInteractive)
    private static let userInitiated = make(.userInitiated)
    private static let standard = make(.default)
    private static let utility = make(.utility)
    private static let background = make(.background)

    static func queue(for priority: DispatchQoS.QoSClass) -> DispatchQueue {
        switch priority {
        case .userInteractive: userInteractive
        case .userInitiated: userInitiated
        case .utility: utility
        case .background: background
        case .default, .unspecified: standard
        @unknown default: standard
        }
    }

    private static func make(_ qos: DispatchQoS.QoSClass) -> DispatchQueue {
        DispatchQueue(
            label: "Notificatable.post.\(qos)",
            qos: DispatchQoS(qosClass: qos, relativePriority: 0),
            target: .global(qos: qos)
        )
    }
}
