import Foundation

/// Carries a value that is not `Codable`, such as an `NSError` or a managed object, through ``UserInfoDecoder``
/// and ``UserInfoEncoder`` as it is.
///
/// Legacy notifications often put objects in `userInfo` that have no `Codable` form. Wrap such a property, and the
/// decoder hands over the stored object after checking its type:
///
/// ```swift
/// struct SaveFailed: Decodable {
///     @UserInfoPassthrough var error: NSError
///     var attempt: Int
/// }
/// ```
///
/// When the stored value is not a `Value`, decoding fails with `DecodingError.typeMismatch` at the property's
/// coding path. Other decoders, such as `JSONDecoder`, cannot read a passthrough value and throw the same error.
/// For an optional object, declare the property as `UserInfoPassthrough<NSError>?` without the attribute, so that a
/// missing key reads as `nil`.
@propertyWrapper
public struct UserInfoPassthrough<Value> {
    /// The value, exactly as it was stored in the dictionary.
    public var wrappedValue: Value

    /// Wraps a value.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

extension UserInfoPassthrough: Sendable where Value: Sendable {}

extension UserInfoPassthrough: Decodable {
    /// Reads the stored value when `decoder` is a ``UserInfoDecoder``; any other decoder throws `typeMismatch`.
    public init(from decoder: any Decoder) throws {
        guard let decoder = decoder as? UserInfoDecoderImpl else {
            throw DecodingError.typeMismatch(
                Value.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "UserInfoPassthrough<\(Value.self)> can only be decoded by UserInfoDecoder."
                )
            )
        }
        self = try Self.unbox(decoder.value, decoder: decoder, parent: decoder.node, component: nil)
    }
}

extension UserInfoPassthrough: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> UserInfoPassthrough<Value> {
        if let value = value as? Value { return UserInfoPassthrough(wrappedValue: value) }
        throw decoder.mismatch(value, as: Value.self, expected: "\(Value.self)", parent: parent, component: component)
    }
}

extension UserInfoPassthrough: Encodable {
    /// Writes the value as it is when `encoder` is a ``UserInfoEncoder``; any other encoder throws
    /// `EncodingError.invalidValue`.
    public func encode(to encoder: any Encoder) throws {
        guard let encoder = encoder as? UserInfoEncoderImpl else {
            throw EncodingError.invalidValue(
                wrappedValue,
                .init(
                    codingPath: encoder.codingPath,
                    debugDescription: "UserInfoPassthrough<\(Value.self)> can only be encoded by UserInfoEncoder."
                )
            )
        }
        encoder.storePassthrough(wrappedValue)
    }
}
