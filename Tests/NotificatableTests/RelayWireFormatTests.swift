import Foundation
import Notificatable
import NotificatableRelay
import Testing

@Suite("Relay wire format and channel names")
struct RelayWireFormatTests {
    private func json(_ text: String) -> Data { Data(text.utf8) }

    @Test func roundTripsEveryPropertyListValue() throws {
        let date = Date(timeIntervalSince1970: 1_764_000_000.25)
        let payload: [String: Any] = [
            "string": "é😀\"; DROP", "int": 42, "negative": -7, "double": 2.5, "third": 1.0 / 3.0, "bool": true,
            "false": false, "date": date, "data": Data([0, 1, 254, 255]), "nan": Double.nan,
            "inf": Double.infinity, "array": [1, "two", [3.5]] as [Any], "nested": ["x": ["y": 1]],
            "dollar": ["$date": "not a tag"], "null": NSNull(),
        ]
        let message = NotificationRelayMessage(name: .init("A"), sender: "s", sequence: 9, payload: payload)
        let read = try NotificationRelayMessage(decoding: try message.encoded())
        #expect(read.version == 1)
        #expect(read.name.rawValue == "A")
        #expect(read.sender == "s")
        #expect(read.sequence == 9)
        let got = try #require(read.payload)
        #expect(got["string"] as? String == "é😀\"; DROP")
        #expect(got["int"] as? Int == 42)
        #expect(got["negative"] as? Int == -7)
        #expect(got["double"] as? Double == 2.5)
        #expect(got["third"] as? Double == 1.0 / 3.0)
        #expect(got["bool"] as? Bool == true)
        #expect(got["false"] as? Bool == false)
        #expect(got["date"] as? Date == date)
        #expect(got["data"] as? Data == Data([0, 1, 254, 255]))
        #expect((got["nan"] as? Double)?.isNaN == true)
        #expect(got["inf"] as? Double == .infinity)
        let array = try #require(got["array"] as? [Any])
        #expect(array.count == 3)
        #expect(array[1] as? String == "two")
        #expect((array[2] as? [Any])?.first as? Double == 3.5)
        #expect(((got["nested"] as? [String: Any])?["x"] as? [String: Any])?["y"] as? Int == 1)
        #expect((got["dollar"] as? [String: Any])?["$date"] as? String == "not a tag")
        #expect(got["null"] is NSNull)
    }

    @Test func writesTheDocumentedJSON() throws {
        let message = NotificationRelayMessage(
            name: .init("OrderShipped"), sender: "S", sequence: 3,
            payload: ["at": Date(timeIntervalSince1970: 10), "blob": Data([1, 2, 3])]
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: message.encoded()) as? [String: Any]
        )
        #expect(object["version"] as? Int == 1)
        #expect(object["name"] as? String == "OrderShipped")
        #expect(object["sender"] as? String == "S")
        #expect(object["sequence"] as? Int == 3)
        let payload = try #require(object["payload"] as? [String: Any])
        #expect((payload["at"] as? [String: Any])?["$date"] as? Double == 10)
        #expect((payload["blob"] as? [String: Any])?["$data"] as? String == "AQID")
    }

    @Test func readsAMessageWrittenByHand() throws {
        let text = #"{"version":1,"name":"N","sender":"go-service","sequence":1,"payload":{"a":{"$escape":{"$b":1}}}}"#
        let read = try NotificationRelayMessage(decoding: json(text))
        #expect(read.sender == "go-service")
        #expect((read.payload?["a"] as? [String: Any])?["$b"] as? Int == 1)
        let none = try NotificationRelayMessage(decoding: json(#"{"version":1,"name":"N","sender":"x","sequence":2}"#))
        #expect(none.payload == nil)
    }

    /// Integers of up to 18 digits are read without their text; at 19 digits and above, and for a `$date`'s seconds,
    /// through it. Each side of that line reads exactly.
    @Test func integersAreExactOnBothSidesOfTheEighteenDigitLine() throws {
        let cases: [(String, NSNumber)] = [
            ("0", NSNumber(value: Int64(0))), ("-0", NSNumber(value: Int64(0))), ("7", NSNumber(value: Int64(7))),
            ("-42", NSNumber(value: Int64(-42))),
            ("999999999999999999", NSNumber(value: Int64(999_999_999_999_999_999))),
            ("-999999999999999999", NSNumber(value: Int64(-999_999_999_999_999_999))),
            ("1000000000000000000", NSNumber(value: Int64(1_000_000_000_000_000_000))),
            ("-9223372036854775808", NSNumber(value: Int64.min)), ("9223372036854775807", NSNumber(value: Int64.max)),
            ("18446744073709551615", NSNumber(value: UInt64.max)), ("1e2", NSNumber(value: 100.0)),
        ]
        for (literal, expected) in cases {
            let text = #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"n":"# + literal + "}}"
            let read = try NotificationRelayMessage(decoding: json(text))
            let number = try #require(read.payload?["n"] as? NSNumber, "\(literal)")
            #expect(number == expected, "\(literal) read as \(number)")
            #expect(String(cString: number.objCType) == String(cString: expected.objCType), "\(literal)")
        }
        let dated = #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"at":{"$date":978307201}}}"#
        let date = try #require(try NotificationRelayMessage(decoding: json(dated)).payload?["at"] as? Date)
        #expect(date.timeIntervalSinceReferenceDate == 1)
    }

    @Test func refusesAValueThatIsNotAPropertyListValue() throws {
        let message = NotificationRelayMessage(
            name: .init("N"), sender: "s", sequence: 1, payload: ["list": [1, NSObject()] as [Any]]
        )
        #expect {
            try message.encoded()
        } throws: { error in
            guard case .invalidValue(_, let context) = error as? EncodingError else { return false }
            return context.codingPath.map(PathElement.init) == ["payload", "list", 1]
        }
    }

    @Test func reportsMalformedMessagesWithTheirPath() {
        expectDecodingError(.dataCorrupted, at: [], message: "not JSON") {
            try NotificationRelayMessage(decoding: json("{not json"))
        }
        expectDecodingError(.typeMismatch, at: [], message: "JSON object") {
            try NotificationRelayMessage(decoding: json("[1]"))
        }
        expectDecodingError(.keyNotFound, at: [], missingKey: "version") {
            try NotificationRelayMessage(decoding: json(#"{"name":"N"}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["version"], message: "version 2") {
            try NotificationRelayMessage(decoding: json(#"{"version":2,"name":"N"}"#))
        }
        expectDecodingError(.typeMismatch, at: ["sequence"], message: "found a string") {
            try NotificationRelayMessage(
                decoding: json(#"{"version":1,"name":"N","sender":"s","sequence":"1"}"#))
        }
        expectDecodingError(.typeMismatch, at: ["payload"], message: "found an array") {
            try NotificationRelayMessage(
                decoding: json(#"{"version":1,"name":"N","sender":"s","sequence":1,"payload":[]}"#))
        }
        expectDecodingError(.typeMismatch, at: ["payload", "a", 0], type: Date.self) {
            try NotificationRelayMessage(
                decoding: json(#"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"a":[{"$date":"x"}]}}"#)
            )
        }
        expectDecodingError(.dataCorrupted, at: ["payload", "a"], message: "Unknown tag \"$what\"") {
            try NotificationRelayMessage(
                decoding: json(#"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"a":{"$what":1}}}"#)
            )
        }
    }

    /// The sequence number is read as an exact integer, not through `Double`: `Int.max` is a sequence number, and so is
    /// every integer from 1; 0, negatives and numbers beyond `Int.max` are malformed at `sequence`.
    @Test func sequenceNumbersAreExactIntegersFromOne() throws {
        func message(_ sequence: String) -> Data {
            json(#"{"version":1,"name":"N","sender":"s","sequence":"# + sequence + "}")
        }
        #expect(try NotificationRelayMessage(decoding: message("9223372036854775807")).sequence == Int.max)
        #expect(try NotificationRelayMessage(decoding: message("9223372036854775806")).sequence == Int.max - 1)
        #expect(try NotificationRelayMessage(decoding: message("1")).sequence == 1)
        for refused in ["0", "-5", "-9223372036854775808", "9223372036854775808", "18446744073709551616"] {
            expectDecodingError(.dataCorrupted, at: ["sequence"], message: "from 1 to 9223372036854775807") {
                try NotificationRelayMessage(decoding: message(refused))
            }
        }
        for refused in ["1.5", "true", "null", "[1]"] {
            expectDecodingError(.typeMismatch, at: ["sequence"], message: "Expected an integer") {
                try NotificationRelayMessage(decoding: message(refused))
            }
        }
        expectDecodingError(.dataCorrupted, at: ["version"], message: "version 9223372036854775807") {
            try NotificationRelayMessage(
                decoding: json(#"{"version":9223372036854775807,"name":"N","sender":"s","sequence":1}"#))
        }
    }

    /// A message that is not JSON is reported in one sentence, like every other failure, not as a dumped `NSError`.
    @Test func aMessageThatIsNotJSONIsReportedInOneSentence() throws {
        let deep =
            #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"a":"#
            + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}}"
        for text in [deep, "{not json", #"{"version":1,"#, "", "[1] 2"] {
            let context = expectDecodingError(.dataCorrupted, at: [], message: "The message is not JSON: ") {
                try NotificationRelayMessage(decoding: json(text))
            }
            let sentence = try #require(context?.debugDescription)
            #expect(sentence.hasPrefix("The message is not JSON: "), "\(sentence)")
            #expect(sentence.hasSuffix("."), "\(sentence)")
            #expect(!sentence.contains("Error Domain") && !sentence.contains("UserInfo"), "\(sentence)")
            #expect(!sentence.contains("\n"), "\(sentence)")
            let rest = sentence.dropFirst("The message is not JSON: ".count)
            #expect(rest.first?.isLowercase == true, "\(sentence)")
        }
        let context = expectDecodingError(.dataCorrupted, at: [], message: "not JSON") {
            try NotificationRelayMessage(decoding: json(deep))
        }
        let sentence = try #require(context?.debugDescription)
        #expect(
            sentence.wholeMatch(
                of: /The message is not JSON: too many nested arrays or dictionaries around character \d+\./) != nil,
            "\(sentence)")
    }

    /// Equal payloads are equal bytes: dictionary keys are written in sorted order, whatever the order a
    /// `Dictionary` iterates in (it depends on its capacity and history). `encoded(_:for:sender:sequence:)` promises
    /// the bytes a relay sends; before, its test failed about one run in six.
    @Test func equalPayloadsAreEqualBytesWhateverTheDictionarysHistory() throws {
        let keys = (0..<26).map { String(UnicodeScalar(UInt8(97 + $0))) }
        var grown: [String: Any] = [:]
        for (index, key) in keys.enumerated() { grown[key] = index }
        var roomy = [String: Any](minimumCapacity: 4096)
        for (index, key) in keys.enumerated().reversed() { roomy[key] = index }
        roomy["nested"] = ["z": 1, "y": [2, 3], "x": ["w": NSNull()]] as [String: Any]
        grown["nested"] = ["x": ["w": NSNull()], "y": [2, 3], "z": 1] as [String: Any]
        let one = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: grown).encoded()
        let other = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: roomy).encoded()
        #expect(one == other)
        let text = try #require(String(data: one, encoding: .utf8))
        #expect(text.contains(#""a":0,"b":1,"c":2"#), "\(text)")
        #expect(text.contains(#""nested":{"x":{"w":null},"y":[2,3],"z":1}"#), "\(text)")
    }

    /// What follows a member or an element must be a `,` or the container's closing bracket; the sentence names
    /// which container and where.
    @Test func aMissingCommaNamesTheContainerAndThePlace() throws {
        let cases: [(String, String)] = [
            (#"{"version":1 "name":"N"}"#, "expected ',' or '}' in an object around character 13"),
            (
                #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"a":[1 2]}}"#,
                "expected ',' or ']' in an array around character 68"
            ),
            (
                #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":{"a":[1,2"#,
                "unexpected end of the message"
            ),
        ]
        for (text, expected) in cases {
            let context = expectDecodingError(.dataCorrupted, at: [], message: "not JSON") {
                try NotificationRelayMessage(decoding: json(text))
            }
            #expect(context?.debugDescription == "The message is not JSON: \(expected).", "\(text)")
        }
    }

    @Test func aNameThatFitsIsItsOwnChannel() {
        #expect(NotificationChannelName.channel(for: "OrderShipped", maximumLength: 63) == "OrderShipped")
        #expect(NotificationChannelName.channel(for: "x", maximumLength: nil) == "x")
        let exactly63 = String(repeating: "a", count: 63)
        #expect(NotificationChannelName.channel(for: exactly63, maximumLength: 63) == exactly63)
    }

    @Test func aLongNameBecomesAPrefixAndAHash() {
        let long = "com.example.warehouse.notifications.OrderShippedToCustomerNotification"
        let channel = NotificationChannelName.channel(for: long, maximumLength: 63)
        #expect(channel.utf8.count == 63)
        #expect(channel.hasPrefix("com.example.warehouse.notifications.Order"))
        #expect(channel.dropFirst(46).first == "#")
        // Stable across processes: FNV-1a 64 of the UTF-8 bytes, as documented.
        #expect(NotificationChannelName.channel(for: "a", maximumLength: 0) == "")
        #expect(NotificationChannelName.channel(for: "", maximumLength: 63) == "#cbf29ce484222325")
        #expect(NotificationChannelName.channel(for: "a", maximumLength: nil) == "a")
        let sixtyFour = NotificationChannelName.channel(for: String(repeating: "a", count: 64), maximumLength: 63)
        #expect(sixtyFour.utf8.count == 63)
        #expect(sixtyFour.suffix(17).hasPrefix("#"))
        let other = NotificationChannelName.channel(for: long + "2", maximumLength: 63)
        #expect(other != channel)
        #expect(NotificationChannelName.channel(for: "ab", maximumLength: 1).utf8.count == 1)
    }

    @Test func aPrefixNeverSplitsACharacter() {
        let name = String(repeating: "é", count: 40)  // 80 bytes
        let channel = NotificationChannelName.channel(for: name, maximumLength: 63)
        #expect(channel.utf8.count <= 63)
        #expect(channel.hasPrefix(String(repeating: "é", count: 23)))
        #expect(channel.utf8.count == 46 + 17)
    }
}
