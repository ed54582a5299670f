import Foundation

// MARK: - Keyed

/// The state of one keyed container: the decoder, the dictionary, where it is and how its keys are mapped.
///
/// `KeyedDecodingContainer` keeps the container in a box and copies it out on every call, so the container holds
/// this one reference and a copy costs a single retain; and everything that does not depend on the `Key` type lives
/// here, compiled once rather than as unspecialized generic code.
final class KeyedFrame {
    let decoder: UserInfoDecoderImpl
    let storage: KeyedStorage
    let node: CodingPathNode
    /// Whether keys are mapped with `.affixed(prefix:suffix:)`: not under the other key strategies, nor for the keys
    /// of a `[String: V]` dictionary, which are data and read as they are.
    let isAffixed: Bool

    init(decoder: UserInfoDecoderImpl, storage: KeyedStorage, node: CodingPathNode, isAffixed: Bool) {
        self.decoder = decoder
        self.storage = storage
        self.node = node
        self.isAffixed = isAffixed
    }

    /// The `.affixed(prefix:suffix:)` mapping, or `nil` when keys are read as they are.
    var affixes: KeyAffixes? { isAffixed ? decoder.options.affixes : nil }

    /// The dictionary key that the Swift key `name` reads.
    @inline(__always)
    func dictionaryKey(for name: String) -> String {
        guard isAffixed else { return name }
        return decoder.affixedKey(for: name)
    }

    /// The value stored for the coding key with `stringValue` and `intValue`, or `nil` if the key is absent. A stored
    /// null is returned as it is.
    func lookup(_ stringValue: String, _ intValue: Int?) -> Any? {
        // Integer keys are never affixed, as in the encoder.
        if let intValue, stringValue == String(intValue) {
            return storage.value(forString: stringValue, int: intValue)
        }
        guard isAffixed else { return storage.value(forString: stringValue, int: intValue) }
        return storage.value(forString: decoder.affixedKey(for: stringValue), int: intValue)
    }

    /// The value stored for `key`; a missing key is `keyNotFound`, with a hint when another key strategy would find it.
    @inline(__always)
    func required(_ key: any CodingKey) throws -> Any {
        guard let value = lookup(key.stringValue, key.intValue) else { throw keyNotFound(key) }
        return value
    }

    @inline(never)
    private func keyNotFound(_ key: any CodingKey) -> DecodingError {
        DecodingError.keyNotFound(
            key,
            .init(
                codingPath: node.path,
                debugDescription: "No value for key \(describe(key)).\(hint(for: key) ?? nearMisses(for: key))")
        )
    }

    private func describe(_ key: any CodingKey) -> String {
        let name = dictionaryKey(for: key.stringValue)
        if let int = key.intValue { return "\(int) or \"\(name)\"" }
        return "\"\(name)\""
    }

    /// For a missing key, a sentence naming a key of the dictionary that another key strategy would read as it:
    /// `unit_price` for `unitPrice` (``UserInfoDecoder/KeyDecodingStrategy/convertFromSnakeCase``), or
    /// `UIKeyboardFrameEndUserInfoKey` for `frameEnd` (``UserInfoDecoder/KeyDecodingStrategy/affixed(prefix:suffix:)``).
    /// Only on the error path; the search for affixes looks at dictionaries of up to 256 keys.
    private func hint(for key: any CodingKey) -> String? {
        let name = key.stringValue
        guard key.intValue == nil, !name.isEmpty else { return nil }
        let readsSnakeCase: Bool
        if case .convertFromSnakeCase = decoder.options.keyStrategy {
            readsSnakeCase = true
        } else {
            readsSnakeCase = false
        }
        if !readsSnakeCase {
            let snake = SnakeCase.toSnakeCase(name)
            if snake != name, storage.value(forString: snake, int: nil) != nil {
                return " The dictionary has \"\(snake)\": set keyDecodingStrategy to .convertFromSnakeCase to read it"
                    + " as \(name)."
            }
        }
        if affixes != nil, storage.value(forString: name, int: nil) != nil {
            return " The dictionary has \"\(name)\", without the affixes of the key strategy."
        }
        guard affixes == nil, case .useDefaultKeys = decoder.options.keyStrategy else { return nil }
        let capitalized = name.prefix(1).uppercased() + name.dropFirst()
        let keys = storage.keys
        guard keys.count <= 256 else { return nil }
        // The shortest affixes win, then the first prefix in sorted order, so the hint is the same on every run.
        let affixed = keys.compactMap { found -> (length: Int, prefix: String, suffix: String)? in
            guard case .string(let string) = found, string != capitalized, let range = string.range(of: capitalized)
            else { return nil }
            let prefix = String(string[..<range.lowerBound])
            let suffix = String(string[range.upperBound...])
            return (prefix.count + suffix.count, prefix, suffix)
        }.min { $0 < $1 }
        guard let affixed else { return nil }
        return " The dictionary has \"\(affixed.prefix)\(capitalized)\(affixed.suffix)\": set keyDecodingStrategy to"
            + " .affixed(prefix: \"\(affixed.prefix)\", suffix: \"\(affixed.suffix)\") to read it as \(name)."
    }

    /// For a missing key, a sentence naming the keys of the dictionary that come close to the one looked up: the same
    /// but for case (`userID` for `userId`), or for `_` and `-`, or one or two letters apart (a key renamed by a typo).
    /// Only on the error path, and for dictionaries of up to 256 keys; at most three, in sorted order.
    private func nearMisses(for key: any CodingKey) -> String {
        guard key.intValue == nil else { return "" }
        let wanted = dictionaryKey(for: key.stringValue)
        guard !wanted.isEmpty, storage.keys.count <= 256 else { return "" }
        let folded = Self.folded(wanted)
        let close = storage.keys.compactMap { found -> String? in
            guard case .string(let string) = found, string != wanted else { return nil }
            let other = Self.folded(string)
            if other == folded { return string }
            guard wanted.count >= 4, abs(string.count - wanted.count) <= 2,
                Self.editDistance(Array(folded), Array(other), atMost: 2) <= 2
            else { return nil }
            return string
        }.sorted()
        guard !close.isEmpty else { return "" }
        let names = close.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")
        return " The dictionary has \(names), close to \"\(wanted)\": is the key spelled differently?"
    }

    /// `key` lowercased, without `_` and `-`.
    private static func folded(_ key: String) -> String {
        String(key.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
    }

    /// The Levenshtein distance between `a` and `b`, or `limit + 1` once it is known to exceed `limit`.
    private static func editDistance(_ a: [Character], _ b: [Character], atMost limit: Int) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return limit + 1 }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// Reads the value for `key` directly as `T`.
    @inline(__always)
    func read<T: UserInfoDecodable>(_ type: T.Type, _ key: any CodingKey) throws -> T {
        try T.unbox(try required(key), decoder: decoder, parent: node, component: .key(key))
    }

    /// Decodes the value for `key` as any `Decodable` type.
    func decode<T: Decodable>(_ type: T.Type, _ key: any CodingKey) throws -> T {
        try decoder.unbox(try required(key), as: type, parent: node, component: .key(key))
    }

    /// The same, or `nil` for a missing key or a null.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, _ key: any CodingKey) throws -> T? {
        guard let value = lookup(key.stringValue, key.intValue), !ValueKind.isNull(value) else { return nil }
        return try decoder.unbox(value, as: type, parent: node, component: .key(key))
    }

    /// The same, or `nil` for a missing key or a null.
    @inline(__always)
    func readIfPresent<T: UserInfoDecodable>(_ type: T.Type, _ key: any CodingKey) throws -> T? {
        guard let value = lookup(key.stringValue, key.intValue), !ValueKind.isNull(value) else { return nil }
        return try T.unbox(value, decoder: decoder, parent: node, component: .key(key))
    }
}

/// Reads a dictionary. Keys are looked up once per read, and `decodeIfPresent` does not look a key up twice.
struct UserInfoKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let frame: KeyedFrame

    init(frame: KeyedFrame) {
        self.frame = frame
    }

    private var decoder: UserInfoDecoderImpl { frame.decoder }
    private var storage: KeyedStorage { frame.storage }
    private var node: CodingPathNode { frame.node }
    private var affixes: KeyAffixes? { frame.affixes }

    var codingPath: [any CodingKey] { node.path }

    /// Each coding key once. An integer key and its decimal string, or two dictionary keys that differ only in the
    /// case of the letter after an `.affixed(prefix:suffix:)` prefix, name one coding key; the key strategies that
    /// rename what is in the dictionary have already kept one value per key (see `KeyedStorage.rekeyed(_:)`).
    var allKeys: [Key] {
        let found = storage.keys
        var integers: [Key] = []
        var strings: [Key] = []
        strings.reserveCapacity(found.count)
        for key in found {
            switch key {
            case .int(let int):
                if let key = Key(intValue: int) ?? Key(stringValue: String(int)) { integers.append(key) }
            case .string(let string):
                // An integer key written as its decimal string (as the encoder writes `[Int: V]`) carries no affixes.
                if let affixes, Int(string).map(String.init) != string {
                    if let key = affixes.swiftKey(for: string).flatMap({ Key(stringValue: $0) }) { strings.append(key) }
                } else if let key = Key(stringValue: string) {
                    strings.append(key)
                }
            }
        }
        guard !integers.isEmpty || affixes != nil else { return strings }
        // Integer keys first, so that a key found both as an integer and as its decimal string is listed as the
        // integer, which `lookup` reads first.
        var seen = Set<String>()
        return (integers + strings).filter { seen.insert($0.stringValue).inserted }
    }

    /// The value stored for `key`, or `nil` if the key is absent. A stored null is returned as it is.
    @inline(__always)
    private func lookup(_ key: Key) -> Any? {
        frame.lookup(key.stringValue, key.intValue)
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { ValueKind.isNull(try required(key)) }

    @inline(__always)
    private func read<T: UserInfoDecodable>(_ type: T.Type, _ key: Key) throws -> T { try frame.read(type, key) }

    @inline(__always)
    private func readIfPresent<T: UserInfoDecodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try frame.readIfPresent(type, key)
    }

    @inline(__always)
    private func required(_ key: Key) throws -> Any { try frame.required(key) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try frame.decode(type, key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try readIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try readIfPresent(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try frame.decodeIfPresent(type, key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let value = try required(key)
        return try decoder.positioned(at: value, node.appending(key)) { try $0.container(keyedBy: NestedKey.self) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try required(key)
        return try decoder.positioned(at: value, node.appending(key)) { try $0.unkeyedContainer() }
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(key: AnyCodingKey.super, value: lookup(forSuper: AnyCodingKey.super.stringValue))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(key: key, value: lookup(key))
    }

    private func lookup(forSuper name: String) -> Any? {
        storage.value(forString: frame.dictionaryKey(for: name), int: nil)
    }

    /// A separate decoder, because the caller may keep it beyond the current read. A missing key reads as null,
    /// as in `JSONDecoder`.
    private func superDecoder(key: any CodingKey, value: Any?) throws -> any Decoder {
        try decoder.superDecoder(value: value ?? NSNull(), at: node.appending(key))
    }
}

// MARK: - Unkeyed

/// Reads an array. The index moves forward only when a read succeeds, as in `JSONDecoder`.
struct UserInfoUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: UserInfoDecoderImpl
    let storage: UnkeyedStorage
    let node: CodingPathNode
    private(set) var currentIndex = 0

    init(decoder: UserInfoDecoderImpl, storage: UnkeyedStorage, node: CodingPathNode) {
        self.decoder = decoder
        self.storage = storage
        self.node = node
    }

    var codingPath: [any CodingKey] { node.path }
    var count: Int? { storage.count }
    var isAtEnd: Bool { currentIndex >= storage.count }

    private func next(_ type: Any.Type) throws -> Any {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: node.path(withIndex: currentIndex),
                    debugDescription: "Unkeyed container is at end: it holds \(storage.count) elements."
                )
            )
        }
        return storage[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard ValueKind.isNull(try next(Any?.self)) else { return false }
        currentIndex += 1
        return true
    }

    private mutating func read<T: UserInfoDecodable>(_ type: T.Type) throws -> T {
        let result = try T.unbox(try next(T.self), decoder: decoder, parent: node, component: .index(currentIndex))
        currentIndex += 1
        return result
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(type) }
    mutating func decode(_ type: String.Type) throws -> String { try read(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let result = try decoder.unbox(try next(T.self), as: type, parent: node, component: .index(currentIndex))
        currentIndex += 1
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let value = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try decoder.positioned(at: value, node.appending(index: currentIndex)) {
            try $0.container(keyedBy: NestedKey.self)
        }
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let value = try next((any UnkeyedDecodingContainer).self)
        let container = try decoder.positioned(at: value, node.appending(index: currentIndex)) {
            try $0.unkeyedContainer()
        }
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let value = try next((any Decoder).self)
        let child = try decoder.superDecoder(value: value, at: node.appending(index: currentIndex))
        currentIndex += 1
        return child
    }
}
