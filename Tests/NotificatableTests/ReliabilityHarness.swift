import Foundation

// The shared core of the property-based test (`ReliabilityPropertyTests.swift`) and the libFuzzer target
// (`Fuzz/UserInfoFuzzer.swift`, built by `scripts/fuzz.sh`): random userInfo trees, the target types they are decoded
// into, and the check that a `DecodingError`'s coding path really leads to the offending value.
//
// `scripts/fuzz.sh` compiles this file into one module together with the library's sources and defines
// `NOTIFICATABLE_FUZZ`, so it must not depend on Swift Testing.
#if !NOTIFICATABLE_FUZZ
@testable import Notificatable
#endif

// MARK: - Entropy

/// Where the random choices come from: a seeded PRNG in the property test, the fuzzer's bytes in the fuzz target.
protocol ReliabilityEntropy {
    /// A number in `0..<bound` (0 when `bound` is 0 or 1).
    mutating func below(_ bound: Int) -> Int
    /// 64 random bits.
    mutating func bits() -> UInt64
}

extension ReliabilityEntropy {
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
}

/// SplitMix64: tiny, fast, and good enough to drive a generator from one 64-bit seed.
struct ReliabilitySplitMix64: ReliabilityEntropy {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func bits() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(bits() % UInt64(bound)) }
}

/// Reads choices from fuzz input: one byte for a small choice, eight for a full number, zeros once exhausted, so
/// every input, however short, is a valid tree.
struct ReliabilityFuzzBytes: ReliabilityEntropy {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bits() -> UInt64 {
        var result: UInt64 = 0
        for _ in 0..<8 { result = result << 8 | UInt64(byte()) }
        return result
    }

    mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        if bound <= 256 { return Int(byte()) % bound }
        return Int(bits() % UInt64(bound))
    }
}

// MARK: - Random userInfo trees

/// Builds random userInfo trees from every kind of value that notifications carry.
struct ReliabilityTreeGenerator<Entropy: ReliabilityEntropy> {
    var entropy: Entropy
    /// The `.affixed` key strategy in use, if any: keys are then often written in their affixed form.
    let affixes: (prefix: String, suffix: String)?
    /// Collections that contain themselves; ``breakCycles()`` empties them so that they can be freed.
    private(set) var cycles: [AnyObject] = []
    /// How many more values may be made, so that a case stays small.
    private var budget = 48

    init(entropy: Entropy, affixes: (prefix: String, suffix: String)? = nil) {
        self.entropy = entropy
        self.affixes = affixes
    }

    static var keyWords: [String] {
        [
            "a", "b", "name", "int", "string", "double", "float", "bool", "date", "data", "url", "rect", "point",
            "size", "range", "value", "children", "next", "items", "kind", "i8", "i16", "i32", "i64", "u8", "u16",
            "u32", "u64", "uint", "leaf", "node", "_0", "first", "second", "x", "y", "width", "height", "byID", "list",
            "optional", "super", "choice", "nested",
        ]
    }

    mutating func breakCycles() {
        for cycle in cycles {
            (cycle as? NSMutableDictionary)?.removeAllObjects()
            (cycle as? NSMutableArray)?.removeAllObjects()
        }
        cycles = []
    }

    mutating func stringKey() -> String {
        let word = entropy.pick(Self.keyWords)
        guard let affixes, entropy.chance(70), let first = word.first else { return word }
        return affixes.prefix + first.uppercased() + word.dropFirst() + affixes.suffix
    }

    /// A key: mostly a known word, sometimes an integer key, sometimes a key of another type.
    ///
    /// `NSNumber` keys go only into Foundation dictionaries: in a Swift dictionary, `NSNumber(1)` next to the `Int` 1
    /// breaks `Hashable`'s rules on Linux (they are equal but hash differently), and the standard library traps.
    mutating func key(foundation: Bool = false) -> AnyHashable {
        switch entropy.below(20) {
        case 0, 1: return foundation ? AnyHashable(NSNumber(value: entropy.below(4))) : AnyHashable(entropy.below(4))
        case 2:
            return AnyHashable(entropy.pick([Date(timeIntervalSinceReferenceDate: 0) as AnyHashable, UUID(), "", "🙂"]))
        default: return AnyHashable(stringKey())
        }
    }

    mutating func userInfo() -> [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for _ in 0..<entropy.below(7) { result[key()] = value(depth: 1) }
        return result
    }

    // swiftlint:disable:next cyclomatic_complexity
    mutating func value(depth: Int) -> Any {
        budget -= 1
        let scalarsOnly = depth > 5 || budget <= 0
        let kind = entropy.below(scalarsOnly ? 19 : 30)
        switch kind {
        case 0: return NSNumber(value: integer())
        case 1: return NSNumber(value: UInt64(bitPattern: integer()))
        case 2: return NSNumber(value: floating())
        case 3: return NSNumber(value: entropy.chance(50))
        case 4: return Int(truncatingIfNeeded: integer())
        case 5:
            let bits = integer()
            switch entropy.below(9) {
            case 0: return Int8(truncatingIfNeeded: bits)
            case 1: return Int16(truncatingIfNeeded: bits)
            case 2: return Int32(truncatingIfNeeded: bits)
            case 3: return bits
            case 4: return UInt8(truncatingIfNeeded: bits)
            case 5: return UInt16(truncatingIfNeeded: bits)
            case 6: return UInt32(truncatingIfNeeded: bits)
            case 7: return UInt64(bitPattern: bits)
            default: return UInt(bitPattern: Int(truncatingIfNeeded: bits))
            }
        case 6:
            let double = floating()
            switch entropy.below(3) {
            case 0: return double
            case 1: return Float(double)
            default: return CGFloat(double)
            }
        case 7: return entropy.chance(50)
        case 8: return string()
        case 9: return NSString(string: string())
        case 10: return Date(timeIntervalSinceReferenceDate: floating())
        case 11: return Data((0..<entropy.below(6)).map { _ in UInt8(truncatingIfNeeded: entropy.bits()) })
        case 12:
            return entropy.pick([
                URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/"), URL(fileURLWithPath: "/tmp/x y"),
            ])
        case 13: return NSNull()
        case 14:
            let a = CGFloat(floating())
            let b = CGFloat(floating())
            switch entropy.below(6) {
            case 0: return NSValue(rect: CGRect(x: a, y: b, width: b, height: a))
            case 1: return NSValue(point: CGPoint(x: a, y: b))
            case 2: return NSValue(size: CGSize(width: a, height: b))
            // The abstract class itself, which traps when asked for `objCType` or its bytes.
            case 3: return NSValue()
            case 4:
                var bytes = Int32(truncatingIfNeeded: integer())
                return NSValue(bytes: &bytes, objCType: "i")
            default: return NSValue(range: NSRange(location: entropy.below(1000), length: entropy.below(1000)))
            }
        case 15:
            return entropy.pick([
                Decimal(15) / 10, Decimal(7), Decimal.nan, Decimal(sign: .plus, exponent: 40, significand: 1),
            ])
        case 16: return entropy.chance(50) ? Optional<Any>.none as Any : Optional<Any>.some(value(depth: depth)) as Any
        case 17: return NSDecimalNumber(string: entropy.pick(["2", "2.5", "-1", "1e30"]))
        case 18: return [NSNumber(value: floating()), NSNumber(value: floating())] as [Any]
        case 19, 20:
            var result: [String: Any] = [:]
            for _ in 0..<entropy.below(5) { result[stringKey()] = value(depth: depth + 1) }
            return result
        case 21:
            var result: [AnyHashable: Any] = [:]
            for _ in 0..<entropy.below(5) { result[key()] = value(depth: depth + 1) }
            return result
        case 22:
            let result = NSMutableDictionary()
            for _ in 0..<entropy.below(5) { result[key(foundation: true)] = value(depth: depth + 1) }
            return result
        case 23, 24: return (0..<entropy.below(5)).map { _ in value(depth: depth + 1) } as [Any]
        case 25:
            let result = NSMutableArray()
            for _ in 0..<entropy.below(5) { result.add(value(depth: depth + 1)) }
            return result
        case 26:
            switch entropy.below(4) {
            case 0: return (0..<entropy.below(5)).map { _ in Int(truncatingIfNeeded: integer()) }
            case 1: return (0..<entropy.below(5)).map { _ in string() }
            case 2: return [stringKey(): Int(truncatingIfNeeded: integer())]
            default: return [[floating(), floating()], [floating(), floating()]]
            }
        case 27:
            // Deep chains are costly to build, so most draws of this kind make a small dictionary instead.
            if entropy.chance(25) { return deepChain() }
            return [stringKey(): value(depth: depth + 1)] as [String: Any]
        case 28: return cycle()
        default:
            // Geometry in the array form, with a number sometimes out of place.
            return [[integerOrFloat(), integerOrFloat()] as [Any], [integerOrFloat(), integerOrFloat()] as [Any]]
                as [Any]
        }
    }

    mutating func integer() -> Int64 {
        let interesting: [Int64] = [
            0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536, 2_147_483_647,
            2_147_483_648,
            -2_147_483_649, 4_294_967_295, 4_294_967_296, .max, .min,
        ]
        return entropy.chance(70) ? entropy.pick(interesting) : Int64(bitPattern: entropy.bits())
    }

    mutating func floating() -> Double {
        let interesting: [Double] = [
            0, -0.0, 0.5, 1, 2, -1, 1.5, .nan, .infinity, -.infinity, 1e300, -1e300, 3.5e38, 9.3e18, -9.3e18, 1.8e19,
            .leastNonzeroMagnitude, .greatestFiniteMagnitude, 255, 65535, 4_294_967_295,
        ]
        return entropy.chance(75) ? entropy.pick(interesting) : Double(bitPattern: entropy.bits())
    }

    mutating func integerOrFloat() -> Any {
        entropy.chance(80) ? NSNumber(value: floating()) : entropy.pick(["1" as Any, NSNull(), true])
    }

    mutating func string() -> String {
        entropy.pick([
            "", "x", "42", "-1", "1.5", "true", "NaN", "2026-11-21T09:30:00Z", "2026-11-21T09:30:00.123Z", "aGVsbG8=",
            "!!",
            "https://example.com", "{{1, 2}, {3, 4}}", "{1, 2}", "snake_case_key", "🙂", "a\u{0}b",
        ])
    }

    /// A chain of dictionaries, deeper than the decoder's depth cap, of Swift or Foundation dictionaries.
    mutating func deepChain() -> Any {
        let depth = entropy.pick([10, 300, 511, 512, 513, 600, 2000])
        let key = stringKey()
        let foundation = entropy.chance(50)
        var value: Any = value(depth: 9)
        for _ in 0..<depth {
            if foundation {
                let next = NSMutableDictionary()
                next[key] = value
                value = next
            } else {
                value = [key: value] as [String: Any]
            }
        }
        return value
    }

    /// A Foundation collection that contains itself.
    mutating func cycle() -> Any {
        if entropy.chance(50) {
            let dictionary = NSMutableDictionary()
            for _ in 0..<entropy.below(3) { dictionary[key(foundation: true)] = value(depth: 9) }
            dictionary[stringKey()] = dictionary
            cycles.append(dictionary)
            return dictionary
        }
        let array = NSMutableArray()
        array.add(array)
        for _ in 0..<entropy.below(3) { array.add(value(depth: 9)) }
        cycles.append(array)
        return array
    }
}

// MARK: - Target types

/// The types a random tree is decoded into: flat and nested structs, every number width, system values,
/// dictionaries with string and integer keys, arrays of arrays, recursive types, enums and single values.
enum ReliabilityTargets {
    struct Flat: Codable {
        var name: String
        var int: Int
        var double: Double
        var bool: Bool
    }

    struct Widths: Codable {
        var i8: Int8?
        var i16: Int16?
        var i32: Int32?
        var i64: Int64?
        var u8: UInt8?
        var u16: UInt16?
        var u32: UInt32?
        var u64: UInt64?
        var uint: UInt?
        var float: Float?
        var int: Int
    }

    struct System: Codable {
        var date: Date?
        var data: Data?
        var url: URL?
        var rect: CGRect?
        var point: CGPoint?
        var size: CGSize?
        var range: NSRange?
        var value: Decimal?
    }

    final class Node: Codable {
        var value: Int?
        var children: [Node]?
    }

    indirect enum Tree: Codable {
        case leaf(Int)
        case node(Tree)
    }

    enum Kind: String, Codable {
        case a, b, x
    }

    enum Choice: Codable {
        case first(Int)
        case second(name: String, value: Double?)
        case x
    }

    struct Wrapped: Codable {
        var value: UInt16
        init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(UInt16.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    struct Everything: Codable {
        var items: [Flat]?
        var byID: [Int: String]?
        var nested: [String: Widths]?
        var list: [[Double]]?
        var kind: Kind?
        var choice: Choice?
        var next: Node?
        var optional: Wrapped?
    }

    struct Passthrough: Decodable {
        @UserInfoPassthrough var value: NSNumber
    }

    /// The names of the targets, for messages.
    static let names = [
        "Flat", "Widths", "System", "[String: Int]", "[Int: String]", "[[Double]]", "Node", "Tree", "[String: Flat]",
        "Everything", "[Kind]", "Choice", "Wrapped", "[Bool]", "Passthrough", "[String: [Date?]]", "Data",
    ]

    static var count: Int { names.count }

    /// Decodes `value` into target number `index`.
    static func decode(_ index: Int, _ value: Any, with decoder: UserInfoDecoder) throws {
        switch index {
        case 0: _ = try decoder.decode(Flat.self, fromValue: value)
        case 1: _ = try decoder.decode(Widths.self, fromValue: value)
        case 2: _ = try decoder.decode(System.self, fromValue: value)
        case 3: _ = try decoder.decode([String: Int].self, fromValue: value)
        case 4: _ = try decoder.decode([Int: String].self, fromValue: value)
        case 5: _ = try decoder.decode([[Double]].self, fromValue: value)
        case 6: _ = try decoder.decode(Node.self, fromValue: value)
        case 7: _ = try decoder.decode(Tree.self, fromValue: value)
        case 8: _ = try decoder.decode([String: Flat].self, fromValue: value)
        case 9: _ = try decoder.decode(Everything.self, fromValue: value)
        case 10: _ = try decoder.decode([Kind].self, fromValue: value)
        case 11: _ = try decoder.decode(Choice.self, fromValue: value)
        case 12: _ = try decoder.decode(Wrapped.self, fromValue: value)
        case 13: _ = try decoder.decode([Bool].self, fromValue: value)
        case 14: _ = try decoder.decode(Passthrough.self, fromValue: value)
        case 15: _ = try decoder.decode([String: [Date?]].self, fromValue: value)
        default:
            // Only a real Swift dictionary: `as?` would bridge a Foundation one, recursively (and forever for a cycle).
            if type(of: value) == [AnyHashable: Any].self, let userInfo = value as? [AnyHashable: Any] {
                _ = try decoder.decode(Everything.self, from: userInfo)
            } else {
                _ = try decoder.decode(Data.self, fromValue: value)
            }
        }
    }
}

// MARK: - Decoder configurations

/// A decoder with random strategies, and how its keys appear in a tree.
struct ReliabilityDecoderSetup {
    let decoder: UserInfoDecoder
    let affixes: (prefix: String, suffix: String)?

    init(choice: Int) {
        decoder = UserInfoDecoder()
        switch choice % 5 {
        case 1:
            decoder.keyDecodingStrategy = .affixed(prefix: "NS", suffix: "Key")
            affixes = (prefix: "NS", suffix: "Key")
        case 2:
            decoder.dateDecodingStrategy = .iso8601
            decoder.dataDecodingStrategy = .base64
            affixes = nil
        case 3:
            decoder.dateDecodingStrategy = .secondsSince1970
            affixes = nil
        case 4:
            decoder.dateDecodingStrategy = .millisecondsSince1970
            affixes = nil
        default:
            affixes = nil
        }
    }

    /// The dictionary key that the decoder looks up for a Swift key.
    func dictionaryKey(for key: String) -> String {
        guard let affixes, let first = key.first else { return key }
        return affixes.prefix + first.uppercased() + key.dropFirst() + affixes.suffix
    }
}

// MARK: - Checking an error's coding path

enum ReliabilityPathCheck {
    /// What walking a coding path found.
    enum Walk {
        case value(Any)
        /// The last key is not in the dictionary at the path before it.
        case missingKey(container: Any)
        /// The last index is the count of the array at the path before it.
        case pastEnd(count: Int)
        case broken(String)
    }

    static func isNull(_ value: Any) -> Bool {
        if type(of: value) == NSNull.self { return true }
        if let inner = unwrapOptional(value) { return inner.isNull }
        return false
    }

    /// `.some(.none)` for an Optional holding nil, `.some(.some(x))` for one holding `x`, `nil` for a non-Optional.
    static func unwrapOptional(_ value: Any) -> (isNull: Bool, wrapped: Any?)? {
        // A class is never an Optional, and `Mirror` of a Foundation collection would bridge it.
        if type(of: value) is AnyClass { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return nil }
        guard let child = mirror.children.first else { return (true, nil) }
        return (isNull(child.value), child.value)
    }

    /// Strips Optionals stored in `Any`.
    static func stripped(_ value: Any) -> Any {
        var current = value
        while let (_, wrapped) = unwrapOptional(current), let wrapped { current = wrapped }
        return current
    }

    static func isDictionary(_ value: Any) -> Bool {
        let value = stripped(value)
        if type(of: value) is AnyClass { return value is NSDictionary }
        return value is [AnyHashable: Any]
    }

    static func isArray(_ value: Any) -> Bool {
        let value = stripped(value)
        if type(of: value) is AnyClass { return value is NSArray }
        return value is [Any]
    }

    /// The child of a dictionary or array for one coding key, read without bridging Foundation collections.
    static func child(of node: Any, key: any CodingKey, setup: ReliabilityDecoderSetup) -> Walk {
        let node = stripped(node)
        if type(of: node) is AnyClass, let dictionary = node as? NSDictionary {
            if let int = key.intValue, key.stringValue == String(int),
                let found = FoundationCollection.value(in: dictionary, forKey: NSNumber(value: int))
            {
                return .value(found)
            }
            for name in names(for: key, setup: setup) {
                if let found = FoundationCollection.value(in: dictionary, forKey: NSString(string: name)) {
                    return .value(found)
                }
            }
            return .missingKey(container: node)
        }
        if type(of: node) is AnyClass, let array = node as? NSArray {
            guard let index = key.intValue, index >= 0 else { return .broken("no index in \(key) for an NSArray") }
            if index == array.count { return .pastEnd(count: index) }
            guard index < array.count else { return .broken("index \(index) beyond NSArray of \(array.count)") }
            return .value(FoundationCollection.element(of: array, at: index))
        }
        if !(type(of: node) is AnyClass), let dictionary = node as? [AnyHashable: Any] {
            if let int = key.intValue, key.stringValue == String(int) {
                if let found = dictionary[AnyHashable(int)] ?? dictionary[AnyHashable(NSNumber(value: int))] {
                    return .value(found)
                }
            }
            for name in names(for: key, setup: setup) {
                if let found = dictionary[AnyHashable(name)] { return .value(found) }
            }
            return .missingKey(container: node)
        }
        if !(type(of: node) is AnyClass), let array = node as? [Any] {
            guard let index = key.intValue, index >= 0 else { return .broken("no index in \(key) for an array") }
            if index == array.count { return .pastEnd(count: index) }
            guard index < array.count else { return .broken("index \(index) beyond array of \(array.count)") }
            return .value(array[index])
        }
        return .broken("\(type(of: node)) has no child \(key.stringValue)")
    }

    /// The dictionary keys a coding key may have been read from. A dictionary's own keys (the standard library's
    /// `_DictionaryCodingKey`) are read as they are for a `[String: V]`, which no key strategy renames, but through
    /// the strategy for an `[Int: V]`, whose string keys `allKeys` reports with the strategy undone.
    static func names(for key: any CodingKey, setup: ReliabilityDecoderSetup) -> [String] {
        if key.intValue != nil { return [key.stringValue] }
        let mapped = setup.dictionaryKey(for: key.stringValue)
        if String(describing: type(of: key)).contains("DictionaryCodingKey") { return [key.stringValue, mapped] }
        return [mapped]
    }

    static func walk(_ root: Any, _ path: [any CodingKey], setup: ReliabilityDecoderSetup) -> Walk {
        var current = root
        for (position, key) in path.enumerated() {
            let step = child(of: current, key: key, setup: setup)
            guard case .value(let next) = step else {
                if position == path.count - 1 { return step }
                return .broken("path stops at step \(position) (\(key.stringValue)): \(step)")
            }
            current = next
        }
        return .value(current)
    }

    static func isNumber(_ value: Any) -> Bool {
        let value = stripped(value)
        let type = type(of: value)
        if type is NSNumber.Type { return type != Swift.type(of: NSNumber(value: true)) }
        return value is any BinaryInteger || value is any BinaryFloatingPoint || value is Decimal
    }

    static func isString(_ value: Any) -> Bool {
        let value = stripped(value)
        return type(of: value) == String.self || (type(of: value) is AnyClass && value is NSString)
    }

    static func isBoolean(_ value: Any) -> Bool {
        let value = stripped(value)
        return type(of: value) == Bool.self || type(of: value) == Swift.type(of: NSNumber(value: true))
    }

    /// `nil` when the error's coding path leads to the value it complains about, otherwise what is wrong.
    static func problem(with error: DecodingError, in root: Any, setup: ReliabilityDecoderSetup) -> String? {
        switch error {
        case .keyNotFound(let key, let context):
            guard case .value(let container) = walk(root, context.codingPath, setup: setup) else {
                return "keyNotFound: the path does not lead to a container"
            }
            guard isDictionary(container) else { return "keyNotFound: the path leads to \(type(of: container))" }
            if case .value = child(of: container, key: key, setup: setup) {
                return "keyNotFound for \(key.stringValue), which is present"
            }
            return nil
        case .valueNotFound(_, let context):
            switch walk(root, context.codingPath, setup: setup) {
            case .value(let value):
                return isNull(value) ? nil : "valueNotFound at a value that is not null: \(type(of: value))"
            case .pastEnd:
                return nil
            case .missingKey:
                // A missing key reads as null only through a super decoder, which no target uses.
                return "valueNotFound at a missing key"
            case .broken(let why):
                return "valueNotFound: \(why)"
            }
        case .typeMismatch(let type, let context):
            guard case .value(let value) = walk(root, context.codingPath, setup: setup) else {
                return "typeMismatch: the path does not lead to a value"
            }
            // The standard library's `[Int: V]` reports a key that is not an integer at the path of that entry.
            if context.debugDescription.hasPrefix("Expected Int key") { return nil }
            if isNull(value) { return "typeMismatch for a null (should be valueNotFound)" }
            if type == String.self, isString(value) { return "typeMismatch(String) for a string" }
            if type == Bool.self, isBoolean(value) { return "typeMismatch(Bool) for a boolean" }
            let numeric: [Any.Type] = [
                Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self,
                UInt32.self,
                UInt64.self, Double.self, Float.self,
            ]
            if numeric.contains(where: { $0 == type }), isNumber(value) { return "typeMismatch(\(type)) for a number" }
            if type == [String: Any].self, isDictionary(value) { return "typeMismatch(dictionary) for a dictionary" }
            if type == [Any].self, isArray(value) { return "typeMismatch(array) for an array" }
            return nil
        case .dataCorrupted(let context):
            if case .value = walk(root, context.codingPath, setup: setup) { return nil }
            return "dataCorrupted: the path does not lead to a value"
        @unknown default:
            return "unknown DecodingError"
        }
    }

    static func describe(_ path: [any CodingKey]) -> String {
        "[" + path.map { $0.intValue.map { "\($0)" } ?? "\"\($0.stringValue)\"" }.joined(separator: ", ") + "]"
    }
}

// MARK: - Round trips

/// A random `Codable` value that must come back equal from `UserInfoEncoder` → `UserInfoDecoder`.
struct ReliabilityRoundTrip: Codable {
    var int: Int
    var i8: Int8
    var i16: Int16
    var i32: Int32
    var i64: Int64
    var uint: UInt
    var u8: UInt8
    var u16: UInt16
    var u32: UInt32
    var u64: UInt64
    var double: Double
    var float: Float
    var bool: Bool
    var string: String
    var date: Date
    var data: Data
    var url: URL
    var rect: CGRect
    var point: CGPoint
    var size: CGSize
    var range: NSRange
    var decimal: Decimal?
    var optional: Int?
    var list: [Int]
    var byName: [String: Double]
    var byID: [Int: String]
    var matrix: [[Int8]]
    var kind: ReliabilityTargets.Kind
    var choice: ReliabilityTargets.Choice
    var children: [ReliabilityRoundTrip]

    static func random<E: ReliabilityEntropy>(
        _ entropy: inout E, affixedKeys: Bool = false, depth: Int = 0
    ) -> ReliabilityRoundTrip {
        var generator = ReliabilityTreeGenerator(entropy: entropy)
        defer { entropy = generator.entropy }
        func double() -> Double { generator.floating() }
        func integer() -> Int64 { generator.integer() }
        let strings = ["", "x", "snake_case", "🙂", "a\u{0}b", "NaN", "1"]
        // No key strategy renames the keys of a `[String: V]`, so every key comes back, under `.affixed` too.
        let dictionaryKeys = strings
        let childCount = depth < 1 ? generator.entropy.below(3) : 0
        var children: [ReliabilityRoundTrip] = []
        for _ in 0..<childCount {
            var inner = generator.entropy
            children.append(random(&inner, affixedKeys: affixedKeys, depth: depth + 1))
            generator.entropy = inner
        }
        return ReliabilityRoundTrip(
            int: Int(truncatingIfNeeded: integer()),
            i8: Int8(truncatingIfNeeded: integer()),
            i16: Int16(truncatingIfNeeded: integer()),
            i32: Int32(truncatingIfNeeded: integer()),
            i64: integer(),
            uint: UInt(truncatingIfNeeded: integer()),
            u8: UInt8(truncatingIfNeeded: integer()),
            u16: UInt16(truncatingIfNeeded: integer()),
            u32: UInt32(truncatingIfNeeded: integer()),
            u64: UInt64(bitPattern: integer()),
            double: double(),
            float: Float(double()),
            bool: generator.entropy.chance(50),
            string: generator.entropy.pick(strings),
            date: Date(timeIntervalSinceReferenceDate: double()),
            data: Data((0..<generator.entropy.below(5)).map { _ in UInt8(truncatingIfNeeded: integer()) }),
            url: generator.entropy.pick([URL(string: "https://example.com/a?b=c"), URL(string: "mailto:x@y.z")])
                ?? URL(fileURLWithPath: "/"),
            rect: CGRect(x: double(), y: double(), width: double(), height: double()),
            point: CGPoint(x: double(), y: double()),
            size: CGSize(width: double(), height: double()),
            range: NSRange(location: generator.entropy.below(1000), length: generator.entropy.below(1000)),
            decimal: generator.entropy.pick([nil, Decimal(7), Decimal(string: "1.25"), Decimal.nan, Decimal(-3)]),
            optional: generator.entropy.chance(50) ? nil : Int(truncatingIfNeeded: integer()),
            list: (0..<generator.entropy.below(4)).map { _ in Int(truncatingIfNeeded: integer()) },
            byName: Dictionary(
                (0..<generator.entropy.below(4)).map { _ in (generator.entropy.pick(dictionaryKeys), double()) },
                uniquingKeysWith: { first, _ in first }
            ),
            byID: Dictionary(
                (0..<generator.entropy.below(4)).map { _ in
                    (Int(truncatingIfNeeded: integer()), generator.entropy.pick(strings))
                },
                uniquingKeysWith: { first, _ in first }
            ),
            matrix: (0..<generator.entropy.below(3)).map { _ in
                (0..<generator.entropy.below(3)).map { _ in Int8(truncatingIfNeeded: integer()) }
            },
            kind: generator.entropy.pick([.a, .b, .x]),
            choice: generator.entropy.pick([
                .first(Int(truncatingIfNeeded: integer())), .second(name: "n", value: nil),
                .second(name: "", value: double()), .x,
            ]),
            children: children
        )
    }

    /// The names of the properties that differ, with NaN equal to NaN. Values are not printed: `Date.description`
    /// traps for dates far outside the calendar's range.
    func mismatches(_ other: ReliabilityRoundTrip) -> [String] {
        func same(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }
        func same(_ a: CGFloat, _ b: CGFloat) -> Bool { same(Double(a), Double(b)) }
        func same(_ a: Decimal?, _ b: Decimal?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a == b || (a.isNaN && b.isNaN)
            default: false
            }
        }
        func same(_ a: ReliabilityTargets.Choice, _ b: ReliabilityTargets.Choice) -> Bool {
            switch (a, b) {
            case (.first(let x), .first(let y)): x == y
            case (.second(let n1, let v1), .second(let n2, let v2)):
                n1 == n2 && ((v1 == nil && v2 == nil) || (v1.map { v in v2.map { same(v, $0) } ?? false } ?? false))
            case (.x, .x): true
            default: false
            }
        }
        var result: [String] = []
        func check(_ name: String, _ equal: Bool) { if !equal { result.append(name) } }
        check("int", int == other.int)
        check("i8", i8 == other.i8)
        check("i16", i16 == other.i16)
        check("i32", i32 == other.i32)
        check("i64", i64 == other.i64)
        check("uint", uint == other.uint)
        check("u8", u8 == other.u8)
        check("u16", u16 == other.u16)
        check("u32", u32 == other.u32)
        check("u64", u64 == other.u64)
        check("double \(double) → \(other.double)", same(double, other.double))
        check("float \(float) → \(other.float)", same(Double(float), Double(other.float)))
        check("bool", bool == other.bool)
        check("string", string == other.string)
        check(
            "date \(date.timeIntervalSinceReferenceDate) → \(other.date.timeIntervalSinceReferenceDate)",
            same(date.timeIntervalSinceReferenceDate, other.date.timeIntervalSinceReferenceDate)
        )
        check("data", data == other.data)
        check("url \(url) → \(other.url)", url == other.url)
        check(
            "rect \(rect) → \(other.rect)",
            same(rect.origin.x, other.rect.origin.x) && same(rect.origin.y, other.rect.origin.y)
                && same(rect.size.width, other.rect.size.width) && same(rect.size.height, other.rect.size.height)
        )
        check("point \(point) → \(other.point)", same(point.x, other.point.x) && same(point.y, other.point.y))
        check(
            "size \(size) → \(other.size)", same(size.width, other.size.width) && same(size.height, other.size.height))
        check("range", range == other.range)
        check(
            "decimal \(String(describing: decimal)) → \(String(describing: other.decimal))",
            same(decimal, other.decimal))
        check("optional", optional == other.optional)
        check("list", list == other.list)
        check(
            "byName \(byName) → \(other.byName)",
            byName.count == other.byName.count
                && byName.allSatisfy { key, value in other.byName[key].map { same(value, $0) } ?? false }
        )
        check("byID \(byID) → \(other.byID)", byID == other.byID)
        check("matrix", matrix == other.matrix)
        check("kind", kind == other.kind)
        check("choice \(choice) → \(other.choice)", same(choice, other.choice))
        check("children.count", children.count == other.children.count)
        for (index, (child, otherChild)) in zip(children, other.children).enumerated() {
            result += child.mismatches(otherChild).map { "children[\(index)].\($0)" }
        }
        return result
    }
}

// MARK: - One case

enum ReliabilityHarness {
    /// Decodes one random tree into `targets`; returns a description of the first broken promise, or `nil`.
    static func decodeCase<E: ReliabilityEntropy>(_ entropy: inout E, targets: [Int]) -> String? {
        let setup = ReliabilityDecoderSetup(choice: entropy.below(5))
        var generator = ReliabilityTreeGenerator(entropy: entropy, affixes: setup.affixes)
        let tree: Any = generator.entropy.chance(60) ? generator.userInfo() : generator.value(depth: 0)
        defer {
            generator.breakCycles()
            entropy = generator.entropy
        }
        for target in targets {
            do {
                try ReliabilityTargets.decode(target, tree, with: setup.decoder)
            } catch let error as DecodingError {
                if let problem = ReliabilityPathCheck.problem(with: error, in: tree, setup: setup) {
                    let path = error.reliabilityContext.map { ReliabilityPathCheck.describe($0.codingPath) } ?? "?"
                    return "\(ReliabilityTargets.names[target]): \(problem); path \(path); error \(error)"
                }
            } catch {
                return "\(ReliabilityTargets.names[target]): threw \(type(of: error)), not a DecodingError: \(error)"
            }
        }
        return nil
    }

    /// Encodes a random value and decodes it back; returns what went wrong, or `nil`.
    static func roundTripCase<E: ReliabilityEntropy>(_ entropy: inout E) -> String? {
        let affixed = entropy.chance(30)
        let value = ReliabilityRoundTrip.random(&entropy, affixedKeys: affixed)
        let encoder = UserInfoEncoder()
        let decoder = UserInfoDecoder()
        encoder.encodesGeometryAsNSValue = entropy.chance(50)
        if affixed {
            encoder.keyEncodingStrategy = .affixed(prefix: "UI", suffix: "Key")
            decoder.keyDecodingStrategy = .affixed(prefix: "UI", suffix: "Key")
        }
        do {
            let decoded = try decoder.decode(ReliabilityRoundTrip.self, from: try encoder.encode(value))
            let changed = value.mismatches(decoded)
            return changed.isEmpty ? nil : "round trip changed \(changed.joined(separator: ", "))"
        } catch {
            return "round trip threw \(error)"
        }
    }
}

extension DecodingError {
    var reliabilityContext: Context? {
        switch self {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            context
        @unknown default: nil
        }
    }
}
