import Foundation
import Notificatable
import NotificatableRelay
import Testing

/// The relay writes its JSON itself (not with `JSONSerialization`): any JSON parser must read back exactly what went
/// in. Checked here with `JSONSerialization` as the independent reader, and with the relay's own.
@Suite("Relay wire JSON text")
struct RelayWireJSONTests {
    private func writtenAndParsed(_ payload: [String: Any]) throws -> (parsed: [String: Any], read: [String: Any]) {
        let bytes = try NotificationRelayMessage(name: .init("N"), sender: "s", sequence: 7, payload: payload)
            .encoded()
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        let parsed = try #require(object["payload"] as? [String: Any])
        let read = try #require(try NotificationRelayMessage(decoding: bytes).payload)
        return (parsed, read)
    }

    @Test func stringsWithControlCharactersQuotesAndBackslashesRoundTrip() throws {
        let controls = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let text = controls + #"" \ / é 😀 \u{2028} '; DROP"# + "\u{7F}"
        let key = #"a "quoted" \ key"# + "\n"
        let (parsed, read) = try writtenAndParsed([key: text, "plain": "x"])
        #expect(parsed[key] as? String == text)
        #expect(read[key] as? String == text)
        #expect(read["plain"] as? String == "x")
    }

    @Test func numbersRoundTripExactly() throws {
        let doubles: [Double] = [
            0.1, 1.0 / 3.0, 1e-7, 2.5e-300, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -123.456,
        ]
        var payload: [String: Any] = ["min": Int.min, "max": Int.max, "zero": 0, "true": true, "false": false]
        for (index, double) in doubles.enumerated() { payload["d\(index)"] = double }
        let (parsed, read) = try writtenAndParsed(payload)
        for (index, double) in doubles.enumerated() {
            #expect((parsed["d\(index)"] as? NSNumber)?.doubleValue.bitPattern == double.bitPattern, "\(double)")
            #expect((read["d\(index)"] as? Double)?.bitPattern == double.bitPattern, "\(double)")
        }
        #expect(read["min"] as? Int == Int.min)
        #expect(read["max"] as? Int == Int.max)
        #expect(read["zero"] as? Int == 0)
        #expect(read["true"] as? Bool == true)
        #expect(read["false"] as? Bool == false)
    }

    @Test func nestedArraysObjectsNullsAndTagsRoundTrip() throws {
        let date = Date(timeIntervalSince1970: 1_764_000_000.5)
        let payload: [String: Any] = [
            "list": [1, "two", [3.5, NSNull()] as [Any], ["k": "v"]] as [Any], "empty": [Any](),
            "none": [String: Any](), "when": date, "blob": Data([0, 255]), "nan": Double.nan,
        ]
        let (parsed, read) = try writtenAndParsed(payload)
        #expect((parsed["when"] as? [String: Any])?["$date"] as? Double == 1_764_000_000.5)
        #expect(read["when"] as? Date == date)
        #expect(read["blob"] as? Data == Data([0, 255]))
        #expect((read["nan"] as? Double)?.isNaN == true)
        let list = try #require(read["list"] as? [Any])
        #expect(list.count == 4)
        #expect(list[0] as? Int == 1 && list[1] as? String == "two")
        let inner = try #require(list[2] as? [Any])
        #expect(inner[0] as? Double == 3.5 && inner[1] is NSNull)
        #expect((list[3] as? [String: Any])?["k"] as? String == "v")
        #expect((read["empty"] as? [Any])?.isEmpty == true)
        #expect((read["none"] as? [String: Any])?.isEmpty == true)
    }
}
