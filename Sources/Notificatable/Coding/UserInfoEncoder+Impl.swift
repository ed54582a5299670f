import Foundation

/// A value being encoded. Containers are reference boxes, so a nested container can be filled after its parent
/// has stored it; everything is turned into plain dictionaries and arrays once, at the end.
enum EncodedValue {
    case value(Any)
    case dictionary(EncodedDictionary)
    case array(EncodedArray)
    /// A `superEncoder()`, resolved when the tree is finalized.
    case deferred(UserInfoEncoderImpl)

    func finalized(topLevel: Bool = false) -> Any {
        switch self {
        case .value(let value): return value
        case .dictionary(let box): return topLevel ? box.finalizedTopLevel() : box.finalized()
        case .array(let box): return box.elements.map { $0.finalized() }
        case .deferred(let encoder): return (encoder.storage ?? .dictionary(EncodedDictionary())).finalized()
        }
    }
}

final class EncodedDictionary {
    /// Finished values. Most entries land here directly, so a flat payload is built in one pass. The top level of a
    /// `userInfo` is `[AnyHashable: Any]`; nested dictionaries are `[String: Any]`, as property lists want.
    private var strings: [String: Any] = [:]
    private var hashables: [AnyHashable: Any] = [:]
    /// Containers that may still be filled after they were stored; finished at the end.
    private var pending: [(key: String, value: EncodedValue)] = []
    let isTopLevel: Bool

    init(topLevel: Bool = false) {
        isTopLevel = topLevel
        // Allocated at its size at once: `reserveCapacity` on an empty dictionary goes through the resize path.
        if topLevel { hashables = [AnyHashable: Any](minimumCapacity: 8) }
    }

    /// Stores a value; a later value for the same key replaces an earlier one, as in `JSONEncoder`.
    func set(_ value: EncodedValue, for key: String) {
        if !pending.isEmpty { pending.removeAll { $0.key == key } }
        if case .value(let finished) = value {
            if isTopLevel { hashables[key] = finished } else { strings[key] = finished }
        } else {
            if isTopLevel { hashables[key] = nil } else if !strings.isEmpty { strings[key] = nil }
            pending.append((key, value))
        }
    }

    /// The container stored for `key` that may still be filled: a nested container's box or a super encoder.
    func pendingValue(for key: String) -> EncodedValue? {
        pending.last { $0.key == key }?.value
    }

    /// The dictionary that an earlier nested container or super encoder for `key` writes, to be shared.
    func existingDictionary(for key: String) -> EncodedDictionary? {
        switch pendingValue(for: key) {
        case .dictionary(let existing): existing
        case .deferred(let superEncoder): superEncoder.dictionaryForMerging()
        default: nil
        }
    }

    /// The array that an earlier nested container or super encoder for `key` writes, to be shared.
    func existingArray(for key: String) -> EncodedArray? {
        switch pendingValue(for: key) {
        case .array(let existing): existing
        case .deferred(let superEncoder): superEncoder.arrayForMerging()
        default: nil
        }
    }

    func finalized() -> [String: Any] {
        var result = strings
        if isTopLevel {
            for (key, value) in hashables { if let key = key.base as? String { result[key] = value } }
        }
        for entry in pending { result[entry.key] = entry.value.finalized() }
        return result
    }

    func finalizedTopLevel() -> [AnyHashable: Any] {
        var result = hashables
        if !isTopLevel {
            for (key, value) in strings { result[key] = value }
        }
        for entry in pending { result[entry.key] = entry.value.finalized() }
        return result
    }
}

final class EncodedArray {
    var elements: [EncodedValue] = []
}

/// A type the encoder writes directly, without asking it to encode itself through containers.
protocol UserInfoEncodable {
    /// `node` is built only by the writers that need it (a `.custom` date or data strategy), so that a value
    /// written directly costs no path node.
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        throws -> EncodedValue
}

extension UserInfoEncodable {
    /// Writes `value` when it is a `Self`; `nil` otherwise.
    static func box<T>(
        _ value: T, options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl,
        node: @autoclosure () -> CodingPathNode
    ) throws -> EncodedValue? {
        // No `Optional<Self>` here: in unspecialized generic code, naming it costs a runtime metadata lookup.
        guard T.self == Self.self else { return nil }
        return try unsafeBitCast(value, to: Self.self).boxed(options: options, encoder: encoder, node: node())
    }
}

/// Finds the direct writer of a type: a table lookup for the types the encoder knows, and a conformance check only
/// for the rest (``UserInfoPassthrough`` is generic, so it cannot be in the table).
enum UserInfoEncodableTypes {
    /// Immutable after initialization; metatypes are safe to share.
    nonisolated(unsafe) static let known: [ObjectIdentifier: any UserInfoEncodable.Type] = {
        let types: [any UserInfoEncodable.Type] = [
            Date.self, Data.self, URL.self, UUID.self, Decimal.self, CGRect.self, CGPoint.self, CGSize.self,
            CGFloat.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { (ObjectIdentifier($0), $0) })
    }()

    /// Types found not to conform, so that the conformance check runs once per type and not on every encode of a
    /// struct, as in ``UserInfoDecodableTypes``.
    nonisolated(unsafe) private static var notDirect: Set<ObjectIdentifier> = []
    private static let lock = NSLock()

    static func lookup(_ type: Any.Type) -> (any UserInfoEncodable.Type)? {
        let id = ObjectIdentifier(type)
        if let direct = known[id] { return direct }
        if lock.withLock({ notDirect.contains(id) }) { return nil }
        if let direct = type as? any UserInfoEncodable.Type { return direct }
        lock.withLock { _ = notDirect.insert(id) }
        return nil
    }
}

/// The encoder that does the work; it is also the single-value container.
final class UserInfoEncoderImpl: Encoder, SingleValueEncodingContainer {
    let options: UserInfoEncoder.Options
    let node: CodingPathNode
    /// Whether this encoder writes the top level of a `userInfo`, which is `[AnyHashable: Any]`.
    let isTopLevel: Bool
    private(set) var storage: EncodedValue?
    /// Whether this encoder writes a `[String: V]` under a key strategy: its keyed container writes the dictionary's
    /// keys as they are, as `JSONEncoder` does, because they are data, not property names.
    var verbatimKeys = false
    /// For a super encoder made for a key that already had one: the earlier one, whose container this one shares.
    private var predecessor: UserInfoEncoderImpl?
    /// How many `encode(to:)` frames are running, this encoder's included, counted as ``UserInfoDecoder`` counts
    /// the frames of `init(from:)`: a value encoded through its own `encode(to:)` and a super encoder each add one,
    /// a nested container adds none. The cap is the decoder's, so the decoder reads back everything written.
    private(set) var depth = 0
    /// A failure found where no error can be thrown (`superEncoder()` past the depth cap), thrown by ``box(_:at:)``
    /// when the frame that met it returns.
    private var deferredError: EncodingError?
    /// For a super encoder: the encoder whose frame created it, which takes its deferred failures.
    private weak var frameOwner: UserInfoEncoderImpl?

    init(options: UserInfoEncoder.Options, node: CodingPathNode, topLevel: Bool = false, depth: Int = 0) {
        self.options = options
        self.node = node
        self.isTopLevel = topLevel
        self.depth = depth
    }

    var codingPath: [any CodingKey] { node.path }
    lazy var userInfo: [CodingUserInfoKey: Any] = options.userInfo.mapValues { $0 as Any }

    /// Encodes a value at `node`: directly for primitives and system values, otherwise through a child encoder.
    /// `node` is built only when something needs it: a child encoder, or a writer with a `.custom` strategy.
    func box<T: Encodable>(_ value: T, at node: @autoclosure () -> CodingPathNode) throws -> EncodedValue {
        if let direct = UserInfoEncodableTypes.lookup(T.self),
            let boxed = try direct.box(value, options: options, encoder: self, node: node())
        {
            return boxed
        }
        let child = try frame(for: value, at: node())
        child.verbatimKeys = options.keyStrategyRenamesKeys && T.self is any StringKeyedDictionary.Type
        try value.encode(to: child)
        try child.throwDeferredError()
        return child.storage ?? .dictionary(EncodedDictionary())
    }

    // MARK: - Depth

    /// A child encoder one frame deeper, for `value` at `node`, or `invalidValue` with the path past the cap.
    func frame<Value>(for value: Value, at node: CodingPathNode) throws -> UserInfoEncoderImpl {
        guard depth < UserInfoDecoder.Options.maximumDepth else { throw Self.tooDeep(value, at: node) }
        return UserInfoEncoderImpl(options: options, node: node, depth: depth + 1)
    }

    static func tooDeep(_ value: Any, at node: CodingPathNode) -> EncodingError {
        EncodingError.invalidValue(
            value,
            .init(
                codingPath: node.path,
                debugDescription: "The value is nested more than \(UserInfoDecoder.Options.maximumDepth) levels deep, "
                    + "deeper than UserInfoDecoder reads."
            )
        )
    }

    /// Throws the failure met in this encoder's frame, or in a super encoder it made.
    func throwDeferredError() throws {
        if let deferredError { throw deferredError }
    }

    /// The encoder that `superEncoder()` returns for `node`: a frame deeper, or, past the cap, an encoder that
    /// throws on every write, with the failure kept for this frame to throw when it returns.
    func superFrame(at node: CodingPathNode) -> UserInfoEncoderImpl? {
        guard depth < UserInfoDecoder.Options.maximumDepth else {
            let owner = frameOwner ?? self
            if owner.deferredError == nil { owner.deferredError = Self.tooDeep((), at: node) }
            return nil
        }
        let child = UserInfoEncoderImpl(options: options, node: node, depth: depth + 1)
        child.frameOwner = frameOwner ?? self
        return child
    }

    func storePassthrough(_ value: Any) { storage = .value(value) }

    // MARK: - Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: EncodedDictionary
        if case .dictionary(let existing) = storage {
            box = existing
        } else if case .none = storage, let shared = predecessor?.dictionaryForMerging() {
            box = shared
            storage = .dictionary(shared)
        } else {
            box = EncodedDictionary(topLevel: isTopLevel)
            storage = .dictionary(box)
        }
        return KeyedEncodingContainer(
            UserInfoKeyedEncodingContainer<Key>(encoder: self, box: box, node: node, verbatimKeys: verbatimKeys)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: EncodedArray
        if case .array(let existing) = storage {
            box = existing
        } else if case .none = storage, let shared = predecessor?.arrayForMerging() {
            box = shared
            storage = .array(shared)
        } else {
            box = EncodedArray()
            storage = .array(box)
        }
        return UserInfoUnkeyedEncodingContainer(encoder: self, box: box, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: - Merging containers for one key

    /// The dictionary this encoder writes, made now if nothing was written yet, for a nested container or super
    /// encoder that a keyed container makes later for the same key; `nil` if it writes something else.
    func dictionaryForMerging() -> EncodedDictionary? {
        switch storage {
        case .dictionary(let box): return box
        case .none:
            if let shared = predecessor?.dictionaryForMerging() {
                storage = .dictionary(shared)
                return shared
            }
            let box = EncodedDictionary()
            storage = .dictionary(box)
            return box
        default: return nil
        }
    }

    /// The array this encoder writes, as ``dictionaryForMerging()`` does for a dictionary.
    func arrayForMerging() -> EncodedArray? {
        switch storage {
        case .array(let box): return box
        case .none:
            if let shared = predecessor?.arrayForMerging() {
                storage = .array(shared)
                return shared
            }
            let box = EncodedArray()
            storage = .array(box)
            return box
        default: return nil
        }
    }

    /// A super encoder for `key` of `box` that shares what an earlier nested container or super encoder for the
    /// same key writes, as two nested containers for one key do in `JSONEncoder`.
    func superEncoder(for key: String, in box: EncodedDictionary, at node: CodingPathNode) -> any Encoder {
        guard let child = superFrame(at: node) else { return TooDeepEncoder(node: node, userInfo: userInfo) }
        switch box.pendingValue(for: key) {
        case .dictionary(let existing): child.storage = .dictionary(existing)
        case .array(let existing): child.storage = .array(existing)
        case .deferred(let earlier): child.predecessor = earlier
        case .value, .none: break
        }
        box.set(.deferred(child), for: key)
        return child
    }

    // MARK: - SingleValueEncodingContainer

    /// A `nil` written on its own (in an array, or as a single value) becomes `NSNull`, so that the decoder reads it
    /// back as `nil`. A `nil` property is left out of its dictionary instead.
    func encodeNil() { storage = .value(NSNull()) }
    func encode(_ value: Bool) { storage = .value(value) }
    func encode(_ value: String) { storage = .value(value) }
    func encode(_ value: Double) { storage = .value(value) }
    func encode(_ value: Float) { storage = .value(value) }
    func encode(_ value: Int) { storage = .value(value) }
    func encode(_ value: Int8) { storage = .value(value) }
    func encode(_ value: Int16) { storage = .value(value) }
    func encode(_ value: Int32) { storage = .value(value) }
    func encode(_ value: Int64) { storage = .value(value) }
    func encode(_ value: UInt) { storage = .value(value) }
    func encode(_ value: UInt8) { storage = .value(value) }
    func encode(_ value: UInt16) { storage = .value(value) }
    func encode(_ value: UInt32) { storage = .value(value) }
    func encode(_ value: UInt64) { storage = .value(value) }
    func encode<T: Encodable>(_ value: T) throws { storage = try box(value, at: node) }

    // MARK: - Keys

    /// The dictionary key for a coding key under the key strategy. Integer keys, such as those of `[Int: V]`, are
    /// written as their decimal string and never renamed. `container` is the path of the container that writes the
    /// key, which `.custom` receives (a nested container's path is deeper than this encoder's).
    func dictionaryKey(
        for key: any CodingKey, in container: CodingPathNode, keyTable: KeyAffixes.KeyTable?,
        snapshot: KeyAffixes.KeyTable.Snapshot
    ) -> String {
        if let int = key.intValue, key.stringValue == String(int) { return key.stringValue }
        switch options.keyStrategy {
        case .useDefaultKeys:
            return key.stringValue
        case .convertToSnakeCase, .affixed:
            return keyTable?.dictionaryKey(for: key.stringValue, in: snapshot) ?? key.stringValue
        case .custom(let convert): return convert(container.path + [key]).stringValue
        }
    }
}

// MARK: - Containers

struct UserInfoKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: UserInfoEncoderImpl
    let box: EncodedDictionary
    let node: CodingPathNode
    private let keyTable: KeyAffixes.KeyTable?
    private let keySnapshot: KeyAffixes.KeyTable.Snapshot
    /// Whether keys are written as they are: the keys of a `[String: V]`, under any key strategy.
    private let verbatimKeys: Bool

    init(encoder: UserInfoEncoderImpl, box: EncodedDictionary, node: CodingPathNode, verbatimKeys: Bool = false) {
        self.encoder = encoder
        self.box = box
        self.node = node
        self.verbatimKeys = verbatimKeys
        self.keyTable = verbatimKeys ? nil : encoder.options.affixes?.table(for: Key.self)
        self.keySnapshot = keyTable?.snapshot ?? .init()
    }

    var codingPath: [any CodingKey] { node.path }

    private func set(_ value: EncodedValue, for key: Key) {
        box.set(value, for: dictionaryKey(key))
    }

    private func dictionaryKey(_ key: some CodingKey) -> String {
        if verbatimKeys { return key.stringValue }
        return encoder.dictionaryKey(for: key, in: node, keyTable: keyTable, snapshot: keySnapshot)
    }

    /// An explicit `nil` is written as `NSNull`, which the decoder reads as null, as `JSONEncoder` writes `null`.
    /// `NSNull` is not a property-list type; `encodeIfPresent` of `nil`, which synthesized `Encodable` uses for
    /// optionals, leaves the key out instead.
    func encodeNil(forKey key: Key) { set(.value(NSNull()), for: key) }
    func encode(_ value: Bool, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: String, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Double, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Float, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Int, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Int8, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Int16, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Int32, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: Int64, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: UInt, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: UInt8, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: UInt16, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: UInt32, forKey key: Key) { set(.value(value), for: key) }
    func encode(_ value: UInt64, forKey key: Key) { set(.value(value), for: key) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try encoder.box(value, at: node.appending(key)), for: key)
    }

    /// A second nested container for the same key writes into the first one, as in `JSONEncoder`.
    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
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
    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
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

    func superEncoder() -> any Encoder {
        let key = dictionaryKey(AnyCodingKey.super)
        return encoder.superEncoder(for: key, in: box, at: node.appending(AnyCodingKey.super))
    }

    func superEncoder(forKey key: Key) -> any Encoder {
        encoder.superEncoder(for: dictionaryKey(key), in: box, at: node.appending(key))
    }
}

struct UserInfoUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: UserInfoEncoderImpl
    let box: EncodedArray
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }
    var count: Int { box.elements.count }

    private func append(_ value: Any) { box.elements.append(.value(value)) }

    func encodeNil() { append(NSNull()) }
    func encode(_ value: Bool) { append(value) }
    func encode(_ value: String) { append(value) }
    func encode(_ value: Double) { append(value) }
    func encode(_ value: Float) { append(value) }
    func encode(_ value: Int) { append(value) }
    func encode(_ value: Int8) { append(value) }
    func encode(_ value: Int16) { append(value) }
    func encode(_ value: Int32) { append(value) }
    func encode(_ value: Int64) { append(value) }
    func encode(_ value: UInt) { append(value) }
    func encode(_ value: UInt8) { append(value) }
    func encode(_ value: UInt16) { append(value) }
    func encode(_ value: UInt32) { append(value) }
    func encode(_ value: UInt64) { append(value) }

    func encode<T: Encodable>(_ value: T) throws {
        box.elements.append(try encoder.box(value, at: node.appending(index: box.elements.count)))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedDictionary()
        let index = box.elements.count
        box.elements.append(.dictionary(nested))
        return KeyedEncodingContainer(
            UserInfoKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, node: node.appending(index: index))
        )
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let index = box.elements.count
        box.elements.append(.array(nested))
        return UserInfoUnkeyedEncodingContainer(encoder: encoder, box: nested, node: node.appending(index: index))
    }

    func superEncoder() -> any Encoder {
        let childNode = node.appending(index: box.elements.count)
        guard let child = encoder.superFrame(at: childNode) else {
            return TooDeepEncoder(node: childNode, userInfo: encoder.userInfo)
        }
        box.elements.append(.deferred(child))
        return child
    }
}
