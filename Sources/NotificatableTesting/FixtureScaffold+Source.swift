import Foundation

// The pieces of Swift source that `scaffold` prints around the inferred types: literals and comments that stay what
// they are for any text, and the handle it suggests for a notification without a payload.
extension FixtureScaffold {
    /// A Swift string literal whose value is exactly `text`: quotes, backslashes, `\(` and every control or
    /// invisible character escaped.
    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case "\0": literal += "\\0"
            default:
                if !scalar.isVisibleInSource {
                    literal += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    literal.unicodeScalars.append(scalar)
                }
            }
        }
        return literal + "\""
    }

    /// Text for a `//` comment: on one line whatever it holds, as a string literal when it holds anything a comment
    /// could not show as it is.
    static func commentText(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy(\.isVisibleInSource)
        return plain && !text.isEmpty ? text : stringLiteral(text)
    }

    /// The source for a capture whose `userInfo` is empty: a notification without a payload needs no payload type,
    /// only a `Never` handle, `Notificatable.withoutPayload(_:)`.
    static func withoutPayloadSource(lines header: [String], typeName: String, notificationName: String?) -> String {
        var lines = header
        lines.append("// The userInfo is empty: the notification carries no payload, so it needs no payload type.")
        lines.append("// Declare its handle without one (a Notificatable<Never>); subscribers receive the object.")
        lines.append("// If other posts of this name do carry a userInfo, scaffold a capture of one of those instead.")
        let name: String
        if let notificationName {
            name = notificationName
        } else {
            lines.append("// The capture has no notification name: write it in place of \"\(typeName)\".")
            name = typeName
        }
        lines.append("import Notificatable")
        lines.append("")
        lines.append("let \(declared(propertyName(typeName))) = Notificatable.withoutPayload(\(stringLiteral(name)))")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Unicode.Scalar {
    /// Whether the scalar shows as itself in source text: the space, or anything but a control, format (such as a
    /// bidirectional override), separator, surrogate, private-use or unassigned code point.
    fileprivate var isVisibleInSource: Bool {
        if self == " " { return true }
        switch properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse,
            .unassigned:
            return false
        default:
            return true
        }
    }
}

// MARK: - Identifiers

extension FixtureScaffold {
    /// Whether `text` is a Swift identifier as it stands: a head character, then identifier characters.
    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.first, isIdentifierHead(first) else { return false }
        return text.allSatisfy(isIdentifierCharacter)
    }

    /// Whether a character may start an identifier: every scalar may be part of one, and the first may start one.
    static func isIdentifierHead(_ character: Character) -> Bool {
        guard let first = character.unicodeScalars.first, isHeadScalar(first) else { return false }
        return isIdentifierCharacter(character)
    }

    /// Whether every scalar of a character may be part of an identifier, after its first character.
    static func isIdentifierCharacter(_ character: Character) -> Bool {
        character.unicodeScalars.allSatisfy { scalar in
            isHeadScalar(scalar) || ("0"..."9").contains(scalar)
                || continuationRanges.contains { $0.contains(scalar.value) }
        }
    }

    /// The Swift grammar's `identifier-head`: ASCII letters, `_`, and the ranges of The Swift Programming Language.
    private static func isHeadScalar(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 {
            return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
        }
        if value >= 0x10000 { return value & 0xFFFF <= 0xFFFD && value < 0xF0000 }
        return headRanges.contains { $0.contains(value) }
    }

    private static let headRanges: [ClosedRange<UInt32>] = [
        0xA8...0xA8, 0xAA...0xAA, 0xAD...0xAD, 0xAF...0xAF, 0xB2...0xB5, 0xB7...0xBA, 0xBC...0xBE, 0xC0...0xD6,
        0xD8...0xF6, 0xF8...0xFF, 0x100...0x2FF, 0x370...0x167F, 0x1681...0x180D, 0x180F...0x1DBF, 0x1E00...0x1FFF,
        0x200B...0x200D, 0x202A...0x202E, 0x203F...0x2040, 0x2054...0x2054, 0x2060...0x206F, 0x2070...0x20CF,
        0x2100...0x218F, 0x2460...0x24FF, 0x2776...0x2793, 0x2C00...0x2DFF, 0x2E80...0x2FFF, 0x3004...0x3007,
        0x3021...0x302F, 0x3031...0x303F, 0x3040...0xD7FF, 0xF900...0xFD3D, 0xFD40...0xFDCF, 0xFDF0...0xFE1F,
        0xFE30...0xFE44, 0xFE47...0xFFFD,
    ]

    private static let continuationRanges: [ClosedRange<UInt32>] = [
        0x300...0x36F, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F,
    ]
}
