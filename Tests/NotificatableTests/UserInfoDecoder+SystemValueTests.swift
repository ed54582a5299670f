import Foundation
import Notificatable
import Testing

// Geometry, URL, UUID, Decimal, raw-value enums and the passthrough wrapper.

private enum Curve: String, Codable, Equatable {
    case easeIn, easeOut
}

private enum Level: Int, Codable, Equatable {
    case low = 1, high = 3
}

/// Not Codable: only the passthrough wrapper can carry it.
private final class Session: @unchecked Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

private struct SaveFailed: Decodable {
    @UserInfoPassthrough var error: NSError
    @UserInfoPassthrough var session: Session
    var attempt: Int
}

private struct OptionalPassthrough: Decodable {
    var error: UserInfoPassthrough<NSError>?
}

@Suite("UserInfoDecoder: system values")
struct UserInfoDecoderSystemValueTests {
    static let rect = CGRect(x: 1, y: 2, width: 3, height: 4)

    // MARK: - Geometry

    @Test func geometryFromNSValue() throws {
        #expect(try decodeBoxed(CGRect.self, NSValue(rect: Self.rect)) == Self.rect)
        #expect(try decodeBoxed(CGPoint.self, NSValue(point: CGPoint(x: -1.5, y: 2))) == CGPoint(x: -1.5, y: 2))
        #expect(try decodeBoxed(CGSize.self, NSValue(size: CGSize(width: 5, height: 6))) == CGSize(width: 5, height: 6))
        #expect(
            try decodeBoxed(NSRange.self, NSValue(range: NSRange(location: 3, length: 4)))
                == NSRange(location: 3, length: 4))
        let nan = try decodeBoxed(CGRect.self, NSValue(rect: CGRect(x: CGFloat.nan, y: 0, width: 1, height: 1)))
        #expect(nan.origin.x.isNaN)
        #expect(nan.size == CGSize(width: 1, height: 1))
        #expect(
            try decodeBoxed([CGPoint].self, [NSValue(point: .zero), NSValue(point: CGPoint(x: 1, y: 1))])
                == [.zero, CGPoint(x: 1, y: 1)])
    }

    /// An `NSValue` made from bytes that holds something else is rejected, without reading past its bytes.
    /// (Foundation on Linux cannot make a struct-typed `NSValue(bytes:objCType:)` at all, so this uses scalars.)
    @Test func nsValueMadeFromBytesIsNotGeometry() {
        var int64 = Int64(7)
        let scalar = "q".withCString { NSValue(bytes: &int64, objCType: $0) }
        expectDecodingError(.typeMismatch, at: ["value"], type: CGRect.self) { try decodeBoxed(CGRect.self, scalar) }
        var double = 2.5
        let real = "d".withCString { NSValue(bytes: &double, objCType: $0) }
        expectDecodingError(.typeMismatch, at: ["value"], type: CGPoint.self) { try decodeBoxed(CGPoint.self, real) }
    }

    static let wrongKinds: [(Sample, String)] = [
        (Sample("point for rect", NSValue(point: CGPoint(x: 1, y: 2))), "CGRect"),
        (Sample("size for rect", NSValue(size: CGSize(width: 1, height: 2))), "CGRect"),
        (Sample("rect for point", NSValue(rect: rect)), "CGPoint"),
        (Sample("size for point", NSValue(size: CGSize(width: 1, height: 2))), "CGPoint"),
        (Sample("point for size", NSValue(point: CGPoint(x: 1, y: 2))), "CGSize"),
        (Sample("range for size", NSValue(range: NSRange(location: 1, length: 2))), "CGSize"),
        (Sample("point for range", NSValue(point: CGPoint(x: 1, y: 2))), "NSRange"),
        (Sample("NaN point for size", NSValue(point: CGPoint(x: CGFloat.nan, y: 2))), "CGSize"),
    ]

    @Test(arguments: wrongKinds)
    func wrongNSValueKindIsTypeMismatch(sample: Sample, target: String) {
        let context = expectDecodingError(
            .typeMismatch, at: ["frames", 1], message: "Expected an NSValue holding \(target)"
        ) {
            switch target {
            case "CGRect":
                _ = try UserInfoDecoder().decode(
                    [String: [CGRect]].self, from: ["frames": [NSValue(rect: .zero), sample.value]])
            case "CGPoint":
                _ = try UserInfoDecoder().decode(
                    [String: [CGPoint]].self, from: ["frames": [NSValue(point: .zero), sample.value]])
            case "CGSize":
                _ = try UserInfoDecoder().decode(
                    [String: [CGSize]].self, from: ["frames": [NSValue(size: .zero), sample.value]])
            default:
                _ = try UserInfoDecoder().decode(
                    [String: [NSRange]].self, from: ["frames": [NSValue(range: NSRange()), sample.value]])
            }
        }
        #expect(context != nil, "\(sample.label)")
    }

    @Test func numbersAreNotGeometry() {
        expectDecodingError(.typeMismatch, at: ["value"], type: CGRect.self, message: "found a number") {
            try decodeBoxed(CGRect.self, NSNumber(value: 1))
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: CGPoint.self, message: "found a boolean") {
            try decodeBoxed(CGPoint.self, true)
        }
        expectDecodingError(.valueNotFound, at: ["value"], type: CGSize.self) { try decodeBoxed(CGSize.self, NSNull()) }
    }

    @Test func geometryFromArrayForms() throws {
        #expect(try decodeBoxed(CGRect.self, [[1, 2], [3, 4]] as [[Int]]) == Self.rect)
        #expect(try decodeBoxed(CGRect.self, [[1.0, 2.0] as [Any], NSArray(array: [3, 4])] as [Any]) == Self.rect)
        #expect(
            try decodeBoxed(CGRect.self, NSArray(array: [NSArray(array: [1, 2]), NSArray(array: [3, 4])])) == Self.rect)
        #expect(try decodeBoxed(CGPoint.self, [NSNumber(value: 1.5), NSNumber(value: -2)]) == CGPoint(x: 1.5, y: -2))
        #expect(try decodeBoxed(CGSize.self, [5, 6]) == CGSize(width: 5, height: 6))
        #expect(try decodeBoxed(NSRange.self, [3, 4]) == NSRange(location: 3, length: 4))
        // Inner values may be NSValues too.
        #expect(
            try decodeBoxed(
                CGRect.self, [NSValue(point: CGPoint(x: 1, y: 2)), NSValue(size: CGSize(width: 3, height: 4))])
                == Self.rect)

        expectDecodingError(.valueNotFound, at: ["value", 1]) { try decodeBoxed(CGPoint.self, [1]) }
        expectDecodingError(.typeMismatch, at: ["value", 1], type: CGFloat.self) {
            try decodeBoxed(CGPoint.self, [1, "2"] as [Any])
        }
        expectDecodingError(.typeMismatch, at: ["value", 1, 0], type: CGFloat.self) {
            try decodeBoxed(CGRect.self, [[1, 2], ["w", 4]] as [[Any]])
        }
    }

    @Test func geometryFromStrings() throws {
        #expect(try decodeBoxed(CGRect.self, "{{1, 2}, {3, 4}}") == Self.rect)
        #expect(try decodeBoxed(CGRect.self, NSString(string: "{{1,2},{3,4}}")) == Self.rect)
        #expect(
            try decodeBoxed(CGRect.self, " { { -1.5 , 2e1 } , { 0 , 0.25 } } ")
                == CGRect(x: -1.5, y: 20, width: 0, height: 0.25))
        #expect(try decodeBoxed(CGPoint.self, "{1, 2}") == CGPoint(x: 1, y: 2))
        #expect(try decodeBoxed(CGSize.self, "{3.5,4}") == CGSize(width: 3.5, height: 4))
        #expect(try decodeBoxed(NSRange.self, "{3, 4}") == NSRange(location: 3, length: 4))
    }

    @Test(arguments: [
        ("{1, 2}", "CGRect"), ("{{1, 2}, {3}}", "CGRect"), ("{{1, 2}, {3, 4}, {5, 6}}", "CGRect"),
        ("1, 2, 3, 4", "CGRect"),
        ("{{a, 2}, {3, 4}}", "CGRect"), ("", "CGRect"), ("{1, 2, 3}", "CGPoint"), ("{1}", "CGPoint"),
        ("1, 2", "CGPoint"),
        ("{x, y}", "CGSize"), ("{}", "CGSize"), ("{-1, 2}", "NSRange"), ("{1.5, 2}", "NSRange"),
        ("{{1, 2}, {3, 4}}", "CGPoint"),
    ])
    func badGeometryStringIsDataCorrupted(string: String, target: String) {
        let context = expectDecodingError(.dataCorrupted, at: ["value"], message: "Expected \(target) in the form") {
            switch target {
            case "CGRect": _ = try decodeBoxed(CGRect.self, string)
            case "CGPoint": _ = try decodeBoxed(CGPoint.self, string)
            case "CGSize": _ = try decodeBoxed(CGSize.self, string)
            default: _ = try decodeBoxed(NSRange.self, string)
            }
        }
        #expect(context?.debugDescription.contains("\"\(string)\"") == true)
    }

    // MARK: - URL and UUID

    @Test func urls() throws {
        let url = try #require(URL(string: "https://example.com/a?b=c"))
        #expect(try decodeBoxed(URL.self, url) == url)
        #expect(try decodeBoxed(URL.self, NSURL(string: "https://example.com/a?b=c") as Any) == url)
        #expect(try decodeBoxed(URL.self, "https://example.com/a?b=c") == url)
        #expect(try decodeBoxed(URL.self, NSString(string: "https://example.com/a?b=c")) == url)
        #expect(try decodeBoxed(URL.self, URL(fileURLWithPath: "/tmp/x")).isFileURL)
        for bad in ["", "http://[::1"] {
            expectDecodingError(.dataCorrupted, at: ["value"], message: "not a valid URL") {
                try decodeBoxed(URL.self, bad)
            }
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: URL.self, message: "found a number") {
            try decodeBoxed(URL.self, 5)
        }
        expectDecodingError(.valueNotFound, at: ["value"], type: URL.self) { try decodeBoxed(URL.self, NSNull()) }
    }

    @Test func uuids() throws {
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(try decodeBoxed(UUID.self, uuid) == uuid)
        #expect(try decodeBoxed(UUID.self, NSUUID(uuidString: uuid.uuidString) as Any) == uuid)
        #expect(try decodeBoxed(UUID.self, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == uuid)
        #expect(try decodeBoxed(UUID.self, "e621e1f8-c36c-495a-93fc-0c247a3e6e5f") == uuid)
        expectDecodingError(.dataCorrupted, at: ["value"], message: "Expected a UUID") {
            try decodeBoxed(UUID.self, "E621E1F8")
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: UUID.self) { try decodeBoxed(UUID.self, [1, 2]) }
    }

    // MARK: - Decimal

    @Test func decimalFromNumbers() throws {
        #expect(try decodeBoxed(Decimal.self, 42) == 42)
        #expect(try decodeBoxed(Decimal.self, NSNumber(value: -7)) == -7)
        #expect(try decodeBoxed(Decimal.self, UInt64.max) == Decimal(string: "18446744073709551615"))
        #expect(try decodeBoxed(Decimal.self, NSNumber(value: UInt64.max)) == Decimal(string: "18446744073709551615"))
        // A Double reads through its shortest decimal form, so 0.1 is exactly 0.1.
        #expect(try decodeBoxed(Decimal.self, 0.1) == Decimal(string: "0.1"))
        #expect(try decodeBoxed(Decimal.self, NSNumber(value: 2.5)) == Decimal(string: "2.5"))
        let exact = try #require(Decimal(string: "3.14159265358979323846264338327950288"))
        #expect(try decodeBoxed(Decimal.self, exact) == exact)
        #expect(try decodeBoxed(Decimal.self, NSDecimalNumber(decimal: exact)) == exact)
        #expect(try decodeBoxed(Decimal.self, Double.nan).isNaN)
        expectDecodingError(.dataCorrupted, at: ["value"], message: "does not fit in Decimal") {
            try decodeBoxed(Decimal.self, Double.infinity)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Decimal.self, message: "boolean") {
            try decodeBoxed(Decimal.self, NSNumber(value: false))
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Decimal.self) { try decodeBoxed(Decimal.self, [1]) }
    }

    @Test(arguments: [
        ("3.14159265358979323846264338327950288", "3.14159265358979323846264338327950288"), ("-1.5e3", "-1500"),
        ("0", "0"), ("+5", "5"), ("1E2", "100"), (".5", "0.5"), ("5.", "5"), ("-0.000001", "-0.000001"),
    ])
    func decimalFromItsDecimalString(string: String, expected: String) throws {
        #expect(try decodeBoxed(Decimal.self, string) == Decimal(string: expected))
        #expect(try decodeBoxed(Decimal.self, NSString(string: string)) == Decimal(string: expected))
    }

    /// Foundation's `Decimal(string:)` reads the longest prefix it understands (`"1.2.3"` → 1.2, `"+"` → 0); the
    /// decoder must not accept such strings.
    @Test(arguments: [
        "1.2.3", "1-2", "1e5e5", "--1", "+", ".", "e", "-", "1e", "e5", "", "abc", "1,5", " 1", "0x10", "1..2",
    ])
    func decimalFromAMalformedStringIsDataCorrupted(string: String) {
        expectDecodingError(.dataCorrupted, at: ["value"], message: "Expected a decimal number") {
            try decodeBoxed(Decimal.self, string)
        }
    }

    // MARK: - Enums with raw values

    @Test func rawValueEnums() throws {
        #expect(try decodeBoxed(Curve.self, "easeIn") == .easeIn)
        #expect(try decodeBoxed(Curve.self, NSString(string: "easeOut")) == .easeOut)
        #expect(try decodeBoxed(Level.self, 3) == .high)
        #expect(try decodeBoxed(Level.self, NSNumber(value: 1)) == .low)
        #expect(try decodeBoxed(Level.self, 3.0) == .high)
        #expect(try decodeBoxed([Level].self, [1, 3]) == [.low, .high])
        expectDecodingError(.dataCorrupted, at: ["value"], message: "linear") { try decodeBoxed(Curve.self, "linear") }
        expectDecodingError(.dataCorrupted, at: ["levels", 1]) {
            try UserInfoDecoder().decode([String: [Level]].self, from: ["levels": [1, 2]])
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: String.self) { try decodeBoxed(Curve.self, 1) }
        expectDecodingError(.typeMismatch, at: ["value"], type: Int.self) { try decodeBoxed(Level.self, "high") }
        expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
            try decodeBoxed(Level.self, 1.5)
        }
    }

    // MARK: - Passthrough

    @Test func passthroughReadsObjectsAsTheyAre() throws {
        let error = NSError(domain: "test", code: 3)
        let session = Session(id: 9)
        let decoded = try UserInfoDecoder().decode(
            SaveFailed.self, from: ["error": error, "session": session, "attempt": 2])
        #expect(decoded.error === error)
        #expect(decoded.session === session)
        #expect(decoded.attempt == 2)
        let list = try UserInfoDecoder().decode([UserInfoPassthrough<Session>].self, fromValue: [session, session])
        #expect(list.allSatisfy { $0.wrappedValue === session })
    }

    @Test func passthroughOfTheWrongTypeIsTypeMismatch() {
        let error = NSError(domain: "test", code: 3)
        expectDecodingError(.typeMismatch, at: ["session"], type: Session.self, message: "found a string") {
            try UserInfoDecoder().decode(SaveFailed.self, from: ["error": error, "session": "s", "attempt": 2])
        }
        expectDecodingError(.typeMismatch, at: ["error"], type: NSError.self) {
            try UserInfoDecoder().decode(
                SaveFailed.self, from: ["error": Session(id: 1), "session": Session(id: 1), "attempt": 2])
        }
        expectDecodingError(.keyNotFound, at: [], missingKey: "error") {
            try UserInfoDecoder().decode(SaveFailed.self, from: ["session": Session(id: 1), "attempt": 2])
        }
        expectDecodingError(.valueNotFound, at: ["error"], type: NSError.self) {
            try UserInfoDecoder().decode(
                SaveFailed.self, from: ["error": NSNull(), "session": Session(id: 1), "attempt": 2])
        }
        expectDecodingError(.typeMismatch, at: [1], type: Session.self) {
            try UserInfoDecoder().decode([UserInfoPassthrough<Session>].self, fromValue: [Session(id: 1), 2])
        }
    }

    @Test func optionalPassthrough() throws {
        #expect(try UserInfoDecoder().decode(OptionalPassthrough.self, from: [:]).error == nil)
        #expect(try UserInfoDecoder().decode(OptionalPassthrough.self, from: ["error": NSNull()]).error == nil)
        let error = NSError(domain: "d", code: 1)
        #expect(
            try UserInfoDecoder().decode(OptionalPassthrough.self, from: ["error": error]).error?.wrappedValue === error
        )
    }

    @Test func otherDecodersCannotReadAPassthrough() throws {
        let json = Data(#"{"error": {}, "session": {}, "attempt": 1}"#.utf8)
        expectDecodingError(
            .typeMismatch, at: ["error"], type: NSError.self, message: "can only be decoded by UserInfoDecoder"
        ) {
            try JSONDecoder().decode(SaveFailed.self, from: json)
        }
        let plist = try PropertyListSerialization.data(fromPropertyList: ["error": "x"], format: .binary, options: 0)
        expectDecodingError(.typeMismatch, at: ["error"]) {
            try PropertyListDecoder().decode(OptionalPassthrough.self, from: plist)
        }
    }
}
