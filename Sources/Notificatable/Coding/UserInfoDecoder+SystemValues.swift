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
            return try decoder.readingAs(
                Date.self, "seconds since 2001-01-01 as a number, or a Date", value, parent, component
            ) {
                try decoder.decodeNested(value, as: Date.self, at: decoder.node(parent, component)) {
                    try Date(from: $0)
                }
            }
        case .secondsSince1970:
            let seconds = try decoder.readingAs(
                Date.self, "seconds since 1970 as a number, or a Date", value, parent, component
            ) { try Double.unbox(value, decoder: decoder, parent: parent, component: component) }
            return Date(timeIntervalSince1970: seconds)
        case .millisecondsSince1970:
            let milliseconds = try decoder.readingAs(
                Date.self, "milliseconds since 1970 as a number, or a Date", value, parent, component
            ) { try Double.unbox(value, decoder: decoder, parent: parent, component: component) }
            return Date(timeIntervalSince1970: milliseconds / 1000)
        case .iso8601:
            return try decoder.readingAs(Date.self, "an ISO 8601 string, or a Date", value, parent, component) {
                try decoder.parseString(value, parent: parent, component: component, parse: { ISO8601.date(from: $0) })
                {
                    "Expected an ISO 8601 date but found \"\($0)\"."
                }
            }
        case .formatted(let formatter):
            return try decoder.readingAs(
                Date.self, "a string in the formatter's format, or a Date", value, parent, component
            ) {
                try decoder.parseString(
                    value, parent: parent, component: component, parse: { formatter.date(from: $0) }
                ) {
                    "The date \"\($0)\" does not match the formatter's format."
                }
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
            return try decoder.readingAs(Data.self, "an array of bytes, or a Data", value, parent, component) {
                try decoder.decodeNested(value, as: Data.self, at: decoder.node(parent, component)) {
                    try Data(from: $0)
                }
            }
        case .base64:
            return try decoder.readingAs(Data.self, "a Base64 string, or a Data", value, parent, component) {
                try decoder.parseString(
                    value, parent: parent, component: component, parse: { Data(base64Encoded: $0) }
                ) { _ in
                    "Expected Base64-encoded data but the string is not valid Base64."
                }
            }
        case .custom(let read):
            return try decoder.decodeNested(value, as: Data.self, at: decoder.node(parent, component)) { try read($0) }
        }
    }
}

// MARK: - URL, UUID, Decimal

extension UserInfoDecoderImpl {
    /// Runs the reader of a date or data strategy. A value of the wrong kind at this very path is reported as a
    /// mismatch of `type`, the type the user declared, with the form the strategy in force reads ("Expected a Date
    /// (seconds since 1970 as a number, or a Date) but found a string."), not as one of the `Double`, `String` or
    /// array the strategy reads it through. Errors deeper down (an element of a byte array) pass unchanged.
    func readingAs<T>(
        _ type: Any.Type, _ form: String, _ value: Any, _ parent: CodingPathNode, _ component: PathComponent?,
        _ read: () throws -> T
    ) throws -> T {
        do {
            return try read()
        } catch DecodingError.typeMismatch(let internalType, let context) {
            let here = path(parent, component)
            guard context.codingPath.count == here.count else {
                throw DecodingError.typeMismatch(internalType, context)
            }
            throw DecodingError.typeMismatch(
                type,
                .init(
                    codingPath: here,
                    debugDescription: "Expected a \(type) (\(form)) but found \(ValueKind.describe(value))."))
        }
    }

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

/// A geometry type that the system boxes in `NSValue`. The decoder reads it from an `NSValue`, from its `Codable`
/// array form, or from the string that `NSStringFromCGRect` and its siblings write.
protocol UserInfoGeometry: Decodable {
    static var geometryKind: GeometryKind { get }
    /// Reads the array form; `nil` when `array` does not have exactly its shape.
    static func read<Elements: GeometryElements>(array: Elements) -> Self?
    /// Parses the string form; `nil` when the string is not in it.
    static func parse(_ string: String) -> Self?
}

extension CGRect: UserInfoDecodable, UserInfoGeometry {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGRect {
        try decoder.unboxGeometry(value, as: CGRect.self, parent: parent, component: component)
    }

    static var geometryKind: GeometryKind { .rect }

    static func read<Elements: GeometryElements>(array: Elements) -> CGRect? {
        guard array.count == 2, let origin = GeometryArray.pair(array, at: 0),
            let size = GeometryArray.pair(array, at: 1)
        else { return nil }
        return CGRect(x: origin.0, y: origin.1, width: size.0, height: size.1)
    }

    static func parse(_ string: String) -> CGRect? { GeometryString.rect(string) }
}

extension CGPoint: UserInfoDecodable, UserInfoGeometry {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGPoint {
        try decoder.unboxGeometry(value, as: CGPoint.self, parent: parent, component: component)
    }

    static var geometryKind: GeometryKind { .point }

    static func read<Elements: GeometryElements>(array: Elements) -> CGPoint? {
        GeometryArray.pair(array).map { CGPoint(x: $0, y: $1) }
    }

    static func parse(_ string: String) -> CGPoint? { GeometryString.pair(string).map { CGPoint(x: $0, y: $1) } }
}

extension CGSize: UserInfoDecodable, UserInfoGeometry {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> CGSize {
        try decoder.unboxGeometry(value, as: CGSize.self, parent: parent, component: component)
    }

    static var geometryKind: GeometryKind { .size }

    static func read<Elements: GeometryElements>(array: Elements) -> CGSize? {
        GeometryArray.pair(array).map { CGSize(width: $0, height: $1) }
    }

    static func parse(_ string: String) -> CGSize? {
        GeometryString.pair(string).map { CGSize(width: $0, height: $1) }
    }
}

extension NSRange: UserInfoDecodable, UserInfoGeometry {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> NSRange {
        try decoder.unboxGeometry(value, as: NSRange.self, parent: parent, component: component)
    }

    static var geometryKind: GeometryKind { .range }

    static func read<Elements: GeometryElements>(array: Elements) -> NSRange? {
        guard array.count == 2, let location = NumberValue(array[0])?.exactly(Int.self),
            let length = NumberValue(array[1])?.exactly(Int.self)
        else { return nil }
        return NSRange(location: location, length: length)
    }

    static func parse(_ string: String) -> NSRange? {
        guard let (location, length) = GeometryString.pair(string),
            let location = Int(exactly: location), let length = Int(exactly: length), location >= 0, length >= 0
        else { return nil }
        return NSRange(location: location, length: length)
    }
}

extension UserInfoDecoderImpl {
    /// Reads a geometry value from an `NSValue`, from its array form, or from its string form. An array that does
    /// not have the expected shape is decoded through the type's own `Decodable` conformance, which reports exactly
    /// where it differs.
    func unboxGeometry<T: UserInfoGeometry>(
        _ value: Any, as type: T.Type, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        // The array form as `JSONSerialization` and the encoder write it, read in place: no container, no bridging.
        // First, because recognising it costs a comparison, where recognising an `NSValue` asks the runtime.
        if let array = GeometryArray.plainArray(value) {
            if let result = T.read(array: array) { return result }
            return try decodeNested(value, as: T.self, at: node(parent, component)) { try T(from: $0) }
        }
        if let boxed = Self.geometryValue(value) {
            if let result = boxed.geometry(T.self, kind: T.geometryKind) { return result }
            throw DecodingError.typeMismatch(
                T.self,
                .init(
                    codingPath: path(parent, component),
                    debugDescription:
                        "Expected an NSValue holding \(T.geometryKind) but found \(ValueKind.describe(value))."
                )
            )
        }
        if ValueKind.isString(value) {
            let string = try unboxString(value, parent: parent, component: component)
            guard let result = T.parse(string) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: path(parent, component),
                        debugDescription:
                            "Expected \(T.geometryKind) in the form \(T.geometryKind.stringForm) but found \"\(string)\"."
                    )
                )
            }
            return result
        }
        if let array = UnkeyedStorage(value) {
            if let result = T.read(array: array) { return result }
            return try decodeNested(value, as: T.self, at: node(parent, component)) { try T(from: $0) }
        }
        if let flattened = ValueKind.flattenOptional(value), Swift.type(of: flattened) != NSNull.self {
            return try unboxGeometry(flattened, as: T.self, parent: parent, component: component)
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
        if let boxed = specialValue(value)
            ?? exactObject(value, ofClass: GeometryKind.specialValueClass, as: NSValue.self)
        {
            return boxed
        }
        #endif
        guard Swift.type(of: value) is NSValue.Type, let boxed = value as? NSValue, !(boxed is NSNumber) else {
            return nil
        }
        return boxed
    }

    // apple-check: serves the Linux fast path above
    #if !canImport(Darwin)
    /// An `NSValue` of Linux's class for `NSValue(rect:)` and its siblings, boxed as `NSValue` (as a dictionary
    /// literal of them boxes them), or `nil`. Generic, so that the class is read from the object, where
    /// `Swift.type(of:)` on an `Any` asks the runtime to look into the existential.
    static func specialValue<Value>(_ value: Value) -> NSValue? {
        guard let boxed = exactly(value, as: NSValue.self),
            ObjectIdentifier(Swift.type(of: boxed)) == ObjectIdentifier(GeometryKind.specialValueClass)
        else { return nil }
        return boxed
    }
    #endif
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

/// The elements of an array form: an exact `[Any]`, or any other array the decoder reads.
protocol GeometryElements {
    var count: Int { get }
    subscript(index: Int) -> Any { get }
}

extension Array: GeometryElements where Element == Any {}
extension UnkeyedStorage: GeometryElements {}

/// Reads the `Codable` array forms directly: `[[x, y], [w, h]]` for a rectangle, `[a, b]` for the others.
///
/// Each element is read first by ``plainNumber(_:)`` or ``plainArray(_:)``, generic functions that the element is
/// passed to as it is stored in the array, borrowed; only when that fails is it read again and handed to the general
/// readers, which take an `Any` parameter, for which the element is copied (a retain and a release more). Those two
/// stay generic functions of their own, not `@inline(__always)`: inlined, they too made the compiler copy the element.
enum GeometryArray {
    /// `[a, b]` of two numbers. Not inlined: the elements of an array made inside the caller (the halves of a
    /// rectangle) were copied when it was.
    @inline(never)
    static func pair<Elements: GeometryElements>(_ array: Elements) -> (Double, Double)? {
        guard array.count == 2, let first = number(array, at: 0), let second = number(array, at: 1) else {
            return nil
        }
        return (first, second)
    }

    /// `[a, b]` of two numbers, as element `index` of a rectangle's array form.
    @inline(__always)
    static func pair<Elements: GeometryElements>(_ array: Elements, at index: Int) -> (Double, Double)? {
        if let inner = plainArray(array[index]) { return pair(inner) }
        return UnkeyedStorage(array[index]).flatMap { pair($0) }
    }

    /// Element `index` as a number, read as ``NumberValue`` reads it, as a `Double`.
    @inline(__always)
    static func number<Elements: GeometryElements>(_ array: Elements, at index: Int) -> Double? {
        if let number = plainNumber(array[index]) { return number }
        return NumberValue(array[index])?.double
    }

    /// A plain `NSNumber` (not a boolean, not an `NSDecimalNumber`) boxed as `NSNumber`, as `JSONSerialization`
    /// and array literals of `NSNumber`s box them, or a `Double`; `nil` for anything else.
    static func plainNumber<Value>(_ value: Value) -> Double? {
        if let double = exactly(value, as: Double.self) { return double }
        guard let number = exactly(value, as: NSNumber.self) else { return nil }
        let type = ObjectIdentifier(Swift.type(of: number))
        guard
            type == ObjectIdentifier(ValueKind.floatingNumberClass)
                || type == ObjectIdentifier(ValueKind.integerNumberClass)
        else { return nil }
        return NumberValue(plainNumber: number).double
    }

    /// An exact `[Any]`; `nil` for anything else.
    static func plainArray<Value>(_ value: Value) -> [Any]? { exactly(value, as: [Any].self) }
}

/// `value` as `T` when its type is exactly `T`, as in ``exactCast(_:to:)``.
@inline(__always)
func exactly<V, T>(_ value: V, as type: T.Type) -> T? {
    guard V.self == T.self else { return nil }
    return unsafeBitCast(value, to: T.self)
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
