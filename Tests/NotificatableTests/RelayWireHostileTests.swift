import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

// Issue 29, items 1, 2, 3 and 5: values that changed on the wire without an error, keys merged silently, and sender
// ids of any size. Each test failed on the code before its fix.

/// A payload whose only property's key starts with `$`.
struct RelayDollarPrice: Codable, Sendable, Equatable {
    var price: Int

    enum CodingKeys: String, CodingKey {
        case price = "$price"
    }
}

/// A payload of every integer width, at its edges.
struct RelayIntegerEdges: Codable, Sendable, Equatable {
    var int8: [Int8] = [.min, -1, 0, .max]
    var int16: [Int16] = [.min, -1, 0, .max]
    var int32: [Int32] = [.min, -1, 0, .max]
    var int64: [Int64] = [.min, -1, 0, .max]
    var int: [Int] = [.min, -1, 0, .max]
    var uint8: [UInt8] = [0, 1, .max]
    var uint16: [UInt16] = [0, 1, .max]
    var uint32: [UInt32] = [0, 1, .max]
    var uint64: [UInt64] = [0, 1, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64(Int64.max) + 2, .max - 1, .max]
    var uint: [UInt] = [0, 1, UInt(Int.max) + 1, .max]
    var checksum: UInt64 = 9_223_372_036_854_775_809
}

@Suite("Relay wire format: hostile values and keys (issue 29)")
struct RelayWireHostileTests {
    private func message(payload: String, sender: String = "s") -> Data {
        Data(#"{"version":1,"name":"N","sender":"\#(sender)","sequence":1,"payload":\#(payload)}"#.utf8)
    }

    private func roundTrip(_ payload: [String: Any]) throws -> [String: Any]? {
        let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: payload).encoded()
        return try NotificationRelayMessage(decoding: bytes).payload
    }

    // MARK: - Item 1: a top level with one `$` key

    /// The writer escapes a dictionary with exactly one key starting with `$` at every level, the payload's top level
    /// included; the reader unescapes it at every level too. (Before, `["$price": 5]` failed with "Unknown tag" and
    /// `["$date": 5.0]` arrived as `["$escape": Date(5)]`.)
    @Test func aTopLevelWithOneDollarKeyArrivesAsSent() throws {
        let price = try #require(try roundTrip(["$price": 5]))
        #expect(price.count == 1)
        #expect(price["$price"] as? Int == 5)
        let date = try #require(try roundTrip(["$date": 5.0]))
        #expect(Array(date.keys) == ["$date"])
        #expect(date["$date"] as? Double == 5)
        let data = try #require(try roundTrip(["$data": "AQID"]))
        #expect(data["$data"] as? String == "AQID")
        let double = try #require(try roundTrip(["$double": "nan"]))
        #expect(double["$double"] as? String == "nan")
        let escape = try #require(try roundTrip(["$escape": ["$x": 1]]))
        #expect((escape["$escape"] as? [String: Any])?["$x"] as? Int == 1)
        let realDate = try #require(try roundTrip(["$date": Date(timeIntervalSince1970: 5)]))
        #expect(realDate["$date"] as? Date == Date(timeIntervalSince1970: 5))
        // Nested, the same mechanism.
        let nested = try #require(try roundTrip(["a": ["$date": 5.0], "b": [["$price": 1]]]))
        #expect((nested["a"] as? [String: Any])?["$date"] as? Double == 5)
        #expect(((nested["b"] as? [Any])?.first as? [String: Any])?["$price"] as? Int == 1)
    }

    /// A payload type whose one property's key starts with `$` crosses two relays.
    @Test func aPayloadTypeWithOneDollarKeyIsRelayed() throws {
        let pair = RelayPair()
        let handle = Notificatable<RelayDollarPrice>.name(uniqueName())
        pair.forward(handle)
        let received = ValueRecorder<RelayDollarPrice>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        handle.subscribe(center: pair.rightCenter) { received.append($0.userInfo) }.store(in: bag)
        handle.post(RelayDollarPrice(price: 5), center: pair.leftCenter)
        #expect(received.values == [RelayDollarPrice(price: 5)])
        #expect(pair.failures.values.isEmpty)
    }

    /// A tag as the whole payload is a tagged value, not an object: a type mismatch at `payload`.
    @Test func aTagAsThePayloadIsATypeMismatch() {
        expectDecodingError(.typeMismatch, at: ["payload"], message: "found a date") {
            try NotificationRelayMessage(decoding: message(payload: #"{"$date":5}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["payload"], message: "Unknown tag \"$price\"") {
            try NotificationRelayMessage(decoding: message(payload: #"{"$price":5}"#))
        }
        let escaped = try? NotificationRelayMessage(decoding: message(payload: #"{"$escape":{"$price":5}}"#))
        #expect(escaped?.payload?["$price"] as? Int == 5)
    }

    // MARK: - Item 2: integers of every width, exactly

    /// `UInt64` values above `Int64.max` cross exactly (before, `9223372036854775809` arrived as `…808` and
    /// `UInt64.max` was refused as "does not fit in UInt64"), as do the edges of every other width.
    @Test func integersOfEveryWidthCrossTwoRelaysExactly() throws {
        let pair = RelayPair()
        let handle = Notificatable<RelayIntegerEdges>.name(uniqueName())
        pair.forward(handle)
        let received = ValueRecorder<RelayIntegerEdges>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        handle.subscribe(center: pair.rightCenter) { received.append($0.userInfo) }.store(in: bag)
        handle.post(RelayIntegerEdges(), center: pair.leftCenter)
        #expect(received.values == [RelayIntegerEdges()])
        #expect(pair.failures.values.isEmpty, "\(pair.failures.values)")
    }

    /// At the message level: every integer type in `userInfo`, and an `NSNumber` holding one, is written as its exact
    /// digits and read back as the same integer.
    @Test func integersAreWrittenAsTheirExactDigits() throws {
        let big = UInt64(Int64.max) + 2
        let payload: [String: Any] = [
            "u64": big, "u64max": UInt64.max, "uint": UInt.max, "ns": NSNumber(value: UInt64.max),
            "nsbig": NSNumber(value: big), "i64min": Int64.min, "nsmin": NSNumber(value: Int64.min),
            "u32": UInt32.max, "i8": Int8.min, "nsdouble": NSNumber(value: 2.5), "nsintegral": NSNumber(value: 3.0),
        ]
        let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: payload)
            .encoded()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""u64":9223372036854775809"#))
        #expect(text.contains(#""u64max":18446744073709551615"#))
        #expect(text.contains(#""ns":18446744073709551615"#))
        #expect(text.contains(#""nsmin":-9223372036854775808"#))
        let read = try #require(try NotificationRelayMessage(decoding: bytes).payload)
        #expect((read["u64"] as? NSNumber)?.uint64Value == big)
        #expect((read["u64max"] as? NSNumber)?.uint64Value == UInt64.max)
        #expect((read["uint"] as? NSNumber)?.uint64Value == UInt64(UInt.max))
        #expect((read["ns"] as? NSNumber)?.uint64Value == UInt64.max)
        #expect((read["nsbig"] as? NSNumber)?.uint64Value == big)
        #expect((read["i64min"] as? NSNumber)?.int64Value == Int64.min)
        #expect((read["nsmin"] as? NSNumber)?.int64Value == Int64.min)
        #expect((read["u32"] as? NSNumber)?.int64Value == Int64(UInt32.max))
        #expect((read["i8"] as? NSNumber)?.int64Value == Int64(Int8.min))
        #expect((read["nsdouble"] as? NSNumber)?.doubleValue == 2.5)
        #expect((read["nsintegral"] as? NSNumber)?.doubleValue == 3)
    }

    // MARK: - Item 3: duplicate keys, exact or canonically equal

    /// An object with a key twice, spelled the same or in two canonically equivalent ways (which Swift's `String`
    /// treats as equal), is malformed: a `dataCorrupted` error at the key. (Before, the values were merged into one
    /// key, silently.)
    @Test func duplicateKeysAreRefusedWithTheirPath() {
        expectDecodingError(.dataCorrupted, at: ["payload", "\u{E9}"], message: "twice") {
            try NotificationRelayMessage(decoding: message(payload: #"{"\u00e9":1,"e\u0301":2,"x":3,"y":4}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["payload", "\u{C5}"], message: "U+212B") {
            try NotificationRelayMessage(decoding: message(payload: "{\"\u{C5}\":1,\"\u{212B}\":2}"))
        }
        expectDecodingError(.dataCorrupted, at: ["payload", "a"], message: "\"a\" appears twice") {
            try NotificationRelayMessage(decoding: message(payload: #"{"a":1,"a":2}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["payload", "list", 1, "x"], message: "twice") {
            try NotificationRelayMessage(decoding: message(payload: #"{"list":[{},{"x":1,"b":0,"x":2}]}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["payload", "at", "$date"], message: "twice") {
            try NotificationRelayMessage(decoding: message(payload: #"{"at":{"$date":1,"$date":2}}"#))
        }
        expectDecodingError(.dataCorrupted, at: ["sequence"], message: "twice") {
            try NotificationRelayMessage(
                decoding: Data(#"{"version":1,"name":"N","sender":"s","sequence":1,"sequence":2}"#.utf8))
        }
    }

    /// Through a relay: reported as a malformed message, with the path, and nothing is posted.
    @Test func aMessageWithDuplicateKeysIsReportedAndNotPosted() {
        let center = NotificationCenter()
        let bus = LoopbackNotificationBus()
        let failures = ValueRecorder<NotificationDecodingFailure>()
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: bus), center: center, onEvent: { _ in },
            onFailure: { failures.append($0) })
        let handle = Notificatable<[String: Int]>.name(uniqueName())
        relay.forward(handle)
        let received = ValueRecorder<[String: Int]>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        handle.subscribe(center: center) { received.append($0.userInfo) }.store(in: bag)
        let text =
            #"{"version":1,"name":"\#(handle.name.rawValue)","sender":"s","sequence":1,"payload":{"\u00c5":1,"\u212b":2}}"#
        bus.publish(Data(text.utf8), on: handle.name.rawValue)
        #expect(received.values.isEmpty)
        let failure = failures.values.first
        #expect(failures.values.count == 1)
        #expect(failure?.kind == .malformedMessage)
        #expect(failure?.codingPath.map(PathElement.init) == ["payload", "\u{C5}"])
        relay.stop()
    }

    // MARK: - Item 5: the size of a sender id

    /// A sender id longer than ``NotificationRelayMessage/maximumSenderLength`` bytes is malformed, read or written.
    @Test func aSenderIdOverTheLimitIsMalformed() throws {
        let limit = NotificationRelayMessage.maximumSenderLength
        #expect(limit == 128)
        let longest = String(repeating: "é", count: limit / 2)
        #expect(try NotificationRelayMessage(decoding: message(payload: "{}", sender: longest)).sender == longest)
        expectDecodingError(.dataCorrupted, at: ["sender"], message: "129 bytes") {
            try NotificationRelayMessage(decoding: message(payload: "{}", sender: longest + "x"))
        }
        expectDecodingError(.dataCorrupted, at: ["sender"], message: "262144 bytes") {
            try NotificationRelayMessage(
                decoding: message(payload: "{}", sender: String(repeating: "x", count: 256 * 1024)))
        }
        #expect {
            try NotificationRelayMessage(name: .init("N"), sender: longest + "x", sequence: 1, payload: nil).encoded()
        } throws: { error in
            guard case .invalidValue(_, let context) = error as? EncodingError else { return false }
            return context.codingPath.map(PathElement.init) == ["sender"]
        }
    }

    /// Through a relay: 1,024 messages with long sender ids are reported as malformed, and none is remembered (before,
    /// the relay kept them all: 258 MiB for 256 KiB ids).
    @Test func longSenderIdsAreReportedAndNotRemembered() {
        let center = NotificationCenter()
        let bus = LoopbackNotificationBus()
        let failures = ValueRecorder<NotificationDecodingFailure>()
        let relay = NotificationRelay(
            transport: LoopbackNotificationTransport(bus: bus), center: center, onEvent: { _ in },
            onFailure: { failures.append($0) })
        let handle = Notificatable.withoutPayload(uniqueName())
        relay.forward(handle)
        let filler = String(repeating: "x", count: 4 * 1024)
        for index in 0..<1_024 {
            let sender = String(format: "%05d", index) + filler
            let text = #"{"version":1,"name":"\#(handle.name.rawValue)","sender":"\#(sender)","sequence":1}"#
            bus.publish(Data(text.utf8), on: handle.name.rawValue)
        }
        #expect(relay.trackedSenderCount == 0)
        #expect(failures.values.count == 1_024)
        #expect(failures.values.allSatisfy { $0.kind == .malformedMessage })
        #expect(failures.values.first?.codingPath.map(PathElement.init) == ["sender"])
        relay.stop()
    }
}
