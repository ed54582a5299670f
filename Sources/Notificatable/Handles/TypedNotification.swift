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
