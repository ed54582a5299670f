import Foundation

/// Something a tracer sees: a typed post, or a reported failure.
///
/// New cases may be added; switch with a `default:` branch.
///
/// The value is `Sendable` although the object is not: it holds the object the poster passed, and it is handed to
/// the tracer synchronously, on the posting thread, as a `Notification` would be.
public enum NotificationTraceEvent: @unchecked Sendable {
    /// A typed post, made through a handle's `post` (or `postAsync`, when its queue posts), just before the
    /// center delivers it. Legacy posts made directly on a `NotificationCenter` are not seen.
    case posted(name: Notification.Name, payloadType: any Any.Type, object: Any?)
    /// A failure that was reported, to a subscription's `onFailure:` or to ``NotificationDecodingFailure/handler``:
    /// a notification that could not be turned into its payload type, or plain keys that could not be written.
    case decodingFailed(NotificationDecodingFailure)
}

extension NotificationTraceEvent: CustomStringConvertible {
    /// A one-line description, such as `posted UserDidLogin (MyApp.User)`.
    public var description: String {
        switch self {
        case .posted(let name, let payloadType, let object):
            let from = object.map { " from \(type(of: $0))" } ?? ""
            return "posted \(name.rawValue) (\(String(reflecting: payloadType)))\(from)"
        case .decodingFailed(let failure):
            return "failed \(failure)"
        }
    }
}

/// Opt-in tracing of every typed post and every reported failure, for debugging.
///
/// ```swift
/// #if DEBUG
/// NotificationTracing.tracer = { event in print("📢", event) }
/// #endif
/// ```
///
/// The tracer runs synchronously on the posting thread, before the center delivers the post, and for a failure,
/// just before the failure handler. Keep it short and thread-safe. Setting it is thread-safe; set it to `nil` to
/// stop. While no tracer is installed, a post pays one check.
///
/// Tracing hooks Notificatable's own post and failure paths. It never installs a `forName: nil` observer on a
/// center: on Linux such an observer crashes the process as soon as a Foundation typed message is posted on the
/// same center.
public enum NotificationTracing {
    /// A tracer: receives each event on the thread where it happens.
    public typealias Tracer = @Sendable (NotificationTraceEvent) -> Void

    /// The installed tracer, or `nil` (the default) for none.
    public static var tracer: Tracer? {
        get { TracerStorage.shared.tracer }
        set { TracerStorage.shared.tracer = newValue }
    }

    /// Sends `event` to the tracer, if there is one.
    static func trace(_ event: @autoclosure () -> NotificationTraceEvent) {
        guard let tracer = TracerStorage.shared.tracer else { return }
        tracer(event())
    }
}

extension Notificatable {
    /// Tells the tracer, if there is one, about a typed post. Called by the inlined `post` methods.
    @usableFromInline
    func tracePost(object: Any?) {
        guard let tracer = TracerStorage.shared.tracer else { return }
        tracer(.posted(name: name, payloadType: Info.self, object: object))
    }
}

/// The installed tracer, behind a lock, so that it can be read and replaced from any thread.
private final class TracerStorage: @unchecked Sendable {
    static let shared = TracerStorage()

    private let lock = NSLock()
    private var _tracer: NotificationTracing.Tracer?

    var tracer: NotificationTracing.Tracer? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return _tracer
        }
        set { lock.withLock { _tracer = newValue } }
    }
}
