import Foundation
import Notificatable
import NotificatableRelay
import Testing

// The wire format must carry every string, number and date bit for bit (issue 24.3 and 24.4). The randomized test
// prints its seed; `NOTIFICATABLE_RELAY_SEED=<seed>` replays it.

/// Characters that JSON writers and parsers treat specially, or that Foundation has mishandled.
private let hostileScalars: [UInt32] =
    Array(0..<0x20) + [
        0x22, 0x5C, 0x2F, 0x7F, 0x80, 0x85, 0xA0, 0xAD, 0x301, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029,
        0x2060, 0xD7FF, 0xE000, 0xFDD0, 0xFDEF, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x1F600, 0x1FFFE, 0x1FFFF, 0xE0001,
        0x10FFFE, 0x10FFFF,
    ]

private func randomString(_ random: inout SeededGenerator) -> String {
    var scalars = String.UnicodeScalarView()
    for _ in 0..<Int.random(in: 0..<12, using: &random) {
        let value: UInt32
        switch Int.random(in: 0..<4, using: &random) {
        case 0, 1: value = hostileScalars[Int.random(in: 0..<hostileScalars.count, using: &random)]
        case 2: value = UInt32.random(in: 0x20..<0x80, using: &random)
        default: value = UInt32.random(in: 0...0x10FFFF, using: &random)
        }
        if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
    }
    return String(scalars)
}

private func randomDouble(_ random: inout SeededGenerator) -> Double {
    switch Int.random(in: 0..<3, using: &random) {
    case 0: return Double.random(in: 0...2e9, using: &random)
    case 1: return Double.random(in: -1...1, using: &random)
    default:
        while true {
            let double = Double(bitPattern: random.next())
            if double.isFinite { return double }
        }
    }
}

private func randomDate(_ random: inout SeededGenerator) -> Date {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return Date(timeIntervalSince1970: Double.random(in: 0...2e9, using: &random))
    case 1: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random))
    case 2: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e-3...1e-3, using: &random))
    default:
        while true {
            let double = Double(bitPattern: random.next())
            if double.isFinite, double != 0 { return Date(timeIntervalSinceReferenceDate: double) }
        }
    }
}

private func scalars(_ value: Any?) -> [UInt32]? {
    (value as? String).map { $0.unicodeScalars.map(\.value) }
}

private let seed: UInt64 =
    ProcessInfo.processInfo.environment["NOTIFICATABLE_RELAY_SEED"].flatMap { UInt64($0) }
    ?? UInt64.random(in: 0...UInt64.max)

/// Dates and doubles posted through two relays.
struct RelayTimestamp: Codable, Sendable {
    var at: Date
    var value: Double
}

@Suite("Relay wire format: randomized round trips, bit for bit")
struct RelayWireRoundTripTests {
    /// A string that starts with U+FEFF keeps it, for this library's reader and for `JSONSerialization` (which drops
    /// it raw at the start of a string on Linux, so the writer escapes it).
    @Test func aStringStartingWithAByteOrderMarkKeepsIt() throws {
        let text = "\u{FEFF}abc"
        let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: ["t": text])
            .encoded()
        let read = try NotificationRelayMessage(decoding: bytes)
        #expect(scalars(read.payload?["t"]) == scalars(text))
        let parsed = try JSONSerialization.jsonObject(with: bytes) as? [String: Any]
        #expect(scalars((parsed?["payload"] as? [String: Any])?["t"]) == scalars(text))
    }

    /// Random payloads of hostile strings (as keys and values), doubles of every bit pattern, dates made every way,
    /// integers and nested arrays: each one reads back bit for bit. Strings also read back whole with
    /// `JSONSerialization`, as another library (or an older version of this one) would read them.
    @Test func randomPayloadsRoundTripBitForBit() throws {
        print("RelayWireRoundTripTests: seed \(seed) (replay with NOTIFICATABLE_RELAY_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        var failures = 0
        for round in 0..<1_500 where failures < 5 {
            var payload: [String: Any] = [:]
            var expected: [String: Any] = [:]
            for index in 0..<8 {
                let key = "k\(index)-" + randomString(&random)
                let value: Any
                switch Int.random(in: 0..<6, using: &random) {
                case 0: value = randomString(&random)
                case 1: value = randomDouble(&random)
                case 2: value = randomDate(&random)
                case 3: value = Int.random(in: Int.min...Int.max, using: &random)
                case 4: value = [randomString(&random), randomDouble(&random), randomDate(&random)] as [Any]
                default: value = Bool.random(using: &random)
                }
                payload[key] = value
                expected[key] = value
            }
            let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: payload)
                .encoded()
            let read = try #require(try NotificationRelayMessage(decoding: bytes).payload)
            let independent = try #require(
                (try JSONSerialization.jsonObject(with: bytes) as? [String: Any])?["payload"] as? [String: Any])
            for (key, value) in expected {
                let problem = Self.mismatch(value, read[key]) ?? Self.stringMismatch(value, independent[key])
                if let problem {
                    Issue.record("seed \(seed), round \(round), key \(key.debugDescription): \(problem)")
                    failures += 1
                }
            }
            #expect(read.count == expected.count)
        }
    }

    /// The issue's check: random dates and doubles posted through two relays arrive bit for bit.
    @Test func datesAndDoublesCrossTwoRelaysBitForBit() throws {
        var random = SeededGenerator(seed: seed &+ 1)
        let pair = RelayPair()
        let handle = Notificatable<RelayTimestamp>.name(uniqueName())
        pair.forward(handle)
        let received = ValueRecorder<RelayTimestamp>()
        handle.subscribe(center: pair.rightCenter) { received.append($0.userInfo) }
        var sent: [RelayTimestamp] = []
        for _ in 0..<2_000 {
            let stamp = RelayTimestamp(at: randomDate(&random), value: randomDouble(&random))
            sent.append(stamp)
            handle.post(stamp, center: pair.leftCenter)
        }
        let got = received.values
        try #require(got.count == sent.count, "seed \(seed): \(pair.failures.values.prefix(3))")
        let differentDates = zip(sent, got).filter {
            $0.at.timeIntervalSinceReferenceDate.bitPattern != $1.at.timeIntervalSinceReferenceDate.bitPattern
        }
        let differentDoubles = zip(sent, got).filter { $0.value.bitPattern != $1.value.bitPattern }
        #expect(
            differentDates.isEmpty,
            "seed \(seed): \(differentDates.count) dates differ, e.g. \(differentDates.prefix(2))")
        #expect(differentDoubles.isEmpty, "seed \(seed): \(differentDoubles.count) doubles differ")
    }

    /// Hostile input never traps the reader: each case reads, or fails with a `DecodingError` at the message.
    @Test func hostileInputIsReportedNeverATrap() throws {
        let prefix = #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":"#
        func payload(_ text: String) -> Data { Data((prefix + text + "}").utf8) }
        let refused: [(String, Data)] = [
            ("deep nesting", payload(String(repeating: "[", count: 100_000))),
            ("deep objects", payload(String(repeating: #"{"a":"#, count: 100_000))),
            ("a huge number", payload(#"{"a":1e999999}"#)),
            ("a long integer beyond Double", payload(#"{"a":1"# + String(repeating: "0", count: 400) + "}")),
            ("a huge date", payload(#"{"a":{"$date":1e400}}"#)),
            ("an unpaired surrogate", payload(#"{"a":"\ud800x"}"#)),
            ("a lone low surrogate", payload(#"{"a":"\udc00"}"#)),
            ("a raw control character", payload("{\"a\":\"\u{1}\"}")),
            ("truncated", Data(prefix.utf8)),
            ("a bad escape", payload(#"{"a":"\x"}"#)),
            ("a leading zero", payload(#"{"a":01}"#)),
            ("garbage after", Data((prefix + "{}}x").utf8)),
            (
                "invalid UTF-8",
                Data(prefix.utf8) + Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC0, 0xAF, 0x22, 0x7D, 0x7D])
            ),
            (
                "a surrogate in UTF-8",
                Data(prefix.utf8) + Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D, 0x7D])
            ),
            (
                "a truncated UTF-8 sequence",
                Data(prefix.utf8) + Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE2, 0x82, 0x22, 0x7D, 0x7D])
            ),
        ]
        for (name, data) in refused {
            let context = expectDecodingError(.dataCorrupted, at: [], message: "The message is not JSON: ") {
                try NotificationRelayMessage(decoding: data)
            }
            #expect(context?.debugDescription.contains("around character") == true || name == "truncated", "\(name)")
        }
        // Exact integers at the edges, and a 50 MB message.
        let edges = try NotificationRelayMessage(
            decoding: payload(#"{"min":-9223372036854775808,"max":9223372036854775807,"u":18446744073709551615}"#))
        #expect(edges.payload?["min"] as? Int == Int.min)
        #expect(edges.payload?["max"] as? Int == Int.max)
        #expect((edges.payload?["u"] as? NSNumber)?.uint64Value == UInt64.max)
        // A date with more digits than the exact arithmetic takes is read through Double: close, not a trap.
        let longDate = try NotificationRelayMessage(
            decoding: payload(#"{"at":{"$date":1764000000."# + String(repeating: "0", count: 2_000) + "1}}"))
        #expect((longDate.payload?["at"] as? Date)?.timeIntervalSince1970 == 1_764_000_000)
        let big = String(repeating: "abcdefgh", count: 50_000_000 / 8)
        let large = try NotificationRelayMessage(decoding: payload(#"{"big":""# + big + #""}"#))
        #expect((large.payload?["big"] as? String)?.utf8.count == big.utf8.count)
    }

    /// Random corruptions of valid messages: every one reads or is refused, and the process is still here.
    @Test func corruptedMessagesNeverTrap() throws {
        var random = SeededGenerator(seed: seed &+ 2)
        let base = try NotificationRelayMessage(
            name: .init("N"), sender: "s", sequence: 1,
            payload: [
                "text": "é\u{FEFF}😀\"\\", "at": Date(timeIntervalSince1970: 1.5), "list": [1, 2.5, true] as [Any],
            ]
        ).encoded()
        var read = 0
        var refused = 0
        for _ in 0..<20_000 {
            var bytes = [UInt8](base)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1:
                    bytes.insert(
                        UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
                case 2: if bytes.count > 1 { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random)) }
                default: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            do {
                _ = try NotificationRelayMessage(decoding: Data(bytes))
                read += 1
            } catch {
                refused += 1
            }
        }
        #expect(read + refused == 20_000)
        #expect(refused > 0)
    }

    // MARK: - Comparing

    /// What differs between what was written and what was read, bit for bit; `nil` if nothing.
    static func mismatch(_ written: Any, _ read: Any?) -> String? {
        switch written {
        case let string as String:
            return scalars(read) == scalars(string)
                ? nil : "string \(string.debugDescription) read as \(String(describing: read))"
        case let double as Double:
            let got = (read as? NSNumber)?.doubleValue
            return got?.bitPattern == double.bitPattern ? nil : "double \(double) read as \(String(describing: got))"
        case let date as Date:
            let got = (read as? Date)?.timeIntervalSinceReferenceDate
            let want = date.timeIntervalSinceReferenceDate
            return got?.bitPattern == want.bitPattern
                ? nil : "date \(want) (since 2001) read as \(String(describing: got))"
        case let int as Int:
            return (read as? NSNumber)?.int64Value == Int64(int)
                ? nil : "integer \(int) read as \(String(describing: read))"
        case let bool as Bool:
            return (read as? Bool) == bool ? nil : "bool \(bool) read as \(String(describing: read))"
        case let array as [Any]:
            guard let got = read as? [Any], got.count == array.count else {
                return "array read as \(String(describing: read))"
            }
            for (index, element) in array.enumerated() {
                if let problem = mismatch(element, got[index]) { return "[\(index)]: \(problem)" }
            }
            return nil
        default:
            return "unexpected \(type(of: written))"
        }
    }

    /// For strings, also what `JSONSerialization` read differently; `nil` if nothing, or for other values.
    static func stringMismatch(_ written: Any, _ parsed: Any?) -> String? {
        if let string = written as? String, scalars(parsed) != scalars(string) {
            return "JSONSerialization read \(string.debugDescription) as \(String(describing: parsed))"
        }
        if let array = written as? [Any], let string = array.first as? String,
            scalars((parsed as? [Any])?.first) != scalars(string)
        {
            return "JSONSerialization read \(string.debugDescription) in an array as \(String(describing: parsed))"
        }
        return nil
    }
}
