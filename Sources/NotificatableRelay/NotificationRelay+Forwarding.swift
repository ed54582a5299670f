import Foundation
import Notificatable

// The typed half of a forwarded handle, and the thread-local count that lets `stop()` tell whether it runs inside a
// transport call. Split from NotificationRelay.swift so the relay class reads on its own.

/// The typed half of a forwarding, with its payload type erased.
protocol ForwardingCoding: Sendable {
    func payload(of notification: Notification) throws -> [AnyHashable: Any]
    func notification(_ payload: [AnyHashable: Any]?, from sender: String) throws(NotificationDecodingFailure)
        -> Notification
}

/// Encodes a handle's local posts, and builds the re-posts of received payloads, for payload type `Info`.
struct TypedCoding<Info: Codable>: ForwardingCoding {
    let handle: Notificatable<Info>
    let encoding: any PlainKeysEncoding

    init(handle: Notificatable<Info>) {
        self.handle = handle
        self.encoding = handle.relayPlainKeysEncoding
    }

    func payload(of notification: Notification) throws -> [AnyHashable: Any] {
        try encoding.encode(try handle.payload(from: notification))
    }

    func notification(_ payload: [AnyHashable: Any]?, from sender: String) throws(NotificationDecodingFailure)
        -> Notification
    {
        // The reader (or `payloadUserInfo`) made the dictionary with room to spare for the two keys added here: each
        // insertion compares the keys in the buckets it probes through `AnyHashable`'s equality, about 2,000
        // instructions each on Linux, so fewer collisions are cheaper.
        var userInfo = payload ?? [AnyHashable: Any](minimumCapacity: 4)
        let info = try handle.payload(from: Notification(name: handle.name, object: nil, userInfo: userInfo))
        userInfo[payloadKey] = info
        userInfo[NotificationRelay.senderKey] = sender
        handle.tracePost(object: nil)
        return Notification(name: handle.name, object: nil, userInfo: userInfo)
    }
}

/// How many relay transport calls and transport callbacks are running on the current thread, in a thread-local
/// counter: `stop()` must not wait for another thread's transport call from inside one, since that thread may be
/// waiting for this one.
enum TransportCallDepth {
    /// The thread-specific key; `nil` if the system had none left, and then no thread counts as inside.
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    private static var depth: Int {
        guard let key else { return 0 }
        return Int(bitPattern: pthread_getspecific(key))
    }

    /// Whether the current thread is inside a transport call or callback of any relay.
    static var isInsideTransport: Bool { depth > 0 }

    static func enter() {
        guard let key else { return }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth + 1))
    }

    static func leave() {
        guard let key else { return }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: max(0, depth - 1)))
    }
}

/// The re-post a relay is making on the current thread, as the identity of its `userInfo`'s storage: the relay's own
/// observer, which the post calls synchronously, then tells its re-post from a local post without looking the sender
/// key up in the `[AnyHashable: Any]` (about 8,000 instructions of each received message). Any other notification
/// (a local post, one a subscriber posts from inside the re-post) has another storage and is looked up as before.
enum RepostMarker {
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    /// The bits of a native dictionary: the address of its storage, which `userInfo` keeps alive while it is marked.
    private static func identity(of userInfo: [AnyHashable: Any]) -> UInt {
        withUnsafeBytes(of: userInfo) { bytes in
            bytes.count == MemoryLayout<UInt>.size ? bytes.load(as: UInt.self) : 0
        }
    }

    /// Runs `body` (the post) with `userInfo` marked as the current thread's re-post.
    static func posting(_ userInfo: [AnyHashable: Any]?, _ body: () -> Void) {
        guard let key, let userInfo, !userInfo.isEmpty else { return body() }
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: identity(of: userInfo)))
        defer { pthread_setspecific(key, previous) }
        withExtendedLifetime(userInfo) { body() }
    }

    /// Whether `userInfo` is the storage of the re-post being made on the current thread.
    static func isCurrent(_ userInfo: [AnyHashable: Any]?) -> Bool {
        guard let key, let userInfo, let marked = pthread_getspecific(key) else { return false }
        return UInt(bitPattern: marked) == identity(of: userInfo)
    }
}
