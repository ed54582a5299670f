import Foundation
import Testing

@testable import Notificatable

// The geometry array forms are read in place: an exact `[Any]`, and the numbers in it, are recognised by the type they
// are boxed as, without a container or a runtime cast. These tests pin that the fast reading gives exactly what the
// general reading gives (`NumberValue` for each number, the type's own `Decodable` form for anything else), for every
// kind of element and every way the array can arrive, with the same errors at the same coding paths.

@Suite("UserInfoDecoder: geometry array forms read in place")
struct UserInfoDecoderGeometryArrayTests {
    /// Every kind of number an array form can hold, each boxed as it comes.
    static let numbers: [Sample] = [
        Sample("NSNumber, double", NSNumber(value: 2.5)),
        Sample("NSNumber, negative zero", NSNumber(value: -0.0)),
        Sample("NSNumber, NaN", NSNumber(value: Double.nan)),
        Sample("NSNumber, infinity", NSNumber(value: -Double.infinity)),
        Sample("NSNumber, Int", NSNumber(value: 7)),
        Sample("NSNumber, Int8", NSNumber(value: Int8(-3))),
        Sample("NSNumber, Int64.max", NSNumber(value: Int64.max)),
        Sample("NSNumber, UInt64.max", NSNumber(value: UInt64.max)),
        Sample("NSNumber, Float 0.1", NSNumber(value: Float(0.1))),
        Sample("NSNumber boxed as AnyObject", NSNumber(value: 4.5) as AnyObject),
        Sample("NSNumber boxed as NSObject", NSNumber(value: 5) as NSObject),
        Sample("NSDecimalNumber", NSDecimalNumber(string: "1.25")),
        Sample("Double", 1.5),
        Sample("Int", 3),
        Sample("Int64.min", Int64.min),
        Sample("UInt64.max", UInt64.max),
        Sample("Float 0.1", Float(0.1)),
        Sample("CGFloat", CGFloat(-2)),
        Sample("Decimal", Decimal(12.5)),
    ]

    /// What the general reading makes of `value`: the number as `NumberValue` reads it.
    private static func expected(_ value: Any) throws -> Double {
        try #require(NumberValue(value)).double
    }

    private static func same(_ found: Double, _ expected: Double) -> Bool {
        found.bitPattern == expected.bitPattern || (found.isNaN && expected.isNaN)
    }

    @Test(arguments: numbers)
    func everyKindOfNumberReadsAsTheGeneralReaderReadsIt(sample: Sample) throws {
        let value = sample.value
        let number = try Self.expected(value)
        let forms: [(String, Any)] = [
            ("[Any]", [value, value] as [Any]),
            ("NSArray", NSArray(array: [value, value])),
            ("ContiguousArray<Any>", ContiguousArray<Any>([value, value])),
        ]
        for (label, form) in forms {
            let point = try decodeBoxed(CGPoint.self, form)
            #expect(Self.same(Double(point.x), number) && Self.same(Double(point.y), number), "\(label): \(point)")
            let size = try decodeBoxed(CGSize.self, form)
            #expect(Self.same(Double(size.width), number) && Self.same(Double(size.height), number), "\(label)")
        }
        let rects: [(String, Any)] = [
            ("[[Any]]", [[value, 0] as [Any], [0, value] as [Any]] as [Any]),
            ("[NSArray]", [NSArray(array: [value, 0]), NSArray(array: [0, value])] as [Any]),
            ("[Any] of mixed", [[value, 0] as [Any], NSArray(array: [0, value])] as [Any]),
            ("NSArray of [Any]", NSArray(array: [[value, 0] as [Any], [0, value] as [Any]])),
        ]
        for (label, form) in rects {
            let rect = try decodeBoxed(CGRect.self, form)
            // `CGRect`'s own properties standardize; the stored fields are what was read.
            #expect(Self.same(Double(rect.origin.x), number) && rect.origin.y == 0, "\(label): \(rect)")
            #expect(rect.size.width == 0 && Self.same(Double(rect.size.height), number), "\(label): \(rect)")
        }
    }

    /// The values `NumberValue` does not read as numbers: the array form falls back to the type's own `Decodable`
    /// form, which fails at the element, with the kind of error the element calls for.
    static let nonNumbers: [(Sample, DecodingErrorKind)] = [
        (Sample("boolean NSNumber", NSNumber(value: true)), .typeMismatch),
        (Sample("Bool", false), .typeMismatch),
        (Sample("String", "2"), .typeMismatch),
        (Sample("NSString", NSString(string: "2")), .typeMismatch),
        (Sample("NSNull", NSNull()), .valueNotFound),
        (Sample("nil", Optional<Double>.none as Any), .valueNotFound),
        (Sample("dictionary", ["x": 1] as [String: Any]), .typeMismatch),
        (Sample("NSValue", NSValue(point: CGPoint(x: 1, y: 2))), .typeMismatch),
    ]

    @Test(arguments: nonNumbers)
    func anElementThatIsNotANumberFailsAtItsIndex(sample: Sample, kind: DecodingErrorKind) {
        #expect(NumberValue(sample.value) == nil, "the general reader reads no number either")
        expectDecodingError(kind, at: ["value", 1]) { try decodeBoxed(CGPoint.self, [1, sample.value] as [Any]) }
        expectDecodingError(kind, at: ["value", 0]) {
            try decodeBoxed(CGSize.self, NSArray(array: [sample.value, 1]))
        }
        expectDecodingError(kind, at: ["value", 1, 0]) {
            try decodeBoxed(CGRect.self, [[1, 2] as [Any], [sample.value, 4] as [Any]] as [Any])
        }
        expectDecodingError(kind, at: ["value", 0, 1]) {
            try decodeBoxed(CGRect.self, [[1, sample.value] as [Any], NSArray(array: [3, 4])] as [Any])
        }
    }

    @Test func wrongShapesFailWhereTheyDiffer() {
        expectDecodingError(.valueNotFound, at: ["value", 1]) {
            try decodeBoxed(CGRect.self, [[1, 2] as [Any]] as [Any])
        }
        expectDecodingError(.valueNotFound, at: ["value", 1, 1]) {
            try decodeBoxed(CGRect.self, [[1, 2] as [Any], [3] as [Any]] as [Any])
        }
        expectDecodingError(.valueNotFound, at: ["value", 0]) { try decodeBoxed(CGPoint.self, [] as [Any]) }
        expectDecodingError(.typeMismatch, at: ["value", 0]) {
            try decodeBoxed(CGRect.self, [1, 2, 3, 4] as [Any])
        }
        expectDecodingError(.typeMismatch, at: ["value", 0]) {
            try decodeBoxed(CGRect.self, [NSNumber(value: 1), [3, 4] as [Any]] as [Any])
        }
    }

    /// More elements than the form has: the type's own form reads the first ones and ignores the rest, as before.
    @Test func extraElementsAreIgnoredAsTheTypesOwnFormIgnoresThem() throws {
        #expect(try decodeBoxed(CGPoint.self, [1, 2, 3] as [Any]) == CGPoint(x: 1, y: 2))
        #expect(
            try decodeBoxed(CGRect.self, [[1, 2, 9] as [Any], [3, 4] as [Any], [5] as [Any]] as [Any])
                == CGRect(x: 1, y: 2, width: 3, height: 4))
    }

    @Test func rangesReadExactIntegersOnly() throws {
        #expect(
            try decodeBoxed(NSRange.self, [NSNumber(value: 3), NSNumber(value: 4.0)] as [Any])
                == NSRange(location: 3, length: 4))
        expectDecodingError(.dataCorrupted, at: ["value", 1]) {
            try decodeBoxed(NSRange.self, [NSNumber(value: 3), NSNumber(value: 4.5)] as [Any])
        }
    }
}
