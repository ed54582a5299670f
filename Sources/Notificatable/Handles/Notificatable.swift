import Foundation

// swift-format-ignore: AlwaysUseLowerCamelCase
// The name is part of the public contract (issue 3), spelled like Foundation's `NSLocalizedDescriptionKey`.
/// The `userInfo` key under which a typed post carries its payload: `"Notificatable.payload"`.
///
/// A typed post puts the payload value itself under this key. A typed subscriber that finds the key takes the value
/// from it and nothing else: if the value is not of the handle's payload type, the notification is reported as a
/// ``NotificationDecodingFailure`` and is not delivered.
///
/// ```swift
/// center.addObserver(forName: userDidLogin.name, object: nil, queue: nil) { note in
///     let user = note.userInfo?[NotificatableUserInfoKey] as? User
/// }
/// ```
public let NotificatableUserInfoKey = "Notificatable.payload"

/// A typed handle for one notification name: it binds the name to the type of the payload that travels with it.
///
/// Declare a handle once, then post and subscribe through it. Posting or subscribing with the wrong payload type
/// does not compile.
///
/// ```swift
/// extension Notificatable where Info == User {
///     static let userDidLogin = Notificatable.name("UserDidLogin")
/// }
/// let didLogout = Notificatable.withoutPayload("UserDidLogout")  // Notificatable<Never>: no payload
///
/// let subscription = Notificatable.userDidLogin.subscribe { note in
///     print(note.userInfo.name, note.object as Any)
/// }
/// Notificatable.userDidLogin.post(user)
/// didLogout.post()
/// subscription.dispose()
/// ```
///
/// A handle wraps Foundation's `NotificationCenter`; it does not replace it. A typed post is a plain notification
/// whose `userInfo` holds the payload under ``NotificatableUserInfoKey``, so legacy observers still see it, and a
/// legacy post of the same name reaches typed subscribers through the handle's conversion chain (see
/// ``payload(from:)``).
///
/// Handles are values: methods such as ``addingConverter(_:)`` and ``decoding(with:)`` return a new handle and
/// leave the original unchanged. Two handles are equal when their names are equal; the payload type is part of
/// the static type, and the conversion configuration does not take part in equality.
public struct Notificatable<Info>: Sendable {
    /// The notification name that this handle posts and observes.
    public let name: Notification.Name

    /// How a received `userInfo` becomes an `Info`.
    @usableFromInline
    var conversion: PayloadConversion<Info>

    /// Writes an `Encodable` payload's plain keys next to the typed payload, if the handle was configured to.
    var plainKeysEncoding: (any PlainKeysEncoding)?

    /// Whether ``plainKeysEncoding`` is set, as a plain flag that the inlined post path can test without copying
    /// the existential.
    @usableFromInline
    var writesPlainKeys = false

    /// Whether posts carry the plain keys alone, without the typed payload under ``NotificatableUserInfoKey``
    /// (``postingPlainKeysOnly(encoder:)``).
    var omitsTypedPayload = false

    init(name: Notification.Name, decoder: UserInfoDecoder.Options? = nil) {
        self.name = name
        self.conversion = PayloadConversion(decoderOptions: decoder ?? UserInfoDecoder.Options())
        self.plainKeysEncoding = nil
        self.writesPlainKeys = false
    }
}

// MARK: - Declaring

extension Notificatable {
    /// Creates a handle for the notification with the given name, carrying a payload of type `Info`.
    ///
    /// ```swift
    /// let userDidLogin = Notificatable<User>.name("UserDidLogin")
    /// ```
    ///
    /// If `Info` is `Decodable`, a notification that arrives without a typed payload, such as a legacy post with
    /// plain keys, is decoded from its whole `userInfo` with a default ``UserInfoDecoder``.
    ///
    /// - Parameter name: The notification name.
    /// - Returns: A handle for that name.
    public static func name(_ name: String) -> Notificatable<Info> {
        Notificatable(name: Notification.Name(name))
    }
}

extension Notificatable where Info: Decodable {
    /// Creates a handle whose legacy notifications are decoded with the given decoder.
    ///
    /// ```swift
    /// let decoder = UserInfoDecoder()
    /// decoder.keyDecodingStrategy = .convertFromSnakeCase
    /// let userDidLogin = Notificatable<User>.name("UserDidLogin", decoder: decoder)
    /// ```
    ///
    /// The handle keeps a snapshot of the decoder's options: later changes to `decoder` do not affect it.
    ///
    /// - Parameters:
    ///   - name: The notification name.
    ///   - decoder: The decoder for notifications that carry no typed payload.
    /// - Returns: A handle for that name.
    public static func name(_ name: String, decoder: UserInfoDecoder) -> Notificatable<Info> {
        Notificatable(name: Notification.Name(name), decoder: decoder.options)
    }
}

extension Notificatable where Info == Never {
    /// Creates a handle for a notification that carries no payload.
    ///
    /// ```swift
    /// let didLogout = Notificatable.withoutPayload("UserDidLogout")   // Notificatable<Never>
    /// didLogout.subscribe { object in print("logged out by", object as Any) }
    /// didLogout.post()
    /// ```
    ///
    /// Subscribers of a `Never` handle are called for every post of the name, whatever its `userInfo`.
    ///
    /// - Parameter name: The notification name.
    /// - Returns: A handle for that name.
    public static func withoutPayload(_ name: String) -> Notificatable<Never> {
        Notificatable(name: Notification.Name(name))
    }

    /// Deprecated: without a payload type, `Notificatable.name("UserDidLogIn")` was silently a handle without
    /// payload, and the mistake showed only at the first post of a value. Write the payload type,
    /// `Notificatable<Login>.name(_:)`, or ``withoutPayload(_:)``; the compiler offers the rename as a fix-it.
    /// `Notificatable<Never>.name(_:)`, which says "no payload" itself, is not deprecated.
    ///
    /// - Parameter name: The notification name.
    /// - Returns: A handle for that name.
    @_disfavoredOverload
    @available(
        *, deprecated, renamed: "withoutPayload(_:)",
        message:
            "without a payload type, this is a Notificatable<Never>, which carries no payload; write Notificatable<Payload>.name(_:), or withoutPayload(_:) for a notification without payload"
    )
    public static func name(_ name: String) -> Notificatable<Never> {
        withoutPayload(name)
    }
}

extension Notification.Name {
    /// Wraps this existing name in a handle carrying a payload of type `Info`.
    ///
    /// Use it for system and legacy notifications:
    ///
    /// ```swift
    /// let keyboard = Notification.Name("UIKeyboardWillChangeFrameNotification")
    ///     .notificatable(userInfoType: KeyboardInfo.self)
    /// ```
    ///
    /// If `Info` is `Decodable`, a notification without a typed payload is decoded from its whole `userInfo` with a
    /// default ``UserInfoDecoder``. Otherwise add a converter with ``Notificatable/addingConverter(_:)`` to read
    /// legacy posts.
    ///
    /// - Parameter userInfoType: The payload type.
    /// - Returns: A handle for this name.
    public func notificatable<Info>(userInfoType: Info.Type) -> Notificatable<Info> {
        Notificatable(name: self)
    }

    /// Wraps this existing name in a handle whose legacy notifications are decoded with the given decoder.
    ///
    /// ```swift
    /// let decoder = UserInfoDecoder()
    /// decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    /// let keyboard = Notification.Name("UIKeyboardWillChangeFrameNotification")
    ///     .notificatable(userInfoType: KeyboardInfo.self, decoder: decoder)
    /// ```
    ///
    /// - Parameters:
    ///   - userInfoType: The payload type.
    ///   - decoder: The decoder for notifications that carry no typed payload. The handle keeps a snapshot of its
    ///     options: later changes to `decoder` do not affect it.
    /// - Returns: A handle for this name.
    public func notificatable<Info: Decodable>(
        userInfoType: Info.Type,
        decoder: UserInfoDecoder
    ) -> Notificatable<Info> {
        Notificatable(name: self, decoder: decoder.options)
    }

    /// Wraps this existing name in a handle for a notification without payload.
    ///
    /// ```swift
    /// let ping = Notification.Name("Ping").notificatable()   // Notificatable<Never>
    /// ```
    ///
    /// - Returns: A handle for this name.
    public func notificatable() -> Notificatable<Never> {
        Notificatable(name: self)
    }
}

// MARK: - Hashable

extension Notificatable: Hashable {
    /// Two handles are equal when their names are equal.
    ///
    /// The payload type is part of the static type, so only handles with the same payload type can be compared.
    /// Converters, decoder and plain-key options do not take part.
    public static func == (lhs: Notificatable, rhs: Notificatable) -> Bool {
        lhs.name == rhs.name
    }

    /// Hashes the handle's name.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}
