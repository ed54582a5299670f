import Foundation
import Notificatable
import Testing

// Everything the encoder writes, the decoder reads back to an equal value under matching strategies; the strategies
// that lose information are shown losing it.

private enum Mood: String, Codable, Equatable { case calm, busy }
private enum Priority: Int, Codable, Equatable { case low = -1, high = 10 }
private indirect enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case polygon(points: [CGPoint], closed: Bool)
    case group([Shape])
    case empty
}

private struct Attachment: Codable, Equatable {
    var name: String
    var bytes: Data
    var link: URL?
}

/// A value that is equal to itself when it is NaN, encoded exactly as the wrapped value.
private struct NaNEqual<Value: Codable & FloatingPoint>: Codable, Equatable {
    var value: Value
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Value.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.value == rhs.value || (lhs.value.isNaN && rhs.value.isNaN) }
}

private struct Rich: Codable, Equatable {
    var title: String
    var emoji: String
    var count: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: NaNEqual<Float>
    var double: Double
    var flag: Bool
    var missing: String?
    var present: Int?
    var mood: Mood
    var priority: Priority
    var shape: Shape
    var when: Date
    var blob: Data
    var url: URL
    var id: UUID
    var frame: CGRect
    var point: CGPoint
    var size: CGSize
    var range: NSRange
    var amount: Decimal
    var attachments: [Attachment]
    var names: [Int: String]
    var series: [String: [NaNEqual<Double>]]
    var matrix: [[Int]]
    var nested: [String: [String: Bool]]
    var optionalList: [Attachment]?
    var set: Set<String>
}

private func makeRich() throws -> Rich {
    Rich(
        title: "Title", emoji: "👩‍💻 café", count: -42, int8: .min, int16: .max, int32: .min, int64: .min, uint: .max,
        uint8: .max, uint16: 0, uint32: .max, uint64: .max, float: NaNEqual(.nan), double: -0.1, flag: false,
        missing: nil, present: 3, mood: .busy, priority: .low,
        shape: .group([.circle(radius: 2.5), .polygon(points: [.zero, CGPoint(x: 1, y: 2)], closed: true), .empty]),
        when: Date(timeIntervalSince1970: 1_795_253_400.123), blob: Data([0, 255, 7]),
        url: try #require(URL(string: "https://example.com/path?q=1#frag")),
        id: try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")),
        frame: CGRect(x: -1, y: 2.5, width: 300, height: 0.125), point: CGPoint(x: 3, y: 4),
        size: CGSize(width: 5, height: 6),
        range: NSRange(location: 7, length: 8),
        amount: try #require(Decimal(string: "3.14159265358979323846264338327950288")),
        attachments: [
            Attachment(name: "a", bytes: Data(), link: nil),
            Attachment(name: "b", bytes: Data([1]), link: URL(string: "file:///tmp/b")),
        ],
        names: [1: "one", -2: "minus two", 30: "thirty"],
        series: ["x": [1, .nan, -.infinity, .infinity, 0.1].map(NaNEqual.init), "empty": []],
        matrix: [[1, 2], [], [3]],
        nested: ["a": ["b": true, "c": false], "d": [:]],
        optionalList: [],
        set: ["x", "y"]
    )
}

@Suite("UserInfoEncoder: round trips")
struct UserInfoEncoderRoundTripTests {
    @Test func richValueRoundTripsUnderDefaultStrategies() throws {
        let value = try makeRich()
        let encoded = try UserInfoEncoder().encode(value)
        #expect(encoded["missing"] == nil)
        #expect(isPropertyList(encoded))
        _ = try PropertyListSerialization.data(fromPropertyList: encoded, format: .binary, options: 0)
        let decoded = try UserInfoDecoder().decode(Rich.self, from: encoded)
        #expect(decoded == value)
        #expect(decoded.float.value.isNaN)
        #expect(decoded.series["x"]?[1].value.isNaN == true)
        #expect(decoded.amount == value.amount)
        #expect(decoded.when == value.when)
        // The comparison can fail: a changed value does not match.
        var changed = value
        changed.names[1] = "uno"
        #expect(decoded != changed)
    }

    @Test func richValueRoundTripsThroughAPropertyList() throws {
        let value = try makeRich()
        let data = try PropertyListSerialization.data(
            fromPropertyList: try UserInfoEncoder().encode(value), format: .binary, options: 0)
        let reread = try #require(
            try PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any])
        #expect(try UserInfoDecoder().decode(Rich.self, from: reread) == value)
    }

    @Test func richValueRoundTripsWithGeometryAsNSValue() throws {
        let value = try makeRich()
        let encoder = UserInfoEncoder()
        encoder.encodesGeometryAsNSValue = true
        let encoded = try encoder.encode(value)
        #expect((encoded["frame"] as? NSValue)?.rectValue == value.frame)
        #expect(try UserInfoDecoder().decode(Rich.self, from: encoded) == value)
    }

    @Test func richValueRoundTripsUnderEveryLosslessStrategy() throws {
        let value = try makeRich()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        let pairs: [(UserInfoEncoder.DateEncodingStrategy, UserInfoDecoder.DateDecodingStrategy)] = [
            (.deferredToDate, .deferredToDate), (.secondsSince1970, .secondsSince1970),
            (.millisecondsSince1970, .millisecondsSince1970), (.formatted(formatter), .formatted(formatter)),
            (
                .custom({ date, encoder in
                    var container = encoder.singleValueContainer()
                    try container.encode(date.timeIntervalSinceReferenceDate)
                }),
                .custom({ decoder in
                    Date(timeIntervalSinceReferenceDate: try decoder.singleValueContainer().decode(Double.self))
                })
            ),
        ]
        for (dateEncoding, dateDecoding) in pairs {
            let encoder = UserInfoEncoder()
            encoder.dateEncodingStrategy = dateEncoding
            encoder.dataEncodingStrategy = .base64
            encoder.keyEncodingStrategy = .affixed(prefix: "Rich", suffix: "Key")
            let decoder = UserInfoDecoder()
            decoder.dateDecodingStrategy = dateDecoding
            decoder.dataDecodingStrategy = .base64
            decoder.keyDecodingStrategy = .affixed(prefix: "Rich", suffix: "Key")
            let encoded = try encoder.encode(value)
            #expect(encoded["RichTitleKey"] as? String == "Title")
            let decoded = try decoder.decode(Rich.self, from: encoded)
            // Milliseconds through a Double and a formatter keep the value to the millisecond.
            #expect(abs(decoded.when.timeIntervalSince(value.when)) < 0.001, "\(dateEncoding)")
            var expected = value
            expected.when = decoded.when
            #expect(decoded == expected, "\(dateEncoding)")
        }
    }

    @Test func snakeCaseRoundTripsWithoutAcronyms() throws {
        struct Settings: Codable, Equatable {
            var userName: String
            var maxRetryCount: Int
            var isEnabled: Bool
            var nestedValue: [String: Int]
        }
        let value = Settings(userName: "a", maxRetryCount: 3, isEnabled: true, nestedValue: ["innerKey": 1])
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let encoded = try encoder.encode(value)
        #expect(encoded["max_retry_count"] as? Int == 3)
        // The keys of a `[String: V]` are data, written and read as they are, as with JSONEncoder and JSONDecoder.
        #expect((encoded["nested_value"] as? [String: Any])?["innerKey"] as? Int == 1)
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(Settings.self, from: encoded) == value)
    }

    /// The documented loss: `baseURL` is written as `base_url`, which reads back as `baseUrl`.
    @Test func snakeCaseLosesAcronyms() throws {
        struct Written: Codable { var baseURL: String }
        struct ReadBack: Codable { var baseUrl: String }
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let encoded = try encoder.encode(Written(baseURL: "https://example.com"))
        #expect(encoded["base_url"] as? String == "https://example.com")
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        expectDecodingError(.keyNotFound, at: [], missingKey: "baseURL") {
            try decoder.decode(Written.self, from: encoded)
        }
        #expect(try decoder.decode(ReadBack.self, from: encoded).baseUrl == "https://example.com")
    }

    /// The documented loss: ISO 8601 is written in whole seconds, so the fraction of a second does not come back.
    @Test func iso8601LosesFractionalSeconds() throws {
        let date = Date(timeIntervalSince1970: 1_795_253_400.75)
        let encoder = UserInfoEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let encoded = try encoder.encode(Box(value: date))
        #expect(encoded["value"] as? String == "2026-11-21T09:30:00Z")
        let decoder = UserInfoDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try decoder.decode(Box<Date>.self, from: encoded).value
        #expect(decoded != date)
        #expect(decoded == Date(timeIntervalSince1970: 1_795_253_400))
        // A whole-second date survives.
        let whole = Date(timeIntervalSince1970: 1_795_253_400)
        #expect(try decoder.decode(Box<Date>.self, from: try encoder.encode(Box(value: whole))).value == whole)
    }

    @Test func customKeyStrategiesRoundTrip() throws {
        struct Settings: Codable, Equatable {
            var userName: String
            var limits: [String: Int]
            var byID: [Int: String]
        }
        let value = Settings(userName: "a", limits: ["perDay": 2], byID: [5: "five"])
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .custom { path in AnyKey(stringValue: "k." + (path.last?.stringValue ?? "")) }
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            let key = path.last?.stringValue ?? ""
            return AnyKey(stringValue: key.hasPrefix("k.") ? String(key.dropFirst(2)) : key)
        }
        let encoded = try encoder.encode(value)
        #expect(encoded["k.userName"] as? String == "a")
        #expect(try decoder.decode(Settings.self, from: encoded) == value)
    }

    /// `[Int: V]` keys are written as decimal strings and never renamed by a key strategy, so they read back under
    /// every strategy.
    @Test func integerKeyedDictionariesRoundTripUnderEveryKeyStrategy() throws {
        let value = Box(value: [7: "seven", -1: "minus one"] as [Int: String])
        let strategies: [(UserInfoEncoder.KeyEncodingStrategy, UserInfoDecoder.KeyDecodingStrategy)] = [
            (.useDefaultKeys, .useDefaultKeys), (.convertToSnakeCase, .convertFromSnakeCase),
            (
                .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey"),
                .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
            ),
        ]
        for (encoding, decoding) in strategies {
            let encoder = UserInfoEncoder()
            encoder.keyEncodingStrategy = encoding
            let decoder = UserInfoDecoder()
            decoder.keyDecodingStrategy = decoding
            let encoded = try encoder.encode(value)
            #expect(try decoder.decode(Box<[Int: String]>.self, from: encoded) == value, "\(encoding)")
        }
    }

    @Test func nilInsideArraysIsWrittenAsNullAndReadBack() throws {
        let value = Box(value: [1, nil, 3] as [Int?])
        let encoded = try UserInfoEncoder().encode(value)
        let list = try #require(encoded["value"] as? [Any])
        #expect(list[1] is NSNull)
        #expect(try UserInfoDecoder().decode(Box<[Int?]>.self, from: encoded) == value)
    }

    @Test func largeDictionariesRoundTrip() throws {
        var value: [String: Int] = [:]
        for index in 0..<100 { value["key\(index)"] = index }
        let encoded = try UserInfoEncoder().encode(value)
        #expect(encoded.count == 100)
        #expect(try UserInfoDecoder().decode([String: Int].self, from: encoded) == value)
    }

    @Test func floatingPointSpecialsRoundTrip() throws {
        let values: [Double] = [
            .nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1,
        ]
        let decoded = try UserInfoDecoder().decode([Double].self, fromValue: try UserInfoEncoder().encodeValue(values))
        #expect(decoded.count == values.count)
        for (lhs, rhs) in zip(decoded, values) {
            #expect(lhs == rhs || (lhs.isNaN && rhs.isNaN))
            #expect(lhs.sign == rhs.sign)
        }
        let floats: [Float] = [.nan, .infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1]
        let decodedFloats = try UserInfoDecoder().decode(
            [Float].self, fromValue: try UserInfoEncoder().encodeValue(floats))
        #expect(zip(decodedFloats, floats).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) })
    }
}
