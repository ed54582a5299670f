import Foundation

// MARK: - Public API

extension Notificatable {
    /// Returns a handle that also tries `converter` on notifications that carry no typed payload.
    ///
    /// A received notification becomes a payload through this chain:
    /// 1. If `userInfo` holds ``NotificatableUserInfoKey``, that value alone decides: it must be an `Info`, or the
    ///    notification fails with ``NotificationDecodingFailure/Kind/payloadTypeMismatch`` (or, on a handle made
    ///    with ``fallingBackToPlainKeys()``, goes on with step 2).
    /// 2. Otherwise the converters run in the order they were added. The first non-`nil` result wins; a converter
    ///    that throws ends the chain with ``NotificationDecodingFailure/Kind/converterFailed``.
    /// 3. Otherwise, if `Info` is `Decodable`, the whole `userInfo` (empty when `nil`) is decoded with the handle's
    ///    ``UserInfoDecoder``.
    /// 4. Otherwise the notification fails with ``NotificationDecodingFailure/Kind/noConversion``.
    ///
    /// ```swift
    /// let themeChanged = Notificatable<Theme>.name("ThemeDidChange")
    ///     .addingConverter { userInfo in
    ///         (userInfo?["theme"] as? String).flatMap(Theme.init(rawValue:))
    ///     }
    /// ```
    ///
    /// Subscribers of a `Never` handle convert nothing, so converters have no effect on them.
    ///
    /// - Parameter converter: Returns the payload, `nil` to let the next step try, or throws to fail.
    /// - Returns: A new handle with the converter appended.
    public func addingConverter(
        _ converter: @escaping @Sendable (_ userInfo: [AnyHashable: Any]?) throws -> Info?
    ) -> Notificatable {
        var copy = self
        copy.conversion.converters.append(converter)
        return copy
    }

    /// Extracts the payload from a notification, through the same chain that subscribers use.
    ///
    /// ```swift
    /// let note = userDidLogin.makeNotification(user, object: sender)
    /// let same: User = try userDidLogin.payload(from: note)
    /// ```
    ///
    /// The notification's name is not checked.
    ///
    /// - Parameter notification: A notification, typed or legacy.
    /// - Returns: The payload.
    /// - Throws: ``NotificationDecodingFailure``, the value that a subscriber would report.
    public func payload(from notification: Notification) throws(NotificationDecodingFailure) -> Info {
        try conversion.payload(from: notification, name: name)
    }
}

extension Notificatable {
    /// Returns a handle that, when a notification's typed payload is of another type than `Info`, reads the
    /// notification's plain keys instead of failing with ``NotificationDecodingFailure/Kind/payloadTypeMismatch``.
    ///
    /// Off by default. Two handles of one name with different payload types arise while migrating: a module goes
    /// typed with its own `OrderEvent`, while another keeps a smaller `OrderSummary` of the same keys. When the
    /// poster writes plain keys (``postingPlainKeys(encoder:)``), the other handle can read them:
    ///
    /// ```swift
    /// let summaries = Notificatable<OrderSummary>.name("OrderDidShip").fallingBackToPlainKeys()
    /// summaries.subscribe { note in print(note.userInfo.total) }.store(in: bag)
    /// ```
    ///
    /// The chain then goes on as for a notification without typed payload: the converters, then the handle's
    /// decoder on the whole `userInfo` (see ``addingConverter(_:)``); a failure there is reported with its own
    /// kind, such as ``NotificationDecodingFailure/Kind/decodingFailed`` with the missing key's coding path.
    ///
    /// - Returns: A new handle that falls back to the plain keys.
    public func fallingBackToPlainKeys() -> Notificatable {
        var copy = self
        copy.conversion.fallsBackToPlainKeys = true
        return copy
    }

    /// A decoder with the options this handle decodes legacy posts with, or `nil` when it decodes none (its payload
    /// type is not `Decodable`, or is `Never`): for `NotificatableTesting`, which checks a fixture's own decoder
    /// settings against the handle's.
    package var legacyDecoder: UserInfoDecoder? {
        conversion.decoding?.decoderOptions.map(UserInfoDecoder.init(options:))
    }
}

extension Notificatable where Info: Decodable {
    /// Returns a handle that decodes notifications without a typed payload with the given decoder.
    ///
    /// ```swift
    /// let decoder = UserInfoDecoder()
    /// decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    /// let keyboard = Notificatable<KeyboardInfo>.name("UIKeyboardWillChangeFrameNotification")
    ///     .decoding(with: decoder)
    /// ```
    ///
    /// The handle keeps a snapshot of the decoder's options: later changes to `decoder` do not affect it.
    ///
    /// - Parameter decoder: The decoder to use.
    /// - Returns: A new handle that uses `decoder`.
    public func decoding(with decoder: UserInfoDecoder) -> Notificatable {
        var copy = self
        copy.conversion.decoding = DecodeStep<Info>(options: decoder.options)
        return copy
    }
}

// MARK: - Conversion chain

/// The chain that turns a received `userInfo` into a payload; see ``Notificatable/addingConverter(_:)``.
@usableFromInline
struct PayloadConversion<Info>: Sendable {
    @usableFromInline
    typealias Converter = @Sendable ([AnyHashable: Any]?) throws -> Info?

    @usableFromInline
    var converters: [Converter] = []
    /// Decodes the whole `userInfo` as `Info`; `nil` when `Info` is not `Decodable`, or is `Never`.
    @usableFromInline
    var decoding: WholeUserInfoDecoding<Info>?
    /// Whether a typed payload of another type makes the chain go on with the plain keys
    /// (``Notificatable/fallingBackToPlainKeys()``) instead of failing.
    @usableFromInline
    var fallsBackToPlainKeys = false

    init(decoderOptions: UserInfoDecoder.Options) {
        // `Never` is `Decodable`, but a `Never` handle must not decode anything.
        if Info.self != Never.self, let decodable = Info.self as? any Decodable.Type {
            // The step is a `DecodeStep<Info>`, which is a `WholeUserInfoDecoding<Info>`: the cast runs once per
            // handle, and the step then returns an `Info` without boxing it in an `Any`.
            decoding = decodable.wholeUserInfoDecoding(options: decoderOptions) as? WholeUserInfoDecoding<Info>
        }
    }

    /// The whole chain. The common cases, a typed post and a legacy post decoded by a handle without converters,
    /// are inlined into the caller so that they are specialized for `Info`; everything else goes through
    /// ``payloadTypeMismatch(_:_:name:)``, ``decodingFailed(_:_:name:)`` and ``convert(_:userInfo:name:)``.
    @inlinable
    func payload(from notification: Notification, name: Notification.Name) throws(NotificationDecodingFailure) -> Info {
        let userInfo = notification.userInfo
        if let typed = reservedPayload(in: userInfo) {
            if let payload = exactCast(typed, to: Info.self) ?? (typed as? Info) {
                return payload
            }
            if fallsBackToPlainKeys { return try convert(notification, userInfo: userInfo, name: name) }
            throw payloadTypeMismatch(typed, notification, name: name)
        }
        if converters.isEmpty, let decoding {
            do {
                return try decoding.decode(userInfo)
            } catch {
                throw decodingFailed(error, notification, name: name)
            }
        }
        return try convert(notification, userInfo: userInfo, name: name)
    }

    /// The failure for a value under the reserved key that is not an `Info`.
    @usableFromInline
    func payloadTypeMismatch(_ typed: Any, _ notification: Notification, name: Notification.Name)
        -> NotificationDecodingFailure
    {
        failure(
            .payloadTypeMismatch, name, notification,
            DecodingError.typeMismatch(
                Info.self,
                .init(
                    codingPath: [PayloadCodingKey()],
                    debugDescription: "Expected \(Info.self) under \"\(NotificatableUserInfoKey)\" "
                        + "but found \(type(of: typed)): the poster posts through a Notificatable<\(type(of: typed))> "
                        + "handle of the same name. Share one payload type, or have the poster write plain keys "
                        + "(postingPlainKeys() or postingPlainKeysOnly()) and this handle read them with "
                        + "fallingBackToPlainKeys()."
                )
            ))
    }

    /// The failure for a `userInfo` that the decoding step could not decode.
    @usableFromInline
    func decodingFailed(_ error: any Error, _ notification: Notification, name: Notification.Name)
        -> NotificationDecodingFailure
    {
        failure(.decodingFailed, name, notification, error)
    }

    /// The chain after the reserved key, for a `userInfo` (the notification's) that does not hold it.
    @usableFromInline
    func convert(_ notification: Notification, userInfo: [AnyHashable: Any]?, name: Notification.Name)
        throws(NotificationDecodingFailure) -> Info
    {
        for converter in converters {
            let converted: Info?
            do {
                converted = try converter(userInfo)
            } catch {
                throw failure(.converterFailed, name, notification, error)
            }
            if let converted {
                return converted
            }
        }
        guard let decoding else {
            throw failure(
                .noConversion, name, notification,
                DecodingError.valueNotFound(
                    Info.self,
                    .init(
                        codingPath: [],
                        debugDescription: "The notification has no typed payload, no converter produced \(Info.self), "
                            + "and \(Info.self) is not Decodable."
                    )
                ))
        }
        do {
            return try decoding.decode(userInfo)
        } catch {
            throw decodingFailed(error, notification, name: name)
        }
    }

    private func failure(
        _ kind: NotificationDecodingFailure.Kind,
        _ name: Notification.Name,
        _ notification: Notification,
        _ error: any Error
    ) -> NotificationDecodingFailure {
        NotificationDecodingFailure(
            kind: kind,
            name: name,
            payloadType: Info.self,
            error: error,
            object: notification.object
        )
    }
}

/// The value under ``NotificatableUserInfoKey`` in `userInfo`, or `nil`.
///
/// A small dictionary is scanned instead of hashed: an `AnyHashable` lookup hashes the key and compares through
/// `AnyHashable`'s generic equality on every occupied bucket it probes, which on Linux costs a few thousand
/// instructions a comparison (it looks up `Optional` metadata each time); the scan compares `String` keys directly.
/// A dictionary with a key that is not exactly a `String` is looked up as before, so the answer is the same.
@usableFromInline
func reservedPayload(in userInfo: [AnyHashable: Any]?) -> Any? {
    guard let userInfo, !userInfo.isEmpty else { return nil }
    guard userInfo.count <= reservedPayloadScanLimit else { return userInfo[payloadKey] }
    let length = NotificatableUserInfoKey.utf8.count
    var index = userInfo.startIndex
    while index != userInfo.endIndex {
        guard let key = exactCast(userInfo.keys[index].base, to: String.self) else { return userInfo[payloadKey] }
        if key.utf8.count == length && key == NotificatableUserInfoKey { return userInfo.values[index] }
        userInfo.formIndex(after: &index)
    }
    return nil
}

/// Up to this many entries, ``reservedPayload(in:)`` scans the keys.
let reservedPayloadScanLimit = 16

/// ``NotificatableUserInfoKey`` as a dictionary key, converted once. `AnyHashable` is not `Sendable`, but this one
/// holds an immutable `String` and is never mutated.
nonisolated(unsafe) package let payloadKey = AnyHashable(NotificatableUserInfoKey)

/// The coding path of a payload-type mismatch: the reserved key.
struct PayloadCodingKey: CodingKey {
    var stringValue: String { NotificatableUserInfoKey }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { guard stringValue == NotificatableUserInfoKey else { return nil } }
    init?(intValue: Int) { nil }
}

/// Decodes a whole `userInfo` into an `Info` whose `Decodable` conformance is known only where the handle is built.
///
/// A class rather than a closure: a `@Sendable` closure may not use a generic type's `Decodable` conformance,
/// because in Swift 6 that conformance could be isolated to an actor. A class generic over the result, rather than
/// a protocol existential returning `Any`, so that the payload is returned as it is, not boxed, copied and cast on
/// every post. The only subclass is ``DecodeStep``; immutable, hence `Sendable`.
@usableFromInline
class WholeUserInfoDecoding<Info>: @unchecked Sendable {
    init() {}

    /// The decoder options of the step; `nil` here, overridden by ``DecodeStep``.
    var decoderOptions: UserInfoDecoder.Options? { nil }

    /// Decodes `userInfo` (empty when `nil`). Overridden by ``DecodeStep``, the only subclass.
    @usableFromInline
    func decode(_ userInfo: [AnyHashable: Any]?) throws -> Info {
        throw DecodingError.valueNotFound(
            Info.self, .init(codingPath: [], debugDescription: "\(Info.self) has no decoding step."))
    }
}

/// Decodes a whole `userInfo` (empty when `nil`) as `D`, with the decoder's immutable options snapshot.
///
/// `D`'s conformance is used on whatever thread posts, so payload types whose `Decodable` conformance is isolated
/// to a global actor are not supported for decoding.
final class DecodeStep<D: Decodable>: WholeUserInfoDecoding<D>, @unchecked Sendable {
    let options: UserInfoDecoder.Options

    init(options: UserInfoDecoder.Options) {
        self.options = options
    }

    override var decoderOptions: UserInfoDecoder.Options? { options }

    override func decode(_ userInfo: [AnyHashable: Any]?) throws -> D {
        // The options' per-type plan holds how `D` is read, found on the first decode.
        try options.decodeTopLevel(D.self, from: userInfo ?? [:])
    }
}

extension Decodable {
    /// Opens `any Decodable.Type` to build its decoding step, a `DecodeStep<Self>`.
    static func wholeUserInfoDecoding(options: UserInfoDecoder.Options) -> AnyObject {
        DecodeStep<Self>(options: options)
    }
}
