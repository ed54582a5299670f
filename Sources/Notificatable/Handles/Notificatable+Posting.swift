import Foundation

extension Notificatable {
    /// Posts the notification with `info` as its payload.
    ///
    /// ```swift
    /// userDidLogin.post(user)
    /// userDidLogin.post(user, object: session, center: center)
    /// ```
    ///
    /// The payload travels under ``NotificatableUserInfoKey``; see ``makeNotification(_:object:)``. Subscribers
    /// without a queue run before `post` returns; subscribers with a queue run later, and the poster never waits
    /// for them.
    ///
    /// - Parameters:
    ///   - info: The payload.
    ///   - object: The object to post with, usually the sender. Defaults to `nil`.
    ///   - center: The center to post to. Defaults to `NotificationCenter.default`.
    @inlinable
    public func post(_ info: Info, object: Any? = nil, center: NotificationCenter = .default) {
        tracePost(object: object)
        center.post(makeNotification(info, object: object))
    }

    /// Builds the notification that ``post(_:object:center:)`` posts.
    ///
    /// ```swift
    /// let note = userDidLogin.makeNotification(user, object: sender)
    /// let same = try userDidLogin.payload(from: note)
    /// ```
    ///
    /// Its `userInfo` holds `info` under ``NotificatableUserInfoKey``, and, if the handle was made with
    /// ``postingPlainKeys(encoder:)``, the payload's encoded keys as well. If encoding the plain keys fails, the
    /// failure is reported to ``NotificationDecodingFailure/handler`` with kind
    /// ``NotificationDecodingFailure/Kind/plainKeysEncodingFailed``, and the notification carries the typed payload
    /// alone.
    ///
    /// - Parameters:
    ///   - info: The payload.
    ///   - object: The object, usually the sender. Defaults to `nil`.
    /// - Returns: The notification.
    @inlinable
    public func makeNotification(_ info: Info, object: Any? = nil) -> Notification {
        guard writesPlainKeys else {
            // Inlined, so that boxing the payload is specialized for the caller's type.
            return Notification(name: name, object: object, userInfo: [NotificatableUserInfoKey: info])
        }
        return Notification(name: name, object: object, userInfo: userInfoWithPlainKeys(info, object: object))
    }

    @usableFromInline
    func userInfoWithPlainKeys(_ info: Info, object: Any?) -> [AnyHashable: Any] {
        guard let plainKeysEncoding else { return [payloadKey: info] }
        var userInfo: [AnyHashable: Any]
        do {
            userInfo = try plainKeysEncoding.encode(info)
        } catch {
            NotificationDecodingFailure(
                kind: .plainKeysEncodingFailed,
                name: name,
                payloadType: Info.self,
                error: error,
                object: object
            ).report(to: nil)
            userInfo = [:]
        }
        userInfo[payloadKey] = info
        return userInfo
    }
}

extension Notificatable where Info: Encodable {
    /// Returns a handle whose posts also write the payload's properties as plain `userInfo` keys.
    ///
    /// Off by default. Turn it on when legacy observers read the notification's `userInfo` by key:
    ///
    /// ```swift
    /// let userDidLogin = Notificatable<User>.name("UserDidLogin").postingPlainKeys()
    /// userDidLogin.post(User(name: "Ada"))
    /// // A legacy observer sees note.userInfo?["name"] as? String == "Ada",
    /// // and typed subscribers still read the payload under NotificatableUserInfoKey.
    /// ```
    ///
    /// Encoding costs time on every post. If it fails, the failure is reported and the post carries the typed
    /// payload alone.
    ///
    /// - Parameter encoder: The encoder for the plain keys. The handle keeps a snapshot of its options.
    /// - Returns: A new handle that writes plain keys.
    public func postingPlainKeys(encoder: UserInfoEncoder = UserInfoEncoder()) -> Notificatable {
        var copy = self
        copy.plainKeysEncoding = PlainKeysStep<Info>(options: encoder.options)
        copy.writesPlainKeys = true
        return copy
    }
}

extension Notificatable where Info == Never {
    /// Posts the notification, without payload.
    ///
    /// ```swift
    /// didLogout.post()
    /// didLogout.post(object: session, center: center)
    /// ```
    ///
    /// - Parameters:
    ///   - object: The object to post with, usually the sender. Defaults to `nil`.
    ///   - center: The center to post to. Defaults to `NotificationCenter.default`.
    public func post(object: Any? = nil, center: NotificationCenter = .default) {
        tracePost(object: object)
        center.post(name: name, object: object, userInfo: nil)
    }

    /// Not a form to use: a `Notificatable<Never>` has no payload, so it cannot post a value. The call is a compile
    /// error whose message names the fix: ``post(object:center:)`` without a value, or a handle declared with its
    /// payload type.
    ///
    /// - Parameters:
    ///   - value: The value that has no place in the notification.
    ///   - object: The object, usually the sender.
    ///   - center: The center to post to.
    @_documentation(visibility: internal)
    @available(
        *, unavailable,
        message:
            "A Notificatable<Never> has no payload: post(object:center:) without a value, or declare the handle with its payload type, Notificatable<Payload>.name(_:)"
    )
    public func post<Value>(_ value: Value, object: Any? = nil, center: NotificationCenter = .default) {
        post(object: object, center: center)
    }

    /// Builds the notification that ``post(object:center:)`` posts: this name, `object`, and no `userInfo`.
    ///
    /// - Parameter object: The object, usually the sender. Defaults to `nil`.
    /// - Returns: The notification.
    public func makeNotification(object: Any? = nil) -> Notification {
        Notification(name: name, object: object, userInfo: nil)
    }
}

/// Encodes a payload's plain keys; held as an existential for the reason given on ``WholeUserInfoDecoding``.
package protocol PlainKeysEncoding: Sendable {
    func encode(_ value: Any) throws -> [AnyHashable: Any]
}

/// Encodes a payload of type `E` into plain keys, with the encoder's immutable options snapshot.
struct PlainKeysStep<E: Encodable>: PlainKeysEncoding {
    let options: UserInfoEncoder.Options
    /// An encoder with `options`, which keeps its frames and the payload's size from one post (or relayed message)
    /// to the next, as a `UserInfoEncoder` does.
    private let encoder: UserInfoEncoder

    init(options: UserInfoEncoder.Options) {
        self.options = options
        encoder = UserInfoEncoder(options: options)
    }

    func encode(_ value: Any) throws -> [AnyHashable: Any] {
        guard let value = value as? E else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: [], debugDescription: "Expected \(E.self), found \(type(of: value)).")
            )
        }
        return try encoder.encode(value)
    }
}

extension Notificatable where Info: Encodable {
    /// The encoder of the payload's plain keys that `NotificatableRelay` sends: the handle's own (a
    /// `postingPlainKeys()` handle), or one with default options.
    ///
    /// The settings that write values a property list cannot hold (a `Decimal` as an `NSNumber`, a `URL` itself,
    /// geometry as `NSValue`), which a handle turns on for the legacy observers of its own process, are set back to
    /// their defaults: the wire carries property-list values only.
    package var relayPlainKeysEncoding: any PlainKeysEncoding {
        guard let step = plainKeysEncoding as? PlainKeysStep<Info> else {
            return PlainKeysStep<Info>(options: UserInfoEncoder.Options())
        }
        return PlainKeysStep<Info>(options: step.options.propertyListOnly)
    }
}
