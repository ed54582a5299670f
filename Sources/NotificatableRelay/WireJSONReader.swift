import Foundation
import Notificatable

/// Reads a relay message's JSON text into the values that `WireValue.read` expects: `String`, `NSNumber` for numbers
/// (an integer as an exact `Int64`, or `UInt64` above it; any other number as the `Double` that Swift's
/// correctly-rounded parser makes of its text), `NSNumber(value: Bool)` for `true` and `false` (told apart from
/// numbers by ``WireValue/isBoolean(_:)``), `NSNull`, `[Any]` and `[String: Any]`. A number directly under a `"$date"`
/// key is a ``WireDateSeconds``, which keeps its text so that the date is read exactly.
///
/// Why not `JSONSerialization`: on Linux it parses about a third of random doubles one unit in the last place off (so
/// a relayed `Double` or `Date` was not the one sent), it drops a U+FEFF at the start of a string, and it was the
/// largest cost of receiving a message.
///
/// Strict RFC 8259 JSON, except that a UTF-8 byte order mark before the value is skipped. It never traps: malformed
/// UTF-8, unpaired surrogates, raw control characters, nesting deeper than ``maximumDepth``, numbers beyond `Double`,
/// and truncated text are each a ``Failure`` with a sentence and the byte offset ("character") where it was found.
/// An object that holds a key twice is refused as well, with the path to that key (``Failure/pathOfDuplicateKey``):
/// keys are compared as Swift's `String` compares them, so canonically equivalent spellings ("é" as U+00E9 and as
/// U+0065 U+0301) are the same key, and a dictionary would keep only one of their values.
struct WireJSONReader {
    /// The deepest nesting of arrays and objects read: 512.
    static let maximumDepth = 512

    /// Why the text is not JSON: a sentence without a final period, such as "too many nested arrays or dictionaries
    /// around character 581".
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// For a key that an object holds twice: the keys and indexes from the document down to that key,
        /// innermost *first* (each enclosing container adds its own as the error passes through it); `nil` for any
        /// other failure.
        fileprivate(set) var reversedPathOfDuplicateKey: [WireKey]?

        init(description: String, reversedPathOfDuplicateKey: [WireKey]? = nil) {
            self.description = description
            self.reversedPathOfDuplicateKey = reversedPathOfDuplicateKey
        }

        /// The path to the key that an object holds twice, outermost first; `nil` for any other failure.
        var pathOfDuplicateKey: [WireKey]? { reversedPathOfDuplicateKey?.reversed() }

        /// This failure as it leaves the container member `key`: a duplicate key's path gains `key`.
        fileprivate func inside(_ key: @autoclosure () -> WireKey) -> Failure {
            guard var path = reversedPathOfDuplicateKey else { return self }
            path.append(key())
            return Failure(description: description, reversedPathOfDuplicateKey: path)
        }
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads `data` as one JSON value.
    static func read(_ data: Data) throws(Failure) -> Any {
        let result: Result<Any, Failure> = data.withUnsafeBytes { raw in
            var reader = WireJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            do throws(Failure) {
                return .success(try reader.readDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func readDocument() throws(Failure) -> Any {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        let value = try readValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the JSON value") }
        return value
    }

    // MARK: - Values

    mutating func readValue(depth: Int) throws(Failure) -> Any {
        guard index < bytes.count else { throw Failure(description: "unexpected end of the message") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return try readString()
        case UInt8(ascii: "t"): return try readLiteral("true", NSNumber(value: true))
        case UInt8(ascii: "f"): return try readLiteral("false", NSNumber(value: false))
        case UInt8(ascii: "n"): return try readLiteral("null", NSNull())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber(keepingText: false).number
        default: throw failure("invalid value")
        }
    }

    mutating func readObject(depth: Int) throws(Failure) -> [String: Any] {
        guard depth <= Self.maximumDepth else { throw failure("too many nested arrays or dictionaries") }
        index += 1
        var object: [String: Any] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            guard index < bytes.count else { throw Failure(description: "unexpected end of the message") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "expected ':' after an object key")
            skipWhitespace()
            let value: Any
            if key == WireValue.date, index < bytes.count,
                bytes[index] == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
            {
                let (number, text) = try readNumber(keepingText: true)
                value = WireDateSeconds(text: text, number: number)
            } else {
                do {
                    value = try readValue(depth: depth)
                } catch {
                    throw error.inside(WireKey(key))
                }
            }
            // `String` equality is canonical equivalence, so this also finds "é" written as U+00E9 and as U+0065
            // U+0301, at no cost beyond the insertion (which hashes a non-ASCII key in its normalized form anyway).
            if object.updateValue(value, forKey: key) != nil { throw duplicate(key, in: object) }
            guard try readSeparator(closing: UInt8(ascii: "}"), in: "an object") else { return object }
        }
    }

    /// The failure for `key`, which `object` already holds (exactly, or in a canonically equivalent spelling).
    private func duplicate(_ key: String, in object: [String: Any]) -> Failure {
        let held = object.index(forKey: key).map { object[$0].key } ?? key
        var description = "the key \(Self.quoted(key)) appears twice in one object"
        if !held.unicodeScalars.elementsEqual(key.unicodeScalars) {
            description += ", as \(Self.scalars(of: held)) and as \(Self.scalars(of: key)), which are the same key"
        }
        return Failure(description: description, reversedPathOfDuplicateKey: [WireKey(held)])
    }

    private static func quoted(_ key: String) -> String {
        key.count > 40 ? "\"\(key.prefix(40))…\"" : "\"\(key)\""
    }

    /// `U+0065 U+0301`: a key's scalars, for telling two canonically equivalent spellings apart.
    private static func scalars(of key: String) -> String {
        let scalars = key.unicodeScalars.prefix(12).map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return scalars.joined(separator: " ") + (key.unicodeScalars.count > 12 ? " …" : "")
    }

    mutating func readArray(depth: Int) throws(Failure) -> [Any] {
        guard depth <= Self.maximumDepth else { throw failure("too many nested arrays or dictionaries") }
        index += 1
        var array: [Any] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return array
        }
        while true {
            do {
                array.append(try readValue(depth: depth))
            } catch {
                throw error.inside(WireKey(index: array.count))
            }
            guard try readSeparator(closing: UInt8(ascii: "]"), in: "an array") else { return array }
        }
    }

    /// Reads what follows a member or an element: true after a `,` (another one follows), false after `closing`
    /// (the container ends).
    mutating func readSeparator(closing: UInt8, in container: String) throws(Failure) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw Failure(description: "unexpected end of the message") }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return true
        case closing:
            index += 1
            return false
        default: throw failure("expected ',' or '\(Character(Unicode.Scalar(closing)))' in \(container)")
        }
    }

    mutating func readLiteral(_ literal: StaticString, _ value: Any) throws(Failure) -> Any {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure("invalid value") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw failure("invalid value")
        }
        index += count
        return value
    }

    // MARK: - Numbers

    /// Reads a number: an integer that fits as an exact `Int64` (or `UInt64`), anything else as the nearest `Double`;
    /// with its text when `keepingText` (else the text may be empty).
    mutating func readNumber(keepingText: Bool) throws(Failure) -> (number: NSNumber, text: String) {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // An integer of at most 18 digits fits an Int64 whatever its digits: read it without making its text.
        let digits = index - start - (bytes[start] == UInt8(ascii: "-") ? 1 : 0)
        if isInteger, digits <= 18, !keepingText {
            var magnitude: Int64 = 0
            for offset in (index - digits)..<index { magnitude = magnitude * 10 + Int64(bytes[offset] &- 48) }
            let integer = bytes[start] == UInt8(ascii: "-") ? -magnitude : magnitude
            return (NSNumber(value: integer), "")
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger {
            if let integer = Int64(text) { return (NSNumber(value: integer), text) }
            if let integer = UInt64(text) { return (NSNumber(value: integer), text) }
        }
        guard let double = Double(text), double.isFinite else {
            throw failure("the number \(text.prefix(40))\(text.count > 40 ? "…" : "") is out of range", at: start)
        }
        return (NSNumber(value: double), text)
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    mutating func readString() throws(Failure) -> String {
        let start = index
        index += 1
        let contentStart = index
        var isASCII = true
        // The fast path: no escapes, the bytes themselves.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                if !isASCII { try validateUTF8(content, offset: contentStart) }
                index += 1
                return String(decoding: content, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("an unescaped control character in a string") }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        guard index < bytes.count else {
            throw Failure(description: "unexpected end of the message in the string at character \(start)")
        }
        // With escapes: copy, decoding them.
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        if !isASCII {
            try validateUTF8(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]), offset: contentStart)
        }
        var segmentStart = index
        var segmentIsASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                try appendSegment(&utf8, from: segmentStart, isASCII: segmentIsASCII)
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try appendSegment(&utf8, from: segmentStart, isASCII: segmentIsASCII)
                try readEscape(into: &utf8)
                segmentStart = index
                segmentIsASCII = true
            case 0..<0x20:
                throw failure("an unescaped control character in a string")
            default:
                if byte >= 0x80 { segmentIsASCII = false }
                index += 1
            }
        }
        throw Failure(description: "unexpected end of the message in the string at character \(start)")
    }

    /// Appends the bytes from `start` to the current index, checking that they are UTF-8.
    private func appendSegment(_ utf8: inout [UInt8], from start: Int, isASCII: Bool) throws(Failure) {
        guard start < index else { return }
        let segment = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if !isASCII { try validateUTF8(segment, offset: start) }
        utf8.append(contentsOf: segment)
    }

    private mutating func readEscape(into utf8: inout [UInt8]) throws(Failure) {
        let start = index
        index += 1
        guard index < bytes.count else { throw Failure(description: "unexpected end of the message") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4(escapeAt: start)
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("an unpaired surrogate escape", at: start) }
                index += 2
                let low = try readHex4(escapeAt: start)
                guard (0xDC00..<0xE000).contains(low) else { throw failure("an unpaired surrogate escape", at: start) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw failure("an unpaired surrogate escape", at: start)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid escape", at: start) }
            if let encoded = UTF8.encode(unicode) { utf8.append(contentsOf: encoded) }
        default:
            throw failure("an invalid escape", at: start)
        }
    }

    private mutating func readHex4(escapeAt start: Int) throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("an invalid escape", at: start) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("an invalid escape", at: start)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Checks that `buffer` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
    private func validateUTF8(_ buffer: UnsafeBufferPointer<UInt8>, offset: Int) throws(Failure) {
        var position = 0
        while position < buffer.count {
            let lead = buffer[position]
            if lead < 0x80 {
                position += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: throw failure("invalid UTF-8", at: offset + position)
            }
            guard buffer.count - position >= length else { throw failure("invalid UTF-8", at: offset + position) }
            let second = buffer[position + 1]
            guard second >= low, second <= high else { throw failure("invalid UTF-8", at: offset + position) }
            for continuation in 2..<length where buffer[position + continuation] & 0xC0 != 0x80 {
                throw failure("invalid UTF-8", at: offset + position)
            }
            position += length
        }
    }

    // MARK: - Helpers

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8, _ problem: String) throws(Failure) {
        guard index < bytes.count else { throw Failure(description: "unexpected end of the message") }
        guard bytes[index] == byte else { throw failure(problem) }
        index += 1
    }

    private func failure(_ problem: String, at position: Int? = nil) -> Failure {
        Failure(description: "\(problem) around character \(position ?? index)")
    }
}

/// A number read under a `"$date"` key, with its text, so that the date it stands for is read exactly (see
/// ``WireDecimal``); anywhere it is not a date tag, ``WireValue`` reads it as its `number`.
struct WireDateSeconds {
    let text: String
    let number: NSNumber
}
