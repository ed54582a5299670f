import Foundation
import Notificatable

/// Records what typed handles deliver on a notification center, so that a test can assert what was posted
/// without writing observers.
///
/// Create it on the center under test, tell it which handles to record, run the code, then read the payloads:
///
/// ```swift
/// let center = NotificationCenter()                 // a private center: no other test interferes
/// let recorder = NotificationRecorder(center: center, recording: userDidLogin, didLogout)
///
/// let session = Session(center: center)             // the code under test takes the center
/// session.logIn(user)
///
/// #expect(recorder.payloads(of: userDidLogin) == [user])   // XCTest: XCTAssertEqual(…, [user])
/// #expect(recorder.count(of: didLogout) == 0)
/// #expect(recorder.failures.isEmpty)
/// ```
///
/// The recorder observes through the public typed-handle API, synchronously on the posting thread, so it sees
/// exactly what a subscriber of the handle sees, at the moment of the post: the converted payload and the
/// notification's object, or, when a notification cannot be converted, the `NotificationDecodingFailure` that a
/// subscriber's `onFailure:` receives. Both kinds of handle can be recorded: with a payload, and `Notificatable<Never>`.
///
/// ## Injecting a center
///
/// Every method of the library that posts or subscribes takes a `center:` argument that defaults to
/// `NotificationCenter.default`. Give the code under test the same parameter, and pass a private center in tests:
///
/// ```swift
/// final class Session {
///     private let center: NotificationCenter
///     init(center: NotificationCenter = .default) { self.center = center }
///     func logIn(_ user: User) { userDidLogin.post(user, object: self, center: center) }
/// }
///
/// @Test func loggingInPostsOnce() {
///     let center = NotificationCenter()             // fresh for this test
///     let recorder = NotificationRecorder(center: center, recording: userDidLogin)
///     Session(center: center).logIn(alice)
///     #expect(recorder.payloads(of: userDidLogin) == [alice])
/// }
/// ```
///
/// A private center sees only the posts of its own test, so tests can run in parallel, and nothing leaks into
/// `NotificationCenter.default`. To test how your code reacts to a system notification, post a dictionary shaped
/// like the system's on that center: `center.post(name: name, object: nil, userInfo: fixture.userInfo)`.
///
/// ## Lifetime
///
/// Recording starts with ``record(_:)`` (or the initializer that takes handles) and ends with ``stop()``, or when
/// the recorder is deinitialized. After ``stop()`` the recorded events stay readable; nothing new is recorded.
///
/// ## Threads
///
/// Every method is thread-safe. Events from many posting threads are kept in the order in which the recorder
/// received them; the events of one thread keep that thread's posting order. When the code under test posts from
/// another thread or a queue, wait for the posts with ``wait(forCount:of:timeout:)`` before asserting.
///
/// The recorder depends on neither Swift Testing nor XCTest: its queries return plain values (arrays, counts,
/// `Bool`) that read well in `#expect` and in `XCTAssertEqual` alike.
public final class NotificationRecorder: @unchecked Sendable {
    /// One notification that a recorded handle received: either delivered with its payload, or reported as a
    /// failure.
    ///
    /// It is `Sendable` although ``object`` and ``payload`` may not be, like `NotificationDecodingFailure`: it
    /// holds what the poster passed, as the `Notification` did. Don't share those values across threads unless you
    /// know it is safe.
    public struct Event: @unchecked Sendable, CustomStringConvertible {
        /// The notification's name.
        public let name: Notification.Name
        /// The notification's object, as the poster passed it.
        public let object: Any?
        /// The converted payload; `nil` for a `Notificatable<Never>` handle and for a failure.
        public let payload: Any?
        /// The failure that a subscriber's `onFailure:` received, or `nil` if the notification was delivered.
        public let failure: NotificationDecodingFailure?
        /// The recorded handle that received the event.
        let handle: HandleKey

        /// Whether the notification was reported as a failure rather than delivered.
        public var isFailure: Bool { failure != nil }

        /// The name and payload, or the failure, on one line.
        public var description: String {
            if let failure { return "\(name.rawValue): failure \(failure)" }
            if let payload { return "\(name.rawValue): \(payload)" }
            return name.rawValue
        }
    }

    /// Identifies a recorded handle: two handles of the same name but different payload types are different.
    struct HandleKey: Hashable, Sendable {
        let name: Notification.Name
        let payloadType: ObjectIdentifier

        init<Info>(_ handle: Notificatable<Info>) {
            name = handle.name
            payloadType = ObjectIdentifier(Info.self)
        }
    }

    /// The center the recorder observes.
    public let center: NotificationCenter

    // One NSCondition guards the state and lets `wait` sleep until an event arrives; it is Foundation's lock with
    // a condition variable, available on every platform.
    private let condition = NSCondition()
    private var storage: [Event] = []
    private var recorded: Set<HandleKey> = []
    private var subscriptions: [Disposable] = []
    private var stopped = false

    /// Creates a recorder for `center` that records nothing yet; add handles with ``record(_:)``.
    ///
    /// ```swift
    /// let recorder = NotificationRecorder(center: center)
    /// recorder.record(userDidLogin)
    /// ```
    ///
    /// - Parameter center: The center to observe. In tests, pass a private `NotificationCenter()` that the code
    ///   under test also receives, so that no other test's posts are recorded.
    public init(center: NotificationCenter) {
        self.center = center
    }

    /// Creates a recorder for `center` and starts recording the given handles.
    ///
    /// ```swift
    /// let recorder = NotificationRecorder(center: center, recording: userDidLogin, didLogout)
    /// ```
    ///
    /// - Parameters:
    ///   - center: The center to observe.
    ///   - handles: The handles to record, with payloads of any types, `Notificatable<Never>` included.
    public convenience init<each Info>(center: NotificationCenter, recording handles: repeat Notificatable<each Info>) {
        self.init(center: center)
        repeat record(each handles)
    }

    deinit {
        for subscription in subscriptions { subscription.dispose() }
    }

    // MARK: - Recording

    /// Starts recording `handle`: every notification of its name on ``center``, with the payload type of the
    /// handle.
    ///
    /// Recording the same handle again does nothing, so each notification is recorded once. After ``stop()``,
    /// this does nothing.
    ///
    /// - Parameter handle: A handle with a payload, or a `Notificatable<Never>`.
    public func record<Info>(_ handle: Notificatable<Info>) {
        let key = HandleKey(handle)
        let isNew = condition.withLock {
            guard !stopped else { return false }
            return recorded.insert(key).inserted
        }
        guard isNew else { return }

        // Subscribe outside the lock: a post on another thread may be delivering to this recorder meanwhile.
        let subscription: Disposable
        if let handle = handle as? Notificatable<Never> {
            subscription = handle.subscribe(center: center) { [weak self] object in
                self?.append(Event(name: key.name, object: object, payload: nil, failure: nil, handle: key))
            }
        } else {
            subscription = handle.subscribe(
                center: center,
                onFailure: { [weak self] failure in
                    self?.append(
                        Event(
                            name: failure.name, object: failure.object, payload: nil, failure: failure,
                            handle: key))
                }
            ) { [weak self] (notification: TypedNotification<Info>) in
                self?.append(
                    Event(
                        name: notification.name, object: notification.object,
                        payload: notification.userInfo, failure: nil, handle: key))
            }
        }

        let keep = condition.withLock {
            if stopped { return false }
            subscriptions.append(subscription)
            return true
        }
        if !keep { subscription.dispose() }
    }

    /// Ends recording. The events recorded so far stay readable. Calling it again does nothing.
    ///
    /// Once it returns, no new event is recorded, although a post that was already being delivered on another
    /// thread may still add its event.
    public func stop() {
        let ending = condition.withLock {
            stopped = true
            let ending = subscriptions
            subscriptions = []
            return ending
        }
        for subscription in ending { subscription.dispose() }
    }

    /// Whether the recorder is recording: ``stop()`` has not been called.
    public var isRecording: Bool {
        condition.withLock { !stopped }
    }

    /// Forgets every recorded event, and keeps recording.
    ///
    /// Use it to ignore what the setup of a test posted.
    public func removeAll() {
        // The events hold the notifications' objects and payloads: they are released after unlocking, since a
        // deinit among them may read the recorder.
        let forgotten = condition.withLock {
            let forgotten = storage
            storage = []
            return forgotten
        }
        withExtendedLifetime(forgotten) {}
    }

    private func append(_ event: Event) {
        condition.withLock {
            storage.append(event)
            condition.broadcast()
        }
    }

    // MARK: - Reading

    /// Every recorded event, delivered or failed, of every handle, in the order they were received.
    public var events: [Event] {
        condition.withLock { storage }
    }

    /// The notifications that `handle` delivered, with their objects and payloads, in order.
    ///
    /// ```swift
    /// let notes = recorder.notifications(of: userDidLogin)
    /// #expect(notes.map(\.userInfo) == [user])
    /// #expect(notes.first?.object as AnyObject? === session)
    /// ```
    ///
    /// For a `Notificatable<Never>` handle, use ``objects(of:)`` or ``count(of:)``.
    ///
    /// - Parameter handle: A recorded handle.
    /// - Returns: The delivered notifications; failures are not included.
    public func notifications<Info>(of handle: Notificatable<Info>) -> [TypedNotification<Info>] {
        delivered(by: handle).compactMap { event in
            (event.payload as? Info).map { TypedNotification(name: event.name, object: event.object, userInfo: $0) }
        }
    }

    /// The payloads that `handle` delivered, in order.
    ///
    /// ```swift
    /// #expect(recorder.payloads(of: userDidLogin) == [alice, bob])
    /// ```
    ///
    /// - Parameter handle: A recorded handle.
    /// - Returns: The payloads; failures are not included.
    public func payloads<Info>(of handle: Notificatable<Info>) -> [Info] {
        delivered(by: handle).compactMap { $0.payload as? Info }
    }

    /// The objects of the notifications that `handle` delivered, in order; `nil` where a post had no object.
    ///
    /// ```swift
    /// #expect(recorder.objects(of: didLogout).map { $0 as AnyObject? === session } == [true])
    /// ```
    ///
    /// - Parameter handle: A recorded handle, with or without payload.
    /// - Returns: The objects; failures are not included.
    public func objects<Info>(of handle: Notificatable<Info>) -> [Any?] {
        delivered(by: handle).map(\.object)
    }

    /// How many notifications `handle` delivered; failures are not counted.
    ///
    /// ```swift
    /// #expect(recorder.count(of: userDidLogin) == 1)
    /// ```
    ///
    /// - Parameter handle: A recorded handle, with or without payload.
    /// - Returns: The number of delivered notifications.
    public func count<Info>(of handle: Notificatable<Info>) -> Int {
        let key = HandleKey(handle)
        return condition.withLock { storage.reduce(0) { $0 + ($1.handle == key && !$1.isFailure ? 1 : 0) } }
    }

    /// Every failure that any recorded handle reported, in order.
    public var failures: [NotificationDecodingFailure] {
        condition.withLock { storage.compactMap(\.failure) }
    }

    /// The failures that `handle` reported, in order: notifications of its name that could not become its
    /// payload, exactly as a subscriber's `onFailure:` receives them.
    ///
    /// ```swift
    /// let failure = try #require(recorder.failures(of: userDidLogin).first)
    /// #expect(failure.kind == .decodingFailed)
    /// #expect(failure.codingPath.map(\.stringValue) == ["age"])
    /// ```
    ///
    /// - Parameter handle: A recorded handle.
    /// - Returns: The failures.
    public func failures<Info>(of handle: Notificatable<Info>) -> [NotificationDecodingFailure] {
        let key = HandleKey(handle)
        return condition.withLock { storage.compactMap { $0.handle == key ? $0.failure : nil } }
    }

    private func delivered<Info>(by handle: Notificatable<Info>) -> [Event] {
        let key = HandleKey(handle)
        return condition.withLock { storage.filter { $0.handle == key && !$0.isFailure } }
    }

    // MARK: - Waiting

    /// Blocks the calling thread until `handle` has delivered at least `count` notifications, or until `timeout`
    /// has passed.
    ///
    /// Use it when the code under test posts from another thread or queue:
    ///
    /// ```swift
    /// uploader.start()                                  // posts `uploadDidFinish` from a background queue
    /// #expect(recorder.wait(forCount: 1, of: uploadDidFinish, timeout: 5))
    /// #expect(recorder.payloads(of: uploadDidFinish) == [receipt])
    /// ```
    ///
    /// It returns at once when the count is already reached. Don't call it on a thread that the posts need, such
    /// as the main thread for posts made on the main queue.
    ///
    /// - Parameters:
    ///   - count: The number of delivered notifications to wait for.
    ///   - handle: A recorded handle.
    ///   - timeout: The longest time to wait, in seconds.
    /// - Returns: `true` if the count was reached, `false` if the time ran out first.
    public func wait<Info>(forCount count: Int, of handle: Notificatable<Info>, timeout: TimeInterval) -> Bool {
        let key = HandleKey(handle)
        return wait(timeout: timeout) { events in
            events.reduce(0) { $0 + ($1.handle == key && !$1.isFailure ? 1 : 0) } >= count
        }
    }

    /// Blocks the calling thread until at least `count` events of any recorded handle, failures included, have
    /// been recorded, or until `timeout` has passed.
    ///
    /// - Parameters:
    ///   - count: The number of events to wait for.
    ///   - timeout: The longest time to wait, in seconds.
    /// - Returns: `true` if the count was reached, `false` if the time ran out first.
    public func wait(forEventCount count: Int, timeout: TimeInterval) -> Bool {
        wait(timeout: timeout) { $0.count >= count }
    }

    private func wait(timeout: TimeInterval, until isDone: ([Event]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !isDone(storage) {
            if !condition.wait(until: deadline) { return isDone(storage) }
        }
        return true
    }
}
