import Foundation

/// The mapping between property-list values and JSON values with `$` tags.
enum WireValue {
    static let date = "$date"
    static let data = "$data"
    static let double = "$double"
    static let escape = "$escape"

    /// The seconds from 1970 to 2001, exactly: `Date`'s reference date.
    private static let referenceOffset: Double = 978_307_200
    private static let referenceOffsetSeconds = 978_307_200

    private static let booleanType = type(of: NSNumber(value: true))

    static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == booleanType
    }

    /// The exact integer that a non-boolean `number` holds, as an `Int` if it fits (`value`) and as text either way;
    /// `nil` if it is not integral. An integer `NSNumber` is read as one, never through `Double`.
    static func integer(_ number: NSNumber) -> (value: Int?, text: String)? {
        switch number.objCType.pointee {
        case CChar(UInt8(ascii: "q")), CChar(UInt8(ascii: "l")), CChar(UInt8(ascii: "i")), CChar(UInt8(ascii: "s")),
            CChar(UInt8(ascii: "c")):
            let integer = number.int64Value
            return (Int(exactly: integer), String(integer))
        case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")), CChar(UInt8(ascii: "S")),
            CChar(UInt8(ascii: "C")):
            let integer = number.uint64Value
            return (Int(exactly: integer), String(integer))
        default:
            let double = number.doubleValue
            guard double.isFinite, double.rounded(.towardZero) == double else { return nil }
            return (Int(exactly: double), "\(double)")
        }
    }

    // MARK: - Writing

    static func write(topLevel dictionary: [AnyHashable: Any], path: [any CodingKey]) throws -> Any {
        var strings = [String: Any](minimumCapacity: dictionary.count)
        for (key, value) in dictionary {
            guard let key = key.base as? String else {
                throw EncodingError.invalidValue(
                    dictionary,
                    .init(codingPath: path, debugDescription: "A dictionary key \(key) is not a string.")
                )
            }
            strings[key] = value
        }
        return try write(dictionary: strings, path: path)
    }

    static func write(dictionary: [String: Any], path: [any CodingKey]) throws -> Any {
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            result[key] = try write(value, path: path + [WireKey(key)])
        }
        if result.count == 1, let key = result.keys.first, key.hasPrefix("$") {
            return [escape: result]
        }
        return result
    }

    /// The seconds since 1970 that a `$date` tag holds for `date`: exactly the interval's shortest digits plus the
    /// offset, so that the reader gets the same `Date` back (see WireDecimal); `nil` for an interval that is not
    /// finite or beyond the decimals.
    static func dateText(of date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite else { return nil }
        return WireDecimal.plainText(of: interval.description, adding: referenceOffsetSeconds)
    }

    /// `path` is made only when needed (an error, or a nested value): an array per value costs an allocation.
    static func write(_ value: Any, path: @autoclosure () -> [any CodingKey]) throws -> Any {
        // The common numbers first, by their exact type: each failed cast below costs a run-time cast, and `is NSNull`
        // of a Swift number bridges it to an `NSNumber`.
        let dynamicType = ObjectIdentifier(Swift.type(of: value))
        if dynamicType == ObjectIdentifier(Int.self) || dynamicType == ObjectIdentifier(Double.self),
            let number = number(value)
        {
            return number
        }
        switch value {
        case let string as String:
            return string
        case let bool as Bool where type(of: value) == Bool.self:
            return bool
        case let date as Date:
            // An interval that is not finite is refused by the JSON writer.
            guard let text = dateText(of: date) else {
                return [WireValue.date: date.timeIntervalSinceReferenceDate + referenceOffset]
            }
            let seconds = WireDateSeconds(
                text: text, number: NSNumber(value: date.timeIntervalSinceReferenceDate + referenceOffset))
            return [WireValue.date: seconds]
        case let data as Data:
            return [WireValue.data: data.base64EncodedString()]
        case let array as [Any]:
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try write(element, path: path() + [WireKey(index: index)]))
            }
            return result
        case let dictionary as [String: Any]:
            return try write(dictionary: dictionary, path: path())
        case let dictionary as [AnyHashable: Any]:
            return try write(topLevel: dictionary, path: path())
        default:
            if let number = number(value) { return number }
            // After the numbers: `is NSNull` of a Swift number bridges it to an `NSNumber` first.
            if value is NSNull { return NSNull() }
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: path(),
                    debugDescription: "\(type(of: value)) is not a property-list value, so it cannot be relayed."
                )
            )
        }
    }

    /// A number as JSON can hold it: an integer as its exact value (`Int64`, or `UInt64` above `Int64.max`), a finite
    /// double itself (an integral one in an `NSNumber` as the integer), or a `$double` tag.
    ///
    /// Swift's own integer types come first: on Linux every one of them also casts `as NSNumber`, and an `NSNumber` is
    /// read by its `objCType`, never through `Double` (which rounds integers beyond 2⁵³).
    private static func number(_ value: Any) -> Any? {
        switch value {
        case let int as Int: return int
        case let double as Double: return double.isFinite ? double : [WireValue.double: nonFinite(double)]
        case let int as Int64: return int
        case let int as UInt64: return int
        case let int as UInt: return UInt64(int)
        case let int as Int32: return Int64(int)
        case let int as UInt32: return Int64(int)
        case let int as Int16: return Int64(int)
        case let int as UInt16: return Int64(int)
        case let int as Int8: return Int64(int)
        case let int as UInt8: return Int64(int)
        case let float as Float: return number(Double(float))
        case let number as NSNumber:
            if isBoolean(number) { return number.boolValue }
            switch number.objCType.pointee {
            case CChar(UInt8(ascii: "q")), CChar(UInt8(ascii: "l")), CChar(UInt8(ascii: "i")),
                CChar(UInt8(ascii: "s")), CChar(UInt8(ascii: "c")):
                return number.int64Value
            case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")),
                CChar(UInt8(ascii: "S")), CChar(UInt8(ascii: "C")):
                return number.uint64Value
            default:
                let double = number.doubleValue
                if let integer = Int64(exactly: double) { return integer }
                return double.isFinite ? double : [WireValue.double: nonFinite(double)]
            }
        default: return nil
        }
    }

    private static func nonFinite(_ double: Double) -> String {
        double.isNaN ? "nan" : double > 0 ? "inf" : "-inf"
    }

    // MARK: - Reading

    private static func read(dictionary: [String: Any], path: [any CodingKey]) throws(DecodingError) -> [String: Any] {
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            if key == date, let seconds = value as? WireDateSeconds {
                // A `$date` key among others, or escaped: the user's own number.
                result[key] = seconds.number
                continue
            }
            result[key] = try read(value, path: path + [WireKey(key)])
        }
        return result
    }

    /// `path` is made only for a nested value: an array per value costs an allocation.
    static func read(_ value: Any, path: @autoclosure () -> [any CodingKey]) throws(DecodingError) -> Any {
        // The reader makes containers of exactly these two types; anything else is a leaf, told by its type alone
        // (a failing `as? [Any]` on a leaf tries every bridging conversion, the larger part of a message's reading).
        let type = type(of: value)
        guard type == [Any].self || type == [String: Any].self else { return value }
        switch value {
        case let array as [Any]:
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try read(element, path: path() + [WireKey(index: index)]))
            }
            return result
        case let dictionary as [String: Any]:
            return try read(object: dictionary, path: path())
        default:
            return value
        }
    }

    /// A JSON object as the value it stands for, at every level (the payload's top level included): a one-key object
    /// whose key starts with `$` is a tag (its value, or the object under `$escape`), any other is a dictionary.
    static func read(object: [String: Any], path: [any CodingKey]) throws(DecodingError) -> Any {
        guard object.count == 1, let (tag, tagged) = object.first, tag.hasPrefix("$") else {
            return try read(dictionary: object, path: path)
        }
        return try readTagged(tag, tagged, path: path)
    }

    static func readTagged(_ tag: String, _ value: Any, path: [any CodingKey]) throws(DecodingError) -> Any {
        switch tag {
        case date:
            if let seconds = value as? WireDateSeconds {
                if let interval = WireDecimal.double(of: seconds.text, adding: -referenceOffsetSeconds),
                    interval.isFinite
                {
                    return Date(timeIntervalSinceReferenceDate: interval)
                }
                let double = seconds.number.doubleValue - referenceOffset
                if double.isFinite { return Date(timeIntervalSinceReferenceDate: double) }
            }
            if let number = value as? NSNumber, !isBoolean(number), number.doubleValue.isFinite {
                return Date(timeIntervalSinceReferenceDate: number.doubleValue - referenceOffset)
            }
            throw mismatch(Date.self, "a number of seconds since 1970 under \"$date\"", value, path)
        case data:
            if let string = value as? String, let data = Data(base64Encoded: string) { return data }
            throw mismatch(Data.self, "a Base64 string under \"$data\"", value, path)
        case double:
            switch value as? String {
            case "nan": return Double.nan
            case "inf": return Double.infinity
            case "-inf": return -Double.infinity
            default: throw mismatch(Double.self, "\"nan\", \"inf\" or \"-inf\" under \"$double\"", value, path)
            }
        case escape:
            guard let dictionary = value as? [String: Any] else {
                throw mismatch([String: Any].self, "an object under \"$escape\"", value, path)
            }
            return try read(dictionary: dictionary, path: path)
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path,
                    debugDescription: "Unknown tag \"\(tag)\": a one-key object whose key starts with $ is reserved; "
                        + "wrap a dictionary of your own in {\"$escape\": …}."
                )
            )
        }
    }

    private static func mismatch(_ type: Any.Type, _ expected: String, _ value: Any, _ path: [any CodingKey])
        -> DecodingError
    {
        .typeMismatch(
            type,
            .init(codingPath: path, debugDescription: "Expected \(expected) but found \(kind(of: value)).")
        )
    }

    /// A JSON-ish name for what was found, for error messages.
    static func kind(of value: Any) -> String {
        switch value {
        case is String: "a string"
        case is WireDateSeconds: "a number"
        case is Date: "a date"
        case is Data: "data"
        case is Double: "a number"
        case let number as NSNumber: isBoolean(number) ? "a boolean" : "a number"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is NSNull: "null"
        default: "\(type(of: value))"
        }
    }
}
