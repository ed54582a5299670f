import Foundation

/// A number read from a `userInfo` value, kept in the widest form that holds it exactly.
enum NumberValue {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case decimal(Decimal)

    /// Reads a number. Booleans, strings and everything else give `nil`: a boolean is never a number.
    init?(_ value: Any) {
        if let number = exactObject(value, ofClass: ValueKind.floatingNumberClass, as: NSNumber.self)
            ?? exactObject(value, ofClass: ValueKind.integerNumberClass, as: NSNumber.self)
        {
            // Exactly the plain number class, so not an `NSDecimalNumber`.
            self.init(plainNumber: number)
            return
        }
        if let int = exactCast(value, to: Int.self) {
            self = .int(Int64(int))
            return
        }
        if let double = exactCast(value, to: Double.self) {
            self = .double(double)
            return
        }
        let type = Swift.type(of: value)
        if type is NSNumber.Type {
            // `answersObjCType`: an `NSNumber` subclass on Apple platforms may not implement `objCType`.
            guard type != ValueKind.booleanNumberClass, let number = value as? NSNumber, number.answersObjCType else {
                return nil
            }
            self.init(number: number)
        } else if type is AnyClass {
            return nil
        } else if let int = value as? any BinaryInteger {
            if let signed = Int64(exactly: int) {
                self = .int(signed)
            } else if let unsigned = UInt64(exactly: int) {
                self = .uint(unsigned)
            } else {
                return nil
            }
        } else if type == Float.self, let float = value as? Float {
            self = .double(Double(float))
        } else if type == CGFloat.self, let float = value as? CGFloat {
            self = .double(Double(float))
        } else if type == Decimal.self, let decimal = value as? Decimal {
            self = .decimal(decimal)
        } else if let float = value as? any BinaryFloatingPoint {
            self = .double(Double(float))
        } else {
            return nil
        }
    }

    /// Reads an `NSNumber` by the type it was created with, so that 64-bit integers and unsigned values stay exact.
    init(number: NSNumber) {
        if let decimal = number as? NSDecimalNumber {
            self = .decimal(decimal.decimalValue)
            return
        }
        self.init(plainNumber: number)
    }

    /// Reads an `NSNumber` known not to be an `NSDecimalNumber`.
    init(plainNumber number: NSNumber) {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "s"), UInt8(ascii: "i"), UInt8(ascii: "l"), UInt8(ascii: "q"):
            self = .int(number.int64Value)
        case UInt8(ascii: "C"), UInt8(ascii: "S"), UInt8(ascii: "I"), UInt8(ascii: "L"), UInt8(ascii: "Q"):
            self = .uint(number.uint64Value)
        default:
            self = .double(number.doubleValue)
        }
    }

    /// The value as `T` if it is integral and fits, otherwise `nil`.
    func exactly<T: FixedWidthInteger>(_: T.Type) -> T? {
        switch self {
        case .int(let value): return T(exactly: value)
        case .uint(let value): return T(exactly: value)
        case .double(let value): return T(exactly: value)
        case .decimal(let value):
            guard !value.isNaN, value.roundedToInteger == value else { return nil }
            return T(value.roundedToInteger.description)
        }
    }

    /// The nearest `Double`.
    var double: Double {
        switch self {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .double(let value): value
        // `NSDecimalNumber.doubleValue` is not correctly rounded (1e-10 reads as 1.0000000000000003e-10); parsing the
        // plain decimal digits of `description` is.
        case .decimal(let value): Double(value.description) ?? NSDecimalNumber(decimal: value).doubleValue
        }
    }

    /// The value as an exact `Decimal`; a `Double` goes through its shortest decimal representation, so `0.1` reads
    /// as exactly `0.1`.
    var decimal: Decimal? {
        switch self {
        case .int(let value): return Decimal(value)
        case .uint(let value): return Decimal(value)
        case .double(let value):
            guard value.isFinite else { return value.isNaN ? Decimal.nan : nil }
            return Decimal(string: "\(value)", locale: Locale(identifier: "en_US_POSIX"))
        case .decimal(let value): return value
        }
    }

    var isIntegral: Bool {
        switch self {
        case .int, .uint: true
        case .double(let value): value.isFinite && value.rounded(.towardZero) == value
        case .decimal(let value):
            if value.isNaN { false } else { value.roundedToInteger == value }
        }
    }

    /// Whether the number was stored as an integer (not as a floating-point or decimal value).
    var isStoredAsInteger: Bool {
        switch self {
        case .int, .uint: true
        case .double, .decimal: false
        }
    }

    var description: String {
        switch self {
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .double(let value): "\(value)"
        case .decimal(let value): "\(value)"
        }
    }
}

// MARK: - Reading numbers and booleans

extension UserInfoDecoderImpl {
    func unboxInteger<T: FixedWidthInteger & UserInfoDecodable>(
        _ value: Any, as type: T.Type, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        if let number = NumberValue(value) {
            if let result = number.exactly(T.self) { return result }
            let reason = number.isIntegral ? "" : " is not an integer, so it"
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path(parent, component),
                    debugDescription: "Number \(number.description)\(reason) does not fit in \(T.self)."
                )
            )
        }
        return try retryOrMismatch(value, as: T.self, expected: "a number", parent: parent, component: component)
    }

    func unboxFloatingPoint<T: BinaryFloatingPoint & UserInfoDecodable>(
        _ value: Any, as type: T.Type, parent: CodingPathNode, component: PathComponent?
    ) throws -> T {
        if let number = NumberValue(value) {
            let double = number.double
            let result = T(double)
            if double.isFinite && !result.isFinite {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: path(parent, component),
                        debugDescription: "Number \(number.description) does not fit in \(T.self)."
                    )
                )
            }
            return result
        }
        return try retryOrMismatch(value, as: T.self, expected: "a number", parent: parent, component: component)
    }

    func unboxBool(_ value: Any, parent: CodingPathNode, component: PathComponent?) throws -> Bool {
        if let bool = exactCast(value, to: Bool.self) { return bool }
        if let number = exactObject(value, ofClass: ValueKind.booleanNumberClass, as: NSNumber.self) {
            return number.boolValue
        }
        if let number = NumberValue(value), number.isStoredAsInteger {
            // Objective-C code often stores BOOL as the integers 0 and 1.
            switch number.exactly(Int8.self) {
            case 0: return false
            case 1: return true
            default:
                throw DecodingError.typeMismatch(
                    Bool.self,
                    .init(
                        codingPath: path(parent, component),
                        debugDescription: "Expected a boolean but found the number \(number.description); "
                            + "only 0 and 1 read as booleans."
                    )
                )
            }
        }
        return try retryOrMismatch(value, as: Bool.self, expected: "a boolean", parent: parent, component: component)
    }

    func unboxString(_ value: Any, parent: CodingPathNode, component: PathComponent?) throws -> String {
        if let string = exactCast(value, to: String.self) { return string }
        let type = Swift.type(of: value)
        if type is NSString.Type, let string = value as? NSString { return String(string) }
        if type == Substring.self, let string = value as? Substring { return String(string) }
        return try retryOrMismatch(value, as: String.self, expected: "a string", parent: parent, component: component)
    }
}

// MARK: - Primitive conformances

extension Int: UserInfoDecodable {}
extension Int8: UserInfoDecodable {}
extension Int16: UserInfoDecodable {}
extension Int32: UserInfoDecodable {}
extension Int64: UserInfoDecodable {}
extension UInt: UserInfoDecodable {}
extension UInt8: UserInfoDecodable {}
extension UInt16: UserInfoDecodable {}
extension UInt32: UserInfoDecodable {}
extension UInt64: UserInfoDecodable {}

extension FixedWidthInteger where Self: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Self {
        try decoder.unboxInteger(value, as: Self.self, parent: parent, component: component)
    }
}

extension Double: UserInfoDecodable {}
extension Float: UserInfoDecodable {}
extension CGFloat: UserInfoDecodable {}

extension BinaryFloatingPoint where Self: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Self {
        try decoder.unboxFloatingPoint(value, as: Self.self, parent: parent, component: component)
    }
}

extension Bool: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> Bool {
        try decoder.unboxBool(value, parent: parent, component: component)
    }
}

extension String: UserInfoDecodable {
    static func unbox(
        _ value: Any, decoder: UserInfoDecoderImpl, parent: CodingPathNode, component: PathComponent?
    ) throws -> String {
        try decoder.unboxString(value, parent: parent, component: component)
    }
}

extension Decimal {
    /// The value rounded to an integer, half away from zero.
    var roundedToInteger: Decimal {
        var result = Decimal()
        var source = self
        NSDecimalRound(&result, &source, 0, .plain)
        return result
    }
}
