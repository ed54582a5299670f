import Foundation
import Notificatable
import Testing

// Numbers are normalised exactly: an integer target accepts any integral value that fits, whatever boxed it; a
// boolean is never a number; a String is never a number and a number is never a String.

/// The integer widths, so that one parameterized test covers each of them at both edges.
enum IntegerWidth: String, CaseIterable, CustomTestStringConvertible {
    case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
    var testDescription: String { rawValue }

    func checkEdges() throws {
        switch self {
        case .int: try checkIntegerEdges(Int.self)
        case .int8: try checkIntegerEdges(Int8.self)
        case .int16: try checkIntegerEdges(Int16.self)
        case .int32: try checkIntegerEdges(Int32.self)
        case .int64: try checkIntegerEdges(Int64.self)
        case .uint: try checkIntegerEdges(UInt.self)
        case .uint8: try checkIntegerEdges(UInt8.self)
        case .uint16: try checkIntegerEdges(UInt16.self)
        case .uint32: try checkIntegerEdges(UInt32.self)
        case .uint64: try checkIntegerEdges(UInt64.self)
        }
    }
}

/// Every way a `userInfo` may hold the integer written as `text`: each Swift integer type and an `NSNumber` made with
/// that width (where the value fits it), `Double` and `Float` (where they hold it exactly), `Decimal` and
/// `NSDecimalNumber`.
func integerRepresentations(of text: String) throws -> [(label: String, value: Any)] {
    var result: [(label: String, value: Any)] = []
    func add<T: FixedWidthInteger>(_ type: T.Type, _ makeNumber: (T) -> NSNumber) {
        guard let value = T(text) else { return }
        result.append(("Swift \(T.self)", value))
        result.append(("NSNumber(\(T.self))", makeNumber(value)))
    }
    add(Int.self) { NSNumber(value: $0) }
    add(Int8.self) { NSNumber(value: $0) }
    add(Int16.self) { NSNumber(value: $0) }
    add(Int32.self) { NSNumber(value: $0) }
    add(Int64.self) { NSNumber(value: $0) }
    add(UInt.self) { NSNumber(value: $0) }
    add(UInt8.self) { NSNumber(value: $0) }
    add(UInt16.self) { NSNumber(value: $0) }
    add(UInt32.self) { NSNumber(value: $0) }
    add(UInt64.self) { NSNumber(value: $0) }
    if let double = Double(text), String(format: "%.0f", double) == text {
        result.append(("Swift Double", double))
        result.append(("NSNumber(Double)", NSNumber(value: double)))
    }
    if let float = Float(text), String(format: "%.0f", Double(float)) == text {
        result.append(("Swift Float", float))
        result.append(("NSNumber(Float)", NSNumber(value: float)))
    }
    let decimal = try #require(Decimal(string: text))
    #expect(decimal.description == text)
    result.append(("Decimal", decimal))
    result.append(("NSDecimalNumber", NSDecimalNumber(decimal: decimal)))
    return result
}

/// Checks `T` at 0, min, max, min − 1 and max + 1, from every representation.
func checkIntegerEdges<T: FixedWidthInteger & Codable>(_ type: T.Type) throws {
    let min = Decimal(string: String(T.min)) ?? 0
    let max = Decimal(string: String(T.max)) ?? 0
    let inRange = ["0", String(T.min), String(T.max)]
    let outOfRange = [(min - 1).description, (max + 1).description]
    #expect(T(outOfRange[0]) == nil && T(outOfRange[1]) == nil)

    for text in inRange {
        let expected = try #require(T(text))
        let representations = try integerRepresentations(of: text)
        #expect(representations.count >= 6)
        for (label, value) in representations {
            let decoded = try decodeBoxed(T.self, value)
            #expect(decoded == expected, "\(T.self) from \(label) \(text)")
            // The same through an unkeyed container and a top-level single value.
            #expect(try UserInfoDecoder().decode([T].self, fromValue: [value]) == [expected], "\(label) \(text)")
            #expect(try UserInfoDecoder().decode(T.self, fromValue: value) == expected, "\(label) \(text)")
        }
    }
    for text in outOfRange {
        let representations = try integerRepresentations(of: text)
        #expect(representations.count >= 2)
        for (label, value) in representations {
            let context = expectDecodingError(.dataCorrupted, at: ["value"], message: "does not fit in \(T.self)") {
                try decodeBoxed(T.self, value)
            }
            #expect(context != nil, "\(T.self) from \(label) \(text)")
            expectDecodingError(.dataCorrupted, at: [2], message: "does not fit") {
                try UserInfoDecoder().decode([T].self, fromValue: [NSNumber(value: 1), 2 as Int, value])
            }
        }
    }
}

@Suite("UserInfoDecoder: numbers")
struct UserInfoDecoderNumberTests {
    @Test(arguments: IntegerWidth.allCases)
    func integerEdges(width: IntegerWidth) throws {
        try width.checkEdges()
    }

    @Test func outOfRangeMessageNamesTheNumberAndTheType() {
        let context = expectDecodingError(.dataCorrupted, at: ["value"], message: "300") {
            try decodeBoxed(UInt8.self, NSNumber(value: Int64(300)))
        }
        #expect(context?.debugDescription.contains("UInt8") == true)
    }

    @Test func uint64MaxFitsUInt64ButNotInt64() throws {
        let number = NSNumber(value: UInt64.max)
        #expect(try decodeBoxed(UInt64.self, number) == UInt64.max)
        #expect(try decodeBoxed(UInt.self, number) == UInt.max)
        expectDecodingError(.dataCorrupted, at: ["value"], message: "18446744073709551615") {
            try decodeBoxed(Int64.self, number)
        }
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(Int.self, UInt64.max) }
    }

    @Test(arguments: [
        Sample("Swift Double", 2.0 as Any), Sample("NSNumber(Double)", NSNumber(value: 2.0)),
        Sample("Swift Float", Float(2) as Any),
        Sample("NSNumber(Float)", NSNumber(value: Float(2))), Sample("Decimal", Decimal(2) as Any),
        Sample("NSDecimalNumber", NSDecimalNumber(string: "2.0")), Sample("CGFloat", CGFloat(2) as Any),
    ])
    func integralFloatingPointIntoInteger(sample: Sample) throws {
        #expect(try decodeBoxed(Int.self, sample.value) == 2, "\(sample.label)")
        #expect(try decodeBoxed(UInt8.self, sample.value) == 2, "\(sample.label)")
        #expect(try decodeBoxed(Int64.self, sample.value) == 2, "\(sample.label)")
    }

    @Test(arguments: [
        Sample("Swift Double", 2.5 as Any), Sample("NSNumber(Double)", NSNumber(value: 2.5)),
        Sample("Swift Float", Float(2.5) as Any),
        Sample("NSNumber(Float)", NSNumber(value: Float(2.5))), Sample("Decimal", Decimal(string: "2.5") as Any),
        Sample("NSDecimalNumber", NSDecimalNumber(string: "2.5")), Sample("negative", -0.5 as Any),
    ])
    func fractionIntoIntegerIsDataCorrupted(sample: Sample) {
        let context = expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
            try decodeBoxed(Int.self, sample.value)
        }
        #expect(context != nil, "\(sample.label)")
        expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
            try decodeBoxed(UInt32.self, sample.value)
        }
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteIntoIntegerIsDataCorrupted(value: Double) {
        for boxed in [value as Any, NSNumber(value: value), Float(value) as Any, NSNumber(value: Float(value))] {
            expectDecodingError(.dataCorrupted, at: ["value"], message: "does not fit in Int") {
                try decodeBoxed(Int.self, boxed)
            }
            expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(UInt64.self, boxed) }
        }
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(Int8.self, Decimal.nan) }
    }

    @Test func floatRejectsFiniteValuesBeyondItsRange() {
        for value in [1e300 as Any, -1e300 as Any, NSNumber(value: 1e39), Decimal(string: "1e40") as Any] {
            expectDecodingError(.dataCorrupted, at: ["value"], message: "does not fit in Float") {
                try decodeBoxed(Float.self, value)
            }
        }
        expectDecodingError(.dataCorrupted, at: ["value"], message: "Float") {
            try decodeBoxed(Float.self, Double(Float.greatestFiniteMagnitude) * 2)
        }
    }

    @Test func floatAcceptsNonFiniteAndNearestValues() throws {
        #expect(try decodeBoxed(Float.self, Double.infinity) == .infinity)
        #expect(try decodeBoxed(Float.self, -Double.infinity) == -.infinity)
        #expect(try decodeBoxed(Float.self, NSNumber(value: Double.infinity)) == .infinity)
        #expect(try decodeBoxed(Float.self, Double.nan).isNaN)
        #expect(try decodeBoxed(Float.self, NSNumber(value: Double.nan)).isNaN)
        // `NSNumber(value: 0.1) as? Float` is nil on Linux; the decoder reads the nearest Float instead.
        #expect(try decodeBoxed(Float.self, NSNumber(value: 0.1)) == Float(0.1))
        #expect(try decodeBoxed(Float.self, 0.1) == Float(0.1))
        #expect(try decodeBoxed(Float.self, Double(Float.greatestFiniteMagnitude)) == .greatestFiniteMagnitude)
        #expect(try decodeBoxed(Float.self, 16_777_217) == 16_777_216)
        #expect(try decodeBoxed(Float.self, UInt64.max) == Float(UInt64.max))
        #expect(try decodeBoxed(Float.self, Decimal(string: "0.1") as Any) == Float(0.1))
    }

    @Test func doubleReadsTheNearestValueOfAnyNumber() throws {
        #expect(try decodeBoxed(Double.self, 3) == 3)
        #expect(try decodeBoxed(Double.self, NSNumber(value: 3)) == 3)
        #expect(try decodeBoxed(Double.self, Int8(-7)) == -7)
        #expect(try decodeBoxed(Double.self, Int64.max) == 9_223_372_036_854_775_808)
        #expect(try decodeBoxed(Double.self, NSNumber(value: UInt64.max)) == 18_446_744_073_709_551_616)
        #expect(try decodeBoxed(Double.self, Float(0.1)) == Double(Float(0.1)))
        #expect(try decodeBoxed(Double.self, NSNumber(value: Float(0.5))) == 0.5)
        #expect(try decodeBoxed(Double.self, NSNumber(value: 0.1)) == 0.1)
        #expect(try decodeBoxed(Double.self, CGFloat(1.5)) == 1.5)
        #expect(try decodeBoxed(Double.self, Double.nan).isNaN)
        #expect(try decodeBoxed(Double.self, -Double.infinity) == -.infinity)
    }

    @Test(arguments: ["0.1", "0.3", "1e-10", "1e100", "3.14159265358979323846264338327950288", "123456789.123456789"])
    func doubleFromDecimalIsTheNearestDouble(text: String) throws {
        let nearest = try #require(Double(text))
        let decimal = try #require(Decimal(string: text))
        #expect(try decodeBoxed(Double.self, decimal) == nearest)
        #expect(try decodeBoxed(Double.self, NSDecimalNumber(decimal: decimal)) == nearest)
    }

    @Test func cgFloatReadsLikeDouble() throws {
        #expect(try decodeBoxed(CGFloat.self, NSNumber(value: 2.25)) == 2.25)
        #expect(try decodeBoxed(CGFloat.self, 4) == 4)
        expectDecodingError(.typeMismatch, at: ["value"]) { try decodeBoxed(CGFloat.self, "4") }
    }

    // MARK: - Booleans are never numbers

    @Test(arguments: [
        Sample("NSNumber(true)", NSNumber(value: true) as Any), Sample("NSNumber(false)", NSNumber(value: false)),
        Sample("Swift true", true), Sample("Swift false", false),
    ])
    func booleanIsNeverANumber(sample: Sample) {
        for check in [
            { _ = try decodeBoxed(Int.self, sample.value) }, { _ = try decodeBoxed(Int8.self, sample.value) },
            { _ = try decodeBoxed(UInt64.self, sample.value) }, { _ = try decodeBoxed(Double.self, sample.value) },
            { _ = try decodeBoxed(Float.self, sample.value) }, { _ = try decodeBoxed(Decimal.self, sample.value) },
        ] as [() throws -> Void] {
            let context = expectDecodingError(.typeMismatch, at: ["value"], message: "found a boolean", check)
            #expect(context != nil, "\(sample.label)")
        }
        expectDecodingError(.typeMismatch, at: [0], type: Int.self) {
            try UserInfoDecoder().decode([Int].self, fromValue: [sample.value])
        }
    }

    // MARK: - Bool

    @Test(arguments: [
        (Sample("Swift true", true as Any), true), (Sample("Swift false", false), false),
        (Sample("NSNumber(true)", NSNumber(value: true)), true),
        (Sample("NSNumber(false)", NSNumber(value: false)), false),
        (Sample("NSNumber(1)", NSNumber(value: 1)), true), (Sample("NSNumber(0)", NSNumber(value: 0)), false),
        (Sample("Swift Int 1", 1 as Int), true), (Sample("Swift Int 0", 0 as Int), false),
        (Sample("Int8 1", Int8(1)), true), (Sample("UInt64 0", UInt64(0)), false),
        (Sample("NSNumber(Int8 1)", NSNumber(value: Int8(1))), true),
        (Sample("NSNumber(UInt8 0)", NSNumber(value: UInt8(0))), false),
        (Sample("Optional(true)", Optional(true) as Any), true),
    ])
    func boolAcceptsBooleansAndIntegerZeroAndOne(sample: Sample, expected: Bool) throws {
        #expect(try decodeBoxed(Bool.self, sample.value) == expected, "\(sample.label)")
        #expect(try UserInfoDecoder().decode([Bool].self, fromValue: [sample.value]) == [expected], "\(sample.label)")
        #expect(try UserInfoDecoder().decode(Bool.self, fromValue: sample.value) == expected, "\(sample.label)")
    }

    @Test(arguments: [
        Sample("Swift Int 2", 2 as Any), Sample("NSNumber(2)", NSNumber(value: 2)), Sample("Swift Int -1", -1 as Int),
        Sample("NSNumber(UInt64.max)", NSNumber(value: UInt64.max)), Sample("Int64.min", Int64.min),
    ])
    func boolRejectsOtherIntegers(sample: Sample) {
        let context = expectDecodingError(.typeMismatch, at: ["value"], type: Bool.self, message: "only 0 and 1") {
            try decodeBoxed(Bool.self, sample.value)
        }
        #expect(context != nil, "\(sample.label)")
    }

    /// A documented choice: only integers *stored as integers* read as booleans, so `1.0` does not.
    @Test(arguments: [
        Sample("Swift Double 1.0", 1.0 as Any), Sample("NSNumber(1.0)", NSNumber(value: 1.0)),
        Sample("NSNumber(Float 0)", NSNumber(value: Float(0))),
        Sample("Decimal 1", Decimal(1)), Sample("NSDecimalNumber 0", NSDecimalNumber(value: 0)),
        Sample("String true", "true"),
        Sample("String 1", "1"), Sample("array", [1] as [Any]),
    ])
    func boolRejectsNonIntegerValues(sample: Sample) {
        let context = expectDecodingError(.typeMismatch, at: ["value"], type: Bool.self) {
            try decodeBoxed(Bool.self, sample.value)
        }
        #expect(context != nil, "\(sample.label)")
    }

    // MARK: - Strings and numbers never mix

    @Test func stringIsNeverANumber() {
        for value in ["1", "2.5", NSString(string: "7")] as [Any] {
            expectDecodingError(.typeMismatch, at: ["value"], type: Int.self, message: "found a string") {
                try decodeBoxed(Int.self, value)
            }
            expectDecodingError(.typeMismatch, at: ["value"], type: Double.self, message: "found a string") {
                try decodeBoxed(Double.self, value)
            }
            expectDecodingError(.typeMismatch, at: ["value"], type: Float.self) { try decodeBoxed(Float.self, value) }
        }
    }

    @Test func numberIsNeverAString() {
        for value in [1 as Any, NSNumber(value: 1), 2.5, NSNumber(value: true), Decimal(1)] {
            expectDecodingError(.typeMismatch, at: ["value"], type: String.self, message: "Expected a string") {
                try decodeBoxed(String.self, value)
            }
        }
    }

    @Test func stringsReadFromStringAndNSString() throws {
        #expect(try decodeBoxed(String.self, "héllo") == "héllo")
        #expect(try decodeBoxed(String.self, NSString(string: "ns")) == "ns")
        #expect(try decodeBoxed(String.self, NSMutableString(string: "mutable")) == "mutable")
        #expect(try decodeBoxed(String.self, "" as Substring) == "")
    }

    @Test func errorMessageNamesWhatWasFound() {
        let cases: [(Any, String)] = [
            ("x", "a string"), (NSNull(), "null"), ([1] as [Any], "an array"),
            (["a": 1] as [String: Any], "a dictionary"),
            (Date(timeIntervalSince1970: 0), "a date"), (Data([1]), "data"), (NSValue(point: .zero), "CGPoint"),
        ]
        for (value, found) in cases {
            let kind: DecodingErrorKind = found == "null" ? .valueNotFound : .typeMismatch
            expectDecodingError(kind, at: ["value"], message: found) { try decodeBoxed(Int.self, value) }
        }
    }
}
