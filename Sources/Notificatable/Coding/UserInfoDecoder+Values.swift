import Foundation

#if !canImport(Darwin)  // apple-check: follows FoundationCollection below
import CoreFoundation
#endif

/// Cheap classification of the values found in a `userInfo` tree.
///
/// Every check here looks at the value's dynamic type before any Foundation cast: a cast such as `as? NSNumber` on a
/// Swift dictionary bridges the whole dictionary, and `as? Int` on an `NSNumber` goes through Foundation's bridging,
/// which is slow and lossy. See `FOUNDATION-ON-LINUX.md` in the project's shared notes for the measurements.
enum ValueKind {
    /// The class of boolean `NSNumber`s (`__NSCFBoolean`), on Linux and on Apple platforms alike.
    static let booleanNumberClass: AnyClass = Swift.type(of: NSNumber(value: true))
    /// The classes of integer and floating-point `NSNumber`s (`NSNumber` on Linux, `__NSCFNumber` on Apple
    /// platforms), for reading them without a runtime cast.
    static let integerNumberClass: AnyClass = Swift.type(of: NSNumber(value: 1 as Int))
    static let floatingNumberClass: AnyClass = Swift.type(of: NSNumber(value: 1.5 as Double))

    /// Whether the value is a Swift or Foundation string. The class check comes first: `is NSString` on a Swift
    /// collection would bridge the whole collection.
    static func isString(_ value: Any) -> Bool {
        let type = Swift.type(of: value)
        return type == String.self || (type is AnyClass && value is NSString)
    }

    /// Whether the value stands for "no value": `NSNull`, or an `Optional` that holds `nil` or `NSNull`.
    static func isNull(_ value: Any) -> Bool {
        if Swift.type(of: value) == NSNull.self { return true }
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.flattened else { return true }
            return Swift.type(of: wrapped) == NSNull.self
        }
        return false
    }

    /// Unwraps `Optional`s nested in `Any`: `.some(x)` becomes `x`, `.none` becomes `NSNull()`.
    static func flattenOptional(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalValue else { return nil }
        return optional.flattened ?? NSNull()
    }

    /// A short description of what a value is, for error messages. It never prints the value's contents, so a
    /// self-referencing collection cannot make it loop.
    static func describe(_ value: Any) -> String {
        let type = Swift.type(of: value)
        if type == NSNull.self { return "null" }
        if type == booleanNumberClass || type == Bool.self { return "a boolean" }
        if isString(value) { return "a string" }
        if type is NSNumber.Type || value is any BinaryInteger || value is any BinaryFloatingPoint || value is Decimal {
            return "a number"
        }
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.flattened else { return "null" }
            return describe(wrapped)
        }
        if type is NSDictionary.Type || value is [AnyHashable: Any] || value is [String: Any] { return "a dictionary" }
        if type is NSArray.Type || value is [Any] { return "an array" }
        if let boxed = value as? NSValue {
            if let kind = GeometryKind(boxed) { return "an NSValue holding \(kind)" }
            return "an NSValue of type \(type), whose kind is unknown"
        }
        if value is Date { return "a date" }
        if value is Data { return "data" }
        if value is URL { return "a URL" }
        return "a value of type \(type)"
    }
}

/// Lets the decoder see through an `Optional` stored in an `Any`.
protocol OptionalValue {
    var flattened: Any? { get }
}

extension Optional: OptionalValue {
    var flattened: Any? {
        switch self {
        case .none: return nil
        case .some(let wrapped):
            if let inner = wrapped as? any OptionalValue { return inner.flattened }
            return unnestedAny(wrapped)
        }
    }
}

/// A small dictionary copied once into an array: a linear scan that compares lengths and then bytes is several
/// times cheaper than an `AnyHashable` lookup, which hashes and compares through existentials.
///
/// One array of string-keyed entries is the only allocation for the usual dictionary; integer keys and other keys
/// go to a separate object only when the dictionary has some, so that copying a table (as a container does) costs
/// one retain, and a lookup in a dictionary of string keys never looks at them.
struct SmallTable {
    struct Entry {
        let key: String
        let value: Any
    }

    /// The keys that are not `String`s: integers, and any other kind, kept only so that nothing is silently dropped.
    final class Extra {
        let intKeys: [Int]
        let intValues: [Any]
        /// Keys that are neither `String` nor `Int`.
        let other: [AnyHashable: Any]?

        init(intKeys: [Int], intValues: [Any], other: [AnyHashable: Any]?) {
            self.intKeys = intKeys
            self.intValues = intValues
            self.other = other
        }
    }

    let entries: [Entry]
    let extra: Extra?

    var intKeys: [Int] { extra?.intKeys ?? [] }
    var other: [AnyHashable: Any]? { extra?.other }

    /// The string keys, in the table's order.
    var keys: [String] { entries.map(\.key) }

    init(entries: [Entry], intKeys: [Int], intValues: [Any], other: [AnyHashable: Any]?) {
        self.entries = entries
        self.extra =
            intKeys.isEmpty && other == nil ? nil : Extra(intKeys: intKeys, intValues: intValues, other: other)
    }

    init(_ dictionary: [AnyHashable: Any]) {
        var entries: [Entry] = []
        entries.reserveCapacity(dictionary.count)
        var intKeys: [Int] = []
        var intValues: [Any] = []
        var other: [AnyHashable: Any]?
        for (key, value) in dictionary {
            let base = key.base
            // The exact-type checks first: `as?` goes through the runtime's bridging casts, which cost more than the
            // rest of the copy. They give the same answer for a key that is exactly a `String` or an `Int`.
            if let string = exactCast(base, to: String.self) {
                entries.append(Entry(key: string, value: value))
            } else if let int = exactCast(base, to: Int.self) {
                intKeys.append(int)
                intValues.append(value)
            } else if let string = base as? String {
                entries.append(Entry(key: string, value: value))
            } else if let int = base as? Int {
                intKeys.append(int)
                intValues.append(value)
            } else {
                other = other ?? [:]
                other?[key] = value
            }
        }
        self.init(entries: entries, intKeys: intKeys, intValues: intValues, other: other)
    }

    /// The index of the entry whose key is `key`, by a scan that compares lengths first.
    @inline(__always)
    func index(of key: String) -> Int? {
        let length = key.utf8.count
        // By index, so that the scan does not copy (and retain) the entries it passes over.
        var index = 0
        while index < entries.count {
            if entries[index].key.utf8.count == length && entries[index].key == key { return index }
            index += 1
        }
        return nil
    }

    func value(forString key: String, int intKey: Int?) -> Any? {
        if let extra {
            if let intKey, !extra.intKeys.isEmpty, let index = extra.intKeys.firstIndex(of: intKey) {
                return extra.intValues[index]
            }
            if let index = index(of: key) { return entries[index].value }
            if let other = extra.other {
                // Other integer types, such as `Int64`, hash equal to `Int` in `AnyHashable`.
                if let intKey, let value = other[AnyHashable(intKey)] { return value }
                return other[AnyHashable(key)]
            }
            return nil
        }
        if let index = index(of: key) { return entries[index].value }
        return nil
    }
}

/// A dictionary of at most two keys, all of them exactly `String`, read in place: copying it into a ``SmallTable``
/// (an allocation, and a retain of every value) costs more than its one or two lookups. Its keys are taken out
/// once, so a lookup compares strings and then reads the value at a stored index. It answers exactly as a
/// ``SmallTable`` of the same dictionary would.
struct TinyTable {
    let dictionary: [AnyHashable: Any]
    let count: Int
    let key0: String
    let index0: Dictionary<AnyHashable, Any>.Index
    let key1: String
    let index1: Dictionary<AnyHashable, Any>.Index

    /// The largest dictionary read this way.
    static let limit = 2

    /// Reads `dictionary`, or returns `nil` when it has more than ``limit`` keys or a key that is not exactly a
    /// `String`.
    init?(_ dictionary: [AnyHashable: Any]) {
        let count = dictionary.count
        guard count <= Self.limit else { return nil }
        var index = dictionary.startIndex
        var key0 = ""
        var index0 = index
        if count > 0 {
            guard let key = exactCast(dictionary.keys[index].base, to: String.self) else { return nil }
            key0 = key
            index0 = index
            dictionary.formIndex(after: &index)
        }
        var key1 = ""
        var index1 = index
        if count > 1 {
            guard let key = exactCast(dictionary.keys[index].base, to: String.self) else { return nil }
            key1 = key
            index1 = index
        }
        self.dictionary = dictionary
        self.count = count
        self.key0 = key0
        self.index0 = index0
        self.key1 = key1
        self.index1 = index1
    }

    var keys: [String] { Array([key0, key1].prefix(count)) }

    /// The value for `key`, compared as ``SmallTable/index(of:)`` compares.
    @inline(__always)
    func value(forString key: String) -> Any? {
        let length = key.utf8.count
        if count > 0 && key0.utf8.count == length && key0 == key { return dictionary.values[index0] }
        if count > 1 && key1.utf8.count == length && key1 == key { return dictionary.values[index1] }
        return nil
    }
}

/// A dictionary as the decoder reads it, without converting or bridging the whole dictionary up front.
enum KeyedStorage {
    case tiny(TinyTable)
    case small(SmallTable)
    case hashable([AnyHashable: Any])
    case strings([String: Any])
    case object(NSDictionary)

    /// Dictionaries up to this size are copied into a ``SmallTable``; larger ones are read in place.
    static let smallLimit = 16

    /// Reads a dictionary, or returns `nil` when the value is not one.
    init?(_ value: Any) {
        if let dictionary = exactCast(value, to: [AnyHashable: Any].self) {
            self.init(hashable: dictionary)
        } else if let dictionary = exactCast(value, to: [String: Any].self) {
            self = .strings(dictionary)
        } else if Swift.type(of: value) is AnyClass {
            guard let dictionary = value as? NSDictionary else { return nil }
            self = .object(dictionary)
        } else if value is any SwiftDictionaryMarker, let dictionary = value as? [AnyHashable: Any] {
            // Other Swift dictionaries, such as `[String: Int]`, convert here once.
            self.init(hashable: dictionary)
        } else {
            return nil
        }
    }

    init(hashable dictionary: [AnyHashable: Any]) {
        if let tiny = TinyTable(dictionary) {
            self = .tiny(tiny)
        } else {
            self = dictionary.count <= Self.smallLimit ? .small(SmallTable(dictionary)) : .hashable(dictionary)
        }
    }

    /// The value for a string key, or for an integer key when `intKey` is given and present.
    func value(forString key: String, int intKey: Int?) -> Any? {
        switch self {
        case .tiny(let table):
            return table.value(forString: key)
        case .small(let table):
            return table.value(forString: key, int: intKey)
        case .hashable(let dictionary):
            if let intKey {
                if let value = dictionary[AnyHashable(intKey)] { return value }
                // On Linux an `NSNumber` key (as bridged from an `NSDictionary`) is not equal to the `Int` in
                // `AnyHashable`, although `keys` lists it as an integer key.
                if let value = dictionary[AnyHashable(NSNumber(value: intKey))] { return value }
            }
            return dictionary[AnyHashable(key)]
        case .strings(let dictionary):
            return dictionary[key]
        case .object(let dictionary):
            if let intKey, let value = FoundationCollection.value(in: dictionary, forKey: NSNumber(value: intKey)) {
                return value
            }
            return FoundationCollection.value(in: dictionary, forKey: NSString(string: key))
        }
    }

    /// Every key, as a string or an integer; other kinds of keys are left out.
    var keys: [DictionaryKey] {
        var result: [DictionaryKey] = []
        func add(_ key: Any) {
            if let string = key as? String {
                result.append(.string(string))
            } else if let int = key as? Int {
                result.append(.int(int))
            } else if let string = key as? NSString {
                result.append(.string(String(string)))
            } else if let number = key as? NSNumber, Swift.type(of: number) != ValueKind.booleanNumberClass,
                let int = Int(exactly: number.doubleValue)
            {
                result.append(.int(int))
            }
        }
        switch self {
        case .tiny(let table):
            result = table.keys.map { .string($0) }
        case .small(let table):
            result = table.keys.map { .string($0) } + table.intKeys.map { .int($0) }
            table.other?.keys.forEach { add($0.base) }
        case .hashable(let dictionary):
            dictionary.keys.forEach { add($0.base) }
        case .strings(let dictionary):
            result = dictionary.keys.map { .string($0) }
        case .object(let dictionary):
            dictionary.allKeys.forEach { add($0) }
        }
        return result
    }

    /// A copy keyed by converted strings, for the key strategies that rename what is in the dictionary.
    ///
    /// When several dictionary keys convert to the same key (`foo_bar` and `fooBar` under `.convertFromSnakeCase`),
    /// one value is kept, the same whatever the dictionary's hash order: a key that the conversion leaves as it is
    /// wins; otherwise the dictionary key that comes first in ``DictionaryKey/precedes(_:)`` order.
    func rekeyed(_ transform: (DictionaryKey) -> DictionaryKey) -> KeyedStorage {
        var converted: [DictionaryKey] = []
        var originals: [DictionaryKey] = []
        var found: [Any] = []
        var winners: [DictionaryKey: Int] = [:]
        for key in self.keys {
            let value: Any?
            switch key {
            case .string(let string): value = self.value(forString: string, int: nil)
            case .int(let int): value = self.value(forString: String(int), int: int)
            }
            guard let value else { continue }
            let newKey = transform(key)
            let index = converted.count
            converted.append(newKey)
            originals.append(key)
            found.append(value)
            if let previous = winners[newKey] {
                let previousIsExact = originals[previous] == newKey
                let isExact = key == newKey
                if isExact && !previousIsExact || isExact == previousIsExact && key.precedes(originals[previous]) {
                    winners[newKey] = index
                }
            } else {
                winners[newKey] = index
            }
        }
        var keys: [String] = []
        var values: [Any] = []
        var intKeys: [Int] = []
        var intValues: [Any] = []
        for (index, key) in converted.enumerated() where winners[key] == index {
            switch key {
            case .string(let string):
                keys.append(string)
                values.append(found[index])
            case .int(let int):
                intKeys.append(int)
                intValues.append(found[index])
            }
        }
        let entries = zip(keys, values).map { SmallTable.Entry(key: $0, value: $1) }
        return .small(SmallTable(entries: entries, intKeys: intKeys, intValues: intValues, other: nil))
    }
}

/// A key found in a dictionary.
enum DictionaryKey: Hashable {
    case string(String)
    case int(Int)

    /// A total order on dictionary keys, used to pick one of several keys deterministically: integer keys first, in
    /// ascending order, then string keys in the order of Swift's `<` on `String`.
    func precedes(_ other: DictionaryKey) -> Bool {
        switch (self, other) {
        case (.int(let left), .int(let right)): left < right
        case (.int, .string): true
        case (.string, .int): false
        case (.string(let left), .string(let right)): left < right
        }
    }
}

/// An array as the decoder reads it.
enum UnkeyedStorage {
    case array([Any])
    case object(NSArray)
    /// A Swift array of another element type, such as `[String]` or `[NSNumber]`, read element by element
    /// instead of being converted to `[Any]` up front.
    case typed(any SwiftArrayMarker)

    init?(_ value: Any) {
        if let array = exactCast(value, to: [Any].self) {
            self = .array(array)
        } else if Swift.type(of: value) is AnyClass {
            guard let array = value as? NSArray else { return nil }
            self = .object(array)
        } else if let array = value as? any SwiftArrayMarker {
            self = .typed(array)
        } else {
            return nil
        }
    }

    var count: Int {
        switch self {
        case .array(let array): array.count
        case .object(let array): array.count
        case .typed(let array): array.elementCount
        }
    }

    subscript(index: Int) -> Any {
        switch self {
        case .array(let array): array[index]
        case .object(let array): FoundationCollection.element(of: array, at: index)
        case .typed(let array): array.element(at: index)
        }
    }
}

/// Reads one value out of an `NSDictionary` or `NSArray` without converting a nested collection.
///
/// Foundation on Linux hands out every value of an `NSDictionary` or `NSArray` (`object(forKey:)`, subscripts,
/// enumerators) converted to Swift, and converts a nested `NSDictionary` or `NSArray` to a Swift collection
/// *recursively*, all at once. A self-containing `NSMutableDictionary`, or a chain a few thousand levels deep,
/// overflows the stack inside Foundation before the decoder's depth cap can see it. Core Foundation's accessors
/// return the stored object as it is, so a nested collection is read with them and stays an object: the decoder
/// then walks it one level at a time and stops at ``UserInfoDecoder/Options/maximumDepth``. Every other value is
/// read with Foundation's accessor as before. On Apple platforms bridging is lazy, and Foundation's accessor is used.
///
/// The Apple-branch check build (`NOTIFICATABLE_APPLE_CHECK`) keeps the Linux branch here: the Apple branch is correct
/// only because Apple's bridging is lazy, and run on Linux it overflows the stack inside Foundation on a deep nest
/// (the property test's random trees do that). It is one Foundation call per branch, listed in the Decoding Rules.
enum FoundationCollection {
    static func value(in dictionary: NSDictionary, forKey key: NSObject) -> Any? {
        #if canImport(Darwin)  // apple-check: needs Apple's lazy bridging; see the note above
        return dictionary.object(forKey: key)
        #else
        let raw = CFDictionaryGetValue(
            unsafeBitCast(dictionary, to: CFDictionary.self), Unmanaged.passUnretained(key).toOpaque()
        )
        guard let raw else { return nil }
        let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
        if object is NSDictionary || object is NSArray { return object }
        return dictionary.object(forKey: key)
        #endif
    }

    static func element(of array: NSArray, at index: Int) -> Any {
        #if canImport(Darwin)  // apple-check: needs Apple's lazy bridging; see the note above
        return array[index]
        #else
        if let raw = CFArrayGetValueAtIndex(unsafeBitCast(array, to: CFArray.self), index) {
            let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
            if object is NSDictionary || object is NSArray { return object }
        }
        return array[index]
        #endif
    }
}

/// Marks Swift dictionaries and arrays of any element type, so that a container check converts only real
/// collections and never tries a bridging cast on anything else.
protocol SwiftDictionaryMarker {}
extension Dictionary: SwiftDictionaryMarker {}
protocol SwiftArrayMarker {
    var elementCount: Int { get }
    func element(at index: Int) -> Any
}

extension Array: SwiftArrayMarker {
    var elementCount: Int { count }
    func element(at index: Int) -> Any { unnestedAny(self[index]) }
}

extension ContiguousArray: SwiftArrayMarker {
    var elementCount: Int { count }
    func element(at index: Int) -> Any { unnestedAny(self[index]) }
}

/// Converts a value of a generic type to `Any` without nesting: when the type is `Any` itself, generic code would
/// put the `Any` inside another `Any`, whose contents ``exactCast(_:to:)`` and the type checks can no longer see
/// (an `Optional<Any>` or an `[Any]` reached through `Optional` then decoded nothing but type mismatches).
@inline(__always)
func unnestedAny<V>(_ value: V) -> Any {
    if V.self == Any.self { return unsafeBitCast(value, to: Any.self) }
    return value
}
