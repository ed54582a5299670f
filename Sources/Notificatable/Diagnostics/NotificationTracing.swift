import Foundation

#if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
import Synchronization
#endif

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
/// stop. While no tracer is installed, a post pays one check: a relaxed atomic load on Linux, an unfair-lock read on
/// Apple platforms.
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
        let storage = TracerStorage.shared
        guard storage.isInstalled, let tracer = storage.tracer else { return }
        tracer(event())
    }
}

extension Notificatable {
    /// Tells the tracer, if there is one, about a typed post. Called by the inlined `post` methods.
    @usableFromInline
    package func tracePost(object: Any?) {
        let storage = TracerStorage.shared
        guard storage.isInstalled, let tracer = storage.tracer else { return }
        tracer(.posted(name: name, payloadType: Info.self, object: object))
    }
}

/// The installed tracer, behind a lock, so that it can be read and replaced from any thread.
///
/// Every typed post asks ``isInstalled`` first. Where the standard library's `Atomic` is available without an
/// availability check (everywhere but Apple platforms, whose deployment targets predate it), that is one relaxed
/// atomic load, about 1 ns; an uncontended `NSLock` round trip costs about 20 ns on Linux, several percent of a
/// post. On Apple platforms `NSLock` is an unfair lock whose uncontended round trip is a few nanoseconds. The tracer
/// itself is always read under the lock. A post that races with installing or removing the tracer may or may not
/// be traced.
private final class TracerStorage: @unchecked Sendable {
    static let shared = TracerStorage()

    private let lock = NSLock()
    private var _tracer: NotificationTracing.Tracer?
    #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
    private let installed = Atomic<Bool>(false)
    #endif

    var isInstalled: Bool {
        #if canImport(Darwin) || NOTIFICATABLE_APPLE_CHECK
        lock.withLock { _tracer != nil }
        #else
        installed.load(ordering: .relaxed)
        #endif
    }

    var tracer: NotificationTracing.Tracer? {
        get { lock.withLock { _tracer } }
        set {
            let replaced = lock.withLock {
                let replaced = _tracer
                _tracer = newValue
                #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
                installed.store(newValue != nil, ordering: .relaxed)
                #endif
                return replaced
            }
            // The old tracer, and what it captured, are released here, after unlocking: a deinit among them may
            // read or set the tracer.
            withExtendedLifetime(replaced) {}
        }
    }
}
