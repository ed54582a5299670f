import Foundation

/// One step of a coding path, kept apart from its parent node so that a primitive read allocates nothing.
enum PathComponent {
    case key(any CodingKey)
    case index(Int)
}

/// A type the decoder reads directly from a value, without asking it to decode itself through containers.
///
/// Numbers, booleans and strings conform, and so do the system values (`Date`, `Data`, `URL`, `UUID`, `Decimal`,
/// geometry) that the dictionary holds natively, and ``UserInfoPassthrough``.
protocol UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Self
}

extension UserInfoDecodable {
    /// Reads `value` as `T`, which the caller found to be `Self`. Returning `T` directly, rather than an
    /// `Optional<T>` or an existential, spares unspecialized generic code a runtime metadata lookup and a cast.
    static func unbox<T>(
        _ value: Any, as type: T.Type, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        guard T.self == Self.self else {
            throw DecodingError.typeMismatch(
                T.self,
                .init(
                    codingPath: decoder.path(parent, component),
                    debugDescription: "Internal type mismatch for \(T.self).")
            )
        }
        return unsafeBitCast(try unbox(value, decoder: decoder, parent: parent, component: component), to: T.self)
    }
}

/// Finds the direct reader of a type: a table lookup for the types the decoder knows, and a conformance check only
/// for the rest (``UserInfoPassthrough`` is generic, so it cannot be in the table).
enum UserInfoDecodableTypes {
    /// Immutable after initialization; metatypes are safe to share.
    nonisolated(unsafe) static let known: [ObjectIdentifier: any UserInfoDecodable.Type] = {
        let types: [any UserInfoDecodable.Type] = [
            Int.self, Int8.self, Int16.self, Int32.self, Int64.self,
            UInt.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self,
            Double.self, Float.self, CGFloat.self, Bool.self, String.self,
            Date.self, Data.self, URL.self, UUID.self, Decimal.self,
            CGRect.self, CGPoint.self, CGSize.self, NSRange.self,
        ]
        return Dictionary(uniqueKeysWithValues: types.map { (ObjectIdentifier($0), $0) })
    }()

    /// How each type outside `known` is read, so that the conformance checks, which cost about as much as the rest
    /// of a small decode, run once per type and not on every decode of a struct. It holds at most the program's types.
    nonisolated(unsafe) private static var readers: [ObjectIdentifier: Reader] = [:]
    private static let lock = NSLock()

    /// How a type is read: directly, or through its own `init(from:)`. `@unchecked Sendable`: it holds a metatype.
    enum Reader: @unchecked Sendable {
        case direct(any UserInfoDecodable.Type)
        case decodable
        /// A `[String: V]`, whose keys some strategies leave as they are: read as ``UserInfoDecoderImpl`` reads any
        /// value.
        case general
    }

    static func reader(for type: Any.Type) -> Reader {
        let id = ObjectIdentifier(type)
        if let direct = known[id] { return .direct(direct) }
        lock.lock()
        let cached = readers[id]
        lock.unlock()
        if let cached { return cached }
        let reader: Reader
        if let direct = type as? any UserInfoDecodable.Type {
            reader = .direct(direct)
        } else if type is any StringKeyedDictionary.Type {
            reader = .general
        } else {
            reader = .decodable
        }
        lock.withLock { readers[id] = reader }
        return reader
    }

    static func lookup(_ type: Any.Type) -> (any UserInfoDecodable.Type)? {
        if case .direct(let direct) = reader(for: type) { return direct }
        return nil
    }
}

/// The decoder that does the work. Like `JSONDecoder`'s implementation, it is also the single-value container, and
/// it is re-used for nested values: it swaps its value and path in and out instead of allocating a decoder per level.
final class UserInfoDecoderImpl: Decoder, SingleValueDecodingContainer {
    let options: UserInfoDecoder.Options
    /// What earlier decodes learned about the top-level type; what this decode learns beyond it is in `overlay`.
    let plan: DecodingPlan
    private var overlay: PlanOverlay?
    private(set) var value: Any
    private(set) var node: CodingPathNode
    private var depth: Int
    /// The depth of the frame that decodes a `[String: V]` under a key strategy: its keyed container reads the
    /// dictionary's keys as they are, as `JSONDecoder` does, because they are data, not property names.
    private var verbatimKeysDepth = -1

    /// A decoder positioned at `value`, at `depth` levels of nesting.
    init(
        options: UserInfoDecoder.Options, plan: DecodingPlan, value: Any, node: CodingPathNode = .root, depth: Int = 0
    ) {
        self.options = options
        self.plan = plan
        self.value = value
        self.node = node
        self.depth = depth
    }

    var codingPath: [any CodingKey] { node.path }

    lazy var userInfo: [CodingUserInfoKey: Any] = options.userInfo.mapValues { $0 as Any }

    // MARK: - Paths and errors

    func path(_ parent: CodingPathNode, _ component: PathComponent?) -> [any CodingKey] {
        switch component {
        case .none: parent.path
        case .key(let key): parent.path(with: key)
        case .index(let index): parent.path(withIndex: index)
        }
    }

    func node(_ parent: CodingPathNode, _ component: PathComponent?) -> CodingPathNode {
        switch component {
        case .none: parent
        case .key(let key): parent.appending(key)
        case .index(let index): parent.appending(index: index)
        }
    }

    /// The slow path of every primitive read: unwraps an `Optional` stored in `Any` and tries again, or reports
    /// `valueNotFound` for a null, or `typeMismatch` naming what was expected and what was found.
    func retryOrMismatch<T: UserInfoDecodable>(
        _ value: Any, as type: T.Type, expected: String, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        if let flattened = ValueKind.flattenOptional(value), Swift.type(of: flattened) != NSNull.self {
            return try T.unbox(flattened, decoder: self, parent: parent, component: component)
        }
        throw mismatch(value, as: T.self, expected: expected, parent: parent, component: component)
    }

    func mismatch(
        _ value: Any, as type: Any.Type, expected: String, parent: CodingPathNode, component: PathComponent?
    ) -> DecodingError {
        if ValueKind.isNull(value) {
            return DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: path(parent, component),
                    debugDescription: "Expected \(expected) (\(type)) but found null."
                )
            )
        }
        return DecodingError.typeMismatch(
            type,
            .init(
                codingPath: path(parent, component),
                debugDescription: "Expected \(expected) (\(type)) but found \(ValueKind.describe(value))."
            )
        )
    }

    // MARK: - Decoding a value

    /// Decodes `value` as `T`. Primitives and system values are read directly; everything else decodes itself
    /// through this decoder, positioned at `value` for the duration of the call.
    func unbox<T: Decodable>(
        _ value: Any, as type: T.Type, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        let found = reader(for: T.self)
        if case .direct(let direct) = found {
            return try direct.unbox(value, as: T.self, decoder: self, parent: parent, component: component)
        }
        if options.keyStrategyRenamesKeys, case .general = found {
            let saved = verbatimKeysDepth
            verbatimKeysDepth = depth + 1
            defer { verbatimKeysDepth = saved }
            return try decodeNested(value, as: T.self, at: node(parent, component)) { try type.init(from: $0) }
        }
        // `type` may be a subclass of `T` (`decode(Employee.self as Person.Type, …)`): decode the type passed in.
        return try decodeNested(value, as: T.self, at: node(parent, component)) { try type.init(from: $0) }
    }

    /// Decodes the top-level `value` as `type`, read as `reader` says. The decoder is already positioned at `value`.
    func unbox<T: Decodable>(_ value: Any, as type: T.Type, reader: UserInfoDecodableTypes.Reader) throws -> T {
        switch reader {
        case .direct(let direct):
            return try direct.unbox(value, as: T.self, decoder: self, parent: .root, component: nil)
        case .general:
            return try unbox(value, as: type, parent: .root, component: nil)
        case .decodable:
            // As `decodeNested` does, on a fresh decoder whose value is already `value`: one level deeper.
            depth = 1
            return try type.init(from: self)
        }
    }

    // MARK: - The plan

    /// How `type`, met inside the top-level value, is read: from the plan, or found once per decode.
    @inline(__always)
    func reader(for type: Any.Type) -> UserInfoDecodableTypes.Reader {
        if let reader = plan.nestedReader(for: ObjectIdentifier(type)) { return reader }
        return learnReader(for: type)
    }

    @inline(never)
    private func learnReader(for type: Any.Type) -> UserInfoDecodableTypes.Reader {
        let id = ObjectIdentifier(type)
        if let reader = overlay?.reader(for: id) { return reader }
        let reader = UserInfoDecodableTypes.reader(for: type)
        let overlay = self.overlay ?? PlanOverlay()
        self.overlay = overlay
        overlay.types.append(id)
        overlay.readers.append(reader)
        options.plans.replacing(plan.type) { $0?.adding(type: id, reader: reader) }
        return reader
    }

    /// The dictionary key that `.affixed(prefix:suffix:)` maps the Swift key `key` to, from the plan, or made once
    /// per decode.
    @inline(__always)
    func affixedKey(for key: String) -> String {
        if let index = plan.keyIndex(of: key) { return plan.dictionaryKeys[index] }
        return learnAffixedKey(for: key)
    }

    @inline(never)
    private func learnAffixedKey(for key: String) -> String {
        if let known = overlay?.dictionaryKey(for: key) { return known }
        guard let affixes = options.affixes else { return key }
        let mapped = KeyAffixes.map(key, with: affixes.mapping)
        let overlay = self.overlay ?? PlanOverlay()
        self.overlay = overlay
        if overlay.swiftKeys.count < DecodingPlan.maximumKeys {
            overlay.swiftKeys.append(key)
            overlay.dictionaryKeys.append(mapped)
        }
        options.plans.replacing(plan.type) { $0?.adding(swiftKey: key, dictionaryKey: mapped) }
        return mapped
    }

    /// Runs `body` with the decoder positioned at `value` and `node`, then restores the previous position.
    func decodeNested<T>(
        _ value: Any, as type: T.Type, at node: CodingPathNode, _ body: (UserInfoDecoderImpl) throws -> T
    )
        throws -> T
    {
        guard depth < UserInfoDecoder.Options.maximumDepth else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: node.path,
                    debugDescription:
                        "The value is nested more than \(UserInfoDecoder.Options.maximumDepth) levels deep."
                )
            )
        }
        let savedValue = self.value
        let savedNode = self.node
        self.value = value
        self.node = node
        depth += 1
        defer {
            self.value = savedValue
            self.node = savedNode
            depth -= 1
        }
        return try body(self)
    }

    /// Runs `body` with the decoder positioned at `value` and `node`, without counting a level: making a container
    /// recurses into nothing (the encoder does not count it either), and an `Optional` is flattened in one step.
    func positioned<T>(at value: Any, _ node: CodingPathNode, _ body: (UserInfoDecoderImpl) throws -> T) throws -> T {
        let savedValue = self.value
        let savedNode = self.node
        self.value = value
        self.node = node
        defer {
            self.value = savedValue
            self.node = savedNode
        }
        return try body(self)
    }

    /// The separate decoder that `superDecoder()` returns. It starts one level deeper than this one, so that
    /// recursion through super decoders counts towards the depth cap like any other nesting.
    func superDecoder(value: Any, at node: CodingPathNode) throws -> UserInfoDecoderImpl {
        guard depth < UserInfoDecoder.Options.maximumDepth else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: node.path,
                    debugDescription:
                        "The value is nested more than \(UserInfoDecoder.Options.maximumDepth) levels deep."
                )
            )
        }
        return UserInfoDecoderImpl(options: options, plan: plan, value: value, node: node, depth: depth + 1)
    }

    // MARK: - Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(UserInfoKeyedDecodingContainer<Key>(frame: try keyedFrame()))
    }

    /// The state of a keyed container at the current position: everything but the `Key` type, so that this work is
    /// compiled once, not as unspecialized generic code.
    private func keyedFrame() throws -> KeyedFrame {
        let value = self.value
        let node = self.node
        guard let storage = KeyedStorage(value) else {
            if let flattened = ValueKind.flattenOptional(value), Swift.type(of: flattened) != NSNull.self {
                return try positioned(at: flattened, node) { try $0.keyedFrame() }
            }
            throw mismatch(value, as: [String: Any].self, expected: "a dictionary", parent: node, component: nil)
        }
        if depth == verbatimKeysDepth {
            return KeyedFrame(decoder: self, storage: storage, node: node, isAffixed: false)
        }
        return KeyedFrame(
            decoder: self, storage: rekeyed(storage, at: node), node: node, isAffixed: options.affixes != nil)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let storage = UnkeyedStorage(value) else {
            if let flattened = ValueKind.flattenOptional(value), Swift.type(of: flattened) != NSNull.self {
                return try positioned(at: flattened, node) { try $0.unkeyedContainer() }
            }
            throw mismatch(value, as: [Any].self, expected: "an array", parent: node, component: nil)
        }
        return UserInfoUnkeyedDecodingContainer(decoder: self, storage: storage, node: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Applies the key strategies that rename what is in the dictionary.
    private func rekeyed(_ storage: KeyedStorage, at node: CodingPathNode) -> KeyedStorage {
        switch options.keyStrategy {
        case .useDefaultKeys, .affixed:
            return storage
        case .convertFromSnakeCase:
            return storage.rekeyed { key in
                if case .string(let string) = key { return .string(SnakeCase.toCamelCase(string)) }
                return key
            }
        case .custom(let convert):
            let base = node.path
            return storage.rekeyed { key in
                let found: AnyCodingKey
                switch key {
                case .string(let string): found = AnyCodingKey(stringValue: string)
                case .int(let int): found = AnyCodingKey(intValue: int)
                }
                let converted = convert(base + [found])
                if let int = converted.intValue, case .int = key { return .int(int) }
                return .string(converted.stringValue)
            }
        }
    }

    // MARK: - SingleValueDecodingContainer

    func decodeNil() -> Bool { ValueKind.isNull(value) }

    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, parent: node, component: nil) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, parent: node, component: nil) }
    func decode(_ type: Double.Type) throws -> Double {
        try unboxFloatingPoint(value, as: type, parent: node, component: nil)
    }
    func decode(_ type: Float.Type) throws -> Float {
        try unboxFloatingPoint(value, as: type, parent: node, component: nil)
    }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, as: type, parent: node, component: nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 {
        try unboxInteger(value, as: type, parent: node, component: nil)
    }
    func decode(_ type: UInt32.Type) throws -> UInt32 {
        try unboxInteger(value, as: type, parent: node, component: nil)
    }
    func decode(_ type: UInt64.Type) throws -> UInt64 {
        try unboxInteger(value, as: type, parent: node, component: nil)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Direct types are read directly; a type that decodes itself from a single-value container gets this decoder again, at the same place and
        // one level deeper, as the encoder counts it.
        return try unbox(value, as: type, parent: node, component: nil)
    }
}

/// `[String: V]`, whose keys the key strategies leave as they are, in both coders, as `JSONDecoder` and
/// `JSONEncoder` do: they are data, not property names.
protocol StringKeyedDictionary {}
extension Dictionary: StringKeyedDictionary where Key == String {}
