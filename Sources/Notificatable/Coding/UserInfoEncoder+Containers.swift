import Foundation

// MARK: - Containers

/// Keeps a frame alive for the keyed container the frame keeps for its next values: the container holds this
/// object, not the frame, so that while the frame waits for its next value (``frame`` `nil` then), the frame is
/// held by nothing but its owner, and a check that it is uniquely referenced still finds an encoder or container
/// that a value kept past its `encode(to:)`. ``frame`` is set whenever the container can be reached.
final class KeyedContainerAnchor {
    var frame: UserInfoEncoderImpl?

    init(frame: UserInfoEncoderImpl) {
        self.frame = frame
    }
}

struct UserInfoKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// The frame this container writes through. Not a counted reference: ``keepAlive`` holds the frame for as long
    /// as this container exists.
    unowned(unsafe) let encoder: UserInfoEncoderImpl
    /// What keeps ``encoder`` alive: the frame itself, or, for the container a frame keeps for its next values,
    /// the ``KeyedContainerAnchor`` that holds the frame whenever the container can be reached (see
    /// ``UserInfoEncoderImpl/container(keyedBy:)``). Never changed, so ``encoder`` stays valid.
    private let keepAlive: AnyObject
    /// The dictionary this container fills, when it is not the encoder's own; the path, when it is not the
    /// encoder's. Both are `nil` for a frame's own container, the common case, so that it holds one reference, not
    /// three: each is a retain when the container is made and a release when the standard library's box goes.
    private let otherBox: EncodedDictionary?
    private let otherNode: CodingPathNode?
    /// The dictionary this container fills.
    var box: EncodedDictionary { otherBox ?? encoder }
    /// The path of this container.
    var node: CodingPathNode { otherNode ?? encoder.node }
    /// How this container writes its keys: the keys of a `[String: V]` are written as they are under any strategy.
    private let keyWriting: UserInfoEncoder.Options.KeyWriting
    /// For converted keys: the dictionary keys of `Key` converted so far, read once for the container.
    private var keyNames: EncoderKeyNames.Names?
    /// Where in `keyNames` the next key is looked for first: just after the one found last.
    private var keyCursor = 0
    /// Whether numbers and booleans are written as `NSNumber`s (``UserInfoEncoder/encodesNumbersAsNSNumber``).
    private let boxesNumbers: Bool

    /// `ownContainer` is whether the frame's `container(keyedBy:)` asks, rather than a nested container's parent;
    /// only then may the keys be a `[String: V]`'s.
    /// `keepAlive` is the frame or the anchor that holds it; the frame itself when not given.
    init(
        encoder: UserInfoEncoderImpl, keepAlive: AnyObject? = nil, box: EncodedDictionary?, node: CodingPathNode?,
        ownContainer: Bool = false
    ) {
        self.encoder = encoder
        self.keepAlive = keepAlive ?? encoder
        otherBox = box
        otherNode = node
        let options = encoder.options
        boxesNumbers = options.numbersAsNSNumber
        switch options.keyWriting {
        case .asIs:
            keyWriting = .asIs
        case .converted:
            if ownContainer, let encodedType = encoder.encodedType, let cache = options.keyNames {
                let found = cache.lookUp(keyType: Key.self, valueType: encodedType)
                keyWriting = found.isStringKeyed ? .asIs : .converted
                keyNames = found.names
            } else {
                keyWriting = .converted
                keyNames = options.keyNames?.names(for: Key.self)
            }
        case .custom:
            let isStringKeyed = ownContainer && encoder.encodedType.map { $0 is any StringKeyedDictionary.Type } == true
            keyWriting = isStringKeyed ? .asIs : .custom
        }
    }

    var codingPath: [any CodingKey] { node.path }

    private mutating func set(_ value: consuming Any, for key: Key) {
        // The key first: `dictionaryKey` mutates `self`, so a `box` read before it would be retained across the call.
        let name = dictionaryKey(key)
        write(value, for: name)
    }

    /// Stores a number or a boolean, as an `NSNumber` when the options say so.
    private mutating func setNumber<N: LegacyNumber>(_ value: N, for key: Key) {
        if boxesNumbers { set(value.legacyNumber, for: key) } else { set(value, for: key) }
    }

    /// Stores a finished value, borrowing the dictionary rather than retaining it for the call.
    private func write(_ value: consuming Any, for name: consuming String) {
        if let otherBox {
            otherBox.set(finished: value, for: name)
        } else {
            encoder.set(finished: value, for: name)
        }
    }

    /// The dictionary key for `key` under the key strategy. Integer keys, such as those of `[Int: V]`, are written
    /// as their decimal string and never renamed.
    private mutating func dictionaryKey(_ key: some CodingKey) -> String {
        switch keyWriting {
        case .asIs:
            // An integer key's decimal string is its `stringValue` too.
            return key.stringValue
        case .converted:
            let name = key.stringValue
            if let int = key.intValue, name == String(int) { return name }
            // One call on the borrowed names, and the cursor moved after it: a `Names` reference copied out of
            // `self` before `self` changes would be retained and released for every key.
            if let found = keyNames?.lookUp(name, from: keyCursor) {
                keyCursor = found.index + 1
                return found.dictionaryKey
            }
            guard let cache = encoder.options.keyNames else { return name }
            if keyNames?.isUncached == true { return KeyAffixes.map(name, with: cache.mapping) }
            let added = cache.adding(name, for: Key.self)
            keyNames = added.names
            return added.dictionaryKey
        case .custom:
            return encoder.customDictionaryKey(for: key, in: node)
        }
    }

    /// An explicit `nil` is written as `NSNull`, which the decoder reads as null, as `JSONEncoder` writes `null`.
    /// `NSNull` is not a property-list type; `encodeIfPresent` of `nil`, which synthesized `Encodable` uses for
    /// optionals, leaves the key out instead.
    mutating func encodeNil(forKey key: Key) { set(NSNull(), for: key) }
    mutating func encode(_ value: Bool, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: String, forKey key: Key) { set(value, for: key) }
    mutating func encode(_ value: Double, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Float, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Int, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Int8, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Int16, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Int32, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: Int64, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: UInt, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { setNumber(value, for: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) { setNumber(value, for: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let plain = encoder.plainValue(of: value) {
            let name = dictionaryKey(key)
            write(plain, for: name)
            return
        }
        let boxed = try encoder.box(value, at: node.appending(key))
        let name = dictionaryKey(key)
        box.set(boxed, for: name)
    }

    /// A second nested container for the same key writes into the first one, as in `JSONEncoder`.
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let name = dictionaryKey(key)
        let nested: EncodedDictionary
        if let existing = box.existingDictionary(for: name) {
            nested = existing
        } else {
            nested = EncodedDictionary()
            box.set(.dictionary(nested), for: name)
        }
        return KeyedEncodingContainer(
            UserInfoKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, node: node.appending(key))
        )
    }

    /// A second nested unkeyed container for the same key appends to the first one, as in `JSONEncoder`.
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let name = dictionaryKey(key)
        let nested: EncodedArray
        if let existing = box.existingArray(for: name) {
            nested = existing
        } else {
            nested = EncodedArray()
            box.set(.array(nested), for: name)
        }
        return UserInfoUnkeyedEncodingContainer(encoder: encoder, box: nested, node: node.appending(key))
    }

    mutating func superEncoder() -> any Encoder {
        let key = dictionaryKey(AnyCodingKey.super)
        return encoder.superEncoder(for: key, in: box, at: node.appending(AnyCodingKey.super))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.superEncoder(for: dictionaryKey(key), in: box, at: node.appending(key))
    }
}

struct UserInfoUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: UserInfoEncoderImpl
    let box: EncodedArray
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }
    var count: Int { box.count }

    private func append(_ value: Any) { box.append(.value(value)) }
    private func appendNumber<N: LegacyNumber>(_ value: N) {
        if encoder.options.numbersAsNSNumber { append(value.legacyNumber) } else { append(value) }
    }

    func encodeNil() { append(NSNull()) }
    func encode(_ value: Bool) { appendNumber(value) }
    func encode(_ value: String) { append(value) }
    func encode(_ value: Double) { appendNumber(value) }
    func encode(_ value: Float) { appendNumber(value) }
    func encode(_ value: Int) { appendNumber(value) }
    func encode(_ value: Int8) { appendNumber(value) }
    func encode(_ value: Int16) { appendNumber(value) }
    func encode(_ value: Int32) { appendNumber(value) }
    func encode(_ value: Int64) { appendNumber(value) }
    func encode(_ value: UInt) { appendNumber(value) }
    func encode(_ value: UInt8) { appendNumber(value) }
    func encode(_ value: UInt16) { appendNumber(value) }
    func encode(_ value: UInt32) { appendNumber(value) }
    func encode(_ value: UInt64) { appendNumber(value) }

    func encode<T: Encodable>(_ value: T) throws {
        box.append(try encoder.box(value, at: node.appending(index: box.count)))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedDictionary()
        let index = box.count
        box.append(.dictionary(nested))
        return KeyedEncodingContainer(
            UserInfoKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, node: node.appending(index: index))
        )
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let index = box.count
        box.append(.array(nested))
        return UserInfoUnkeyedEncodingContainer(encoder: encoder, box: nested, node: node.appending(index: index))
    }

    func superEncoder() -> any Encoder {
        let childNode = node.appending(index: box.count)
        guard let child = encoder.superFrame(at: childNode) else {
            return TooDeepEncoder(node: childNode, userInfo: encoder.userInfo)
        }
        box.append(.deferred(child))
        return child
    }
}
