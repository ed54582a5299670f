import Foundation

/// A received notification with its payload already converted: what a handle's unfiltered subscribers receive.
///
/// ```swift
/// userDidLogin.subscribe { note in
///     print(note.userInfo.name, "from", note.object as Any)
/// }
/// ```
public struct TypedNotification<Info> {
    /// The notification's name.
    public let name: Notification.Name
    /// The object the poster passed, or `nil`.
    public let object: Any?
    /// The payload.
    public let userInfo: Info

    /// Creates a typed notification, for example to call a handler directly in a test.
    ///
    /// - Parameters:
    ///   - name: The notification's name.
    ///   - object: The poster's object.
    ///   - userInfo: The payload.
    @inlinable
    public init(name: Notification.Name, object: Any? = nil, userInfo: Info) {
        self.name = name
        self.object = object
        self.userInfo = userInfo
    }
}

// MARK: - Sendable

/// A typed notification is `Sendable` when its payload is, so it can be handed to a task or an actor and kept in
/// `Sendable` state.
///
/// `object` is not checked: it is the poster's object, which Foundation's own queue delivery hands to the observer's
/// thread as it is, and which the queue forms of `subscribe` hand over the same way. Read it where the poster's
/// object may be read (for an object of the main actor, on the main actor).
extension TypedNotification: @unchecked Sendable where Info: Sendable {}
