import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

// Issue 32: a received message is read in one pass (`WireJSONReader.readMessage`), which declines every message of
// an unusual shape to the reference reading (`init(referenceDecoding:)`). These tests hold the two to the same
// outcome: the same fields and values, type for type and bit for bit, or the same error.

/// A received message's outcome, comparable: its fields and values with their types, or its error.
private func outcome(_ read: () throws -> NotificationRelayMessage) -> String {
    do {
        let message = try read()
        return "v\(message.version) \(canonical(message.name.rawValue)) \(canonical(message.sender)) "
            + "#\(message.sequence) " + (message.payload.map { canonical($0) } ?? "no payload")
    } catch {
        return "error: \(error)"
    }
}

/// A value with its type, exactly: strings by scalar, doubles and dates by bit pattern, dictionaries sorted by key.
private func canonical(_ value: Any) -> String {
    switch value {
    case let string as String:
        return "s(" + string.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ",") + ")"
    case let date as Date:
        return "date(\(date.timeIntervalSinceReferenceDate.bitPattern))"
    case let data as Data:
        return "data(\(data.base64EncodedString()))"
    case is NSNull:
        return "null"
    case let number as NSNumber:
        let type = String(cString: number.objCType)
        let bits = type == "d" || type == "f" ? "\(number.doubleValue.bitPattern)" : "\(number)"
        return "n\(WireValue.isBoolean(number) ? "bool" : type)(\(bits))"
    case let array as [Any]:
        return "[" + array.map { canonical($0) }.joined(separator: ",") + "]"
    case let dictionary as [String: Any]:
        let members = dictionary.map { (canonical($0.key), canonical($0.value)) }.sorted { $0.0 < $1.0 }
        return "{" + members.map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
    case let dictionary as [AnyHashable: Any]:
        return "AnyHashable-keyed \(dictionary.count)"
    case let double as Double:
        return "double(\(double.bitPattern))"
    default:
        return "\(type(of: value))(\(value))"
    }
}

private func bothOutcomes(_ data: Data) -> (fast: String, reference: String) {
    (
        outcome { try NotificationRelayMessage(decoding: data) },
        outcome { try NotificationRelayMessage(referenceDecoding: data) }
    )
}

@Suite("Relay wire format: the one-pass reader agrees with the reference reading")
struct RelayWireFastPathTests {
    /// What the writer makes (tags, escapes, `$` keys, every number width, nested containers) is read in one pass,
    /// and read as the reference reading reads it.
    @Test func everyShapeTheWriterMakesIsReadInOnePassAsTheReferenceReadsIt() throws {
        let date = Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7)
        let payloads: [[String: Any]] = [
            [:],
            ["index": 7, "sentAt": UInt64.max, "orderID": "A-17", "weight": 2.5, "note": "é\u{FEFF}😀\"\\\u{1}"],
            ["at": date, "blob": Data([0, 1, 2, 255]), "nan": Double.nan, "inf": -Double.infinity, "flag": true],
            ["nested": ["$date": 5] as [String: Any], "list": [1, "two", [3.5, false] as [Any], NSNull()] as [Any]],
            ["$price": 3, "other": ["$escape": ["a": 1] as [String: Any]] as [String: Any]],
            ["deep": ["a": ["b": ["c": [date, ["$x": "y"] as [String: Any]] as [Any]] as [String: Any]]]],
            ["widths": [Int8.min, UInt8.max, Int16.min, UInt32.max, Int64.min, UInt64(Int64.max) + 1] as [Any]],
            ["empty": [:] as [String: Any], "emptyList": [] as [Any], "$date": 1.5],
        ]
        for payload in payloads {
            let data = try NotificationRelayMessage(name: .init("Ñame"), sender: "s", sequence: 42, payload: payload)
                .encoded()
            #expect(WireJSONReader.readMessage(data) != nil, "\(String(decoding: data, as: UTF8.self))")
            let (fast, reference) = bothOutcomes(data)
            #expect(!fast.hasPrefix("error"), "\(fast)")
            #expect(fast == reference, "\(String(decoding: data, as: UTF8.self))")
        }
    }

    /// `payloadUserInfo` holds the payload's entries, whether the message was read (in one pass or the reference
    /// way) or made: the form a re-post and the durable processor decode from.
    @Test func payloadUserInfoHoldsThePayloadHoweverTheMessageWasMade() throws {
        let payload: [String: Any] = ["index": 7, "at": Date(timeIntervalSinceReferenceDate: 1.5), "$x": "y"]
        let made = NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: payload)
        let data = try made.encoded()
        let escaped = try NotificationRelayMessage(
            name: .init("N"), sender: "s", sequence: 1, payload: ["$only": 1]
        ).encoded()
        #expect(WireJSONReader.readMessage(escaped) == nil)
        for message in [
            made, try NotificationRelayMessage(decoding: data), try NotificationRelayMessage(decoding: escaped),
        ] {
            let userInfo = try #require(message.payloadUserInfo)
            let strings = try #require(message.payload)
            #expect(userInfo.count == strings.count)
            for (key, value) in strings {
                #expect(userInfo[AnyHashable(key)].map { canonical($0) } == canonical(value), "\(key)")
            }
        }
        let none = NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: nil)
        #expect(none.payloadUserInfo == nil)
        #expect(try NotificationRelayMessage(decoding: try none.encoded()).payloadUserInfo == nil)
    }

    /// Texts the writer does not make, valid or not: each one reads, or fails, exactly as the reference reading.
    @Test func unusualMessagesReadOrFailAsTheReferenceReadsThem() {
        let head = #""version":1,"name":"N","sender":"s","sequence":1"#
        let texts: [String] = [
            "{\(head)}", "{\(head),\"payload\":null}", "\u{FEFF} { \(head) , \"payload\" : { \"a\" : 1 } } \n",
            #"{"payload":{"a":1},"sequence":3,"sender":"s","name":"N","version":1}"#,
            "{\(head),\"future\":{\"x\":[1,2]},\"later\":\"y\"}", "{\(head),\"future\":1,\"future\":2}",
            "{\(head),\"payload\":{\"$escape\":{\"$x\":1}}}", "{\(head),\"payload\":{\"$date\":5}}",
            "{\(head),\"payload\":{\"$x\":1}}", "{\(head),\"payload\":{\"a\":{\"$nope\":1}}}",
            "{\(head),\"payload\":{\"a\":{\"$date\":\"x\"}}}", "{\(head),\"payload\":{\"a\":{\"$data\":\"!!\"}}}",
            "{\(head),\"payload\":{\"a\":{\"$double\":\"nan\"},\"b\":{\"$escape\":{\"$date\":2}}}}",
            "{\(head),\"payload\":{\"a\":{\"$date\":1,\"b\":2},\"c\":{\"b\":2,\"$date\":1}}}",
            "{\(head),\"payload\":{\"a\":1,\"a\":2}}", "{\(head),\"payload\":[1]}", "{\(head),\"payload\":3}",
            "{\(head),\"payload\":{\"a\":1}} x", "{\(head),\"payload\":{\"a\":01}}", "{\(head),\"payload\":{\"a\":}}",
            "{\(head),\"name\":\"M\"}", #"{"version":2,"name":"N","sender":"s","sequence":1}"#,
            #"{"version":1.0,"name":"N","sender":"s","sequence":1}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":0}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":-1}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":"1"}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":1e2}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":123456789012345678901}"#,
            #"{"version":1,"name":"N","sender":"s","sequence":123456789012345678}"#,
            #"{"version":1,"name":7,"sender":"s","sequence":1}"#, #"{"version":1,"sender":"s","sequence":1}"#,
            #"{"version":1,"n\u0061me":"N","sender":"s","sequence":1}"#,
            #"{"version":1,"name":"N","sender":"\#(String(repeating: "x", count: 129))","sequence":1}"#,
            #"{"version":1,"name":"N","sender":true,"sequence":1}"#, "[]", "", "{", "{}",
            "{\(head),\"payload\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
            "{\(head),\"payload\":{\"\u{E9}\":1,\"e\u{301}\":2}}",
        ]
        for text in texts {
            let (fast, reference) = bothOutcomes(Data(text.utf8))
            #expect(fast == reference, "\(text.prefix(120))")
        }
    }

    /// Random corruptions of a message with tags, escapes and nesting: the two readings agree on every one.
    @Test func corruptedMessagesReadOrFailAsTheReferenceReadsThem() throws {
        var random = SeededGenerator(seed: 0x5eed_32)
        let base = try NotificationRelayMessage(
            name: .init("N"), sender: "s", sequence: 12,
            payload: [
                "text": "é\u{FEFF}😀\"\\", "at": Date(timeIntervalSince1970: 1.5), "list": [1, 2.5, true] as [Any],
                "one": ["$date": 3] as [String: Any], "blob": Data([1, 2]), "big": UInt64.max,
            ]
        ).encoded()
        var agreed = 0
        var fastReads = 0
        for round in 0..<20_000 {
            var bytes = [UInt8](base)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[position] = Array(#"{}[]":,$0-e."#.utf8).randomElement(using: &random) ?? 0
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
                case 2: if bytes.count > 1 { bytes.remove(at: position) }
                default: bytes[position] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let data = Data(bytes)
            if WireJSONReader.readMessage(data) != nil { fastReads += 1 }
            let (fast, reference) = bothOutcomes(data)
            if fast == reference {
                agreed += 1
            } else {
                Issue.record("round \(round): \(String(decoding: bytes, as: UTF8.self))\n\(fast)\n\(reference)")
                if agreed < round - 5 { break }
            }
        }
        #expect(agreed == 20_000)
        // Both kinds were met: corruptions that still read in one pass (a changed digit or letter), and declined ones.
        #expect(fastReads > 100 && fastReads < 19_000, "\(fastReads)")
    }
}
