import Foundation
import NotificatableTesting
import Testing

// Issue 29 item 12: whatever the keys, `scaffold` prints Swift that compiles and gives every property the type of its
// value. Random key sets from a hostile vocabulary (keywords, contextual keywords, the names of the types the output
// uses, `Type`, `Self`, `Protocol`, `codingKeys`, plural and singular pairs, case-only differences, keys no identifier
// can spell), with nested dictionaries and arrays of dictionaries, are scaffolded and type-checked with
// `swiftc -typecheck`, together with one key path per value, typed as the value's type
// (`let _: KeyPath<Case3, Foundation.Date> = \Case3.shippedAt`): a property whose type is wrong, or means a nested
// struct instead of Foundation's type, fails to compile. The property for each raw key is found through the printed
// `CodingKeys`, whose raw values are read back from their literals, so a key that is mapped wrongly is a failure too.

/// A value of a hostile `userInfo`, and what its property must be.
indirect enum ScaffoldSample {
    case int, double, bool, string, date, data, url, uuid, rect, ints
    /// A nested dictionary.
    case dictionary([(key: String, value: ScaffoldSample)])
    /// An array of two dictionaries with these keys and values.
    case dictionaries([(key: String, value: ScaffoldSample)])
    /// Values whose type cannot be stated: the property must be a comment.
    case mixed, null, empty

    var userInfoValue: Any {
        switch self {
        case .int: NSNumber(value: 7)
        case .double: NSNumber(value: 2.5)
        case .bool: NSNumber(value: true)
        case .string: "text"
        case .date: Date(timeIntervalSinceReferenceDate: 1)
        case .data: Data([1, 2])
        case .url: URL(fileURLWithPath: "/tmp/x")
        case .uuid: UUID()
        case .rect: NSValue(rect: CGRect(x: 0, y: 1, width: 2, height: 3))
        case .ints: [NSNumber(value: 1), NSNumber(value: 2)]
        case .dictionary(let entries): Self.userInfo(entries)
        case .dictionaries(let entries): [Self.userInfo(entries), Self.userInfo(entries)]
        case .mixed: [NSNumber(value: 1), "one"] as [Any]
        case .null: NSNull()
        case .empty: [Any]()
        }
    }

    static func userInfo(_ entries: [(key: String, value: ScaffoldSample)]) -> [String: Any] {
        Dictionary(entries.map { ($0.key, $0.value.userInfoValue) }, uniquingKeysWith: { first, _ in first })
    }

    /// The Swift type the property must have, for a value that is a leaf.
    var leafType: String? {
        switch self {
        case .int: "Swift.Int"
        case .double: "Swift.Double"
        case .bool: "Swift.Bool"
        case .string: "Swift.String"
        case .date: "Foundation.Date"
        case .data: "Foundation.Data"
        case .url: "Foundation.URL"
        case .uuid: "Foundation.UUID"
        case .rect: "Foundation.CGRect"
        case .ints: "[Swift.Int]"
        default: nil
        }
    }
}

/// One struct of the scaffold's output, read back from its lines.
struct ScaffoldedStruct {
    var name: String
    /// The properties in order: the name as declared (backticks kept) and the type.
    var properties: [(declared: String, type: String)] = []
    /// The `CodingKeys` cases: the name as declared and the raw value, `nil` when it is the name itself.
    var codingKeys: [(declared: String, raw: String?)]?
    var nested: [ScaffoldedStruct] = []

    static func bare(_ declared: String) -> String { declared.replacingOccurrences(of: "`", with: "") }

    /// The declared property that reads `key`, through `CodingKeys` when there are any.
    func property(forKey key: String) -> (declared: String, type: String)? {
        let name: String?
        if let codingKeys {
            name = codingKeys.first { ($0.raw ?? Self.bare($0.declared)) == key }.map { Self.bare($0.declared) }
        } else {
            name = key
        }
        return properties.first { Self.bare($0.declared) == name }
    }

    /// The nested struct a property's type names (`Item`, `[Item]`, `Item?`).
    func nested(for type: String) -> ScaffoldedStruct? {
        let name = type.trimmingCharacters(in: CharacterSet(charactersIn: "[]?"))
        return nested.first { $0.name == name }
    }

    /// Reads the structs of `source`; `nil` for a line it does not understand.
    static func parse(_ source: String) -> [ScaffoldedStruct]? {
        let lines = source.components(separatedBy: "\n")
        var index = 0
        var structs: [ScaffoldedStruct] = []
        while index < lines.count {
            if lines[index].hasPrefix("struct ") {
                guard let parsed = parseStruct(lines, &index) else { return nil }
                structs.append(parsed)
            }
            index += 1
        }
        return structs
    }

    private static func parseStruct(_ lines: [String], _ index: inout Int) -> ScaffoldedStruct? {
        let line = lines[index]
        let indent = String(line.prefix { $0 == " " })
        let header = line.dropFirst(indent.count + "struct ".count)
        guard let colon = header.firstIndex(of: ":") else { return nil }
        var result = ScaffoldedStruct(name: String(header[..<colon]))
        index += 1
        while index < lines.count {
            let line = lines[index]
            let body = line.dropFirst(indent.count + 4)
            if line == indent + "}" { return result }
            if line.hasPrefix(indent + "    struct ") {
                guard let nested = parseStruct(lines, &index) else { return nil }
                result.nested.append(nested)
            } else if body.hasPrefix("var "), case let declaration = body.dropFirst("var ".count),
                let separator = declaration.range(of: ": ")
            {
                result.properties.append(
                    (String(declaration[..<separator.lowerBound]), String(declaration[separator.upperBound...])))
            } else if body.hasPrefix("enum CodingKeys") {
                var cases: [(String, String?)] = []
                index += 1
                while index < lines.count, lines[index] != indent + "    }" {
                    let text = lines[index].trimmingCharacters(in: .whitespaces)
                    guard text.hasPrefix("case ") else { return nil }
                    let rest = text.dropFirst("case ".count)
                    if let equals = rest.range(of: " = ") {
                        guard let raw = unescape(String(rest[equals.upperBound...])) else { return nil }
                        cases.append((String(rest[..<equals.lowerBound]), raw))
                    } else {
                        cases.append((String(rest), nil))
                    }
                    index += 1
                }
                result.codingKeys = cases
            }
            index += 1
        }
        return nil
    }

    /// The value of a Swift string literal as the scaffold writes them.
    static func unescape(_ literal: String) -> String? {
        guard literal.count >= 2, literal.hasPrefix("\""), literal.hasSuffix("\"") else { return nil }
        var scalars = Array(literal.unicodeScalars.dropFirst().dropLast())
        var result = String.UnicodeScalarView()
        while !scalars.isEmpty {
            let scalar = scalars.removeFirst()
            guard scalar == "\\" else {
                if scalar == "\"" { return nil }
                result.append(scalar)
                continue
            }
            guard !scalars.isEmpty else { return nil }
            switch scalars.removeFirst() {
            case "\\": result.append("\\")
            case "\"": result.append("\"")
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "t": result.append("\t")
            case "0": result.append("\0")
            case "u":
                guard scalars.first == "{", let close = scalars.firstIndex(of: "}") else { return nil }
                let hex = String(String.UnicodeScalarView(scalars[1..<close]))
                guard let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) else { return nil }
                result.append(decoded)
                scalars.removeFirst(close + 1)
            default: return nil
            }
        }
        return String(result)
    }
}

@Suite("scaffold: any keys give Swift that compiles, with the type of each value")
struct ScaffoldHostileKeysTests {
    static let vocabulary: [String] = [
        // Keywords, and contextual keywords.
        "class", "struct", "enum", "protocol", "extension", "func", "var", "let", "init", "deinit", "subscript", "self",
        "Self", "super", "Type", "Protocol", "Any", "any", "some", "default", "case", "switch", "in", "repeat",
        "return",
        "throws", "try", "import", "operator", "typealias", "associatedtype", "inout", "is", "as", "nil", "true",
        "where", "guard", "defer", "static", "public", "fileprivate", "open", "package", "await", "async", "get",
        "set", "willSet", "didSet", "lazy", "weak", "mutating", "override", "required", "optional", "indirect",
        "borrowing", "consuming", "nonisolated", "actor", "macro", "_",
        // The names of types the output uses, or could hide.
        "Date", "Data", "URL", "UUID", "String", "Int", "Double", "Bool", "Array", "Optional", "Dictionary",
        "Decodable", "Encodable", "Codable", "Equatable", "CodingKey", "CodingKeys", "codingKeys", "Swift",
        "Foundation", "Never", "Error", "Decimal", "CGRect", "NSRange", "rawValue", "stringValue", "intValue",
        "description", "encode", "decoder", "container",
        // Plural and singular pairs, and case-only differences.
        "item", "items", "entry", "entries", "category", "categories", "status", "statuses", "box", "boxes",
        "date", "DATE", "dAtE", "data", "DATA", "url", "Url", "type", "TYPE", "value", "Value", "values",
        // Keys no identifier spells as they are.
        "", " ", "two words", "dash-key", "snake_key", "1st", "42", "9lives", "café", "cafe\u{301}", "日付", "Ωmega",
        "ǅemo", "🚀launch", "🚀", "quote\"key", "back\\slash", "new\nline", "\\(interp)", "$dollar", "$$", "__",
        "shippedAt", "x", "X", "٣", "ä\u{202E}b",
    ]

    /// A dictionary of `count` distinct keys, its values nested at most `depth` more levels.
    static func entries(_ count: Int, depth: Int, using generator: inout SeededGenerator)
        -> [(key: String, value: ScaffoldSample)]
    {
        var keys: [String] = []
        while keys.count < count, let key = vocabulary.randomElement(using: &generator) {
            if !keys.contains(key) { keys.append(key) }
        }
        return keys.map { key in (key, sample(depth: depth, using: &generator)) }
    }

    static func sample(depth: Int, using generator: inout SeededGenerator) -> ScaffoldSample {
        let leaves: [ScaffoldSample] = [
            .int, .double, .bool, .string, .date, .data, .url, .uuid, .rect, .ints, .mixed, .null, .empty,
        ]
        if depth > 0, Int.random(in: 0..<4, using: &generator) == 0 {
            let nested = entries(Int.random(in: 1...5, using: &generator), depth: depth - 1, using: &generator)
            return Bool.random(using: &generator) ? .dictionary(nested) : .dictionaries(nested)
        }
        return leaves.randomElement(using: &generator) ?? .int
    }

    /// The cases: the shapes the issue names, then random ones from a fixed seed.
    static func cases() -> [[(key: String, value: ScaffoldSample)]] {
        let route: [(key: String, value: ScaffoldSample)] = [("name", .string), ("port", .int)]
        var cases: [[(key: String, value: ScaffoldSample)]] = [
            [
                ("items", .dictionaries(route)), ("item", .dictionary(route)), ("type", .dictionary(route)),
                ("self", .dictionary(route)), ("protocol", .dictionary(route)), ("codingKeys", .dictionary(route)),
                ("date", .dictionary(route)), ("shippedAt", .date), ("mixed", .mixed), ("Swift", .dictionary(route)),
                ("Foundation", .dictionary(route)), ("DATE", .dictionary(route)), ("Date", .data),
            ],
            [("data", .dictionary([("data", .dictionary([("Data", .data), ("date", .date)]))])), ("blob", .data)],
        ]
        var generator = SeededGenerator(seed: 0x5EED_2912)
        for _ in 0..<40 {
            cases.append(entries(Int.random(in: 4...12, using: &generator), depth: 2, using: &generator))
        }
        return cases
    }

    /// The key path checks for the values of `entries`, read through the struct `parsed`; problems are recorded.
    static func checks(
        _ entries: [(key: String, value: ScaffoldSample)], in parsed: ScaffoldedStruct, root: String, path: String,
        into lines: inout [String], problems: inout [String]
    ) {
        for (key, value) in entries {
            let property = parsed.property(forKey: key)
            let place = "\(path) key \(key.debugDescription)"
            switch value {
            case .mixed, .null, .empty:
                if let property { problems.append("\(place): a value of no stated type is a property \(property)") }
            case .dictionary(let nested), .dictionaries(let nested):
                guard let property, let inner = parsed.nested(for: property.type) else {
                    problems.append("\(place): no property, or no struct for it, in \(parsed.name)")
                    continue
                }
                let isArray: Bool
                if case .dictionaries = value { isArray = true } else { isArray = false }
                if property.type != (isArray ? "[\(inner.name)]" : inner.name) {
                    problems.append("\(place): type \(property.type)")
                }
                checks(
                    nested, in: inner, root: root, path: "\(path).\(property.declared)\(isArray ? "[0]" : "")",
                    into: &lines, problems: &problems)
            default:
                guard let property, let type = value.leafType else {
                    problems.append("\(place): no property in \(parsed.name)")
                    continue
                }
                lines.append("    let _: KeyPath<\(root), \(type)> = \(path).\(property.declared)")
            }
        }
    }

    @Test("Hostile key sets scaffold to Swift that type-checks, each property typed as its value")
    func hostileKeysTypeCheck() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-scaffold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var files: [String] = []
        var problems: [String] = []
        var sources: [String: String] = [:]
        for (number, entries) in Self.cases().enumerated() {
            let name = "Case\(number)"
            let source = FixtureCapture(userInfo: ScaffoldSample.userInfo(entries)).scaffold(typeName: name)
            sources[name] = source
            let file = folder.appendingPathComponent("\(name).swift")
            try Data(source.utf8).write(to: file)
            files.append(file.path)
            guard let parsed = ScaffoldedStruct.parse(source)?.first(where: { $0.name == name }) else {
                problems.append("\(name): the output could not be read back:\n\(source)")
                continue
            }
            var lines = ["import Foundation", "", "func check\(name)() {"]
            Self.checks(entries, in: parsed, root: name, path: "\\\(name)", into: &lines, problems: &problems)
            lines.append("}")
            let checkFile = folder.appendingPathComponent("\(name)Checks.swift")
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: checkFile)
            files.append(checkFile.path)
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")

        // The output declares the notification's handle, so it is checked against the built Notificatable module.
        let modules = try #require(NoPayloadMisuseTests.modulesFolder(), "no Modules/Notificatable.swiftmodule")
        let output = try NoPayloadMisuseTests.run(
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-I", modules.path, "-module-cache-path",
                folder.appendingPathComponent("cache").path,
            ]
                + files)
        let diagnostics = output.components(separatedBy: "\n").filter {
            $0.contains(": error: ") || $0.contains(": warning: ")
        }
        #expect(!output.isEmpty || diagnostics.isEmpty)
        if !diagnostics.isEmpty {
            // The sources that fail, so the failure shows what was printed.
            let failing = Set(
                diagnostics.compactMap { line in
                    sources.keys.first { line.contains("/\($0).swift:") || line.contains("/\($0)Checks.swift:") }
                })
            let shown = failing.sorted().prefix(3).map { "\($0):\n\(sources[$0] ?? "")" }.joined(separator: "\n")
            Issue.record(
                "\(diagnostics.count) diagnostics:\n\(diagnostics.prefix(40).joined(separator: "\n"))\n\(shown)")
        }
    }
}
