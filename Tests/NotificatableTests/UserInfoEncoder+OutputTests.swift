import Foundation
import Notificatable
import Testing

// What the encoder writes: property-list types by default, NSValue geometry on request, and every strategy.

private struct Profile: Codable, Equatable {
    var name: String
    var age: Int
    var nickname: String?
    var score: Double?
    var joined: Date
    var avatar: Data
    var homepage: URL
    var id: UUID
    var frame: CGRect
    var center: CGPoint
    var size: CGSize
    var range: NSRange
    var balance: Decimal
    var tags: [String]
    var byNumber: [Int: String]
    var tiny: Int8
    var huge: UInt64
    var ratio: Float
    var flag: Bool
}

private let sampleProfile = Profile(
    name: "Ada", age: 36, nickname: nil, score: nil, joined: Date(timeIntervalSince1970: 1_000),
    avatar: Data([1, 2, 3]), homepage: URL(string: "https://example.com")!,
    id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
    frame: CGRect(x: 1, y: 2, width: 3, height: 4), center: CGPoint(x: 5, y: 6), size: CGSize(width: 7, height: 8),
    range: NSRange(location: 2, length: 3), balance: Decimal(string: "12.34")!, tags: ["a"], byNumber: [1: "one"],
    tiny: -8, huge: UInt64.max, ratio: 0.5, flag: true
)

private struct Acronyms: Codable, Equatable {
    var baseURL: String
    var myValue: Int
    var userID: Int
}

private struct Keyboard: Codable, Equatable {
    var frameEnd: CGRect
    var animationDuration: Double
    var nested: Inner
    struct Inner: Codable, Equatable {
        var isLocal: Bool
    }
}

/// Writes its members through nested containers, so that key strategies see nested paths.
private struct NestedWriter: Encodable {
    enum Keys: String, CodingKey { case outerKey, innerKey, listKey }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .outerKey)
        try nested.encode(1, forKey: .innerKey)
        var list = nested.nestedUnkeyedContainer(forKey: .listKey)
        var element = list.nestedContainer(keyedBy: Keys.self)
        try element.encode(2, forKey: .innerKey)
    }
}

/// Collects values from `@Sendable` closures.
private final class Recorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []
    func append(_ value: Value) { lock.withLock { storage.append(value) } }
    var values: [Value] { lock.withLock { storage } }
}

/// Whether `value` is made only of property-list types: String, numbers, Bool, Date, Data, arrays, and dictionaries
/// with String keys.
func isPropertyList(_ value: Any) -> Bool {
    switch value {
    case is String, is Bool, is Date, is Data, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8,
        is UInt16, is UInt32, is UInt64, is Double, is Float:
        return true
    case let number as NSNumber where type(of: value) is NSNumber.Type:
        return !(number is NSDecimalNumber)
    case let array as [Any]:
        return array.allSatisfy(isPropertyList)
    case let dictionary as [String: Any]:
        return dictionary.values.allSatisfy(isPropertyList)
    case let dictionary as [AnyHashable: Any]:
        return dictionary.allSatisfy { $0.key.base is String && isPropertyList($0.value) }
    default:
        return false
    }
}

@Suite("UserInfoEncoder: output")
struct UserInfoEncoderOutputTests {
    @Test func defaultOutputIsAPropertyList() throws {
        let encoded = try UserInfoEncoder().encode(sampleProfile)
        #expect(isPropertyList(encoded))
        let data = try PropertyListSerialization.data(fromPropertyList: encoded, format: .binary, options: 0)
        #expect(!data.isEmpty)
        // And what the property list reads back, the decoder reads back too.
        let reread = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        let dictionary = try #require(reread as? [String: Any])
        #expect(try UserInfoDecoder().decode(Profile.self, from: dictionary) == sampleProfile)
    }

    @Test func valuesAreWrittenInTheirDocumentedForms() throws {
        let encoded = try UserInfoEncoder().encode(sampleProfile)
        #expect(encoded["name"] as? String == "Ada")
        #expect(encoded["joined"] as? Date == Date(timeIntervalSince1970: 1_000))
        #expect(encoded["avatar"] as? Data == Data([1, 2, 3]))
        #expect(encoded["homepage"] as? String == "https://example.com")
        #expect(encoded["id"] as? String == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(encoded["balance"] as? String == "12.34")
        #expect((encoded["frame"] as? [[Double]]) == [[1, 2], [3, 4]])
        #expect((encoded["center"] as? [Double]) == [5, 6])
        #expect((encoded["size"] as? [Double]) == [7, 8])
        #expect((encoded["range"] as? [Int]) == [2, 3])
        #expect((encoded["byNumber"] as? [String: Any])?["1"] as? String == "one")
        #expect(encoded["flag"] as? Bool == true)
    }

    @Test func nilOptionalsAreLeftOut() throws {
        let encoded = try UserInfoEncoder().encode(sampleProfile)
        #expect(encoded["nickname"] == nil)
        #expect(encoded["score"] == nil)
        #expect(!encoded.keys.contains("nickname"))
        var withValues = sampleProfile
        withValues.nickname = "A"
        withValues.score = 1.5
        let full = try UserInfoEncoder().encode(withValues)
        #expect(full["nickname"] as? String == "A")
        #expect(full["score"] as? Double == 1.5)
        #expect(try UserInfoEncoder().encode(OptionalBox<Int>(value: nil)).isEmpty)
    }

    @Test func geometryAsNSValue() throws {
        let encoder = UserInfoEncoder()
        encoder.encodesGeometryAsNSValue = true
        let encoded = try encoder.encode(sampleProfile)
        #expect((encoded["frame"] as? NSValue)?.rectValue == CGRect(x: 1, y: 2, width: 3, height: 4))
        #expect((encoded["center"] as? NSValue)?.pointValue == CGPoint(x: 5, y: 6))
        #expect((encoded["size"] as? NSValue)?.sizeValue == CGSize(width: 7, height: 8))
        #expect(try UserInfoDecoder().decode(Profile.self, from: encoded) == sampleProfile)
        // NSValue is not a property-list type: that is why the option is off by default.
        #expect(!isPropertyList(encoded))
    }

    // MARK: - Keys

    @Test func snakeCaseKeys() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let encoded = try encoder.encode(Acronyms(baseURL: "u", myValue: 1, userID: 2))
        #expect(Set(encoded.keys.compactMap { $0.base as? String }) == ["base_url", "my_value", "user_id"])
    }

    /// A leading acronym stays one word: a deliberate difference from JSONEncoder, which writes `u_rl_string` and
    /// `h_ttps_proxy_url` here (documented in Decoding Rules, "Where we differ from JSONDecoder").
    @Test func snakeCaseKeepsLeadingAcronymsTogether() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let encoded = try encoder.encode(
            [AnyKey(stringValue: "URLString"): 1, AnyKey(stringValue: "HTTPSProxyURL"): 2].asKeyed)
        #expect(Set(encoded.keys.compactMap { $0.base as? String }) == ["url_string", "https_proxy_url"])
    }

    /// The conversion matches `JSONEncoder`'s, key for key.
    @Test(arguments: [
        "baseURL", "myValue", "userID", "simple", "already_snake", "a1B2", "x", "_private", "ÉtéTime", "aURLValue",
        "value2Go",
    ])
    func snakeCaseMatchesJSONEncoder(key: String) throws {
        let jsonEncoder = JSONEncoder()
        jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
        let json = try jsonEncoder.encode([AnyKey(stringValue: key): 1].asKeyed)
        let expected = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any]).keys.sorted()
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let encoded = try encoder.encode([AnyKey(stringValue: key): 1].asKeyed)
        #expect(encoded.keys.compactMap { $0.base as? String }.sorted() == expected)
    }

    @Test func affixedKeys() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        let value = Keyboard(
            frameEnd: CGRect(x: 0, y: 1, width: 2, height: 3), animationDuration: 0.25, nested: .init(isLocal: true))
        let encoded = try encoder.encode(value)
        #expect(
            Set(encoded.keys.compactMap { $0.base as? String })
                == [
                    "UIKeyboardFrameEndUserInfoKey", "UIKeyboardAnimationDurationUserInfoKey",
                    "UIKeyboardNestedUserInfoKey",
                ])
        #expect(
            (encoded["UIKeyboardNestedUserInfoKey"] as? [String: Any])?["UIKeyboardIsLocalUserInfoKey"] as? Bool == true
        )
        // The same encoder twice gives the same keys (the second time from the cache).
        #expect(Set(try encoder.encode(value).keys) == Set(encoded.keys))
    }

    @Test func customKeysReceiveThePathEndingInTheKey() throws {
        let paths = Recorder<[PathElement]>()
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .custom { path in
            paths.append(elements(path))
            return AnyKey(stringValue: (path.last?.stringValue ?? "").uppercased())
        }
        let encoded = try encoder.encode(Keyboard(frameEnd: .zero, animationDuration: 1, nested: .init(isLocal: false)))
        #expect(Set(encoded.keys.compactMap { $0.base as? String }) == ["FRAMEEND", "ANIMATIONDURATION", "NESTED"])
        #expect((encoded["NESTED"] as? [String: Any])?["ISLOCAL"] as? Bool == false)
        #expect(paths.values.contains(["nested", "isLocal"]))
    }

    /// Keys written through nested containers reach `.custom` with the nested container's path, as in JSONEncoder.
    @Test func customKeysInNestedContainersSeeTheNestedPath() throws {
        let paths = Recorder<[PathElement]>()
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .custom { path in
            paths.append(elements(path))
            return AnyKey(stringValue: path.last?.stringValue ?? "")
        }
        _ = try encoder.encode(NestedWriter())
        #expect(
            paths.values == [
                ["outerKey"], ["outerKey", "innerKey"], ["outerKey", "listKey"],
                ["outerKey", "listKey", 0, "innerKey"],
            ])
    }

    @Test func integerKeysAreWrittenAsDecimalStringsAndNeverRenamed() throws {
        for strategy in [
            UserInfoEncoder.KeyEncodingStrategy.convertToSnakeCase, .affixed(prefix: "P", suffix: "S"), .useDefaultKeys,
        ] {
            let encoder = UserInfoEncoder()
            encoder.keyEncodingStrategy = strategy
            let encoded = try encoder.encode([7: "seven", -1: "minus one"] as [Int: String])
            #expect(Set(encoded.keys.compactMap { $0.base as? String }) == ["7", "-1"])
        }
    }

    // MARK: - Dates and data

    @Test func dateStrategies() throws {
        let date = Date(timeIntervalSince1970: 1_795_253_400.5)
        let encoder = UserInfoEncoder()
        #expect(try encoder.encode(Box(value: date))["value"] as? Date == date)
        encoder.dateEncodingStrategy = .secondsSince1970
        #expect(try encoder.encode(Box(value: date))["value"] as? Double == 1_795_253_400.5)
        encoder.dateEncodingStrategy = .millisecondsSince1970
        #expect(try encoder.encode(Box(value: date))["value"] as? Double == 1_795_253_400_500)
        encoder.dateEncodingStrategy = .iso8601
        #expect(try encoder.encode(Box(value: date))["value"] as? String == "2026-11-21T09:30:00Z")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        encoder.dateEncodingStrategy = .formatted(formatter)
        #expect(try encoder.encode(Box(value: date))["value"] as? String == "2026-11-21")
        let paths = Recorder<[PathElement]>()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            paths.append(elements(encoder.codingPath))
            var container = encoder.singleValueContainer()
            try container.encode("day \(Int(date.timeIntervalSince1970 / 86_400))")
        }
        #expect(try encoder.encode(Box(value: date))["value"] as? String == "day 20778")
        #expect(paths.values == [["value"]])
    }

    @Test func dataStrategies() throws {
        let data = Data([1, 2, 3])
        let encoder = UserInfoEncoder()
        #expect(try encoder.encode(Box(value: data))["value"] as? Data == data)
        encoder.dataEncodingStrategy = .base64
        #expect(try encoder.encode(Box(value: data))["value"] as? String == "AQID")
        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.unkeyedContainer()
            for byte in data.reversed() { try container.encode(byte) }
        }
        #expect(try encoder.encode(Box(value: data))["value"] as? [UInt8] == [3, 2, 1])
    }

    // MARK: - Decimal

    @Test(arguments: [
        "3.14159265358979323846264338327950288", "-0.000001", "12345678901234567890123456789012345678", "0",
    ])
    func decimalIsWrittenAsItsExactDecimalString(text: String) throws {
        let decimal = try #require(Decimal(string: text))
        let encoded = try UserInfoEncoder().encode(Box(value: decimal))
        #expect(encoded["value"] as? String == decimal.description)
        #expect(try UserInfoDecoder().decode(Box<Decimal>.self, from: encoded).value == decimal)
    }

    @Test func decimalNaNRoundTrips() throws {
        let encoded = try UserInfoEncoder().encode(Box(value: Decimal.nan))
        #expect(try UserInfoDecoder().decode(Box<Decimal>.self, from: encoded).value.isNaN)
    }

    // MARK: - Top level

    @Test func encodeRequiresAKeyedTopLevel() {
        for value in [5 as any Encodable, [1, 2], "text", Optional<Int>.none, Data([1])] {
            #expect {
                _ = try UserInfoEncoder().encode(value)
            } throws: { error in
                guard case EncodingError.invalidValue(_, let context) = error else { return false }
                return context.codingPath.isEmpty && context.debugDescription.contains("encodeValue")
            }
        }
    }

    @Test func encodeValueTakesAnyShape() throws {
        let encoder = UserInfoEncoder()
        #expect(try encoder.encodeValue(5) as? Int == 5)
        #expect(try encoder.encodeValue([1, 2]) as? [Int] == [1, 2])
        #expect(try encoder.encodeValue("s") as? String == "s")
        #expect(try encoder.encodeValue(Optional<Int>.none) is NSNull)
        #expect(try encoder.encodeValue([Int?.none, 1]) as? [Any] != nil)
        let dictionary = try #require(try encoder.encodeValue(Box(value: 1)) as? [String: Any])
        #expect(dictionary["value"] as? Int == 1)
        #expect(try encoder.encodeValue(CGPoint(x: 1, y: 2)) as? [Double] == [1, 2])
        #expect(try UserInfoDecoder().decode([Int].self, fromValue: try encoder.encodeValue([3, 4])) == [3, 4])
    }

    // MARK: - Passthrough and userInfo

    private struct Carrier: Encodable {
        var error: UserInfoPassthrough<NSError>
    }

    @Test func passthroughIsWrittenAsItIs() throws {
        let error = NSError(domain: "d", code: 2)
        let encoded = try UserInfoEncoder().encode(Carrier(error: UserInfoPassthrough(wrappedValue: error)))
        #expect((encoded["error"] as? NSError) === error)
        #expect {
            _ = try JSONEncoder().encode(Carrier(error: UserInfoPassthrough(wrappedValue: error)))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return elements(context.codingPath) == ["error"] && context.debugDescription.contains("UserInfoEncoder")
        }
    }

    private struct UsesContext: Encodable {
        static let key = CodingUserInfoKey(rawValue: "suffix")!
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode("value\(encoder.userInfo[Self.key] as? String ?? "")")
        }
    }

    @Test func userInfoIsVisibleToEncode() throws {
        let encoder = UserInfoEncoder()
        encoder.userInfo[UsesContext.key] = "!"
        #expect(try encoder.encode(["value": UsesContext()])["value"] as? String == "value!")
    }
}

/// A keyed wrapper around a dictionary with arbitrary coding keys, so that a key strategy sees exactly one key.
private struct KeyedDictionary: Encodable {
    var entries: [AnyKey: Int]
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in entries { try container.encode(value, forKey: key) }
    }
}

extension Dictionary where Key == AnyKey, Value == Int {
    fileprivate var asKeyed: KeyedDictionary { KeyedDictionary(entries: self) }
}
