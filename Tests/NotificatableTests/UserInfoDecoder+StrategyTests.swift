import Foundation
import Notificatable
import Testing

// Key, date and data strategies, and `userInfo` for decoded types.

private struct SnakeTarget: Codable, Equatable {
    var baseUrl: String
    var myValue: Int
    var simple: Bool
}

private struct AcronymTarget: Codable, Equatable {
    var baseURL: String
}

private struct Keyboard: Codable, Equatable {
    var frameEnd: CGRect
    var animationDuration: Double
    var isLocal: Bool?
}

private struct Nest: Codable, Equatable {
    var innerValue: Inner
    struct Inner: Codable, Equatable {
        var countValue: Int
    }
}

private struct Event: Codable, Equatable {
    var at: Date
}

private struct Attachment: Codable, Equatable {
    var at: Data
}

/// Collects values from `@Sendable` closures.
private final class Recorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []
    func append(_ value: Value) { lock.withLock { storage.append(value) } }
    var values: [Value] { lock.withLock { storage } }
}

@Suite("UserInfoDecoder: strategies")
struct UserInfoDecoderStrategyTests {
    // MARK: - Keys

    @Test func defaultKeysAreExact() throws {
        let decoder = UserInfoDecoder()
        #expect(try decoder.decode(Box<Int>.self, from: ["value": 1]).value == 1)
        expectDecodingError(.keyNotFound, at: [], missingKey: "value") {
            try decoder.decode(Box<Int>.self, from: ["Value": 1, "value_": 2])
        }
    }

    @Test func convertFromSnakeCase() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let decoded = try decoder.decode(SnakeTarget.self, from: ["base_url": "u", "my_value": 3, "simple": true])
        #expect(decoded == SnakeTarget(baseUrl: "u", myValue: 3, simple: true))
        // Paths name the Swift keys.
        expectDecodingError(.typeMismatch, at: ["innerValue", "countValue"], type: Int.self) {
            try decoder.decode(Nest.self, from: ["inner_value": ["count_value": "x"]])
        }
        expectDecodingError(.keyNotFound, at: ["innerValue"], missingKey: "countValue") {
            try decoder.decode(Nest.self, from: ["inner_value": ["count": 1]])
        }
    }

    /// The documented loss: `base_url` reads the property `baseUrl`, never `baseURL`.
    @Test func convertFromSnakeCaseLosesAcronyms() {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        expectDecodingError(.keyNotFound, at: [], missingKey: "baseURL") {
            try decoder.decode(AcronymTarget.self, from: ["base_url": "u"])
        }
    }

    /// The conversion matches `JSONDecoder`'s, key for key.
    @Test(arguments: [
        "a_b", "_leading", "trailing_", "__both__", "ALL_CAPS", "with__double", "already", "x_1_y", "base_url", "_", "",
        "one_two_three", "mixed_Case_Words", "Already_x", "a_B_c", "Single", "HTTP_status_CODE",
    ])
    func convertFromSnakeCaseMatchesJSONDecoder(key: String) throws {
        let json = try JSONSerialization.data(withJSONObject: [key: 1])
        let jsonDecoder = JSONDecoder()
        jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        let expected = try jsonDecoder.decode(KeyNames.self, from: json).names
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(KeyNames.self, from: [key: 1]).names == expected)
    }

    /// The names of the keys a keyed container sees.
    private struct KeyNames: Decodable {
        var names: [String]
        init(from decoder: any Decoder) throws {
            names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
        }
    }

    @Test func affixedKeys() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        let userInfo: [AnyHashable: Any] = [
            "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 1, width: 2, height: 3)),
            "UIKeyboardAnimationDurationUserInfoKey": 0.25,
        ]
        let decoded = try decoder.decode(Keyboard.self, from: userInfo)
        #expect(
            decoded
                == Keyboard(frameEnd: CGRect(x: 0, y: 1, width: 2, height: 3), animationDuration: 0.25, isLocal: nil))
        // Errors name the Swift key in the path and the dictionary key in the message.
        expectDecodingError(.keyNotFound, at: [], missingKey: "frameEnd", message: "UIKeyboardFrameEndUserInfoKey") {
            try decoder.decode(
                Keyboard.self, from: ["frameEnd": NSValue(rect: .zero), "UIKeyboardAnimationDurationUserInfoKey": 1])
        }
        expectDecodingError(.typeMismatch, at: ["animationDuration"], type: Double.self) {
            try decoder.decode(
                Keyboard.self, from: userInfo.merging(["UIKeyboardAnimationDurationUserInfoKey": "x"]) { $1 })
        }
        // It applies to every key, nested ones too.
        expectDecodingError(.keyNotFound, at: [], missingKey: "innerValue", message: "UIKeyboardInnerValueUserInfoKey")
        {
            try decoder.decode(Nest.self, from: ["innerValue": ["countValue": 1]])
        }
        let nest = try decoder.decode(
            Nest.self, from: ["UIKeyboardInnerValueUserInfoKey": ["UIKeyboardCountValueUserInfoKey": 4]]
        )
        #expect(nest.innerValue.countValue == 4)
        // Reading the same keys again hits the cache and gives the same result.
        #expect(try decoder.decode(Keyboard.self, from: userInfo) == decoded)
    }

    @Test func affixedWithOnlyAPrefixOrOnlyASuffix() throws {
        let prefixOnly = UserInfoDecoder()
        prefixOnly.keyDecodingStrategy = .affixed(prefix: "NS", suffix: "")
        #expect(try prefixOnly.decode(Box<Int>.self, from: ["NSValue": 1]).value == 1)
        let suffixOnly = UserInfoDecoder()
        suffixOnly.keyDecodingStrategy = .affixed(prefix: "", suffix: "Key")
        #expect(try suffixOnly.decode(Box<Int>.self, from: ["ValueKey": 2]).value == 2)
    }

    @Test func customKeysReceiveThePathEndingInTheFoundKey() throws {
        let recorder = Recorder<[PathElement]>()
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            recorder.append(elements(path))
            // "X-Count-Value" → "countValue"
            guard let last = path.last else { return AnyKey(stringValue: "") }
            if let int = last.intValue { return AnyKey(intValue: int) }
            let words = last.stringValue.split(separator: "-").dropFirst().map(String.init)
            let camel = words.enumerated().map { $0 == 0 ? $1.lowercased() : $1.capitalized }.joined()
            return AnyKey(stringValue: camel)
        }
        let nest = try decoder.decode(Nest.self, from: ["X-Inner-Value": ["X-Count-Value": 5]])
        #expect(nest.innerValue.countValue == 5)
        #expect(recorder.values == [["X-Inner-Value"], ["innerValue", "X-Count-Value"]])
        expectDecodingError(.typeMismatch, at: ["innerValue", "countValue"], type: Int.self) {
            try decoder.decode(Nest.self, from: ["X-Inner-Value": ["X-Count-Value": "five"]])
        }
        // Integer keys reach the closure with their intValue.
        let ints = try decoder.decode([Int: String].self, from: [AnyHashable(3): "three"])
        #expect(ints == [3: "three"])
        #expect(recorder.values.last == [.intKey(3)])
    }

    // MARK: - Dates

    @Test func deferredToDate() throws {
        let decoder = UserInfoDecoder()
        let date = Date(timeIntervalSince1970: 1_000)
        #expect(try decodeBoxed(Date.self, date, using: decoder) == date)
        #expect(try decodeBoxed(Date.self, NSDate(timeIntervalSince1970: 1_000), using: decoder) == date)
        // A number is handed to Date's own init(from:): seconds since the reference date.
        #expect(try decodeBoxed(Date.self, 60, using: decoder) == Date(timeIntervalSinceReferenceDate: 60))
        #expect(
            try decodeBoxed(Date.self, NSNumber(value: 0.5), using: decoder)
                == Date(timeIntervalSinceReferenceDate: 0.5))
        expectDecodingError(
            .typeMismatch, at: ["value"], type: Date.self, message: "Expected a Date (seconds since 2001-01-01"
        ) {
            try decodeBoxed(Date.self, "2026-01-01", using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"]) { try decodeBoxed(Date.self, true, using: decoder) }
    }

    @Test func secondsAndMillisecondsSince1970() throws {
        let seconds = UserInfoDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        #expect(try decodeBoxed(Date.self, 1_500, using: seconds) == Date(timeIntervalSince1970: 1_500))
        #expect(try decodeBoxed(Date.self, NSNumber(value: 1.25), using: seconds) == Date(timeIntervalSince1970: 1.25))
        // A native date is read as it is, whatever the strategy.
        #expect(
            try decodeBoxed(Date.self, Date(timeIntervalSince1970: 9), using: seconds) == Date(timeIntervalSince1970: 9)
        )
        expectDecodingError(
            .typeMismatch, at: ["value"], type: Date.self, message: "Expected a Date (seconds since 1970"
        ) {
            try decodeBoxed(Date.self, "1500", using: seconds)
        }
        expectDecodingError(.valueNotFound, at: ["value"]) { try decodeBoxed(Date.self, NSNull(), using: seconds) }

        let milliseconds = UserInfoDecoder()
        milliseconds.dateDecodingStrategy = .millisecondsSince1970
        #expect(try decodeBoxed(Date.self, 1_500, using: milliseconds) == Date(timeIntervalSince1970: 1.5))
        #expect(try decodeBoxed(Date.self, Int64(-2_000), using: milliseconds) == Date(timeIntervalSince1970: -2))
        expectDecodingError(.typeMismatch, at: ["value"]) {
            try decodeBoxed(Date.self, NSNumber(value: true), using: milliseconds)
        }
    }

    @Test func iso8601() throws {
        let decoder = UserInfoDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(
            try decodeBoxed(Date.self, "2026-11-21T09:30:00Z", using: decoder)
                == Date(timeIntervalSince1970: 1_795_253_400))
        #expect(
            try decodeBoxed(Date.self, "2026-11-21T10:30:00+01:00", using: decoder)
                == Date(timeIntervalSince1970: 1_795_253_400))
        #expect(
            try decodeBoxed(Date.self, "2026-11-21T09:30:00.250Z", using: decoder)
                == Date(timeIntervalSince1970: 1_795_253_400.25))
        #expect(
            try decodeBoxed(Date.self, NSString(string: "2026-11-21T09:30:00Z"), using: decoder)
                == Date(timeIntervalSince1970: 1_795_253_400))
        expectDecodingError(.dataCorrupted, at: ["value"], message: "ISO 8601") {
            try decodeBoxed(Date.self, "21/11/2026", using: decoder)
        }
        expectDecodingError(
            .typeMismatch, at: ["value"], type: Date.self, message: "Expected a Date (an ISO 8601 string"
        ) {
            try decodeBoxed(Date.self, 1_795_253_400, using: decoder)
        }
        expectDecodingError(.dataCorrupted, at: ["events", 1, "at"]) {
            try decoder.decode(
                [String: [Event]].self,
                from: ["events": [["at": "2026-11-21T09:30:00Z"], ["at": "yesterday"]] as [Any]]
            )
        }
    }

    @Test func formatted() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let decoder = UserInfoDecoder()
        decoder.dateDecodingStrategy = .formatted(formatter)
        #expect(try decodeBoxed(Date.self, "1970-01-02 00:01", using: decoder) == Date(timeIntervalSince1970: 86_460))
        expectDecodingError(.dataCorrupted, at: ["value"], message: "does not match") {
            try decodeBoxed(Date.self, "1970-01-02", using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Date.self) {
            try decodeBoxed(Date.self, 5, using: decoder)
        }
    }

    /// One strategy, a value of the wrong kind for it, and the message that must name the declared type and what
    /// the strategy reads.
    struct WrongKind: Sendable, CustomStringConvertible {
        var strategy: String
        var value: @Sendable () -> Any
        var message: String
        var description: String { strategy }

        func decoder() -> UserInfoDecoder {
            let decoder = UserInfoDecoder()
            switch strategy {
            case "deferredToDate": decoder.dateDecodingStrategy = .deferredToDate
            case "secondsSince1970": decoder.dateDecodingStrategy = .secondsSince1970
            case "millisecondsSince1970": decoder.dateDecodingStrategy = .millisecondsSince1970
            case "iso8601": decoder.dateDecodingStrategy = .iso8601
            case "formatted":
                let formatter = DateFormatter()
                formatter.dateFormat = "yyyy-MM-dd"
                decoder.dateDecodingStrategy = .formatted(formatter)
            case "deferredToData": decoder.dataDecodingStrategy = .deferredToData
            default: decoder.dataDecodingStrategy = .base64
            }
            return decoder
        }
    }

    static let wrongKinds: [WrongKind] = [
        WrongKind(
            strategy: "deferredToDate", value: { "2026-01-01" },
            message: "Expected a Date (seconds since 2001-01-01 as a number, or a Date) but found a string."),
        WrongKind(
            strategy: "secondsSince1970", value: { "1500" },
            message: "Expected a Date (seconds since 1970 as a number, or a Date) but found a string."),
        WrongKind(
            strategy: "millisecondsSince1970", value: { NSNumber(value: true) },
            message: "Expected a Date (milliseconds since 1970 as a number, or a Date) but found a boolean."),
        WrongKind(
            strategy: "iso8601", value: { 1_795_253_400 },
            message: "Expected a Date (an ISO 8601 string, or a Date) but found a number."),
        WrongKind(
            strategy: "formatted", value: { [1, 2] },
            message: "Expected a Date (a string in the formatter's format, or a Date) but found an array."),
        WrongKind(
            strategy: "deferredToData", value: { "AQID" },
            message: "Expected a Data (an array of bytes, or a Data) but found a string."),
        WrongKind(
            strategy: "base64", value: { [1, 2] },
            message: "Expected a Data (a Base64 string, or a Data) but found an array."),
    ]

    /// A `Date` or `Data` property fed the wrong kind of value names the type the user declared and the form the
    /// strategy in force reads, not the `Double` or `String` the strategy reads it through.
    @Test(arguments: wrongKinds)
    func aWrongKindNamesTheDeclaredTypeAndTheStrategysForm(_ wrong: WrongKind) throws {
        let decoder = wrong.decoder()
        let isDate = !wrong.strategy.hasSuffix("Data") && wrong.strategy != "base64"
        let context = expectDecodingError(
            .typeMismatch, at: ["events", 0, "at"], type: isDate ? Date.self : Data.self
        ) {
            if isDate {
                _ = try decoder.decode([String: [Event]].self, from: ["events": [["at": wrong.value()]] as [Any]])
            } else {
                _ = try decoder.decode([String: [Attachment]].self, from: ["events": [["at": wrong.value()]] as [Any]])
            }
        }
        #expect(context?.debugDescription == wrong.message)
    }

    @Test func customDates() throws {
        let paths = Recorder<[PathElement]>()
        let decoder = UserInfoDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            paths.append(elements(decoder.codingPath))
            let text = try decoder.singleValueContainer().decode(String.self)
            guard text.hasPrefix("day "), let day = Double(text.dropFirst(4)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a day"))
            }
            return Date(timeIntervalSince1970: day * 86_400)
        }
        #expect(try decodeBoxed(Date.self, "day 2", using: decoder) == Date(timeIntervalSince1970: 172_800))
        #expect(paths.values == [["value"]])
        expectDecodingError(.dataCorrupted, at: ["events", 0, "at"], message: "not a day") {
            try decoder.decode([String: [Event]].self, from: ["events": [["at": "tomorrow"]] as [Any]])
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: String.self) {
            try decodeBoxed(Date.self, 2, using: decoder)
        }
    }

    // MARK: - Data

    @Test func deferredToData() throws {
        let decoder = UserInfoDecoder()
        #expect(try decodeBoxed(Data.self, Data([1, 2, 3]), using: decoder) == Data([1, 2, 3]))
        #expect(try decodeBoxed(Data.self, NSData(data: Data([4])), using: decoder) == Data([4]))
        // Anything else goes to Data's own init(from:), which reads an array of bytes.
        #expect(try decodeBoxed(Data.self, [1, 2, 255], using: decoder) == Data([1, 2, 255]))
        #expect(try decodeBoxed(Data.self, NSArray(array: [NSNumber(value: 7)]), using: decoder) == Data([7]))
        expectDecodingError(.dataCorrupted, at: ["value", 2], message: "does not fit in UInt8") {
            try decodeBoxed(Data.self, [1, 2, 256], using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"]) { try decodeBoxed(Data.self, "AQID", using: decoder) }
    }

    @Test func base64() throws {
        let decoder = UserInfoDecoder()
        decoder.dataDecodingStrategy = .base64
        #expect(try decodeBoxed(Data.self, "AQID", using: decoder) == Data([1, 2, 3]))
        #expect(try decodeBoxed(Data.self, "", using: decoder) == Data())
        #expect(try decodeBoxed(Data.self, Data([9]), using: decoder) == Data([9]))
        expectDecodingError(.dataCorrupted, at: ["value"], message: "Base64") {
            try decodeBoxed(Data.self, "!!!not base64", using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Data.self) {
            try decodeBoxed(Data.self, [1, 2], using: decoder)
        }
    }

    @Test func customData() throws {
        let decoder = UserInfoDecoder()
        decoder.dataDecodingStrategy = .custom { decoder in
            let hex = try decoder.singleValueContainer().decode(String.self)
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
                guard let byte = UInt8(hex[index..<next], radix: 16) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "bad hex"))
                }
                bytes.append(byte)
                index = next
            }
            return Data(bytes)
        }
        #expect(try decodeBoxed(Data.self, "0aff", using: decoder) == Data([10, 255]))
        expectDecodingError(.dataCorrupted, at: ["value"], message: "bad hex") {
            try decodeBoxed(Data.self, "zz", using: decoder)
        }
    }

    // MARK: - userInfo

    private struct NeedsContext: Decodable {
        static let unitKey = CodingUserInfoKey(rawValue: "unit")!
        var text: String
        init(from decoder: any Decoder) throws {
            let unit = decoder.userInfo[Self.unitKey] as? String ?? "none"
            text = "\(try decoder.singleValueContainer().decode(Int.self)) \(unit)"
        }
    }

    @Test func userInfoIsVisibleToInitFromDecoder() throws {
        let decoder = UserInfoDecoder()
        decoder.userInfo[NeedsContext.unitKey] = "px"
        #expect(try decoder.decode([String: [NeedsContext]].self, from: ["k": [3]])["k"]?.map(\.text) == ["3 px"])
        #expect(try UserInfoDecoder().decode(NeedsContext.self, fromValue: 3).text == "3 none")
    }

    /// Options are read at the start of each call: changing them later does not affect earlier results.
    @Test func strategiesCanBeChangedBetweenCalls() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "A", suffix: "")
        #expect(try decoder.decode(Box<Int>.self, from: ["AValue": 1]).value == 1)
        decoder.keyDecodingStrategy = .affixed(prefix: "B", suffix: "")
        #expect(try decoder.decode(Box<Int>.self, from: ["AValue": 1, "BValue": 2]).value == 2)
        decoder.keyDecodingStrategy = .useDefaultKeys
        #expect(try decoder.decode(Box<Int>.self, from: ["BValue": 2, "value": 3]).value == 3)
    }
}
