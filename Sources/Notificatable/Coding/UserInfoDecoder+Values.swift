import Foundation

/// Cheap classification of the values found in a `userInfo` tree.
///
/// Every check here looks at the value's dynamic type before any Foundation cast: a cast such as `as? NSNumber` on a
/// Swift dictionary bridges the whole dictionary, and `as? Int` on an `NSNumber` goes through Foundation's bridging,
/// which is slow and lossy. See `FOUNDATION-ON-LINUX.md` in the project's shared notes for the measurements.
enum ValueKind {
    /// The class of boolean `NSNumber`s (`__NSCFBoolean`), on Linux and on Apple platforms alike.
    static let booleanNumberClass: AnyClass = Swift.type(of: NSNumber(value: true))

    /// Whether the value stands for "no value": `NSNull`, or an `Optional` that holds `nil`.
    static func isNull(_ value: Any) -> Bool {
        if Swift.type(of: value) == NSNull.self { return true }
        if let optional = value as? any OptionalValue { return optional.flattened == nil }
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
        if value is String || value is NSString { return "a string" }
        if type is NSNumber.Type || value is any BinaryInteger || value is any BinaryFloatingPoint || value is Decimal {
            return "a number"
        }
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.flattened else { return "null" }
            return describe(wrapped)
        }
        if type is NSDictionary.Type || value is [AnyHashable: Any] || value is [String: Any] { return "a dictionary" }
        if type is NSArray.Type || value is [Any] { return "an array" }
        if let boxed = value as? NSValue, let kind = GeometryKind(boxed) { return "an NSValue holding \(kind)" }
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
            return wrapped
        }
    }
}

/// A dictionary as the decoder reads it, without converting or bridging the whole dictionary up front.
enum KeyedStorage {
    /// A small `[AnyHashable: Any]`, copied once into an array: a linear scan with `String ==` is several times
    /// cheaper than an `AnyHashable` lookup, which hashes and compares through existentials.
    case small(entries: [(key: String, value: Any)], intEntries: [(key: Int, value: Any)], other: [AnyHashable: Any]?)
    case hashable([AnyHashable: Any])
    case strings([String: Any])
    case object(NSDictionary)

    static let smallLimit = 16

    /// Reads a dictionary, or returns `nil` when the value is not one.
    init?(_ value: Any) {
        let type = Swift.type(of: value)
        if type == [AnyHashable: Any].self, let dictionary = value as? [AnyHashable: Any] {
            self.init(hashable: dictionary)
        } else if type == [String: Any].self, let dictionary = value as? [String: Any] {
            self = .strings(dictionary)
        } else if type is NSDictionary.Type, let dictionary = value as? NSDictionary {
            self = .object(dictionary)
        } else if type is AnyClass || type == String.self || type is any BinaryInteger.Type
            || type is any BinaryFloatingPoint.Type || type == Bool.self
        {
            return nil
        } else if let dictionary = value as? [AnyHashable: Any] {
            // Other Swift dictionaries, such as `[String: Int]`, convert here once.
            self.init(hashable: dictionary)
        } else {
            return nil
        }
    }

    init(hashable dictionary: [AnyHashable: Any]) {
        guard dictionary.count <= Self.smallLimit else {
            self = .hashable(dictionary)
            return
        }
        var entries: [(key: String, value: Any)] = []
        entries.reserveCapacity(dictionary.count)
        var intEntries: [(key: Int, value: Any)] = []
        var other: [AnyHashable: Any]?
        for (key, value) in dictionary {
            let base = key.base
            if let string = base as? String {
                entries.append((string, value))
            } else if let int = base as? Int {
                intEntries.append((int, value))
            } else {
                other = other ?? [:]
                other?[key] = value
            }
        }
        self = .small(entries: entries, intEntries: intEntries, other: other)
    }

    var count: Int {
        switch self {
        case .small(let entries, let intEntries, let other): entries.count + intEntries.count + (other?.count ?? 0)
        case .hashable(let dictionary): dictionary.count
        case .strings(let dictionary): dictionary.count
        case .object(let dictionary): dictionary.count
        }
    }

    /// The value for a string key, or for an integer key when `intKey` is given and present.
    func value(forString key: String, int intKey: Int?) -> Any? {
        switch self {
        case .small(let entries, let intEntries, let other):
            if let intKey {
                for entry in intEntries where entry.key == intKey { return entry.value }
            }
            for entry in entries where entry.key == key { return entry.value }
            if let other { return other[AnyHashable(key)] }
            return nil
        case .hashable(let dictionary):
            if let intKey, let value = dictionary[AnyHashable(intKey)] { return value }
            return dictionary[AnyHashable(key)]
        case .strings(let dictionary):
            return dictionary[key]
        case .object(let dictionary):
            if let intKey, let value = dictionary.object(forKey: NSNumber(value: intKey)) { return value }
            return dictionary.object(forKey: NSString(string: key))
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
        case .small(let entries, let intEntries, let other):
            result = entries.map { .string($0.key) } + intEntries.map { .int($0.key) }
            other?.keys.forEach { add($0.base) }
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
    func rekeyed(_ transform: (DictionaryKey) -> DictionaryKey) -> KeyedStorage {
        var entries: [(key: String, value: Any)] = []
        var intEntries: [(key: Int, value: Any)] = []
        for key in keys {
            let value: Any?
            switch key {
            case .string(let string): value = self.value(forString: string, int: nil)
            case .int(let int): value = self.value(forString: String(int), int: int)
            }
            guard let value else { continue }
            switch transform(key) {
            case .string(let string): entries.append((string, value))
            case .int(let int): intEntries.append((int, value))
            }
        }
        if entries.count + intEntries.count <= Self.smallLimit {
            return .small(entries: entries, intEntries: intEntries, other: nil)
        }
        var dictionary: [AnyHashable: Any] = [:]
        for entry in entries { dictionary[AnyHashable(entry.key)] = entry.value }
        for entry in intEntries { dictionary[AnyHashable(entry.key)] = entry.value }
        return .hashable(dictionary)
    }
}

/// A key found in a dictionary.
enum DictionaryKey {
    case string(String)
    case int(Int)
}

/// An array as the decoder reads it.
enum UnkeyedStorage {
    case array([Any])
    case object(NSArray)

    init?(_ value: Any) {
        let type = Swift.type(of: value)
        if type == [Any].self, let array = value as? [Any] {
            self = .array(array)
        } else if type is NSArray.Type, let array = value as? NSArray {
            self = .object(array)
        } else if type is AnyClass || type == String.self || type is any BinaryInteger.Type
            || type is any BinaryFloatingPoint.Type || type == Bool.self
        {
            return nil
        } else if KeyedStorage.isSwiftDictionary(value) {
            return nil
        } else if let array = value as? [Any] {
            // Other Swift arrays, such as `[String]`, convert here once.
            self = .array(array)
        } else {
            return nil
        }
    }

    var count: Int {
        switch self {
        case .array(let array): array.count
        case .object(let array): array.count
        }
    }

    subscript(index: Int) -> Any {
        switch self {
        case .array(let array): array[index]
        case .object(let array): array[index]
        }
    }
}

extension KeyedStorage {
    /// Whether a value is a Swift dictionary of any element types, without converting it.
    static func isSwiftDictionary(_ value: Any) -> Bool {
        value is any SwiftDictionaryMarker
    }
}

/// Marks Swift dictionaries, so that an array check never converts one.
protocol SwiftDictionaryMarker {}
extension Dictionary: SwiftDictionaryMarker {}
