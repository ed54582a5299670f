import Foundation

extension FixtureCapture {
    /// Swift source for a payload type that decodes this `userInfo`: a `Codable` and `Equatable` struct whose
    /// properties are inferred from the captured values.
    ///
    /// - Property names are in Swift style (`frameEnd` for `UIKeyboardFrameEndUserInfoKey` under the fixture's
    ///   `.affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")`), with `CodingKeys` where the raw keys differ.
    /// - When the keys share a prefix and a suffix as UIKit's do, and the fixture has no key strategy, a comment
    ///   suggests `.affixed(prefix:suffix:)`, which makes the `CodingKeys` unnecessary.
    /// - Types follow the values: `CGRect`, `CGPoint`, `CGSize` and `NSRange` for an `NSValue` of that kind, `Bool`
    ///   for a boolean `NSNumber`, `Int` or `Double` by the number's type, `Date`, `Data`, `URL`, `UUID`, `String`,
    ///   nested structs for nested dictionaries, arrays, and an Optional where a value is `NSNull`.
    /// - A value whose type cannot be inferred, such as a placeholder, is left as a comment.
    ///
    /// `notificatable-fixtures scaffold FIXTURE` prints it.
    ///
    /// - Parameter typeName: The struct's name. By default the capture's ``typeName``, or else a name made from the
    ///   notification's name, or `Payload`.
    /// - Returns: The source, ending in a newline.
    public func scaffold(typeName: String? = nil) -> String {
        let name =
            typeName ?? self.typeName
            ?? notificationName.map(FixtureScaffold.typeName(forNotification:)) ?? "Payload"
        return FixtureScaffold(capture: self).source(typeName: name)
    }
}

/// Infers a payload type from a captured `userInfo` and prints it as Swift source.
struct FixtureScaffold {
    let capture: FixtureCapture

    /// The inferred type of one value.
    indirect enum Shape: Equatable {
        /// A Swift type such as `Int` or `CGRect`.
        case scalar(String)
        /// `NSNull`: the type is not known, only that the value can be missing.
        case null
        /// An array of elements of one shape; `nil` when it is empty.
        case array(Shape?)
        /// A dictionary with string keys: a nested struct.
        case object([Field])
        /// A dictionary with integer keys.
        case integerKeyed(Shape?)
        /// A value whose type cannot be inferred, and why.
        case unknown(String)
    }

    struct Field: Equatable {
        var key: String
        var shape: Shape
        /// The value is `NSNull` or missing in some of the samples.
        var isOptional: Bool
    }

    // MARK: - Inference

    /// Values nested deeper than this are not scaffolded: a struct nested so deep is not a payload anyone writes, and
    /// the limit keeps inference and printing off the stack's edge.
    static let depthLimit = 24

    /// The shape of a value `depth` containers below the `userInfo`.
    static func shape(of value: FixtureValue, depth: Int = 0) -> Shape {
        if depth > depthLimit, value.children != nil {
            return .unknown("values nested deeper than \(depthLimit) levels")
        }
        switch value {
        case .number(let number):
            switch number {
            case .bool: return .scalar("Bool")
            case .integer: return .scalar("Int")
            case .unsigned: return .scalar("UInt64")
            case .real: return .scalar("Double")
            }
        case .swiftNumber(let number):
            switch number {
            case .int: return .scalar("Int")
            case .int8: return .scalar("Int8")
            case .int16: return .scalar("Int16")
            case .int32: return .scalar("Int32")
            case .int64: return .scalar("Int64")
            case .uint: return .scalar("UInt")
            case .uint8: return .scalar("UInt8")
            case .uint16: return .scalar("UInt16")
            case .uint32: return .scalar("UInt32")
            case .uint64: return .scalar("UInt64")
            case .double: return .scalar("Double")
            case .float: return .scalar("Float")
            case .cgFloat: return .scalar("CGFloat")
            case .bool: return .scalar("Bool")
            }
        case .decimal: return .scalar("Decimal")
        case .string, .nsString: return .scalar("String")
        case .date: return .scalar("Date")
        case .data: return .scalar("Data")
        case .null: return .null
        case .url, .nsURL: return .scalar("URL")
        case .uuid: return .scalar("UUID")
        case .geometry(let geometry):
            switch geometry {
            case .rect: return .scalar("CGRect")
            case .point: return .scalar("CGPoint")
            case .size: return .scalar("CGSize")
            case .range: return .scalar("NSRange")
            }
        case .array(let elements, _):
            return .array(unified(elements.map { shape(of: $0, depth: depth + 1) }))
        case .dictionary(let entries, _):
            return .object(
                entries.map { entry in
                    let shape = shape(of: entry.value, depth: depth + 1)
                    return Field(key: entry.key, shape: shape, isOptional: shape == .null)
                })
        case .integerKeyedDictionary(let entries):
            return .integerKeyed(unified(entries.map { shape(of: $0.value, depth: depth + 1) }))
        case .entries:
            return .unknown("a dictionary whose keys are not all strings or all integers")
        case .placeholder(let typeName, _):
            return .unknown("a \(typeName), which the capture could not write")
        }
    }

    /// One shape for all the samples, or `nil` when there are none.
    static func unified(_ shapes: [Shape]) -> Shape? {
        guard let first = shapes.first else { return nil }
        return shapes.dropFirst().reduce(first) { unify($0, $1) }
    }

    /// One shape for two samples of the same place, such as two elements of an array.
    static func unify(_ left: Shape, _ right: Shape) -> Shape {
        switch (left, right) {
        case _ where left == right: return left
        case (.null, _): return right
        case (_, .null): return left
        case (.scalar(let a), .scalar(let b)) where Set([a, b]) == ["Int", "Double"]: return .scalar("Double")
        case (.array(let a), .array(let b)):
            guard let a else { return .array(b) }
            guard let b else { return .array(a) }
            return .array(unify(a, b))
        case (.object(let a), .object(let b)):
            var fields: [Field] = []
            for field in a {
                if let other = b.first(where: { $0.key == field.key }) {
                    fields.append(
                        Field(
                            key: field.key, shape: unify(field.shape, other.shape),
                            isOptional: field.isOptional || other.isOptional))
                } else {
                    fields.append(Field(key: field.key, shape: field.shape, isOptional: true))
                }
            }
            for field in b where !a.contains(where: { $0.key == field.key }) {
                fields.append(Field(key: field.key, shape: field.shape, isOptional: true))
            }
            return .object(fields.sorted { $0.key < $1.key })
        default:
            return .unknown("values of different types")
        }
    }

    // MARK: - Keys and names

    /// A shared prefix and suffix such as UIKit's `UIKeyboard…UserInfoKey`: each ends or starts at a word, and
    /// every key keeps a word between them. `nil` when the keys have none, or there are fewer than two.
    static func sharedAffixes(of keys: [String]) -> (prefix: String, suffix: String)? {
        guard keys.count >= 2, let first = keys.first else { return nil }
        var prefix = keys.dropFirst().reduce(first) { String($0.commonPrefix(with: $1)) }
        // The prefix must end where a word starts in every key.
        while !prefix.isEmpty
            && !keys.allSatisfy({ $0.count > prefix.count && $0.dropFirst(prefix.count).first?.isUppercase == true })
        {
            prefix.removeLast()
        }
        var suffix = String(
            keys.dropFirst().reduce(String(first.reversed())) { String($0.commonPrefix(with: String($1.reversed()))) }
                .reversed())
        // The suffix must start a word and leave a word between itself and the prefix.
        while !suffix.isEmpty
            && (suffix.first?.isUppercase != true || keys.contains { $0.count <= prefix.count + suffix.count })
        {
            suffix.removeFirst()
        }
        guard prefix.count >= 2, !suffix.isEmpty else { return nil }
        return (prefix, suffix)
    }

    /// The words of a key: split at non-alphanumerics and at case changes, keeping acronyms together.
    static func words(_ key: String) -> [String] {
        var words: [String] = []
        var current = ""
        let characters = Array(key)
        for (index, character) in characters.enumerated() {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            if character.isUppercase, let previous = current.last {
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber
                    || (previous.isUppercase && next.map { $0.isLowercase } == true)
                {
                    words.append(current)
                    current = ""
                }
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// A Swift property name: `NewValue` → `newValue`, `URL` → `url`, `old_device` → `oldDevice`, `1` → `key1`.
    static func propertyName(_ key: String) -> String {
        let parts = words(key)
        guard let head = parts.first else { return "value" }
        let rest = parts.dropFirst().map { word in
            word == word.uppercased() && word.count > 1 ? word : word.prefix(1).uppercased() + word.dropFirst()
        }
        let name = head.lowercased() + rest.joined()
        if let first = name.first, first.isNumber { return "key" + name }
        return keywords.contains(name) ? "`\(name)`" : name
    }

    /// A Swift type name: `keyboard-will-show` → `KeyboardWillShow`.
    static func upperCamel(_ text: String) -> String {
        let name = words(text).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        guard let first = name.first else { return "Value" }
        return first.isNumber ? "Value" + name : name
    }

    /// `UIKeyboardWillShowNotification` → `KeyboardWillShow`: the type name for a notification's payload.
    static func typeName(forNotification name: String) -> String {
        var stem = name
        if stem.hasSuffix("Notification") && stem.count > "Notification".count {
            stem = String(stem.dropLast("Notification".count))
        }
        var parts = words(stem)
        // Drop a framework prefix written as an acronym, such as UI, NS or AV, when something follows it.
        if parts.count > 1, let first = parts.first, first.count <= 3, first == first.uppercased() {
            parts.removeFirst()
        }
        return upperCamel(parts.joined(separator: " "))
    }

    /// The name of a nested struct for a property: `items` → `Item`, `route` → `Route`.
    static func nestedTypeName(for property: String, inArray: Bool) -> String {
        var name = upperCamel(property.replacingOccurrences(of: "`", with: ""))
        if inArray {
            if name.hasSuffix("ies") && name.count > 4 {
                name = String(name.dropLast(3)) + "y"
            } else if name.hasSuffix("s") && !name.hasSuffix("ss") && name.count > 3 {
                name.removeLast()
            } else {
                name += "Element"
            }
        }
        return name
    }

    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows", "static", "struct",
        "subscript", "typealias", "var", "break", "case", "continue", "default", "defer", "do", "else", "fallthrough",
        "for", "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "catch", "false", "is", "nil",
        "self", "super", "throw", "throws", "true", "try", "any", "some",
    ]

    // MARK: - Printing

    func source(typeName: String) -> String {
        var lines: [String] = []
        let origin = capture.notificationName.map { " from \($0)" } ?? ""
        lines.append("// Scaffolded by notificatable-fixtures\(origin): check each type before you rely on it.")
        // For each raw key: the text its property name is made from, and the coding key the decoder needs for it.
        var renamer: (String) -> Renamed? = { Renamed(source: $0, codingKey: $0) }
        // The property name that needs no entry in CodingKeys for a given coding key.
        var implicitName: (String) -> String = { $0 }
        switch capture.decoderConfiguration.keyStrategy {
        case .affixed(let prefix, let suffix):
            lines.append("// Decode it as the fixture does, with")
            lines.append("//     decoder.keyDecodingStrategy = .affixed(prefix: \"\(prefix)\", suffix: \"\(suffix)\")")
            renamer = { key in
                guard key.count > prefix.count + suffix.count, key.hasPrefix(prefix), key.hasSuffix(suffix) else {
                    return nil
                }
                let middle = String(key.dropFirst(prefix.count).dropLast(suffix.count))
                return Renamed(source: middle, codingKey: middle)
            }
            // The strategy turns `frameEnd` into `UIKeyboard` + `FrameEnd` + `UserInfoKey`.
            implicitName = { $0.prefix(1).lowercased() + $0.dropFirst() }
        case .convertFromSnakeCase:
            lines.append("// Decode it as the fixture does, with")
            lines.append("//     decoder.keyDecodingStrategy = .convertFromSnakeCase")
            renamer = { Renamed(source: $0, codingKey: nil) }
        case .useDefaultKeys:
            if case .dictionary(let entries, _) = capture.root,
                let (prefix, suffix) = Self.sharedAffixes(of: entries.map(\.key))
            {
                lines.append(
                    "// The keys share the prefix \"\(prefix)\" and the suffix \"\(suffix)\", as UIKit's do. Decoding with"
                )
                lines.append(
                    "//     decoder.keyDecodingStrategy = .affixed(prefix: \"\(prefix)\", suffix: \"\(suffix)\")")
                lines.append("// makes the CodingKeys below unnecessary: delete them when you do.")
                renamer = { key in
                    Renamed(source: String(key.dropFirst(prefix.count).dropLast(suffix.count)), codingKey: key)
                }
            }
        }
        lines.append("import Foundation")
        lines.append("")
        var printer = Printer(lines: lines)
        switch Self.shape(of: capture.root) {
        case .object(let fields):
            printer.printStruct(
                typeName, fields: fields, indent: "", rename: renamer, implicitName: implicitName)
        case .integerKeyed(let element):
            printer.lines.append(
                "typealias \(typeName) = [Int: \(printer.typeText(element, name: "Value", indent: ""))]")
        default:
            printer.lines.append(
                "// The userInfo's keys are not all strings or all integers: write init(from:) by hand.")
            printer.lines.append("struct \(typeName): Codable, Equatable {}")
        }
        printer.lines.append(contentsOf: printer.pending)
        return printer.lines.joined(separator: "\n") + "\n"
    }

    /// What a raw key becomes: the text its property's name is made from, and the coding key that reaches it (`nil`
    /// when the key strategy finds it by the property's name).
    struct Renamed {
        var source: String
        var codingKey: String?
    }

    /// Prints structs; nested structs are printed inside their parent.
    struct Printer {
        var lines: [String]
        var pending: [String] = []

        mutating func printStruct(
            _ name: String, fields: [Field], indent: String,
            rename: (String) -> Renamed? = { Renamed(source: $0, codingKey: $0) },
            implicitName: (String) -> String = { $0 }
        ) {
            lines.append("\(indent)struct \(name): Codable, Equatable {")
            var properties: [(name: String, key: String?)] = []
            var used: Set<String> = []
            var nested: [(String, [Field])] = []
            for field in fields {
                guard let renamed = rename(field.key) else {
                    lines.append(
                        "\(indent)    // \"\(field.key)\" lacks the prefix and suffix of the key strategy: "
                            + "read it with another type.")
                    continue
                }
                var property = FixtureScaffold.propertyName(renamed.source)
                let bare = property.replacingOccurrences(of: "`", with: "")
                var candidate = bare
                var number = 2
                while used.contains(candidate) {
                    candidate = "\(bare)\(number)"
                    number += 1
                }
                if candidate != bare { property = candidate }
                used.insert(candidate)
                var shape = field.shape
                var isOptional = field.isOptional
                if shape == .null {
                    shape = .scalar("String")
                    isOptional = true
                    lines.append("\(indent)    // NSNull in the capture: the type is a guess.")
                }
                if case .unknown(let reason) = shape {
                    lines.append("\(indent)    // var \(property): <unknown>  // \"\(field.key)\" holds \(reason).")
                    continue
                }
                let typeText = self.typeText(shape, name: property, indent: indent, nested: &nested)
                lines.append("\(indent)    var \(property): \(typeText)\(isOptional ? "?" : "")")
                properties.append((property.replacingOccurrences(of: "`", with: ""), renamed.codingKey))
            }
            let needsCodingKeys = properties.contains { property in
                property.key.map { implicitName($0) != property.name } ?? false
            }
            if needsCodingKeys {
                lines.append("")
                lines.append("\(indent)    enum CodingKeys: String, CodingKey {")
                for property in properties {
                    let caseName =
                        FixtureScaffold.keywords.contains(property.name) ? "`\(property.name)`" : property.name
                    if let key = property.key, implicitName(key) != property.name {
                        lines.append("\(indent)        case \(caseName) = \"\(key)\"")
                    } else {
                        lines.append("\(indent)        case \(caseName)")
                    }
                }
                lines.append("\(indent)    }")
            }
            for (nestedName, nestedFields) in nested {
                lines.append("")
                printStruct(nestedName, fields: nestedFields, indent: indent + "    ")
            }
            lines.append("\(indent)}")
        }

        func typeText(_ shape: Shape?, name: String, indent: String) -> String {
            var nested: [(String, [Field])] = []
            return typeText(shape, name: name, indent: indent, nested: &nested)
        }

        func typeText(_ shape: Shape?, name: String, indent: String, nested: inout [(String, [Field])]) -> String {
            switch shape {
            case .scalar(let type)?: return type
            case .null?, nil: return "String?"
            case .array(let element)?:
                if case .object(let fields)? = element {
                    let nestedName = FixtureScaffold.nestedTypeName(for: name, inArray: true)
                    nested.append((nestedName, fields))
                    return "[\(nestedName)]"
                }
                return "[\(typeText(element, name: name, indent: indent, nested: &nested))]"
            case .object(let fields)?:
                let nestedName = FixtureScaffold.nestedTypeName(for: name, inArray: false)
                nested.append((nestedName, fields))
                return nestedName
            case .integerKeyed(let element)?:
                return "[Int: \(typeText(element, name: name, indent: indent, nested: &nested))]"
            case .unknown?:
                return "String"
            }
        }
    }
}
