import Foundation
import Notificatable

/// Writes a relay message's JSON text directly, for the values that `WireValue.write` produces: strings, booleans,
/// integers, finite doubles, `NSNull`, and arrays and string-keyed dictionaries of them.
///
/// `JSONSerialization` made the relay's encoding the largest cost of a relayed post (about 70 µs of a message's
/// 100 µs on the sending side, measured with timestamps on a loaded machine); this writer goes straight to bytes.
/// The output is plain JSON, read by any JSON parser: strings escape `"`, `\`, control characters, U+FEFF, U+2028
/// and U+2029 only, doubles are written in Swift's shortest form that reads back exactly (`2.5`, `1e-07`), and a
/// dictionary's keys in sorted order (`String`'s `<`), so that equal values are always the same bytes: a
/// `Dictionary`'s own order depends on its capacity and history, not only on its contents.
struct WireJSONWriter {
    /// The text written so far. Settable in the module so that the payload writer (WireJSONWriter+Payload.swift)
    /// can live in a file of its own.
    var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends a JSON object of `members`, in their order; each value as ``write(_:path:)`` writes it.
    private mutating func writeMembers(
        _ members: some Sequence<(key: String, value: Any)>, path: [any CodingKey]
    ) throws {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in members {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
            try write(value, path: path + [WireKey(key)])
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `value` as JSON.
    ///
    /// - Throws: `EncodingError.invalidValue` at `path` for a value that JSON cannot hold (`WireValue.write` never
    ///   produces one).
    /// `path` is made only when needed (an error, or a nested value): an array per value costs an allocation.
    mutating func write(_ value: Any, path: @autoclosure () -> [any CodingKey]) throws {
        switch value {
        case let string as String:
            writeString(string)
        case let bool as Bool where type(of: value) == Bool.self:
            bytes.append(contentsOf: bool ? Self.trueBytes : Self.falseBytes)
        case let int as Int:
            bytes.append(contentsOf: String(int).utf8)
        case let int as Int64:
            bytes.append(contentsOf: String(int).utf8)
        case let int as UInt:
            bytes.append(contentsOf: String(int).utf8)
        case let int as UInt64:
            bytes.append(contentsOf: String(int).utf8)
        case let double as Double where double.isFinite:
            bytes.append(contentsOf: double.description.utf8)
        case let dictionary as [String: Any]:
            if dictionary.count < 2 {
                try writeMembers(dictionary, path: path())
            } else {
                try writeMembers(dictionary.sorted { $0.key < $1.key }, path: path())
            }
        case let array as [Any]:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(element, path: path() + [WireKey(index: index)])
            }
            bytes.append(UInt8(ascii: "]"))
        case is NSNull:
            bytes.append(contentsOf: Self.nullBytes)
        case let seconds as WireDateSeconds:
            bytes.append(contentsOf: seconds.text.utf8)
        default:
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: path(), debugDescription: "\(type(of: value)) cannot be written as JSON.")
            )
        }
    }

    /// Appends `string` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`… or `\u00XX`,
    /// U+FEFF as `\ufeff` (Foundation's `JSONSerialization` on Linux drops it raw at the start of a string),
    /// U+2028 and U+2029 as `\u2028` and `\u2029` (JavaScript before ES2019 ends a line there), every other
    /// character as its UTF-8 bytes.
    mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var index = 0
            while index < utf8.count {
                // The bytes that need no escape, in one copy: a byte-by-byte append checks the array's capacity and
                // uniqueness for each byte. `0xE2` and `0xEF` start U+2028, U+2029 and U+FEFF, checked below.
                var end = index
                while end < utf8.count, Self.isPlain(utf8[end]) { end += 1 }
                if end > index {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[index..<end]))
                    index = end
                    if index == utf8.count { break }
                }
                let byte = utf8[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    bytes.append(contentsOf: [
                        UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    ])
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                case 0xEF where index + 1 < utf8.count && utf8[index] == 0xBB && utf8[index + 1] == 0xBF:
                    bytes.append(contentsOf: Self.byteOrderMarkEscape)
                    index += 2
                case 0xE2 where index + 1 < utf8.count && utf8[index] == 0x80 && (utf8[index + 1] & 0xFE) == 0xA8:
                    bytes.append(
                        contentsOf: utf8[index + 1] == 0xA8 ? Self.lineSeparatorEscape : Self.paragraphSeparatorEscape)
                    index += 2
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `byte` is written as itself with no further check: not `"`, `\\`, a control character, or the first
    /// byte of U+2028, U+2029 or U+FEFF.
    @inline(__always)
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0xE2 && byte != 0xEF
    }

    private static let byteOrderMarkEscape = Array("\\ufeff".utf8)
    private static let lineSeparatorEscape = Array("\\u2028".utf8)
    private static let paragraphSeparatorEscape = Array("\\u2029".utf8)
    static let trueBytes = Array("true".utf8)
    static let falseBytes = Array("false".utf8)
    static let nullBytes = Array("null".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
