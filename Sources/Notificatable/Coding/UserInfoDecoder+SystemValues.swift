import Foundation

// MARK: - Dates and data

extension Date: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Date {
        if let date = value as? Date { return date }
        if ValueKind.isNull(value) {
            throw decoder.mismatch(value, as: Date.self, expected: "a date", parent: parent, component: component)
        }
        switch decoder.options.dateStrategy {
        case .deferredToDate:
            return try decoder.decodeNested(value, as: Date.self, at: decoder.node(parent, component)) {
                try Date(from: $0)
            }
        case .secondsSince1970:
            let seconds = try Double.unbox(value, decoder: decoder, parent: parent, component: component)
            return Date(timeIntervalSince1970: seconds)
        case .millisecondsSince1970:
            let milliseconds = try Double.unbox(value, decoder: decoder, parent: parent, component: component)
            return Date(timeIntervalSince1970: milliseconds / 1000)
        case .iso8601:
            return try decoder.parseString(
                value, parent: parent, component: component, parse: { ISO8601.date(from: $0) }
            ) {
                "Expected an ISO 8601 date but found \"\($0)\"."
            }
        case .formatted(let formatter):
            return try decoder.parseString(
                value, parent: parent, component: component, parse: { formatter.date(from: $0) }
            ) {
                "The date \"\($0)\" does not match the formatter's format."
            }
        case .custom(let read):
            return try decoder.decodeNested(value, as: Date.self, at: decoder.node(parent, component)) { try read($0) }
        }
    }
}

/// ISO 8601 parsing and formatting, with and without fractional seconds. `ISO8601DateFormatter` is thread-safe.
enum ISO8601 {
    nonisolated(unsafe) private static let plain: ISO8601DateFormatter = ISO8601DateFormatter()
    nonisolated(unsafe) private static let fractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    static func date(from string: String) -> Date? {
        plain.date(from: string) ?? fractional.date(from: string)
    }

    /// Writes whole seconds: the fraction of a second is lost, as with `JSONEncoder`'s `.iso8601`.
    static func string(from date: Date) -> String { plain.string(from: date) }
}

extension Data: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Data {
        if let data = value as? Data { return data }
        if ValueKind.isNull(value) {
            throw decoder.mismatch(value, as: Data.self, expected: "data", parent: parent, component: component)
        }
        switch decoder.options.dataStrategy {
        case .deferredToData:
            return try decoder.decodeNested(value, as: Data.self, at: decoder.node(parent, component)) {
                try Data(from: $0)
            }
        case .base64:
            return try decoder.parseString(
                value, parent: parent, component: component, parse: { Data(base64Encoded: $0) }
            ) { _ in
                "Expected Base64-encoded data but the string is not valid Base64."
            }
        case .custom(let read):
            return try decoder.decodeNested(value, as: Data.self, at: decoder.node(parent, component)) { try read($0) }
        }
    }
}

// MARK: - URL, UUID, Decimal

extension UserInfoDecoderImpl {
    /// Reads a string and parses it; a string that does not parse is `dataCorrupted` with `message(string)`.
    func parseString<T>(
        _ value: Any, parent: CodingPathNode, component: PathComponent?, parse: (String) -> T?,
        message: (String) -> String
    ) throws -> T {
        let string = try String.unbox(value, decoder: self, parent: parent, component: component)
        guard let result = parse(string) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(parent, component), debugDescription: message(string)))
        }
        return result
    }
}

extension URL: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> URL {
        if let url = value as? URL { return url }
        if ValueKind.isString(value) {
            return try decoder.parseString(value, parent: parent, component: component, parse: URL.init(string:)) {
                "Expected a URL but found the string \"\($0)\", which is not a valid URL."
            }
        }
        return try decoder.retryOrMismatch(
            value, as: URL.self, expected: "a URL or a string", parent: parent, component: component
        )
    }
}

extension UUID: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> UUID {
        if let uuid = value as? UUID { return uuid }
        if ValueKind.isString(value) {
            return try decoder.parseString(value, parent: parent, component: component, parse: UUID.init(uuidString:)) {
                "Expected a UUID but found the string \"\($0)\"."
            }
        }
        return try decoder.retryOrMismatch(
            value, as: UUID.self, expected: "a UUID or a string", parent: parent, component: component
        )
    }
}

extension Decimal: UserInfoDecodable {
    /// Reads any number exactly, and the decimal string that ``UserInfoEncoder`` writes for a `Decimal`.
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Decimal {
        if let number = NumberValue(value), let decimal = number.decimal { return decimal }
        if ValueKind.isString(value) {
            return try decoder.parseString(value, parent: parent, component: component, parse: decimal(fromEncoded:)) {
                "Expected a decimal number but found the string \"\($0)\"."
            }
        }
        if let number = NumberValue(value) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.path(parent, component),
                    debugDescription: "Number \(number.description) does not fit in Decimal."
                )
            )
        }
        return try decoder.retryOrMismatch(
            value, as: Decimal.self, expected: "a number", parent: parent, component: component
        )
    }

    /// Parses the whole string as a decimal number in the POSIX locale, or returns `nil`.
    static func decimal(fromEncoded string: String) -> Decimal? {
        // `Decimal.nan.description`, which the encoder writes for NaN.
        if string == "NaN" { return .nan }
        guard isDecimalLiteral(string) else { return nil }
        return Decimal(string: string, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// Whether the whole string is `[+-]? (digits [. digits] | . digits) ([eE] [+-]? digits)?`. `Decimal(string:)`
    /// alone is not enough: it reads the longest prefix it understands, so `"1.2.3"` gives 1.2 and `"+"` gives 0.
    private static func isDecimalLiteral(_ string: String) -> Bool {
        var rest = string.utf8[...]
        func skipSign() {
            if let first = rest.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                rest = rest.dropFirst()
            }
        }
        func skipDigits() -> Int {
            let count = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            rest = rest.dropFirst(count)
            return count
        }
        skipSign()
        var mantissaDigits = skipDigits()
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            mantissaDigits += skipDigits()
        }
        guard mantissaDigits > 0 else { return false }
        if let first = rest.first, first == UInt8(ascii: "e") || first == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            skipSign()
            guard skipDigits() > 0 else { return false }
        }
        return rest.isEmpty
    }
}

// MARK: - Geometry

extension CGRect: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGRect {
        try decoder.unboxGeometry(
            value, kind: .rect, parent: parent, component: component, array: GeometryArray.rect
        ) { GeometryString.rect($0) }
    }
}

extension CGPoint: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGPoint {
        try decoder.unboxGeometry(
            value, kind: .point, parent: parent, component: component,
            array: { GeometryArray.pair($0).map { CGPoint(x: $0, y: $1) } }
        ) { GeometryString.pair($0).map { CGPoint(x: $0, y: $1) } }
    }
}

extension CGSize: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGSize {
        try decoder.unboxGeometry(
            value, kind: .size, parent: parent, component: component,
            array: { GeometryArray.pair($0).map { CGSize(width: $0, height: $1) } }
        ) { GeometryString.pair($0).map { CGSize(width: $0, height: $1) } }
    }
}

extension NSRange: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> NSRange {
        try decoder.unboxGeometry(
            value, kind: .range, parent: parent, component: component, array: GeometryArray.range
        ) { string in
            guard let (location, length) = GeometryString.pair(string),
                let location = Int(exactly: location), let length = Int(exactly: length), location >= 0, length >= 0
            else { return nil }
            return NSRange(location: location, length: length)
        }
    }
}

extension UserInfoDecoderImpl {
    /// Reads a geometry value from an `NSValue`, from its string form, or, through its own `Decodable`
    /// conformance, from its array form.
    func unboxGeometry<T: Decodable>(
        _ value: Any, kind: GeometryKind, parent: CodingPathNode, component: PathComponent?,
        array readArray: (UnkeyedStorage) -> T?, parse: (String) -> T?
    ) throws -> T {
        if let boxed = Self.geometryValue(value) {
            if let result = boxed.geometry(T.self, kind: kind) { return result }
            throw DecodingError.typeMismatch(
                T.self,
                .init(
                    codingPath: path(parent, component),
                    debugDescription: "Expected an NSValue holding \(kind) but found \(ValueKind.describe(value))."
                )
            )
        }
        if ValueKind.isString(value) {
            let string = try unboxString(value, parent: parent, component: component)
            guard let result = parse(string) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: path(parent, component),
                        debugDescription: "Expected \(kind) in the form \(kind.stringForm) but found \"\(string)\"."
                    )
                )
            }
            return result
        }
        if let array = UnkeyedStorage(value) {
            if let result = readArray(array) { return result }
            // Not the expected shape: the type's own `Decodable` form reports exactly where it differs.
            return try decodeNested(value, as: T.self, at: node(parent, component)) { try T(from: $0) }
        }
        if let flattened = ValueKind.flattenOptional(value), Swift.type(of: flattened) != NSNull.self {
            return try unboxGeometry(
                flattened, kind: kind, parent: parent, component: component, array: readArray, parse: parse
            )
        }
        throw mismatch(
            value, as: T.self, expected: "an NSValue, an array or a string", parent: parent, component: component
        )
    }
}

extension UserInfoDecoderImpl {
    /// `value` as an `NSValue` that is not an `NSNumber`, or `nil`. The class that Foundation on Linux uses for
    /// `NSValue(rect:)` and its siblings is recognised by its exact class, without a runtime cast.
    static func geometryValue(_ value: Any) -> NSValue? {
        // apple-check: a fast path for Linux's class of `NSValue(rect:)`; the general check below serves both branches
        #if !canImport(Darwin)
        if let boxed = exactObject(value, ofClass: GeometryKind.specialValueClass, as: NSValue.self) { return boxed }
        #endif
        guard Swift.type(of: value) is NSValue.Type, let boxed = value as? NSValue, !(boxed is NSNumber) else {
            return nil
        }
        return boxed
    }
}

/// The geometry kinds that the system boxes in `NSValue`.
enum GeometryKind: CustomStringConvertible {
    case rect, point, size, range

    var description: String {
        switch self {
        case .rect: "CGRect"
        case .point: "CGPoint"
        case .size: "CGSize"
        case .range: "NSRange"
        }
    }

    var stringForm: String {
        switch self {
        case .rect: "\"{{x, y}, {width, height}}\""
        case .point: "\"{x, y}\""
        case .size: "\"{width, height}\""
        case .range: "\"{location, length}\""
        }
    }
}

/// Reads the `Codable` array forms directly: `[[x, y], [w, h]]` for a rectangle, `[a, b]` for the others.
enum GeometryArray {
    static func rect(_ array: UnkeyedStorage) -> CGRect? {
        guard array.count == 2, let origin = UnkeyedStorage(array[0]).flatMap(pair),
            let size = UnkeyedStorage(array[1]).flatMap(pair)
        else { return nil }
        return CGRect(x: origin.0, y: origin.1, width: size.0, height: size.1)
    }

    static func range(_ array: UnkeyedStorage) -> NSRange? {
        guard array.count == 2, let location = NumberValue(array[0])?.exactly(Int.self),
            let length = NumberValue(array[1])?.exactly(Int.self)
        else { return nil }
        return NSRange(location: location, length: length)
    }

    static func pair(_ array: UnkeyedStorage) -> (Double, Double)? {
        guard array.count == 2, let first = NumberValue(array[0]), let second = NumberValue(array[1]) else {
            return nil
        }
        return (first.double, second.double)
    }
}

/// Parses the strings that `NSStringFromCGRect` and friends write: `"{{x, y}, {w, h}}"` and `"{a, b}"`.
enum GeometryString {
    static func pair(_ string: String) -> (Double, Double)? {
        let compact = string.filter { !$0.isWhitespace }
        guard compact.hasPrefix("{"), compact.hasSuffix("}"), compact.count >= 2 else { return nil }
        let parts = compact.dropFirst().dropLast().split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Double(parts[0]), let second = Double(parts[1]) else { return nil }
        return (first, second)
    }

    static func rect(_ string: String) -> CGRect? {
        let compact = string.filter { !$0.isWhitespace }
        guard compact.hasPrefix("{{"), compact.hasSuffix("}}") else { return nil }
        let inner = compact.dropFirst().dropLast()
        let halves = inner.components(separatedBy: "},{")
        guard halves.count == 2, let origin = pair(halves[0] + "}"), let size = pair("{" + halves[1]) else {
            return nil
        }
        return CGRect(x: origin.0, y: origin.1, width: size.0, height: size.1)
    }
}
