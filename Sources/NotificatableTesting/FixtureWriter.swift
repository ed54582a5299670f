import Foundation

extension FixtureCapture {
    /// The fixture file as XML property-list text, laid out as the hand-written fixtures are: tabs, short values on
    /// the line of their key, keys sorted, so that two captures of the same notification give the same text.
    public var propertyList: String {
        var writer = FixtureWriter()
        return writer.file(self)
    }

    /// Writes the fixture file, replacing any file at `url`.
    ///
    /// - Parameter url: The URL of the file to write, usually ending in `.plist`; not a folder (``FixtureRecorder``
    ///   is the one that takes a folder and names the files).
    /// - Throws: Foundation's error when the file cannot be written.
    public func write(to url: URL) throws {
        try Data(propertyList.utf8).write(to: url, options: .atomic)
    }
}

/// Writes fixture values as XML property-list text in the format `FixtureReader` reads.
struct FixtureWriter {
    /// The widest line, counting a tab as four columns, before a value moves to its own lines.
    static let lineWidth = 120
    /// Chains of this many single-key dictionaries (or single-element arrays) or more are written as `$nest`.
    static let nestThreshold = 64

    private var lines: [String] = []
    /// Whether keys that start with `$` are escaped as `$$` (in `userInfo`, where `$` starts a tag).
    private var escapesKeys = true

    mutating func file(_ capture: FixtureCapture) -> String {
        lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
            #"<plist version="1.0">"#,
        ]
        if capture.typeName == nil || capture.expectation == nil {
            lines.append(
                "<!-- A capture, not yet a test: add the fields type and expect (see the fixture format). -->")
        }
        lines.append("<dict>")
        if !capture.summary.isEmpty {
            lines.append("\t<key>description</key>")
            lines.append("\t<string>\(Self.escape(capture.summary))</string>")
        }
        if let name = capture.notificationName {
            lines.append("\t<key>name</key><string>\(Self.escape(name))</string>")
        }
        if let object = capture.objectDescription {
            entry(key: "object", .string(object), indent: 1)
        }
        if let typeName = capture.typeName {
            lines.append("\t<key>type</key><string>\(Self.escape(typeName))</string>")
        }
        decoder(capture.decoderConfiguration)
        lines.append("\t<key>userInfo</key>")
        block(capture.root, indent: 1)
        if let expectation = capture.expectation { expect(expectation) }
        lines.append("</dict>")
        lines.append("</plist>")
        return lines.joined(separator: "\n") + "\n"
    }

    private mutating func decoder(_ configuration: UserInfoFixture.DecoderConfiguration) {
        var fields: [(String, String)] = []
        switch configuration.keyStrategy {
        case .useDefaultKeys: break
        case .convertFromSnakeCase: fields.append(("key", "convertFromSnakeCase"))
        case .affixed(let prefix, let suffix):
            fields += [("key", "affixed"), ("prefix", prefix), ("suffix", suffix)]
        }
        switch configuration.dateStrategy {
        case .deferredToDate: break
        case .secondsSince1970: fields.append(("date", "secondsSince1970"))
        case .millisecondsSince1970: fields.append(("date", "millisecondsSince1970"))
        case .iso8601: fields.append(("date", "iso8601"))
        case .formatted(let format): fields += [("date", "formatted"), ("dateFormat", format)]
        }
        if configuration.dataStrategy == .base64 { fields.append(("data", "base64")) }
        guard !fields.isEmpty else { return }
        lines.append("\t<key>decoder</key>")
        lines.append("\t<dict>")
        for (key, value) in fields {
            lines.append("\t\t<key>\(key)</key><string>\(Self.escape(value))</string>")
        }
        lines.append("\t</dict>")
    }

    private mutating func expect(_ expectation: UserInfoFixture.Expectation) {
        lines.append("\t<key>expect</key>")
        let saved = escapesKeys
        escapesKeys = false
        defer { escapesKeys = saved }
        switch expectation {
        case .value(let data):
            let value: FixtureValue
            if let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) {
                value = Self.plain(object)
            } else {
                value = .dictionary([], bridged: false)
            }
            block(.dictionary([FixtureValue.StringEntry(key: "value", value: value)], bridged: false), indent: 1)
        case .error(let error):
            lines.append("\t<dict>")
            lines.append("\t\t<key>error</key>")
            lines.append("\t\t<dict>")
            lines.append("\t\t\t<key>kind</key><string>\(error.kind.rawValue)</string>")
            lines.append("\t\t\t<key>codingPath</key>" + Self.codingPath(error.codingPath))
            if let key = error.key { lines.append("\t\t\t<key>key</key><string>\(Self.escape(key))</string>") }
            lines.append("\t\t</dict>")
            lines.append("\t</dict>")
        }
    }

    /// A coding path, with runs of one repeated element written as `$repeat`.
    static func codingPath(_ path: [UserInfoFixture.CodingPathElement]) -> String {
        guard !path.isEmpty else { return "<array/>" }
        var parts: [String] = []
        var index = 0
        while index < path.count {
            var run = 1
            while index + run < path.count && path[index + run] == path[index] { run += 1 }
            let element: String
            switch path[index] {
            case .string(let string): element = "<string>\(escape(string))</string>"
            case .int(let int): element = "<integer>\(int)</integer>"
            }
            if run >= 8 {
                parts.append(
                    "<dict><key>$repeat</key><dict><key>count</key><integer>\(run)</integer>"
                        + "<key>path</key><array>\(element)</array></dict></dict>")
            } else {
                parts.append(String(repeating: element, count: run))
            }
            index += run
        }
        return "<array>\(parts.joined())</array>"
    }

    /// A property-list object from `expect.value`, as a value whose `$` keys are not tags.
    static func plain(_ object: Any) -> FixtureValue {
        switch FixtureReader.classify(object) {
        case .string(let string)?: return .string(string)
        case .number(let number)?: return .number(number)
        case .date(let date)?: return .date(date)
        case .data(let data)?: return .data(data)
        case .array(let array)?: return .array(array.map(plain), bridged: false)
        case .dictionary(let dictionary)?:
            return .dictionary(
                dictionary.keys.sorted().map { FixtureValue.StringEntry(key: $0, value: plain(dictionary[$0] as Any)) },
                bridged: false)
        case nil: return .string("\(object)")
        }
    }

    // MARK: - Values

    private static func tabs(_ indent: Int) -> String { String(repeating: "\t", count: indent) }

    /// A key and its value: on one line when it fits, otherwise the value on the following lines.
    private mutating func entry(key: String, _ value: FixtureValue, indent: Int) {
        let keyText = "<key>\(Self.escape(escapesKeys && key.hasPrefix("$") ? "$" + key : key))</key>"
        let room = Self.lineWidth - indent * 4 - keyText.count
        if let text = inline(value, budget: room) {
            lines.append(Self.tabs(indent) + keyText + text)
            return
        }
        lines.append(Self.tabs(indent) + keyText)
        block(value, indent: indent)
    }

    /// A value on lines of its own, starting at `indent`.
    private mutating func block(_ value: FixtureValue, indent: Int) {
        if let text = inline(value, budget: Self.lineWidth - indent * 4) {
            lines.append(Self.tabs(indent) + text)
            return
        }
        let pad = Self.tabs(indent)
        if let nest = Self.nest(value) {
            lines.append(pad + "<dict>")
            lines.append(pad + "\t<key>$nest</key>")
            lines.append(pad + "\t<dict>")
            lines.append(pad + "\t\t<key>depth</key><integer>\(nest.depth)</integer>")
            if let key = nest.key { lines.append(pad + "\t\t<key>key</key><string>\(Self.escape(key))</string>") }
            entry(key: "leaf", nest.leaf, indent: indent + 2)
            lines.append(pad + "\t</dict>")
            lines.append(pad + "</dict>")
            return
        }
        switch value {
        case .array(let elements, let bridged):
            if bridged { lines.append(pad + "<dict><key>$nsarray</key>") }
            lines.append(pad + "<array>")
            for element in elements { block(element, indent: indent + 1) }
            lines.append(pad + "</array>")
            if bridged { lines.append(pad + "</dict>") }
        case .dictionary(let entries, let bridged):
            if bridged { lines.append(pad + "<dict><key>$nsdictionary</key>") }
            lines.append(pad + "<dict>")
            for item in entries { entry(key: item.key, item.value, indent: indent + 1) }
            lines.append(pad + "</dict>")
            if bridged { lines.append(pad + "</dict>") }
        case .integerKeyedDictionary(let entries):
            lines.append(pad + "<dict><key>$intKeys</key>")
            lines.append(pad + "<dict>")
            let saved = escapesKeys
            escapesKeys = false
            for item in entries { entry(key: "\(item.key)", item.value, indent: indent + 1) }
            escapesKeys = saved
            lines.append(pad + "</dict>")
            lines.append(pad + "</dict>")
        case .entries(let entries):
            lines.append(pad + "<dict><key>$entries</key>")
            lines.append(pad + "<array>")
            for item in entries {
                lines.append(pad + "\t<dict>")
                entry(key: "key", item.key, indent: indent + 2)
                entry(key: "value", item.value, indent: indent + 2)
                lines.append(pad + "\t</dict>")
            }
            lines.append(pad + "</array>")
            lines.append(pad + "</dict>")
        case .placeholder(let typeName, let description):
            lines.append(pad + "<dict><key>$placeholder</key>")
            lines.append(pad + "<dict>")
            entry(key: "type", .string(typeName), indent: indent + 1)
            entry(key: "description", .string(description), indent: indent + 1)
            lines.append(pad + "</dict>")
            lines.append(pad + "</dict>")
        default:
            // Scalars always fit inline; a very long one is written on its own line.
            lines.append(pad + (inline(value, budget: .max) ?? ""))
        }
    }

    /// A chain of identical single-key dictionaries or single-element arrays, long enough to write as `$nest`.
    private static func nest(_ value: FixtureValue) -> (depth: Int, key: String?, leaf: FixtureValue)? {
        var depth = 0
        var current = value
        var key: String?
        while true {
            if case .dictionary(let entries, false) = current, entries.count == 1,
                key == nil && depth == 0 || key == entries[0].key
            {
                key = entries[0].key
                current = entries[0].value
            } else if case .array(let elements, false) = current, elements.count == 1, key == nil {
                current = elements[0]
            } else {
                break
            }
            depth += 1
        }
        return depth >= nestThreshold ? (depth, key, current) : nil
    }

    /// The value on one line, or `nil` when it is longer than `budget` or holds something written on lines of its
    /// own.
    private func inline(_ value: FixtureValue, budget: Int) -> String? {
        var remaining = budget
        var text = ""
        guard appendInline(value, to: &text, remaining: &remaining) else { return nil }
        return text
    }

    private func appendInline(_ value: FixtureValue, to text: inout String, remaining: inout Int) -> Bool {
        func add(_ part: String) -> Bool {
            remaining -= part.count
            text += part
            return remaining >= 0
        }
        switch value {
        case .number(let number):
            switch number {
            case .integer(let value): return add("<integer>\(value)</integer>")
            case .unsigned(let value): return add("<integer>\(value)</integer>")
            case .real(let value): return add("<real>\(Self.real(value))</real>")
            case .bool(let value): return add(value ? "<true/>" : "<false/>")
            }
        case .swiftNumber(let number):
            let (tag, payload) = Self.swiftNumber(number)
            return add("<dict><key>\(tag)</key>\(payload)</dict>")
        case .decimal(let decimal):
            return add("<dict><key>$decimal</key><string>\(decimal)</string></dict>")
        case .string(let string): return add("<string>\(Self.escape(string))</string>")
        case .nsString(let string):
            return add("<dict><key>$nsstring</key><string>\(Self.escape(string))</string></dict>")
        case .date(let date):
            if !escapesKeys || Self.isWholeSecond(date) {
                return add("<date>\(Self.iso8601(date))</date>")
            }
            return add("<dict><key>$date</key><real>\(Self.real(date.timeIntervalSinceReferenceDate))</real></dict>")
        case .data(let data): return add("<data>\(data.base64EncodedString())</data>")
        case .null: return add("<dict><key>$null</key><true/></dict>")
        case .url(let url):
            return add("<dict><key>$url</key><string>\(Self.escape(url.absoluteString))</string></dict>")
        case .nsURL(let url):
            return add("<dict><key>$nsurl</key><string>\(Self.escape(url.absoluteString))</string></dict>")
        case .uuid(let uuid, let bridged):
            return add("<dict><key>\(bridged ? "$nsuuid" : "$uuid")</key><string>\(uuid.uuidString)</string></dict>")
        case .geometry(let geometry):
            let (tag, numbers) = Self.geometry(geometry)
            return add("<dict><key>\(tag)</key><array>\(numbers)</array></dict>")
        case .array(let elements, let bridged):
            if Self.nest(value) != nil { return false }
            if elements.isEmpty { return add(bridged ? "<dict><key>$nsarray</key><array/></dict>" : "<array/>") }
            guard add(bridged ? "<dict><key>$nsarray</key><array>" : "<array>") else { return false }
            for element in elements where !appendInline(element, to: &text, remaining: &remaining) { return false }
            return add(bridged ? "</array></dict>" : "</array>")
        case .dictionary(let entries, let bridged):
            if Self.nest(value) != nil { return false }
            if entries.isEmpty { return add(bridged ? "<dict><key>$nsdictionary</key><dict/></dict>" : "<dict/>") }
            // A dictionary with more than one key reads better on lines of its own.
            guard entries.count == 1 else { return false }
            let key = entries[0].key
            guard add(bridged ? "<dict><key>$nsdictionary</key><dict>" : "<dict>"),
                add("<key>\(Self.escape(escapesKeys && key.hasPrefix("$") ? "$" + key : key))</key>"),
                appendInline(entries[0].value, to: &text, remaining: &remaining)
            else { return false }
            return add(bridged ? "</dict></dict>" : "</dict>")
        case .integerKeyedDictionary(let entries):
            if entries.isEmpty { return add("<dict><key>$intKeys</key><dict/></dict>") }
            return false
        case .entries(let entries):
            if entries.isEmpty { return add("<dict><key>$entries</key><array/></dict>") }
            return false
        case .placeholder:
            return false
        }
    }

    // MARK: - Scalars

    private static func swiftNumber(_ number: FixtureValue.SwiftNumber) -> (String, String) {
        func integer<T: BinaryInteger>(_ value: T) -> String {
            Int64(exactly: value) != nil ? "<integer>\(value)</integer>" : "<string>\(value)</string>"
        }
        switch number {
        case .int(let value): return ("$int", integer(value))
        case .int8(let value): return ("$int8", integer(value))
        case .int16(let value): return ("$int16", integer(value))
        case .int32(let value): return ("$int32", integer(value))
        case .int64(let value): return ("$int64", integer(value))
        case .uint(let value): return ("$uint", integer(value))
        case .uint8(let value): return ("$uint8", integer(value))
        case .uint16(let value): return ("$uint16", integer(value))
        case .uint32(let value): return ("$uint32", integer(value))
        case .uint64(let value): return ("$uint64", integer(value))
        case .double(let value): return ("$double", "<real>\(real(value))</real>")
        case .float(let value): return ("$float", "<real>\(real(Double(value)))</real>")
        case .cgFloat(let value): return ("$cgfloat", "<real>\(real(value))</real>")
        case .bool(let value): return ("$bool", value ? "<true/>" : "<false/>")
        }
    }

    private static func geometry(_ geometry: FixtureValue.Geometry) -> (String, String) {
        func reals(_ values: [Double]) -> String { values.map { "<real>\(real($0))</real>" }.joined() }
        switch geometry {
        case .rect(let x, let y, let width, let height): return ("$rect", reals([x, y, width, height]))
        case .point(let x, let y): return ("$point", reals([x, y]))
        case .size(let width, let height): return ("$size", reals([width, height]))
        case .range(let location, let length):
            return ("$range", "<integer>\(location)</integer><integer>\(length)</integer>")
        }
    }

    /// A `Double` as text that reads back as exactly the same value: integral values without a fraction, as the
    /// hand-written fixtures have them, and `nan`, `inf` and `-inf` for the others.
    static func real(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value == value.rounded(), abs(value) < 1e15, !(value == 0 && value.sign == .minus) {
            return "\(Int64(value))"
        }
        return "\(value)"
    }

    private static func isWholeSecond(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSinceReferenceDate
        // From 1901 to 2999: the years every property-list parser reads in `<date>`.
        return seconds == seconds.rounded() && seconds > -3_155_760_000 && seconds < 31_556_908_800
    }

    private static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// Escapes text for XML. A carriage return is written as a character reference, which XML parsers keep,
    /// instead of normalizing it to a line feed.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\r": result += "&#13;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
