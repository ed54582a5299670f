import Foundation

/// What `superEncoder()` returns past the depth cap, where it cannot throw: every write throws the failure, so that
/// a type recursing through super encoders stops there instead of overflowing the stack. The frame that asked for it
/// throws the same failure when it returns, so a caller that swallows the errors still gets one from `encode`.
struct TooDeepEncoder: Encoder {
    let node: CodingPathNode
    let userInfo: [CodingUserInfoKey: Any]

    var codingPath: [any CodingKey] { node.path }
    var error: EncodingError { UserInfoEncoderImpl.tooDeep((), at: node) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(TooDeepKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { TooDeepUnkeyedContainer(encoder: self) }
    func singleValueContainer() -> any SingleValueEncodingContainer { TooDeepUnkeyedContainer(encoder: self) }
}

private struct TooDeepKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: TooDeepEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws { throw encoder.error }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw encoder.error }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.container(keyedBy: NestedKey.self)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

/// The unkeyed and single-value containers of a ``TooDeepEncoder``.
private struct TooDeepUnkeyedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    let encoder: TooDeepEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { 0 }

    mutating func encodeNil() throws { throw encoder.error }
    mutating func encode<T: Encodable>(_ value: T) throws { throw encoder.error }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.container(keyedBy: NestedKey.self)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { encoder.unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { encoder }
}
