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
            if omitsTypedPayload { return userInfo }
        } catch {
            NotificationDecodingFailure(
                kind: .plainKeysEncodingFailed,
                name: name,
                payloadType: Info.self,
                error: error,
                object: object
            ).report(to: nil)
            // The typed payload still travels, even for a plain-keys-only handle: its typed subscribers lose nothing.
            userInfo = [:]
        }
        userInfo[payloadKey] = info
        return userInfo
    }
}

extension Notificatable where Info: Encodable {
    /// Returns a handle whose posts also write the payload's properties as plain `userInfo` keys, next to the typed
    /// payload.
    ///
    /// Off by default. Turn it on when legacy observers read the notification's `userInfo` by key. Without an
    /// argument the keys are written by ``UserInfoEncoder/legacyCompatible``, as Objective-C-era code posted them,
    /// so the observers' casts (`as! NSNumber`, `as! Int64`, `as? Bool`, `as! NSDecimalNumber`, `as? URL`) keep
    /// working:
    ///
    /// ```swift
    /// let userDidLogin = Notificatable<User>.name("UserDidLogin").postingPlainKeys()
    /// userDidLogin.post(User(name: "Ada", age: 36))
    /// // A legacy observer sees note.userInfo?["name"] as? String == "Ada" and ["age"] as! NSNumber,
    /// // and typed subscribers still read the payload under NotificatableUserInfoKey.
    /// ```
    ///
    /// The typed payload under ``NotificatableUserInfoKey`` is a Swift value: observers that archive, log or
    /// forward the whole `userInfo` (a property list no more), other handles of the name with their own payload
    /// type, and middleware that edits and re-posts `userInfo` see the difference. For those, use
    /// ``postingPlainKeysOnly(encoder:)``. The *Bridging* article has the migration checklist.
    ///
    /// Encoding costs time on every post. If it fails, the failure is reported and the post carries the typed
    /// payload alone.
    ///
    /// - Parameter encoder: The encoder for the plain keys; ``UserInfoEncoder/legacyCompatible`` when omitted. The
    ///   handle keeps a snapshot of its options.
    /// - Returns: A new handle that writes plain keys.
    public func postingPlainKeys(encoder: UserInfoEncoder = .legacyCompatible) -> Notificatable {
        var copy = self
        copy.plainKeysEncoding = PlainKeysStep<Info>(options: encoder.options)
        copy.writesPlainKeys = true
        copy.omitsTypedPayload = false
        return copy
    }
}

extension Notificatable where Info: Codable {
    /// Returns a handle whose posts carry exactly the dictionary legacy code posted: the payload's plain keys,
    /// without the typed payload under ``NotificatableUserInfoKey``.
    ///
    /// The `userInfo` is what the old code built by hand, so observers that archive or forward it (as a property
    /// list, when every value is one), other handles of the same name with their own payload type, and middleware
    /// that copies `userInfo`, edits a key and re-posts it all keep working. Typed subscribers of this handle
    /// decode the plain keys, with a decoder whose key, date and data strategies mirror the encoder's:
    ///
    /// ```swift
    /// let orderDidShip = Notificatable<Order>.name("OrderDidShip").postingPlainKeysOnly()
    /// orderDidShip.post(order)
    /// // note.userInfo is ["id": NSNumber, "total": NSDecimalNumber, "items": [[String: Any]], ...]:
    /// // no Swift struct in it. Typed subscribers of orderDidShip decode those keys back to an Order.
    /// ```
    ///
    /// Each typed subscriber decodes the payload again, which costs more than reading the typed payload that
    /// ``postingPlainKeys(encoder:)`` adds. A `.custom` key, date or data strategy cannot be mirrored: the handle's
    /// own decoder decides that part (set it with ``decoding(with:)`` after this call). If encoding fails, the
    /// failure is reported to ``NotificationDecodingFailure/handler`` and the post carries the typed payload alone,
    /// so that typed subscribers lose nothing.
    ///
    /// - Parameter encoder: The encoder for the plain keys; ``UserInfoEncoder/legacyCompatible`` when omitted. The
    ///   handle keeps a snapshot of its options.
    /// - Returns: A new handle that posts the plain keys alone.
    public func postingPlainKeysOnly(encoder: UserInfoEncoder = .legacyCompatible) -> Notificatable {
        var copy = self
        let options = encoder.options
        copy.plainKeysEncoding = PlainKeysStep<Info>(options: options)
        copy.writesPlainKeys = true
        copy.omitsTypedPayload = true
        let current = conversion.decoding?.decoderOptions ?? UserInfoDecoder.Options()
        copy.conversion.decoding = DecodeStep<Info>(options: current.mirroring(options))
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
    ///
    /// A handle without an encoder of its own shares one default encoder per payload type with every other: making
    /// one for each message (an allocation, and frames that the next message could have reused) was about a tenth of
    /// a small relay message's encoding.
    package var relayPlainKeysEncoding: any PlainKeysEncoding {
        guard let step = plainKeysEncoding as? PlainKeysStep<Info> else {
            return DefaultPlainKeysSteps.step(for: Info.self)
        }
        return PlainKeysStep<Info>(options: step.options.propertyListOnly)
    }
}

/// The default-options plain-keys encoder of each payload type, made once: a type's identity never changes, so the
/// cache holds at most one entry for each payload type that the program relays.
enum DefaultPlainKeysSteps {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var steps: [ObjectIdentifier: any PlainKeysEncoding] = [:]

    static func step<Info: Encodable>(for type: Info.Type) -> any PlainKeysEncoding {
        lock.withLock {
            if let step = steps[ObjectIdentifier(type)] { return step }
            let step = PlainKeysStep<Info>(options: UserInfoEncoder.Options())
            steps[ObjectIdentifier(type)] = step
            return step
        }
    }
}

extension UserInfoDecoder.Options {
    /// These options with the key, date and data strategies that read back what an encoder with `encoder` writes;
    /// a `.custom` strategy of the encoder has no mirror, so this decoder's own is kept for it.
    func mirroring(_ encoder: UserInfoEncoder.Options) -> UserInfoDecoder.Options {
        var options = self
        switch encoder.keyStrategy {
        case .useDefaultKeys: options = options.with(keyStrategy: .useDefaultKeys)
        case .convertToSnakeCase: options = options.with(keyStrategy: .convertFromSnakeCase)
        case .affixed(let prefix, let suffix):
            options = options.with(keyStrategy: .affixed(prefix: prefix, suffix: suffix))
        case .custom: break
        }
        switch encoder.dateStrategy {
        case .deferredToDate: options = options.with(dateStrategy: .deferredToDate)
        case .secondsSince1970: options = options.with(dateStrategy: .secondsSince1970)
        case .millisecondsSince1970: options = options.with(dateStrategy: .millisecondsSince1970)
        case .iso8601: options = options.with(dateStrategy: .iso8601)
        case .formatted(let formatter): options = options.with(dateStrategy: .formatted(formatter))
        case .custom: break
        }
        switch encoder.dataStrategy {
        case .deferredToData: options = options.with(dataStrategy: .deferredToData)
        case .base64: options = options.with(dataStrategy: .base64)
        case .custom: break
        }
        return options
    }
}
