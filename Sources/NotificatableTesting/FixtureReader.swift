import Foundation

/// Reads the property-list objects of one fixture file into checked, `Sendable` values, and reports every problem
/// as a ``UserInfoFixtureError`` that names the file and the place inside it.
struct FixtureReader {
    let file: URL
    /// The values made so far, shared by every copy of this reader (see ``UserInfoFixture/maximumValueCount``).
    let budget = Budget()

    /// A property-list object, classified once by its dynamic type.
    enum PlistObject {
        case string(String)
        case number(FixtureValue.PlainNumber)
        case date(Date)
        case data(Data)
        case array([Any])
        case dictionary([String: Any])
    }

    // MARK: - Errors and locations

    func error(_ code: UserInfoFixtureError.Code, _ location: [String], _ message: String) -> UserInfoFixtureError {
        UserInfoFixtureError(code, file: file, location: Self.format(location), message: message)
    }

    static func format(_ location: [String]) -> String {
        var text = ""
        for component in location {
            if component.hasPrefix("[") || text.isEmpty {
                text += component
            } else {
                text += "." + component
            }
        }
        return text
    }

    // MARK: - Classifying property-list objects

    /// The class of a boolean `NSNumber` (`__NSCFBoolean`); Darwin's plist parser gives one for `<true/>`.
    private static let booleanNumberType: ObjectIdentifier = ObjectIdentifier(type(of: NSNumber(value: true)))

    static func classify(_ value: Any) -> PlistObject? {
        // Swift `Bool` first: on Linux `<true/>` arrives as a Swift Bool, which would also bridge to NSNumber.
        if type(of: value) == Bool.self, let bool = value as? Bool { return .number(.bool(bool)) }
        if let string = value as? String { return .string(string) }
        if let date = value as? Date { return .date(date) }
        if let data = value as? Data { return .data(data) }
        if let number = value as? NSNumber {
            if ObjectIdentifier(type(of: number)) == booleanNumberType { return .number(.bool(number.boolValue)) }
            switch String(cString: number.objCType) {
            case "d", "f": return .number(.real(number.doubleValue))
            case "Q", "L", "I", "S", "C":
                let unsigned = number.uint64Value
                if let signed = Int64(exactly: unsigned) { return .number(.integer(signed)) }
                return .number(.unsigned(unsigned))
            default:
                // Darwin's parser may store a value above Int64.max in a wider signed type; its text says so.
                let signed = number.int64Value
                if signed < 0, !number.stringValue.hasPrefix("-") { return .number(.unsigned(number.uint64Value)) }
                return .number(.integer(signed))
            }
        }
        if let array = value as? [Any] { return .array(array) }
        if let dictionary = value as? [AnyHashable: Any] {
            var result: [String: Any] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String else { return nil }
                result[key] = element
            }
            return .dictionary(result)
        }
        return nil
    }

    static func kindName(_ object: PlistObject?) -> String {
        switch object {
        case .string: "a string"
        case .number(.bool): "a boolean"
        case .number(.real): "a real"
        case .number: "an integer"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dictionary: "a dictionary"
        case nil: "an unknown value"
        }
    }

    func string(_ value: Any?, _ location: [String], code: UserInfoFixtureError.Code = .invalidField) throws -> String {
        guard let value else { throw error(.missingField, location, "is missing; expected a string") }
        guard case .string(let string)? = Self.classify(value) else {
            throw error(code, location, "expected a string, found \(Self.kindName(Self.classify(value)))")
        }
        return string
    }

    func dictionary(_ value: Any, _ location: [String], code: UserInfoFixtureError.Code) throws -> [String: Any] {
        guard case .dictionary(let dictionary)? = Self.classify(value) else {
            throw error(code, location, "expected a dictionary, found \(Self.kindName(Self.classify(value)))")
        }
        return dictionary
    }

    func checkKeys(
        _ dictionary: [String: Any], allowed: Set<String>, _ location: [String],
        code: UserInfoFixtureError.Code
    ) throws {
        if let unexpected = dictionary.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw error(
                code, location + [unexpected],
                "is not a field here; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
    }

    // MARK: - The userInfo and its tags

    /// The tags the reader understands, each with a short description of its payload, for error messages.
    static let tags: [String: String] = [
        "$rect": "[x, y, width, height]", "$point": "[x, y]", "$size": "[width, height]",
        "$range": "[location, length]", "$url": "a URL string", "$nsurl": "a URL string", "$null": "<true/>",
        "$nsstring": "a string", "$nsarray": "an array", "$nsdictionary": "a dictionary",
        "$intKeys": "a dictionary whose keys are integers written as strings",
        "$nest": "a dictionary with depth, leaf and optional key",
        "$decimal": "a decimal number written as a string", "$bool": "<true/> or <false/>",
        "$double": "a number, or a string such as nan, inf or -inf", "$float": "a number or a string",
        "$cgfloat": "a number or a string",
        "$int": "an integer", "$int8": "an integer", "$int16": "an integer", "$int32": "an integer",
        "$int64": "an integer", "$uint": "an integer", "$uint8": "an integer", "$uint16": "an integer",
        "$uint32": "an integer", "$uint64": "an integer, or a string for values above Int64.max",
    ].merging(captureTags) { base, _ in base }

    /// Reads the top-level `userInfo`, which must be a dictionary (plain, `$intKeys` or `$nsdictionary`).
    func userInfo(_ raw: Any) throws -> FixtureValue {
        let value = try self.value(raw, ["userInfo"], depth: 1)
        switch value {
        case .dictionary, .integerKeyedDictionary, .entries: return value
        default: throw error(.invalidField, ["userInfo"], "must be a dictionary")
        }
    }

    /// Reads one value at `depth` levels of nesting (the `userInfo` dictionary, or `expect.value`, is at depth 1).
    func value(_ raw: Any, _ location: [String], depth: Int = 1) throws -> FixtureValue {
        try checkDepth(depth, location)
        try spend(1, location)
        guard let object = Self.classify(raw) else {
            throw error(.invalidPropertyList, location, "holds a value that is not a property-list type")
        }
        switch object {
        case .string(let string): return .string(string)
        case .number(let number): return .number(number)
        case .date(let date): return .date(date)
        case .data(let data): return .data(data)
        case .array(let array): return .array(try elements(array, location, depth: depth), bridged: false)
        case .dictionary(let dictionary):
            if dictionary.count == 1, let (key, payload) = dictionary.first, Self.isTag(key) {
                return try tagged(key, payload, location + [key], depth: depth)
            }
            return .dictionary(try entries(dictionary, location, depth: depth), bridged: false)
        }
    }

    static func isTag(_ key: String) -> Bool { key.hasPrefix("$") && !key.hasPrefix("$$") }

    /// The elements of an array at `depth`.
    func elements(_ array: [Any], _ location: [String], depth: Int) throws -> [FixtureValue] {
        try array.enumerated().map { index, element in
            try value(element, location + ["[\(index)]"], depth: depth + 1)
        }
    }

    /// The entries of a dictionary at `depth`.
    func entries(_ dictionary: [String: Any], _ location: [String], depth: Int) throws -> [FixtureValue.StringEntry] {
        try dictionary.keys.sorted().map { key in
            guard let element = dictionary[key] else { throw error(.invalidPropertyList, location, "lost a key") }
            if Self.isTag(key) {
                throw error(
                    .invalidTag, location + [key],
                    "a key that starts with $ is a tag and must be the only key of its dictionary; "
                        + "write $$ for a key that really starts with $")
            }
            let unescaped = key.hasPrefix("$$") ? String(key.dropFirst()) : key
            return FixtureValue.StringEntry(
                key: unescaped, value: try value(element, location + [key], depth: depth + 1))
        }
    }

    /// A tagged value at `depth`: the tag's dictionary is not a level of its own.
    func tagged(_ tag: String, _ payload: Any, _ location: [String], depth: Int) throws -> FixtureValue {
        switch tag {
        case "$rect":
            let numbers = try self.numbers(payload, count: 4, tag: tag, location)
            return .geometry(.rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]))
        case "$point":
            let numbers = try self.numbers(payload, count: 2, tag: tag, location)
            return .geometry(.point(x: numbers[0], y: numbers[1]))
        case "$size":
            let numbers = try self.numbers(payload, count: 2, tag: tag, location)
            return .geometry(.size(width: numbers[0], height: numbers[1]))
        case "$range":
            let numbers = try self.numbers(payload, count: 2, tag: tag, location)
            guard let start = Int(exactly: numbers[0]), let length = Int(exactly: numbers[1]),
                start >= 0, length >= 0
            else { throw error(.invalidTag, location, "$range needs 2 non-negative integers [location, length]") }
            return .geometry(.range(location: start, length: length))
        case "$url", "$nsurl":
            let string = try self.string(payload, location, code: .invalidTag)
            guard let url = URL(string: string) else {
                throw error(.invalidTag, location, "\(tag) needs a valid URL string, found \"\(string)\"")
            }
            return tag == "$url" ? .url(url) : .nsURL(url)
        case "$null":
            guard case .number(.bool(true))? = Self.classify(payload) else {
                throw error(.invalidTag, location, "$null needs the payload <true/>")
            }
            return .null
        case "$nsstring":
            return .nsString(try string(payload, location, code: .invalidTag))
        case "$nsarray":
            guard case .array(let array)? = Self.classify(payload) else {
                throw error(.invalidTag, location, "$nsarray needs an array")
            }
            return .array(try elements(array, location, depth: depth), bridged: true)
        case "$nsdictionary":
            let dictionary = try self.dictionary(payload, location, code: .invalidTag)
            return .dictionary(try entries(dictionary, location, depth: depth), bridged: true)
        case "$intKeys":
            return try integerKeyed(payload, location, depth: depth)
        case "$nest":
            return try nest(payload, location, depth: depth)
        case "$decimal":
            let string = try self.string(payload, location, code: .invalidTag)
            guard let decimal = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) else {
                throw error(.invalidTag, location, "$decimal needs a decimal number string, found \"\(string)\"")
            }
            return .decimal(decimal)
        case "$bool":
            guard case .number(.bool(let bool))? = Self.classify(payload) else {
                throw error(.invalidTag, location, "$bool needs <true/> or <false/>")
            }
            return .swiftNumber(.bool(bool))
        case "$double": return .swiftNumber(.double(try floatingPoint(payload, tag: tag, location)))
        case "$cgfloat": return .swiftNumber(.cgFloat(try floatingPoint(payload, tag: tag, location)))
        case "$float":
            let double = try floatingPoint(payload, tag: tag, location)
            let float = Float(double)
            if double.isFinite && !float.isFinite {
                throw error(.invalidTag, location, "$float value \(double) does not fit in Float; use $double")
            }
            return .swiftNumber(.float(float))
        case "$int": return .swiftNumber(.int(try integer(Int.self, payload, tag: tag, location)))
        case "$int8": return .swiftNumber(.int8(try integer(Int8.self, payload, tag: tag, location)))
        case "$int16": return .swiftNumber(.int16(try integer(Int16.self, payload, tag: tag, location)))
        case "$int32": return .swiftNumber(.int32(try integer(Int32.self, payload, tag: tag, location)))
        case "$int64": return .swiftNumber(.int64(try integer(Int64.self, payload, tag: tag, location)))
        case "$uint": return .swiftNumber(.uint(try integer(UInt.self, payload, tag: tag, location)))
        case "$uint8": return .swiftNumber(.uint8(try integer(UInt8.self, payload, tag: tag, location)))
        case "$uint16": return .swiftNumber(.uint16(try integer(UInt16.self, payload, tag: tag, location)))
        case "$uint32": return .swiftNumber(.uint32(try integer(UInt32.self, payload, tag: tag, location)))
        case "$uint64": return .swiftNumber(.uint64(try integer(UInt64.self, payload, tag: tag, location)))
        default:
            if let value = try capturedTag(tag, payload, location, depth: depth) { return value }
            throw error(
                .invalidTag, location,
                "unknown tag \(tag); known tags are \(Self.tags.keys.sorted().joined(separator: ", ")) "
                    + "(write $$ for a key that really starts with $)")
        }
    }

    func numbers(_ payload: Any, count: Int, tag: String, _ location: [String]) throws -> [Double] {
        let shape = Self.tags[tag] ?? ""
        guard case .array(let array)? = Self.classify(payload), array.count == count else {
            throw error(.invalidTag, location, "\(tag) needs \(count) numbers \(shape), found \(describe(payload))")
        }
        return try array.map { element in
            switch Self.classify(element) {
            case .number(.integer(let value))?: return Double(value)
            case .number(.unsigned(let value))?: return Double(value)
            case .number(.real(let value))?: return value
            default:
                throw error(.invalidTag, location, "\(tag) needs \(count) numbers \(shape), found \(describe(payload))")
            }
        }
    }

    func describe(_ payload: Any) -> String {
        if case .array(let array)? = Self.classify(payload) {
            return
                "an array of \(array.count) (\(array.map { Self.kindName(Self.classify($0)) }.joined(separator: ", ")))"
        }
        return Self.kindName(Self.classify(payload))
    }

    func floatingPoint(_ payload: Any, tag: String, _ location: [String]) throws -> Double {
        switch Self.classify(payload) {
        case .number(.integer(let value))?: return Double(value)
        case .number(.unsigned(let value))?: return Double(value)
        case .number(.real(let value))?: return value
        case .string(let string)?:
            if let value = Double(string) { return value }
            throw error(.invalidTag, location, "\(tag) cannot read \"\(string)\" as a number")
        default:
            throw error(
                .invalidTag, location, "\(tag) needs \(Self.tags[tag] ?? "a number"), found \(describe(payload))")
        }
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, _ payload: Any, tag: String, _ location: [String]) throws -> T {
        let result: T?
        switch Self.classify(payload) {
        case .number(.integer(let value))?: result = T(exactly: value)
        case .number(.unsigned(let value))?: result = T(exactly: value)
        case .string(let string)?: result = T(string)
        default:
            throw error(.invalidTag, location, "\(tag) needs an integer, found \(describe(payload))")
        }
        guard let result else {
            throw error(.invalidTag, location, "\(tag) value does not fit in \(T.self)")
        }
        return result
    }

    func integerKeyed(_ payload: Any, _ location: [String], depth: Int) throws -> FixtureValue {
        let dictionary = try self.dictionary(payload, location, code: .invalidTag)
        let entries = try dictionary.keys.map { key -> FixtureValue.IntegerEntry in
            guard let integer = Int(key), let element = dictionary[key] else {
                throw error(
                    .invalidTag, location + [key], "$intKeys needs keys that are integers, such as \"1\" or \"-2\"")
            }
            return FixtureValue.IntegerEntry(
                key: integer, value: try value(element, location + [key], depth: depth + 1))
        }
        return .integerKeyedDictionary(entries.sorted { $0.key < $1.key })
    }

    /// `{"$nest": {depth: N, key: "child", leaf: …}}` wraps `leaf` in N dictionaries under `key`, or in N arrays
    /// when `key` is absent. Property lists cannot be nested deeper than 512 levels, so deep values are generated, up
    /// to ``UserInfoFixture/maximumDepth`` levels in all; each level counts towards
    /// ``UserInfoFixture/maximumValueCount``.
    func nest(_ payload: Any, _ location: [String], depth: Int) throws -> FixtureValue {
        let fields = try dictionary(payload, location, code: .invalidTag)
        try checkKeys(fields, allowed: ["depth", "key", "leaf"], location, code: .invalidTag)
        guard let rawDepth = fields["depth"], case .number(.integer(let nestDepth))? = Self.classify(rawDepth),
            nestDepth >= 1
        else { throw error(.invalidTag, location + ["depth"], "$nest needs an integer depth of 1 or more") }
        // The nest's first level takes this value's place, and its leaf sits `nestDepth` levels further in.
        guard nestDepth <= Int64(UserInfoFixture.maximumDepth - depth) else {
            throw error(
                .tooLarge, location + ["depth"],
                "a $nest of depth \(nestDepth) here nests its leaf deeper than \(UserInfoFixture.maximumDepth) levels, "
                    + "the most a fixture nests")
        }
        guard let rawLeaf = fields["leaf"] else {
            throw error(.invalidTag, location + ["leaf"], "$nest needs a leaf value")
        }
        let key = try fields["key"].map { try string($0, location + ["key"], code: .invalidTag) }
        try spend(Int(nestDepth) - 1, location + ["depth"])
        var value = try self.value(rawLeaf, location + ["leaf"], depth: depth + Int(nestDepth))
        for _ in 0..<nestDepth {
            if let key {
                value = .dictionary([FixtureValue.StringEntry(key: key, value: value)], bridged: false)
            } else {
                value = .array([value], bridged: false)
            }
        }
        return value
    }
}
