import Foundation
import Notificatable

// Printing the inferred shapes as Swift source. Every name the source declares is checked against what it must not
// hide: nested structs are unique in their scope and never named like a type the source uses, a keyword-like type,
// `CodingKeys`, a property or an enclosing type; types are written with their module; keywords are in backticks; a
// raw key is written as a string literal that holds exactly it.
extension FixtureScaffold {
    func source(typeName: String) -> String {
        var lines: [String] = []
        let origin = capture.notificationName.map { " from \(Self.commentText($0))" } ?? ""
        lines.append("// Scaffolded by notificatable-fixtures\(origin): check each type before you rely on it.")
        for note in capture.timestampNotes {
            lines.append("// \(Self.commentText(note.location)): \(Self.commentText(note.message)).")
        }
        if case .dictionary(let entries, _) = capture.root, entries.isEmpty {
            return Self.withoutPayloadSource(
                lines: lines, typeName: typeName, notificationName: capture.notificationName)
        }
        // For each raw key: the text its property name is made from, and the coding key the decoder needs for it.
        var keys = Keys()
        switch capture.decoderConfiguration.keyStrategy {
        case .affixed(let prefix, let suffix):
            lines.append("// Decode it as the fixture does, with")
            lines.append(
                "//     decoder.keyDecodingStrategy = .affixed(prefix: \(Self.stringLiteral(prefix)), "
                    + "suffix: \(Self.stringLiteral(suffix)))")
            let affixed: (String) -> Renamed? = { key in
                guard key.count > prefix.count + suffix.count, key.hasPrefix(prefix), key.hasSuffix(suffix) else {
                    return nil
                }
                let middle = String(key.dropFirst(prefix.count).dropLast(suffix.count))
                return Renamed(source: middle, codingKey: middle)
            }
            keys = Keys(root: affixed, nested: affixed, lacking: "the prefix and suffix of the key strategy")
            // The strategy turns `frameEnd` into `UIKeyboard` + `FrameEnd` + `UserInfoKey`.
            keys.implicitName = { $0.prefix(1).lowercased() + $0.dropFirst() }
        case .convertFromSnakeCase:
            lines.append("// Decode it as the fixture does, with")
            lines.append("//     decoder.keyDecodingStrategy = .convertFromSnakeCase")
            // The decoder converts each dictionary key, and compares the converted key with the coding key.
            let converted: (String) -> Renamed? = { Renamed(source: $0, codingKey: SnakeCase.toCamelCase($0)) }
            keys = Keys(root: converted, nested: converted, lacking: "")
        case .useDefaultKeys:
            if case .dictionary(let entries, _) = capture.root,
                let (prefix, suffix) = Self.sharedAffixes(of: entries.map(\.key))
            {
                lines.append(
                    "// The keys share the prefix \(Self.stringLiteral(prefix)) and the suffix "
                        + "\(Self.stringLiteral(suffix)), as UIKit's do. Decoding with")
                lines.append(
                    "//     decoder.keyDecodingStrategy = .affixed(prefix: \(Self.stringLiteral(prefix)), "
                        + "suffix: \(Self.stringLiteral(suffix)))")
                lines.append("// makes the CodingKeys below unnecessary: delete them when you do.")
                keys.root = { key in
                    Renamed(source: String(key.dropFirst(prefix.count).dropLast(suffix.count)), codingKey: key)
                }
            }
        }
        lines.append("import Foundation")
        lines.append("import Notificatable")
        lines.append("")
        var printer = Printer(lines: lines, keys: keys)
        switch Self.shape(of: capture.root) {
        case .object(let fields):
            printer.printStruct(typeName, fields: fields, indent: "", enclosing: [], isRoot: true)
        case .integerKeyed(let element):
            printer.printIntegerKeyedRoot(typeName, element: element)
        default:
            printer.lines.append(
                "// The userInfo's keys are not all strings or all integers: write init(from:) by hand.")
            printer.lines.append("struct \(typeName): Swift.Codable, Swift.Equatable, Swift.Sendable {}")
        }
        printer.lines.append(contentsOf: handleDeclaration(typeName: typeName))
        return printer.lines.joined(separator: "\n") + "\n"
    }

    /// The typed handle of the notification, declared once as a `static let`, with the decoder its key strategy
    /// needs.
    func handleDeclaration(typeName: String) -> [String] {
        var lines = ["", "extension Notificatable where Info == \(typeName) {"]
        let name: String
        if let notificationName = capture.notificationName {
            name = notificationName
        } else {
            lines.append("    // The capture has no notification name: write it in place of \"\(typeName)\".")
            name = typeName
        }
        let property = Self.declared(Self.propertyName(typeName))
        let strategy: String?
        switch capture.decoderConfiguration.keyStrategy {
        case .affixed(let prefix, let suffix):
            strategy = ".affixed(prefix: \(Self.stringLiteral(prefix)), suffix: \(Self.stringLiteral(suffix)))"
        case .convertFromSnakeCase: strategy = ".convertFromSnakeCase"
        case .useDefaultKeys: strategy = nil
        }
        if let strategy {
            lines.append("    static let \(property) = Notificatable.name(")
            lines.append("        \(Self.stringLiteral(name)),")
            lines.append("        decoder: {")
            lines.append("            let decoder = UserInfoDecoder()")
            lines.append("            decoder.keyDecodingStrategy = \(strategy)")
            lines.append("            return decoder")
            lines.append("        }())")
        } else {
            lines.append("    static let \(property) = Notificatable.name(\(Self.stringLiteral(name)))")
        }
        lines.append("}")
        return lines
    }

    /// What a raw key becomes: the text its property's name is made from, and the coding key that reaches it (`nil`
    /// when the key strategy finds it by the property's name).
    struct Renamed {
        var source: String
        var codingKey: String?
    }

    /// How the keys of the top-level dictionary and of nested ones become properties and coding keys.
    struct Keys {
        /// For a top-level key; `nil` when no property can read it.
        var root: (String) -> Renamed? = { Renamed(source: $0, codingKey: $0) }
        /// For a key of a nested dictionary.
        var nested: (String) -> Renamed? = { Renamed(source: $0, codingKey: $0) }
        /// Why `root` or `nested` gave `nil`.
        var lacking = ""
        /// The property name that needs no entry in `CodingKeys` for a given coding key.
        var implicitName: (String) -> String = { $0 }
    }

    /// Prints structs; nested structs are printed inside their parent.
    struct Printer {
        var lines: [String]
        let keys: Keys

        /// A line of a struct: a comment, or a stored property.
        private enum Entry {
            case comment(String)
            case property(Property)
        }

        /// One stored property as it will be printed.
        private struct Property {
            var key: String
            var name: String
            var codingKey: String?
            var shape: Shape
            var isOptional: Bool
        }

        mutating func printStruct(_ name: String, fields: [Field], indent: String, enclosing: [String], isRoot: Bool) {
            lines.append("\(indent)struct \(name): Swift.Codable, Swift.Equatable, Swift.Sendable {")
            let inner = indent + "    "
            // Names first, so that nested structs can avoid every one of them.
            var entries: [Entry] = []
            var used: Set<String> = []
            for field in fields {
                guard let renamed = isRoot ? keys.root(field.key) : keys.nested(field.key) else {
                    entries.append(
                        .comment(
                            "// \(FixtureScaffold.stringLiteral(field.key)) lacks \(keys.lacking): read it with "
                                + "another type."))
                    continue
                }
                let bare = FixtureScaffold.propertyName(renamed.source)
                var candidate = bare
                var number = 2
                while used.contains(candidate) {
                    candidate = "\(bare)\(number)"
                    number += 1
                }
                used.insert(candidate)
                var shape = field.shape
                var isOptional = field.isOptional
                if case .optional(let wrapped) = shape {
                    shape = wrapped
                    isOptional = true
                }
                entries.append(
                    .property(
                        Property(
                            key: field.key, name: candidate, codingKey: renamed.codingKey, shape: shape,
                            isOptional: isOptional)))
            }
            var scope = Scope(taken: FixtureScaffold.reservedTypeNames.union(enclosing + [name]).union(used))
            var printed: [Property] = []
            var codingKeysUsed: [String: String] = [:]
            for entry in entries {
                guard case .property(let property) = entry else {
                    if case .comment(let text) = entry { lines.append(inner + text) }
                    continue
                }
                let declared = FixtureScaffold.declared(property.name)
                if let reason = FixtureScaffold.unknownReason(property.shape) {
                    lines.append(
                        "\(inner)// var \(declared): <unknown>  // \(FixtureScaffold.stringLiteral(property.key)) holds "
                            + "\(reason).")
                    continue
                }
                // Two keys that the key strategy turns into one (`old_value` and `oldValue`) cannot both be read.
                let codingKey = property.codingKey ?? property.name
                if let other = codingKeysUsed[codingKey] {
                    lines.append(
                        "\(inner)// var \(declared)  // \(FixtureScaffold.stringLiteral(property.key)) reads the "
                            + "same coding key as \(other) under the key strategy.")
                    continue
                }
                codingKeysUsed[codingKey] = property.name
                let type = scope.typeText(property.shape, property: property.name, inArray: false)
                lines.append("\(inner)var \(declared): \(type)\(property.isOptional ? "?" : "")")
                printed.append(property)
            }
            let needsCodingKeys = printed.contains { property in
                property.codingKey.map { keys.implicitName($0) != property.name } ?? false
            }
            if needsCodingKeys {
                lines.append("")
                lines.append("\(inner)enum CodingKeys: Swift.String, Swift.CodingKey {")
                for property in printed {
                    let declared = FixtureScaffold.declared(property.name)
                    if let key = property.codingKey, keys.implicitName(key) != property.name {
                        lines.append("\(inner)    case \(declared) = \(FixtureScaffold.stringLiteral(key))")
                    } else {
                        lines.append("\(inner)    case \(declared)")
                    }
                }
                lines.append("\(inner)}")
            }
            for (nestedName, nestedFields) in scope.nested {
                lines.append("")
                printStruct(
                    nestedName, fields: nestedFields, indent: inner, enclosing: enclosing + [name], isRoot: false)
            }
            lines.append("\(indent)}")
        }

        /// A `userInfo` whose keys are all integers: a dictionary type, with the structs its values need.
        mutating func printIntegerKeyedRoot(_ name: String, element: Shape?) {
            guard let element, FixtureScaffold.unknownReason(element) == nil else {
                let reason = element.flatMap(FixtureScaffold.unknownReason) ?? "nothing to infer a type from"
                lines.append("// The userInfo's keys are integers, and its values hold \(reason).")
                lines.append("// typealias \(name) = [Swift.Int: <unknown>]")
                return
            }
            var scope = Scope(taken: FixtureScaffold.reservedTypeNames.union([name]))
            lines.append("typealias \(name) = [Swift.Int: \(scope.typeText(element, property: name, inArray: true))]")
            for (nestedName, nestedFields) in scope.nested {
                lines.append("")
                printStruct(nestedName, fields: nestedFields, indent: "", enclosing: [name], isRoot: false)
            }
        }
    }

    /// The names taken in one struct, and the nested structs it declares.
    struct Scope {
        var taken: Set<String>
        var nested: [(name: String, fields: [Field])] = []

        /// The Swift type of a shape whose type is known (``unknownReason(_:)`` is `nil`), declaring the nested
        /// structs it needs.
        mutating func typeText(_ shape: Shape, property: String, inArray: Bool) -> String {
            switch shape {
            case .scalar(let type): return type
            case .optional(let wrapped): return typeText(wrapped, property: property, inArray: inArray) + "?"
            case .array(let element?): return "[\(typeText(element, property: property, inArray: true))]"
            case .integerKeyed(let element?):
                return "[Swift.Int: \(typeText(element, property: property, inArray: true))]"
            case .object(let fields):
                let base = FixtureScaffold.nestedTypeName(for: property, inArray: inArray)
                var name = base
                var number = 2
                while taken.contains(name) {
                    name = "\(base)\(number)"
                    number += 1
                }
                taken.insert(name)
                nested.append((name, fields))
                return name
            case .null, .array(nil), .integerKeyed(nil), .unknown:
                // Not reached: a property whose type is unknown is printed as a comment.
                return "Swift.Never"
            }
        }
    }

    /// Why the type of a shape cannot be stated, or `nil` when it can.
    static func unknownReason(_ shape: Shape) -> String? {
        switch shape {
        case .scalar, .object: return nil
        case .null: return "only NSNull, whose type cannot be inferred"
        case .optional(let wrapped): return unknownReason(wrapped)
        case .array(nil): return "an empty array, whose element type cannot be inferred"
        case .array(let element?): return unknownReason(element).map { "an array whose elements are \($0)" }
        case .integerKeyed(nil): return "an empty dictionary, whose value type cannot be inferred"
        case .integerKeyed(let element?):
            return unknownReason(element).map { "a dictionary whose values are \($0)" }
        case .unknown(let reason): return reason
        }
    }
}
