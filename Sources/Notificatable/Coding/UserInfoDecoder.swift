import Foundation

/// Decodes `Decodable` values from the untyped `userInfo` dictionaries that `NotificationCenter` carries.
///
/// `UserInfoDecoder` reads the values that legacy and system notifications put in `userInfo` as they are:
/// `NSNumber`, Swift numbers, `NSValue`-boxed geometry, `Date`, `Data`, `URL`, `NSNull`, and nested dictionaries
/// and arrays, with `String` or integer keys. It never traps: every problem becomes a `DecodingError` whose
/// `codingPath` leads to the offending value.
///
/// ```swift
/// struct KeyboardInfo: Decodable {
///     var frameEnd: CGRect
///     var animationDuration: Double
/// }
///
/// let decoder = UserInfoDecoder()
/// decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
/// let info = try decoder.decode(KeyboardInfo.self, from: notification.userInfo)
/// ```
///
/// The options are read once at the start of each `decode` call, so one decoder may be shared between threads.
/// See <doc:DecodingRules> for how numbers, booleans, nulls and system values are read.
public final class UserInfoDecoder: @unchecked Sendable {
    /// How the decoder maps a Swift coding key to the key it looks up in the dictionary.
    public enum KeyDecodingStrategy: Sendable {
        /// Looks up each key exactly as the `CodingKey` spells it. This is the default.
        case useDefaultKeys
        /// Reads `snake_case` dictionary keys into `camelCase` properties, like `JSONDecoder`.
        ///
        /// The mapping loses information for acronyms: the key `base_url` reads the property `baseUrl`, not
        /// `baseURL`. Give such a property an explicit `CodingKey` instead. When both `foo_bar` and `fooBar` are
        /// present, `fooBar`, which needs no conversion, is read. The keys of a `[String: V]` are read as they are.
        case convertFromSnakeCase
        /// Reads every key as `prefix`, then the Swift key with its first letter uppercased, then `suffix`.
        ///
        /// With `.affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")`, the property `frameEnd` reads the key
        /// `UIKeyboardFrameEndUserInfoKey`. Integer keys (see ``UserInfoDecoder``) and the keys of a `[String: V]`
        /// are not affected.
        case affixed(prefix: String, suffix: String)
        /// Converts each key found in the dictionary with a closure, like `JSONDecoder`'s `.custom`.
        ///
        /// The closure receives the coding path that ends in the key found in the dictionary, and returns the
        /// `CodingKey` that key stands for. When it returns the same key for several dictionary keys, the one it
        /// returns unchanged wins, otherwise the first in sorted order. The keys of a `[String: V]` are read as
        /// they are.
        case custom(@Sendable (_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How the decoder reads a `Date` that is not stored as a native `Date`.
    public enum DateDecodingStrategy: Sendable {
        /// Native dates are read as they are; anything else is handed to `Date`'s own `init(from:)`, which reads a
        /// number of seconds since 1 January 2001. This is the default.
        case deferredToDate
        /// Reads a number of seconds since 1 January 1970.
        case secondsSince1970
        /// Reads a number of milliseconds since 1 January 1970.
        case millisecondsSince1970
        /// Reads an ISO 8601 string, such as `2026-11-21T09:30:00Z`, with or without fractional seconds.
        case iso8601
        /// Reads a string with the given formatter.
        case formatted(DateFormatter)
        /// Reads the date with a closure that receives a decoder positioned at the value.
        case custom(@Sendable (_ decoder: any Decoder) throws -> Date)
    }

    /// How the decoder reads `Data` that is not stored as native `Data`.
    public enum DataDecodingStrategy: Sendable {
        /// Native data is read as it is; anything else is handed to `Data`'s own `init(from:)`, which reads an
        /// array of bytes. This is the default.
        case deferredToData
        /// Reads a Base64-encoded string.
        case base64
        /// Reads the data with a closure that receives a decoder positioned at the value.
        case custom(@Sendable (_ decoder: any Decoder) throws -> Data)
    }

    private let lock = NSLock()
    private var _options = Options.defaults

    /// Creates a decoder with the default strategies.
    public init() {}

    /// Creates a decoder with a snapshot of options, such as a handle's.
    init(options: Options) {
        _options = options
    }

    /// The strategy that maps coding keys to dictionary keys. Defaults to ``KeyDecodingStrategy/useDefaultKeys``.
    public var keyDecodingStrategy: KeyDecodingStrategy {
        get { lock.withLock { _options.keyStrategy } }
        set { replaceOptions { $0.with(keyStrategy: newValue) } }
    }

    /// The strategy for dates that are not native `Date` values. Defaults to
    /// ``DateDecodingStrategy/deferredToDate``.
    public var dateDecodingStrategy: DateDecodingStrategy {
        get { lock.withLock { _options.dateStrategy } }
        set { replaceOptions { $0.with(dateStrategy: newValue) } }
    }

    /// The strategy for data that is not native `Data`. Defaults to ``DataDecodingStrategy/deferredToData``.
    public var dataDecodingStrategy: DataDecodingStrategy {
        get { lock.withLock { _options.dataStrategy } }
        set { replaceOptions { $0.with(dataStrategy: newValue) } }
    }

    /// Contextual information that decoded types can read from `Decoder.userInfo`, as with `JSONDecoder`.
    public var userInfo: [CodingUserInfoKey: any Sendable] {
        get { lock.withLock { _options.userInfo } }
        set { replaceOptions { $0.with(userInfo: newValue) } }
    }

    /// A snapshot of the current options; handles keep one so that later changes to the decoder don't affect them.
    var options: Options { lock.withLock { _options } }

    /// Replaces the options with `change(current)`. The old options, which may hold a caller's closures, are released
    /// after the lock is released.
    private func replaceOptions(_ change: (Options) -> Options) {
        let old = lock.withLock {
            let old = _options
            _options = change(old)
            return old
        }
        withExtendedLifetime(old) {}
    }

    /// Decodes a value of the given type from a notification's `userInfo`.
    ///
    /// A `nil` dictionary reads as an empty one, so a type whose properties are all optional decodes from it.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - userInfo: The dictionary, typically `notification.userInfo`.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` with the coding path of the value that could not be read.
    public func decode<T: Decodable>(_ type: T.Type, from userInfo: [AnyHashable: Any]?) throws -> T {
        try options.decodeTopLevel(type, from: userInfo ?? [:])
    }

    /// Decodes a value of the given type from any top-level value: a dictionary, an array or a single value.
    ///
    /// ```swift
    /// let frames = try decoder.decode([CGRect].self, fromValue: [NSValue(rect: a), NSValue(rect: b)])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The value to read.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` with the coding path of the value that could not be read.
    public func decode<T: Decodable>(_ type: T.Type, fromValue value: Any) throws -> T {
        try options.decodeTopLevel(type, from: value)
    }
}
