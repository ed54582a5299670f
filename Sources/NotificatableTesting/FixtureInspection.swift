import Foundation

extension FixtureCapture {
    /// The `userInfo` as the decoder will see it, one value a line, with the type of every value: `NSNumber
    /// (boolean)`, `NSValue (rect)`, `Int`, `NSString` and so on, and under a key strategy the property each key
    /// maps to. `notificatable-fixtures show FIXTURE` prints it.
    public var inspection: String {
        var lines: [String] = []
        if !summary.isEmpty { lines.append("description: \(summary)") }
        if let notificationName { lines.append("name: \(notificationName)") }
        if let objectDescription { lines.append("object: \(objectDescription)") }
        lines.append("type: \(typeName ?? "(not set)")")
        lines.append("decoder: \(FixtureInspector.describe(decoderConfiguration))")
        var inspector = FixtureInspector(lines: lines, keyStrategy: decoderConfiguration.keyStrategy)
        inspector.value(root, label: "userInfo", indent: "", topLevel: true)
        for note in timestampNotes { inspector.lines.append("note: \(note.location): \(note.message)") }
        return inspector.lines.joined(separator: "\n") + "\n"
    }
}

/// Prints a fixture value as a tree of typed lines.
struct FixtureInspector {
    var lines: [String]
    let keyStrategy: UserInfoFixture.DecoderConfiguration.KeyStrategy

    static func describe(_ configuration: UserInfoFixture.DecoderConfiguration) -> String {
        var parts: [String] = []
        switch configuration.keyStrategy {
        case .useDefaultKeys: parts.append("keys as they are")
        case .convertFromSnakeCase: parts.append("keys .convertFromSnakeCase")
        case .affixed(let prefix, let suffix):
            parts.append("keys .affixed(prefix: \"\(prefix)\", suffix: \"\(suffix)\")")
        }
        switch configuration.dateStrategy {
        case .deferredToDate: break
        case .secondsSince1970: parts.append("dates .secondsSince1970")
        case .millisecondsSince1970: parts.append("dates .millisecondsSince1970")
        case .iso8601: parts.append("dates .iso8601")
        case .formatted(let format): parts.append("dates formatted \"\(format)\"")
        }
        if configuration.dataStrategy == .base64 { parts.append("data .base64") }
        return parts.joined(separator: ", ")
    }

    /// The property a top-level key maps to under the key strategy, or `nil` when it maps to itself.
    func property(for key: String) -> String? {
        switch keyStrategy {
        case .useDefaultKeys: return nil
        case .convertFromSnakeCase:
            let words = key.split(separator: "_")
            guard words.count > 1, let head = words.first else { return nil }
            return head.lowercased()
                + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }
                .joined()
        case .affixed(let prefix, let suffix):
            guard key.count > prefix.count + suffix.count, key.hasPrefix(prefix), key.hasSuffix(suffix) else {
                return "no property: the key lacks the prefix or suffix"
            }
            let middle = key.dropFirst(prefix.count).dropLast(suffix.count)
            return middle.prefix(1).lowercased() + middle.dropFirst()
        }
    }

    /// Lines deeper than this are indented as this level, and say their level.
    static let indentLimit = 32

    /// Prints a value and everything in it, in a loop rather than by recursion, so that a value nested
    /// ``UserInfoFixture/maximumDepth`` levels deep prints on a secondary thread's small stack too.
    mutating func value(_ value: FixtureValue, label: String, indent: String, topLevel: Bool = false) {
        var pending: [(value: FixtureValue, label: String, level: Int)] = [(value, label, 0)]
        while let (value, label, level) = pending.popLast() {
            let line: String
            if level > Self.indentLimit {
                line = indent + String(repeating: "  ", count: Self.indentLimit) + "(level \(level)) \(label): "
            } else {
                line = indent + String(repeating: "  ", count: level) + "\(label): "
            }
            let isTopLevel = topLevel && level == 0
            var children: [(FixtureValue, String)] = []
            switch value {
            case .array(let elements, let bridged):
                lines.append(line + "\(bridged ? "NSArray" : "[Any]"), \(Self.count(elements.count, "element"))")
                children = elements.enumerated().map { ($1, "[\($0)]") }
            case .dictionary(let entries, let bridged):
                let type = bridged ? "NSDictionary" : isTopLevel ? "[AnyHashable: Any]" : "[String: Any]"
                lines.append(line + "\(type), \(Self.count(entries.count, "key"))")
                children = entries.map { entry in
                    var label = Self.quote(entry.key)
                    if isTopLevel, let property = property(for: entry.key) { label += " (→ \(property))" }
                    return (entry.value, label)
                }
            case .integerKeyedDictionary(let entries):
                lines.append(line + "[AnyHashable: Any] with Int keys, \(Self.count(entries.count, "key"))")
                children = entries.map { ($0.value, "Int \($0.key)") }
            case .entries(let entries):
                lines.append(line + "[AnyHashable: Any] with mixed keys, \(Self.count(entries.count, "key"))")
                children = entries.map { ($0.value, "key \(Self.scalar($0.key))") }
            default:
                lines.append(line + Self.scalar(value))
            }
            pending += children.reversed().map { ($0.0, $0.1, level + 1) }
        }
    }

    static func count(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A scalar with its type, such as `NSNumber (integer) 7` or `NSValue (rect) x 0, y 508, width 390, height 336`.
    static func scalar(_ value: FixtureValue) -> String {
        switch value {
        case .number(let number):
            switch number {
            case .bool(let value): return "NSNumber (boolean) \(value)"
            case .integer(let value): return "NSNumber (integer) \(value)"
            case .unsigned(let value): return "NSNumber (unsigned integer) \(value)"
            case .real(let value): return "NSNumber (floating point) \(value)"
            }
        case .swiftNumber(let number):
            switch number {
            case .int(let value): return "Int \(value)"
            case .int8(let value): return "Int8 \(value)"
            case .int16(let value): return "Int16 \(value)"
            case .int32(let value): return "Int32 \(value)"
            case .int64(let value): return "Int64 \(value)"
            case .uint(let value): return "UInt \(value)"
            case .uint8(let value): return "UInt8 \(value)"
            case .uint16(let value): return "UInt16 \(value)"
            case .uint32(let value): return "UInt32 \(value)"
            case .uint64(let value): return "UInt64 \(value)"
            case .double(let value): return "Double \(value)"
            case .float(let value): return "Float \(value)"
            case .cgFloat(let value): return "CGFloat \(value)"
            case .bool(let value): return "Bool \(value)"
            }
        case .decimal(let value): return "Decimal \(value)"
        case .string(let value): return "String \(quote(value))"
        case .nsString(let value): return "NSString \(quote(value))"
        case .date(let value):
            return "Date \(value.timeIntervalSinceReferenceDate) s after 2001-01-01T00:00:00Z (\(value))"
        case .data(let value):
            let hex = value.prefix(32).map { String(format: "%02x", $0) }.joined()
            return "Data, \(count(value.count, "byte")): \(hex)\(value.count > 32 ? "…" : "")"
        case .null: return "NSNull"
        case .url(let value): return "URL \(value.absoluteString)"
        case .nsURL(let value): return "NSURL \(value.absoluteString)"
        case .uuid(let value, let bridged): return "\(bridged ? "NSUUID" : "UUID") \(value.uuidString)"
        case .geometry(let geometry):
            switch geometry {
            case .rect(let x, let y, let width, let height):
                return "NSValue (rect) x \(x), y \(y), width \(width), height \(height)"
            case .point(let x, let y): return "NSValue (point) x \(x), y \(y)"
            case .size(let width, let height): return "NSValue (size) width \(width), height \(height)"
            case .range(let location, let length): return "NSValue (range) location \(location), length \(length)"
            }
        case .placeholder(let typeName, let description):
            return "placeholder for a \(typeName), which a fixture cannot hold: \(description)"
        case .array(let elements, _): return "array of \(count(elements.count, "element"))"
        case .dictionary(let entries, _): return "dictionary of \(count(entries.count, "key"))"
        case .integerKeyedDictionary(let entries): return "dictionary of \(count(entries.count, "key"))"
        case .entries(let entries): return "dictionary of \(count(entries.count, "key"))"
        }
    }
}

// MARK: - Placeholders

extension FixtureCapture {
    /// The placeholders in a capture read from a file, as notes.
    var placeholderNotes: [Note] {
        notes { value in
            guard case .placeholder(let typeName, let description) = value else { return nil }
            return ("a placeholder for a \(typeName) (\(description)); a test cannot decode it", true)
        }
    }

    /// The numbers that look like a Unix time (seconds or milliseconds since 1970, between the years 2000 and 2100),
    /// as notes, unless the fixture's decoder reads dates that way already: a `Date` property reads such a number
    /// only with `.secondsSince1970` (or `.millisecondsSince1970`); the default strategy takes a number as seconds
    /// since 2001, and `1700000000` lands in 2054 without an error.
    public var timestampNotes: [Note] {
        switch decoderConfiguration.dateStrategy {
        case .secondsSince1970, .millisecondsSince1970: return []
        default: break
        }
        return notes { value in
            let number: Double
            switch value {
            case .number(.integer(let value)): number = Double(value)
            case .number(.unsigned(let value)): number = Double(value)
            case .number(.real(let value)): number = value
            case .swiftNumber(.int(let value)): number = Double(value)
            case .swiftNumber(.int64(let value)): number = Double(value)
            case .swiftNumber(.uint64(let value)): number = Double(value)
            case .swiftNumber(.double(let value)): number = value
            default: return nil
            }
            return Self.timestampMessage(number).map { ($0, false) }
        }
    }

    /// Says what `number` is as a Unix time, and how a `Date` property must read it; `nil` if it does not look like
    /// one.
    static func timestampMessage(_ number: Double) -> String? {
        let from2000 = 946_684_800.0
        let to2100 = 4_102_444_800.0
        let (seconds, strategy): (Double, String)
        if number >= from2000 && number < to2100 {
            (seconds, strategy) = (number, ".secondsSince1970")
        } else if number >= from2000 * 1000 && number < to2100 * 1000 {
            (seconds, strategy) = (number / 1000, ".millisecondsSince1970")
        } else {
            return nil
        }
        let formatter = ISO8601DateFormatter()
        let meant = formatter.string(from: Date(timeIntervalSince1970: seconds))
        let misread = formatter.string(from: Date(timeIntervalSinceReferenceDate: number))
        return "\(number) looks like a Unix time (\(meant)): as a Date it needs "
            + "decoder.dateDecodingStrategy = \(strategy); the default strategy reads it as seconds since 2001, "
            + "\(misread), without an error"
    }

    /// The values for which `describe` gives a message, as notes with their locations, in document order.
    ///
    /// It walks the value in a loop, and keeps each place as a link to its parent, so that a value nested
    /// ``UserInfoFixture/maximumDepth`` levels deep costs neither stack nor a copy of its path at every level.
    func notes(_ describe: (FixtureValue) -> (message: String, isPlaceholder: Bool)?) -> [Note] {
        var notes: [Note] = []
        // Each place: the index of its parent's place (-1 for the userInfo) and its own component.
        var places: [(parent: Int, component: String)] = [(-1, "userInfo")]
        var pending: [(value: FixtureValue, place: Int)] = [(root, 0)]
        func location(_ place: Int) -> [String] {
            var components: [String] = []
            var index = place
            while index >= 0 {
                components.append(places[index].component)
                index = places[index].parent
            }
            return components.reversed()
        }
        func visit(_ value: FixtureValue, _ parent: Int, _ component: String) {
            places.append((parent, component))
            pending.append((value, places.count - 1))
        }
        while let (value, place) = pending.popLast() {
            if let found = describe(value) {
                notes.append(
                    Note(
                        location: FixtureReader.format(location(place)), message: found.message,
                        isPlaceholder: found.isPlaceholder))
            }
            switch value {
            case .array(let elements, _):
                for (index, element) in elements.enumerated().reversed() { visit(element, place, "[\(index)]") }
            case .dictionary(let entries, _):
                for entry in entries.reversed() { visit(entry.value, place, entry.key) }
            case .integerKeyedDictionary(let entries):
                for entry in entries.reversed() { visit(entry.value, place, "\(entry.key)") }
            case .entries(let entries):
                for (index, entry) in entries.enumerated().reversed() {
                    places.append((place, "[\(index)]"))
                    visit(entry.value, places.count - 1, "value")
                }
            default:
                break
            }
        }
        return notes
    }
}
