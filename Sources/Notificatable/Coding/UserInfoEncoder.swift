import Foundation

/// Encodes `Encodable` values into `userInfo` dictionaries that legacy observers can read.
///
/// By default the output holds only property-list types (String, numbers, Bool, Date, Data, arrays and
/// dictionaries with String keys), so it can cross process boundaries. The exceptions are the ones you ask for: an
/// explicit `encodeNil(forKey:)` writes `NSNull`, ``encodesGeometryAsNSValue`` writes `NSValue`,
/// ``DecimalEncodingStrategy/decimalNumber`` and ``DecimalEncodingStrategy/double`` write `NSNumber`s, and
/// ``URLEncodingStrategy/url`` writes `URL`s: the forms legacy observers cast to. Everything the encoder writes, a
/// ``UserInfoDecoder`` with matching strategies reads back to an equal value.
///
/// ```swift
/// let encoder = UserInfoEncoder()
/// let userInfo: [AnyHashable: Any] = try encoder.encode(info)
/// center.post(name: .legacyName, object: nil, userInfo: userInfo)
/// ```
public final class UserInfoEncoder: @unchecked Sendable {
    /// How the encoder maps a Swift coding key to the key it writes in the dictionary.
    public enum KeyEncodingStrategy: Sendable {
        /// Writes each key exactly as the `CodingKey` spells it. This is the default.
        case useDefaultKeys
        /// Writes `camelCase` properties as `snake_case` keys, like `JSONEncoder`.
        ///
        /// The mapping loses information for acronyms: `baseURL` is written as `base_url`, which
        /// ``UserInfoDecoder/KeyDecodingStrategy/convertFromSnakeCase`` reads back as `baseUrl`. The keys of a
        /// `[String: V]` are written as they are, as with every strategy.
        case convertToSnakeCase
        /// Writes every key as `prefix`, then the Swift key with its first letter uppercased, then `suffix`.
        case affixed(prefix: String, suffix: String)
        /// Converts each key with a closure that receives the coding path ending in that key, like `JSONEncoder`.
        /// Integer keys and the keys of a `[String: V]` are written as they are.
        case custom(@Sendable (_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How the encoder writes a `Date`.
    public enum DateEncodingStrategy: Sendable {
        /// Writes a native `Date`, which property lists and legacy observers understand. This is the default.
        case deferredToDate
        /// Writes the number of seconds since 1 January 1970 as a `Double`.
        case secondsSince1970
        /// Writes the number of milliseconds since 1 January 1970 as a `Double`.
        case millisecondsSince1970
        /// Writes an ISO 8601 string without fractional seconds; sub-second precision is lost.
        case iso8601
        /// Writes a string with the given formatter.
        case formatted(DateFormatter)
        /// Writes the date with a closure that receives an encoder positioned at the value.
        case custom(@Sendable (_ date: Date, _ encoder: any Encoder) throws -> Void)
    }

    /// How the encoder writes `Data`.
    public enum DataEncodingStrategy: Sendable {
        /// Writes native `Data`. This is the default.
        case deferredToData
        /// Writes a Base64-encoded string.
        case base64
        /// Writes the data with a closure that receives an encoder positioned at the value.
        case custom(@Sendable (_ data: Data, _ encoder: any Encoder) throws -> Void)
    }

    /// How the encoder writes a `Decimal`.
    ///
    /// Legacy code usually posted amounts as numbers (`NSNumber(value: 19.99)`), and legacy observers cast them
    /// with `as! NSNumber`; the default string form would trap there. Choose ``decimalNumber`` while such observers
    /// remain. ``UserInfoDecoder`` reads all three forms back to the same `Decimal`.
    public enum DecimalEncodingStrategy: Sendable {
        /// Writes the decimal string, such as `"19.99"`: exact, and a property-list value. This is the default.
        case string
        /// Writes an `NSDecimalNumber`: exact, and an `NSNumber`, so a legacy observer's `as! NSNumber`,
        /// `as! NSDecimalNumber` or `as! Decimal` reads it. Not a property-list value.
        case decimalNumber
        /// Writes an `NSNumber` holding the nearest `Double`, as legacy code that posted `NSNumber(value: 19.99)`
        /// did, for observers that cast `as! Double`. Not exact for every `Decimal`.
        case double
    }

    /// How the encoder writes a `URL`.
    public enum URLEncodingStrategy: Sendable {
        /// Writes the URL's `absoluteString`, a property-list value. This is the default.
        case absoluteString
        /// Writes the `URL` itself, as legacy code posted it, for observers that cast `as! URL` or `as! NSURL`.
        /// Not a property-list value.
        case url
    }

    private let lock = NSLock()
    private var _options = Options()
    /// How many entries the last dictionary `encode(_:)` made had, and for which type, so that the next one for
    /// that type is allocated at its size: small payloads then fit a small allocation, large ones don't grow.
    private var _lastSize: (type: ObjectIdentifier, count: Int)?
    /// The top-level frame of the last `encode(_:)`, emptied, with the spare frames below it: the next call encodes
    /// with them instead of allocating its frames (and calls at once each take their own). Kept only when nothing
    /// else holds it, and used only with the options it was made with.
    private var _spareFrame: UserInfoEncoderImpl?

    /// Creates an encoder with the default strategies.
    public init() {}

    /// Creates an encoder with `options`.
    init(options: Options) {
        _options = options
    }

    /// The strategy that maps coding keys to dictionary keys. Defaults to ``KeyEncodingStrategy/useDefaultKeys``.
    public var keyEncodingStrategy: KeyEncodingStrategy {
        get { lock.withLock { _options.keyStrategy } }
        set { replaceOptions { $0.keyStrategy = newValue } }
    }

    /// The strategy for dates. Defaults to ``DateEncodingStrategy/deferredToDate``.
    public var dateEncodingStrategy: DateEncodingStrategy {
        get { lock.withLock { _options.dateStrategy } }
        set { replaceOptions { $0.dateStrategy = newValue } }
    }

    /// The strategy for data. Defaults to ``DataEncodingStrategy/deferredToData``.
    public var dataEncodingStrategy: DataEncodingStrategy {
        get { lock.withLock { _options.dataStrategy } }
        set { replaceOptions { $0.dataStrategy = newValue } }
    }

    /// The strategy for decimals. Defaults to ``DecimalEncodingStrategy/string``.
    ///
    /// ```swift
    /// let encoder = UserInfoEncoder()
    /// encoder.decimalEncodingStrategy = .decimalNumber   // legacy observers cast `as! NSNumber`
    /// ```
    public var decimalEncodingStrategy: DecimalEncodingStrategy {
        get { lock.withLock { _options.decimalStrategy } }
        set { replaceOptions { $0.decimalStrategy = newValue } }
    }

    /// The strategy for URLs. Defaults to ``URLEncodingStrategy/absoluteString``.
    public var urlEncodingStrategy: URLEncodingStrategy {
        get { lock.withLock { _options.urlStrategy } }
        set { replaceOptions { $0.urlStrategy = newValue } }
    }

    /// Writes `CGRect`, `CGPoint` and `CGSize` as `NSValue`, for legacy observers that call `rectValue` and the
    /// like. Off by default, because `NSValue` is not a property-list type.
    public var encodesGeometryAsNSValue: Bool {
        get { lock.withLock { _options.geometryAsNSValue } }
        set { replaceOptions { $0.geometryAsNSValue = newValue } }
    }

    /// Writes integers, floating-point numbers and booleans as `NSNumber`s, as Objective-C-era code posted them
    /// (`@42`, `@YES`, `NSNumber(value: 19.5)`), rather than as Swift values. Off by default.
    ///
    /// Legacy observers cast `userInfo` values with `as! NSNumber`, `as! Int64`, `as! Double` or `as? Bool`. On a
    /// Swift value in an `Any`, only the cast to its own type succeeds (a Swift `Int` gives `nil` for `as? Int64`
    /// and `as? Double`, a Swift `Bool` gives `nil` for `as? Int`); on an `NSNumber`, each cast behaves as on the
    /// literal `NSNumber` of that value: `NSNumber(value: 5)` gives `5` for `as? Int32` and `5.0` for `as? Double`,
    /// `NSNumber(value: true)` gives `true` for `as? Bool` and `1` for `as? Int`, and `NSNumber(value: 0.1)` gives
    /// `nil` for `as? Float`, because 0.1 is not exactly a `Float`. `NSNumber` is a property-list value.
    ///
    /// ```swift
    /// let encoder = UserInfoEncoder()
    /// encoder.encodesNumbersAsNSNumber = true   // or start from UserInfoEncoder.legacyCompatible
    /// ```
    public var encodesNumbersAsNSNumber: Bool {
        get { lock.withLock { _options.numbersAsNSNumber } }
        set { replaceOptions { $0.numbersAsNSNumber = newValue } }
    }

    /// A new encoder that writes values as Objective-C-era code posted them, for legacy observers that cast
    /// `userInfo` values: numbers and booleans as `NSNumber` (``encodesNumbersAsNSNumber``), `Decimal` as
    /// `NSDecimalNumber` (``DecimalEncodingStrategy/decimalNumber``), `URL` as `URL`
    /// (``URLEncodingStrategy/url``), `Date` as `Date`, `Data` as `Data`, `CGRect`, `CGPoint` and `CGSize` as
    /// `NSValue` (``encodesGeometryAsNSValue``), arrays and dictionaries as property-list containers
    /// (`[Any]` and `[String: Any]`, which bridge to `NSArray` and `NSDictionary`), and keys as the Swift
    /// properties spell them.
    ///
    /// ```swift
    /// let encoder = UserInfoEncoder.legacyCompatible
    /// encoder.keyEncodingStrategy = .convertToSnakeCase   // a new encoder each time: changing it changes no other
    /// center.post(name: .orderDidShip, object: nil, userInfo: try encoder.encode(order))
    /// ```
    ///
    /// Everything it writes is a property-list value except a `URL` and an `NSValue`; a ``UserInfoDecoder``
    /// reads every value back to an equal one. ``Notificatable/postingPlainKeys(encoder:)`` and
    /// ``Notificatable/postingPlainKeysOnly(encoder:)`` use it by default. The *Bridging* article has the table of
    /// each Swift type, what this encoder writes for it, and the casts that work.
    public static var legacyCompatible: UserInfoEncoder {
        var settings = Options.Settings()
        settings.numbersAsNSNumber = true
        settings.decimalStrategy = .decimalNumber
        settings.urlStrategy = .url
        settings.geometryAsNSValue = true
        return UserInfoEncoder(options: Options(settings, keeping: nil))
    }

    /// Contextual information that encoded types can read from `Encoder.userInfo`, as with `JSONEncoder`.
    public var userInfo: [CodingUserInfoKey: any Sendable] {
        get { lock.withLock { _options.userInfo } }
        set { replaceOptions { $0.userInfo = newValue } }
    }

    var options: Options { lock.withLock { _options } }

    /// Replaces the options with a copy changed by `change`. The old options, which may hold a caller's closures, are
    /// released after the lock is released.
    private func replaceOptions(_ change: (inout Options.Settings) -> Void) {
        let old = lock.withLock {
            let old = _options
            var settings = old.settings
            change(&settings)
            _options = Options(settings, keeping: old)
            return old
        }
        withExtendedLifetime(old) {}
    }

    /// Encodes a value as a `userInfo` dictionary.
    ///
    /// - Parameter value: The value to encode. It must encode as a keyed container.
    /// - Returns: A dictionary ready to pass as a notification's `userInfo`.
    /// - Throws: `EncodingError.invalidValue` if the value does not encode as a keyed container, if a value
    ///   cannot be represented, or if it is nested deeper than ``UserInfoDecoder`` reads (512 levels).
    public func encode<T: Encodable>(_ value: T) throws -> [AnyHashable: Any] {
        let type = ObjectIdentifier(T.self)
        var (options, lastCount, spare) = lock.withLock {
            var spare: UserInfoEncoderImpl?
            swap(&spare, &_spareFrame)
            return (_options, _lastSize.flatMap { $0.type == type ? $0.count : nil }, spare)
        }
        if let frame = spare, frame.options !== options { spare = nil }
        let capacity = lastCount.map(EncodedDictionary.roomyCapacity) ?? 8
        // `consume`: the frame's only reference goes to the call, so that it can be unique when it returns.
        var (encoded, frame) = try options.encodeTopLevelDictionary(value, capacity: capacity, reusing: consume spare)
        let reusable = isKnownUniquelyReferenced(&frame) && frame.prepareForReuse()
        let size = encoded.count != lastCount ? (type, encoded.count) : nil
        guard reusable || size != nil else { return encoded }
        let replaced: UserInfoEncoderImpl? = lock.withLock {
            if let size { _lastSize = size }
            guard reusable else { return nil }
            let replaced = _spareFrame
            _spareFrame = frame
            return replaced
        }
        withExtendedLifetime(replaced) {}
        return encoded
    }

    /// Encodes a value of any shape: a dictionary, an array or a single value.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The encoded value.
    /// - Throws: `EncodingError.invalidValue` if a value cannot be represented, or if it is nested deeper than
    ///   ``UserInfoDecoder`` reads.
    public func encodeValue<T: Encodable>(_ value: T) throws -> Any {
        try options.encodeTopLevel(value)
    }
}

extension UserInfoEncoder {
    /// The encoder's options as one immutable object, read once per `encode` call and shared by handles.
    ///
    /// A class, so that reading the options for a call, and handing them to the encoders that do the work, costs one
    /// retain instead of a copy of every strategy. Changing a setting replaces the whole object; the new one keeps
    /// the key-mapping cache of the old one when the key strategy did not change.
    ///
    /// `@unchecked Sendable` for the same reason as ``UserInfoDecoder``'s options: `DateFormatter` is documented
    /// as thread-safe, and everything else is a value or a lock-protected cache.
    final class Options: @unchecked Sendable {
        /// The settings themselves, as a value to change and build new options from.
        struct Settings {
            var keyStrategy: KeyEncodingStrategy = .useDefaultKeys
            var dateStrategy: DateEncodingStrategy = .deferredToDate
            var dataStrategy: DataEncodingStrategy = .deferredToData
            var decimalStrategy: DecimalEncodingStrategy = .string
            var urlStrategy: URLEncodingStrategy = .absoluteString
            var geometryAsNSValue = false
            var numbersAsNSNumber = false
            var userInfo: [CodingUserInfoKey: any Sendable] = [:]
        }

        let settings: Settings
        /// The cached key mapping; `nil` for the default keys, which need none, and for `.custom`, whose result
        /// depends on the coding path.
        let keyNames: EncoderKeyNames?
        /// How keyed containers write their keys, decided once here rather than for every key.
        let keyWriting: KeyWriting
        /// Whether the key strategy is anything but ``KeyEncodingStrategy/useDefaultKeys``.
        var keyStrategyRenamesKeys: Bool { keyWriting != .asIs }

        var keyStrategy: KeyEncodingStrategy { settings.keyStrategy }
        var dateStrategy: DateEncodingStrategy { settings.dateStrategy }
        var dataStrategy: DataEncodingStrategy { settings.dataStrategy }
        var decimalStrategy: DecimalEncodingStrategy { settings.decimalStrategy }
        var urlStrategy: URLEncodingStrategy { settings.urlStrategy }
        var geometryAsNSValue: Bool { settings.geometryAsNSValue }
        var numbersAsNSNumber: Bool { settings.numbersAsNSNumber }
        var userInfo: [CodingUserInfoKey: any Sendable] { settings.userInfo }
        /// `userInfo` as `Encoder.userInfo` types it, made once rather than by every encoder.
        let encoderUserInfo: [CodingUserInfoKey: Any]

        /// How a keyed container turns a coding key into a dictionary key.
        enum KeyWriting {
            /// As the key spells it: the default keys.
            case asIs
            /// Through ``keyNames``: snake case or affixed.
            case converted
            /// Through the `.custom` closure, which sees the coding path.
            case custom
        }

        convenience init() {
            self.init(Settings(), keeping: nil)
        }

        /// Options with `settings`, sharing the key-mapping cache of `previous` if the key strategy is unchanged.
        init(_ settings: Settings, keeping previous: Options?) {
            self.settings = settings
            encoderUserInfo = settings.userInfo.mapValues { $0 as Any }
            if let previous, Self.sameKeys(previous.settings.keyStrategy, settings.keyStrategy) {
                keyNames = previous.keyNames
            } else {
                switch settings.keyStrategy {
                case .useDefaultKeys, .custom: keyNames = nil
                case .convertToSnakeCase: keyNames = EncoderKeyNames(.snakeCase)
                case .affixed(let prefix, let suffix):
                    keyNames = EncoderKeyNames(.affixed(prefix: prefix, suffix: suffix))
                }
            }
            switch settings.keyStrategy {
            case .useDefaultKeys: keyWriting = .asIs
            case .convertToSnakeCase, .affixed: keyWriting = .converted
            case .custom: keyWriting = .custom
            }
        }

        /// Whether two key strategies map keys alike, so that a cache of one serves the other.
        private static func sameKeys(_ a: KeyEncodingStrategy, _ b: KeyEncodingStrategy) -> Bool {
            switch (a, b) {
            case (.useDefaultKeys, .useDefaultKeys), (.convertToSnakeCase, .convertToSnakeCase): true
            case (.affixed(let p1, let s1), .affixed(let p2, let s2)): p1 == p2 && s1 == s2
            default: false
            }
        }

        /// These options with the settings that write values a property list cannot hold (``decimalStrategy``,
        /// ``urlStrategy``, ``geometryAsNSValue``) back at their defaults: for a relay, whose wire format carries
        /// property-list values only; the other strategies, which decide keys and forms, are kept.
        /// ``numbersAsNSNumber`` goes back too: the wire writes a number's digits either way, and a Swift number
        /// is written without asking `NSNumber` what it holds.
        var propertyListOnly: Options {
            guard case .string = decimalStrategy, case .absoluteString = urlStrategy, !geometryAsNSValue,
                !numbersAsNSNumber
            else {
                var settings = settings
                settings.decimalStrategy = .string
                settings.urlStrategy = .absoluteString
                settings.geometryAsNSValue = false
                settings.numbersAsNSNumber = false
                return Options(settings, keeping: self)
            }
            return self
        }

        func encodeTopLevel<T: Encodable>(_ value: T) throws -> Any {
            let encoder = UserInfoEncoderImpl(options: self, node: .root)
            return try encoder.box(value, at: .root, finishing: false).finalized(topLevel: true)
        }

        /// Encodes `value` as a `userInfo`, allocated for `capacity` entries at first.
        func encodeTopLevelDictionary<T: Encodable>(_ value: T, capacity: Int = 8) throws -> [AnyHashable: Any] {
            try encodeTopLevelDictionary(value, capacity: capacity, reusing: nil).dictionary
        }

        /// Encodes `value` as a `userInfo`, allocated for `capacity` entries at first, with `spare`, an emptied
        /// top-level frame of these options, if there is one; returns the frame too, for the caller to keep for
        /// the next call if nothing else holds it.
        func encodeTopLevelDictionary<T: Encodable>(_ value: T, capacity: Int, reusing spare: UserInfoEncoderImpl?)
            throws -> (dictionary: [AnyHashable: Any], frame: UserInfoEncoderImpl)
        {
            // A type the encoder writes directly (a date, a URL, …) is a single value, never a dictionary.
            guard !UserInfoEncodableTypes.isDirect(T.self) else { throw Self.notADictionary(value) }
            // `value.encode(to:)` below is the first frame.
            let encoder: UserInfoEncoderImpl
            if let spare {
                spare.reuseAsTopLevel(capacity: capacity, encodedType: T.self)
                encoder = spare
            } else {
                encoder = UserInfoEncoderImpl(
                    options: self, node: .root, topLevel: true, capacity: capacity, depth: 1, encodedType: T.self
                )
            }
            encoder.keepsContainer = true
            do {
                try value.encode(to: encoder)
            } catch {
                encoder.endUse()
                throw error
            }
            encoder.endUse()
            try encoder.throwDeferredError()
            guard let dictionary = encoder.topLevelDictionary() else { throw Self.notADictionary(value) }
            return (dictionary, encoder)
        }

        private static func notADictionary<T>(_ value: T) -> EncodingError {
            EncodingError.invalidValue(
                value,
                .init(
                    codingPath: [],
                    debugDescription: "\(T.self) did not encode as a dictionary, so it cannot be a userInfo; "
                        + "use encodeValue(_:) for other shapes."
                )
            )
        }
    }
}
