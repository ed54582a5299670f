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
    /// integers of every width (`UInt64` above `Int64.max` included), nested arrays, and dictionaries with one key
    /// starting with `$` (a tag's name or not), nested or as the whole payload: each one reads back bit for bit.
    /// Strings also read back whole with `JSONSerialization`, as another library (or an older version of this one)
    /// would read them.
    @Test func randomPayloadsRoundTripBitForBit() throws {
        print("RelayWireRoundTripTests: seed \(seed) (replay with NOTIFICATABLE_RELAY_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        var failures = 0
        for round in 0..<1_500 where failures < 5 {
            var payload: [String: Any] = [:]
            if Int.random(in: 0..<8, using: &random) == 0 {
                // The whole payload is one `$` key (issue 29.1).
                payload[randomDollarKey(&random)] = randomValue(&random, depth: 0)
            } else {
                for index in 0..<8 {
                    payload["k\(index)-" + randomString(&random)] = randomValue(&random, depth: 0)
                }
            }
            let expected = payload
            let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 1, payload: payload)
                .encoded()
            let read = try #require(try NotificationRelayMessage(decoding: bytes).payload)
            var independent = try #require(
                (try JSONSerialization.jsonObject(with: bytes) as? [String: Any])?["payload"] as? [String: Any])
            if expected.count == 1, expected.keys.first?.hasPrefix("$") == true {
                // Escaped on the wire, like any dictionary with one `$` key.
                independent = try #require(independent["$escape"] as? [String: Any], "seed \(seed), round \(round)")
            }
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
        let bag = DisposeBag()
        defer { bag.dispose() }
        handle.subscribe(center: pair.rightCenter) { received.append($0.userInfo) }.store(in: bag)
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

    /// Issue 29.3's fuzz: objects whose keys are drawn from spellings that Swift's `String` considers equal (canonical
    /// equivalents, and exact repeats) or not (compatibility equivalents such as "ﬁ" and "fi", which stay apart),
    /// written raw or as `\u` escapes, at the payload's top level or inside an array. An object with two equal keys
    /// is refused as malformed at that key; any other reads back with every key, spelled as sent, and its value.
    @Test func keysThatSwiftConsidersEqualAreRefusedNeverMerged() throws {
        let spellings = [
            "\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "\u{3A9}", "\u{2126}", "K", "\u{212A}",
            "\u{1E0B}\u{323}", "\u{1E0D}\u{307}", "d\u{323}\u{307}", "d\u{307}\u{323}", "\u{FB01}", "fi", "a", "e",
            "\u{1100}\u{1161}", "\u{AC00}",
        ]
        var random = SeededGenerator(seed: seed &+ 3)
        var refusedCount = 0
        for round in 0..<2_000 {
            let keys = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                spellings[Int.random(in: 0..<spellings.count, using: &random)]
            }
            let members = keys.enumerated().map { index, key in
                let written =
                    Bool.random(using: &random)
                    ? key
                    : key.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
                return "\"\(written)\":\(index)"
            }
            let object = "{" + members.joined(separator: ",") + "}"
            let nested = Bool.random(using: &random)
            let text =
                #"{"version":1,"name":"N","sender":"s","sequence":1,"payload":"#
                + (nested ? #"{"list":["# + object + "]}" : object) + "}"
            let firstRepeat = keys.indices.first { index in keys[..<index].contains(keys[index]) }
            let label = "seed \(seed), round \(round), keys \(keys.map { $0.unicodeScalars.map(\.value) })"
            if let firstRepeat {
                refusedCount += 1
                let path: [PathElement] = (nested ? ["payload", "list", 0] : ["payload"]) + [.key(keys[firstRepeat])]
                let context = expectDecodingError(.dataCorrupted, at: path, message: "appears twice") {
                    try NotificationRelayMessage(decoding: Data(text.utf8))
                }
                #expect(context != nil, "\(label)")
            } else {
                let payload = try #require(try NotificationRelayMessage(decoding: Data(text.utf8)).payload, "\(label)")
                let read = try #require(
                    nested ? ((payload["list"] as? [Any])?.first as? [String: Any]) : payload, "\(label)")
                #expect(read.count == keys.count, "\(label)")
                for (index, key) in keys.enumerated() {
                    let stored = read.keys.first { $0 == key }
                    #expect(stored.map { scalars($0) } == scalars(key), "\(label)")
                    #expect(read[key] as? Int == index, "\(label)")
                }
            }
        }
        #expect(refusedCount > 0)
    }

    /// A key starting with `$`: one of the tags, or not.
    private func randomDollarKey(_ random: inout SeededGenerator) -> String {
        let tags = ["$date", "$data", "$double", "$escape", "$price", "$", "$$escape"]
        return Int.random(in: 0..<3, using: &random) == 0
            ? "$" + randomString(&random) : tags[Int.random(in: 0..<tags.count, using: &random)]
    }

    /// A random value: a string, a double, a date, an integer of any width, a boolean, an array, or a dictionary
    /// that has one key starting with `$` (nested up to two levels).
    private func randomValue(_ random: inout SeededGenerator, depth: Int) -> Any {
        switch Int.random(in: 0..<(depth < 2 ? 10 : 8), using: &random) {
        case 0: return randomString(&random)
        case 1: return randomDouble(&random)
        case 2: return randomDate(&random)
        case 3: return Int.random(in: Int.min...Int.max, using: &random)
        case 4: return [randomString(&random), randomDouble(&random), randomDate(&random)] as [Any]
        case 5:
            // Issue 29.2: UInt64 of every size, most above Int64.max.
            let edges: [UInt64] = [UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64(Int64.max) + 2, .max - 1, .max]
            return Bool.random(using: &random)
                ? edges[Int.random(in: 0..<edges.count, using: &random)]
                : UInt64.random(in: UInt64(Int64.max)...UInt64.max, using: &random)
        case 6:
            let widths: [Any] = [
                Int8.random(in: .min ... .max, using: &random), UInt8.random(in: .min ... .max, using: &random),
                Int16.random(in: .min ... .max, using: &random), UInt16.random(in: .min ... .max, using: &random),
                Int32.random(in: .min ... .max, using: &random), UInt32.random(in: .min ... .max, using: &random),
                Int64.random(in: .min ... .max, using: &random), UInt.random(in: .min ... .max, using: &random),
                NSNumber(value: UInt64.random(in: 0...UInt64.max, using: &random)),
            ]
            return widths[Int.random(in: 0..<widths.count, using: &random)]
        case 7: return Bool.random(using: &random)
        case 8: return [randomDollarKey(&random): randomValue(&random, depth: depth + 1)]
        default:
            return [randomValue(&random, depth: depth + 1), [randomDollarKey(&random): randomString(&random)]] as [Any]
        }
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
        case let bool as Bool where type(of: written) == Bool.self:
            return (read as? Bool) == bool ? nil : "bool \(bool) read as \(String(describing: read))"
        case is Int8, is UInt8, is Int16, is UInt16, is Int32, is UInt32, is Int64, is UInt64, is UInt, is NSNumber:
            // Exactly the integer's digits, whatever its width.
            let want = "\(written)"
            let got = (read as? NSNumber).map { number in
                String(cString: number.objCType) == "Q" ? "\(number.uint64Value)" : "\(number.int64Value)"
            }
            return got == want ? nil : "integer \(want) (\(type(of: written))) read as \(String(describing: read))"
        case let dictionary as [String: Any]:
            guard let got = read as? [String: Any], got.count == dictionary.count else {
                return "dictionary \(dictionary.keys.sorted()) read as \(String(describing: read))"
            }
            for (key, value) in dictionary {
                if let problem = mismatch(value, got[key]) { return "[\(key.debugDescription)]: \(problem)" }
            }
            return nil
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
