import Foundation
import Notificatable

// MARK: - Issue 2: decoding and encoding the keyboard userInfo

/// Runs `body` `n` times and sums its digests.
@inline(__always)
func repeatOps(_ n: Int, _ body: () throws -> UInt64) rethrows -> UInt64 {
    var acc: UInt64 = 0
    for _ in 0..<n {
        acc = acc &+ (try body())
    }
    return acc
}

enum CoderWorkloads {
    static let affixed = UserInfoDecoder.KeyDecodingStrategy.affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")

    static func makeDecoder() -> UserInfoDecoder {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = affixed
        return decoder
    }

    static func userInfoDecoder(_ userInfo: [AnyHashable: Any]) -> Workload {
        Workload(label: "UserInfoDecoder") {
            let decoder = makeDecoder()
            return { n in try repeatOps(n) { try decoder.decode(KeyboardInfo.self, from: userInfo).digest } }
        }
    }

    static var handWrittenNSValue: Workload {
        Workload(label: "hand-written as? NSValue") {
            let reader = HandWrittenKeyboardReader()
            let userInfo = KeyboardFixture.nsValueForm()
            return { n in
                try repeatOps(n) {
                    guard let info = reader.readNSValueForm(userInfo) else {
                        throw BenchError("hand-written cast failed")
                    }
                    return info.digest
                }
            }
        }
    }

    static var handWrittenNSValueUnchecked: Workload {
        Workload(label: "hand-written as? NSValue, unchecked") {
            let reader = HandWrittenKeyboardReader()
            let userInfo = KeyboardFixture.nsValueForm()
            return { n in
                try repeatOps(n) {
                    guard let info = reader.readNSValueFormUnchecked(userInfo) else {
                        throw BenchError("hand-written cast failed")
                    }
                    return info.digest
                }
            }
        }
    }

    static var handWrittenArray: Workload {
        Workload(label: "hand-written as? [Any]/NSNumber") {
            let reader = HandWrittenKeyboardReader()
            let userInfo = KeyboardFixture.arrayForm()
            return { n in
                try repeatOps(n) {
                    guard let info = reader.readArrayForm(userInfo) else {
                        throw BenchError("hand-written cast failed")
                    }
                    return info.digest
                }
            }
        }
    }

    /// `JSONSerialization` + `JSONDecoder`, starting from the JSON-able (array-form) dictionary.
    static var jsonRoundTrip: Workload {
        Workload(label: "JSONSerialization+JSONDecoder", opsDivisor: 20) {
            let userInfo = KeyboardFixture.arrayForm()
            let decoder = JSONDecoder()
            return { n in
                try repeatOps(n) {
                    let data = try JSONSerialization.data(withJSONObject: userInfo)
                    return try decoder.decode(KeyboardInfoLongKeys.self, from: data).info.digest
                }
            }
        }
    }

    /// A binary property list + `PropertyListDecoder`, starting from the array-form dictionary.
    static var plistRoundTrip: Workload {
        Workload(label: "binary plist+PropertyListDecoder", opsDivisor: 30) {
            let userInfo = KeyboardFixture.arrayForm()
            let decoder = PropertyListDecoder()
            return { n in
                try repeatOps(n) {
                    let data = try PropertyListSerialization.data(
                        fromPropertyList: userInfo, format: .binary, options: 0)
                    return try decoder.decode(KeyboardInfoLongKeys.self, from: data).info.digest
                }
            }
        }
    }

    static func userInfoEncoder(affixedKeys: Bool) -> Workload {
        Workload(label: affixedKeys ? "UserInfoEncoder .affixed" : "UserInfoEncoder()") {
            let encoder = makeEncoder(affixedKeys: affixedKeys)
            let info = KeyboardInfo.sample
            return { n in try repeatOps(n) { UInt64(try encoder.encode(info).count) } }
        }
    }

    static func handWrittenLiteral(affixedKeys: Bool) -> Workload {
        Workload(label: affixedKeys ? "hand-written literal, long keys" : "hand-written literal") {
            let info = KeyboardInfo.sample
            if affixedKeys {
                return { n in repeatOps(n) { UInt64(HandWrittenKeyboardWriter.affixedKeys(info).count) } }
            }
            return { n in repeatOps(n) { UInt64(HandWrittenKeyboardWriter.defaultKeys(info).count) } }
        }
    }

    static func makeEncoder(affixedKeys: Bool) -> UserInfoEncoder {
        let encoder = UserInfoEncoder()
        if affixedKeys {
            encoder.keyEncodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        }
        return encoder
    }
}

/// Checks that every decoding approach reads ``KeyboardInfo/sample``.
func checkDecoded(_ decode: () throws -> KeyboardInfo?) throws -> String? {
    let info = try decode()
    return info == KeyboardInfo.sample ? nil : "decoded \(String(describing: info))"
}

/// The checks for the rows, run once before each row is timed.
enum CoderChecks {
    static func decoder(_ userInfo: [AnyHashable: Any]) throws -> String? {
        try checkDecoded { try CoderWorkloads.makeDecoder().decode(KeyboardInfo.self, from: userInfo) }
    }

    static func handWritten() throws -> String? {
        let reader = HandWrittenKeyboardReader()
        if let m = try checkDecoded({ reader.readNSValueForm(KeyboardFixture.nsValueForm()) }) { return m }
        return try checkDecoded { reader.readArrayForm(KeyboardFixture.arrayForm()) }
    }

    static func json() throws -> String? {
        try checkDecoded {
            let data = try JSONSerialization.data(withJSONObject: KeyboardFixture.arrayForm())
            return try JSONDecoder().decode(KeyboardInfoLongKeys.self, from: data).info
        }
    }

    static func plist() throws -> String? {
        try checkDecoded {
            let data = try PropertyListSerialization.data(
                fromPropertyList: KeyboardFixture.arrayForm(), format: .binary, options: 0)
            return try PropertyListDecoder().decode(KeyboardInfoLongKeys.self, from: data).info
        }
    }

    /// The encoder's output must equal the literal (as Foundation compares property lists) and decode back.
    static func encoder(affixedKeys: Bool) throws -> String? {
        let info = KeyboardInfo.sample
        let encoded = try CoderWorkloads.makeEncoder(affixedKeys: affixedKeys).encode(info)
        let literal =
            affixedKeys
            ? HandWrittenKeyboardWriter.affixedKeys(info) : HandWrittenKeyboardWriter.defaultKeys(info)
        guard NSDictionary(dictionary: encoded).isEqual(NSDictionary(dictionary: literal)) else {
            return "encoder wrote \(encoded), literal is \(literal)"
        }
        let decoder = UserInfoDecoder()
        if affixedKeys { decoder.keyDecodingStrategy = CoderWorkloads.affixed }
        return try checkDecoded { try decoder.decode(KeyboardInfo.self, from: encoded) }
    }
}

/// Issue 2's rows. Every ratio is candidate ÷ baseline.
func coderComparisons() -> [Comparison] {
    let nsValueForm = KeyboardFixture.nsValueForm()
    let arrayForm = KeyboardFixture.arrayForm()
    let nsValueGroup = "decode 7-key keyboard userInfo, NSValue form"
    let arrayGroup = "decode 7-key keyboard userInfo, array form"
    let encodeGroup = "encode KeyboardInfo"
    return [
        // The target row: against the casts most code writes, which do not check what an NSValue holds.
        Comparison(
            id: "decode-keyboard-nsvalue", row: "UserInfoDecoder .affixed", group: nsValueGroup,
            candidate: CoderWorkloads.userInfoDecoder(nsValueForm),
            baseline: CoderWorkloads.handWrittenNSValueUnchecked,
            target: .atMost(1.0),
            check: { try CoderChecks.decoder(nsValueForm) ?? CoderChecks.handWritten() }
        ),
        // Against casts that check `objCType` first, as safe code must on Linux (where `objCType` is slow).
        Comparison(
            id: "decode-keyboard-nsvalue-checked", row: "UserInfoDecoder .affixed", group: nsValueGroup,
            candidate: CoderWorkloads.userInfoDecoder(nsValueForm), baseline: CoderWorkloads.handWrittenNSValue,
            check: { try CoderChecks.decoder(nsValueForm) ?? CoderChecks.handWritten() }
        ),
        // The JSON round trip (which needs the JSON-able array form) over the decoder reading what the system posts.
        Comparison(
            id: "json-over-decode-nsvalue", row: "JSON round trip ÷ decoder", group: nsValueGroup,
            candidate: CoderWorkloads.jsonRoundTrip, baseline: CoderWorkloads.userInfoDecoder(nsValueForm),
            target: .atLeast(25),
            check: { try CoderChecks.json() ?? CoderChecks.decoder(nsValueForm) }
        ),
        Comparison(
            id: "decode-keyboard-array", row: "UserInfoDecoder .affixed", group: arrayGroup,
            candidate: CoderWorkloads.userInfoDecoder(arrayForm), baseline: CoderWorkloads.handWrittenArray,
            check: { try CoderChecks.decoder(arrayForm) ?? CoderChecks.handWritten() }
        ),
        Comparison(
            id: "json-keyboard-array", row: "JSONSerialization+JSONDecoder", group: arrayGroup,
            candidate: CoderWorkloads.jsonRoundTrip, baseline: CoderWorkloads.handWrittenArray,
            check: CoderChecks.json
        ),
        Comparison(
            id: "plist-keyboard-array", row: "binary plist+PropertyListDecoder", group: arrayGroup,
            candidate: CoderWorkloads.plistRoundTrip, baseline: CoderWorkloads.handWrittenArray,
            check: CoderChecks.plist
        ),
        // The JSON round trip over the decoder, both on the array form: how many times faster the decoder is.
        Comparison(
            id: "json-over-decode-array", row: "JSON round trip ÷ decoder", group: arrayGroup,
            candidate: CoderWorkloads.jsonRoundTrip, baseline: CoderWorkloads.userInfoDecoder(arrayForm),
            target: .atLeast(25),
            check: { try CoderChecks.json() ?? CoderChecks.decoder(arrayForm) }
        ),
        Comparison(
            id: "encode-keyboard", row: "UserInfoEncoder()", group: encodeGroup,
            candidate: CoderWorkloads.userInfoEncoder(affixedKeys: false),
            baseline: CoderWorkloads.handWrittenLiteral(affixedKeys: false),
            target: .atMost(1.5), check: { try CoderChecks.encoder(affixedKeys: false) }
        ),
        Comparison(
            id: "encode-keyboard-affixed", row: "UserInfoEncoder .affixed", group: encodeGroup,
            candidate: CoderWorkloads.userInfoEncoder(affixedKeys: true),
            baseline: CoderWorkloads.handWrittenLiteral(affixedKeys: true),
            target: .atMost(1.5), check: { try CoderChecks.encoder(affixedKeys: true) }
        ),
        // Keys that are data (a custom `CodingKey` made from strings), new ones on every encode: the snake-case
        // cache keeps at most 256 keys of a key type, so each encode costs the same however many keys it has seen
        // (the ratio is the snake-case conversion of 8 keys, ~20x). Before that bound the cost grew with every key
        // seen: 5,027x after 36,000 keys at 300 operations a batch, and a default run did not finish.
        Comparison(
            id: "encode-data-keys-snake", row: "8 new data keys, .convertToSnakeCase", group: encodeGroup,
            candidate: CoderWorkloads.dataKeys(snakeCase: true), baseline: CoderWorkloads.dataKeys(snakeCase: false)
        ),
    ]
}

/// A payload whose keys are data: each encode writes eight keys never seen before.
private struct DataKeyedPayload: Encodable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var first: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for offset in 0..<8 { try container.encode(offset, forKey: Key(stringValue: "fieldNumber\(first + offset)")) }
    }
}

extension CoderWorkloads {
    /// Encodes ``DataKeyedPayload`` with new keys each time, under snake case or the default keys.
    static func dataKeys(snakeCase: Bool) -> Workload {
        Workload(label: snakeCase ? "UserInfoEncoder .convertToSnakeCase" : "UserInfoEncoder()") {
            let encoder = UserInfoEncoder()
            if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
            var next = 0
            return { n in
                try repeatOps(n) {
                    next += 8
                    return UInt64(try encoder.encode(DataKeyedPayload(first: next)).count)
                }
            }
        }
    }
}
