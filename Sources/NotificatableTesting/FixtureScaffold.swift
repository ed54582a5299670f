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
    ///   nested structs for nested dictionaries, arrays, and an Optional where a value is `NSNull` in some samples.
    ///   Each is written with its module (`Swift.Int`, `Foundation.Date`), so no nested struct and no type of yours
    ///   can stand in for it.
    /// - Nested structs are named after their property (`items` → `Item`), made unique in their scope, and never
    ///   named like a type the source uses, `CodingKeys`, `Type`, `Self`, `Protocol`, a property or an enclosing type.
    /// - A value whose type cannot be stated, such as a placeholder, a value that is `NSNull` in every sample, an
    ///   empty array or an array of values of different types, is left as a comment that says why.
    /// - A capture without a payload (its `userInfo` is empty) gets no struct: the source declares a `Never` handle
    ///   with `Notificatable.withoutPayload(_:)` instead.
    ///
    /// `notificatable-fixtures scaffold FIXTURE` prints it.
    ///
    /// - Parameter typeName: The struct's name. By default the capture's ``typeName``, or else a name made from the
    ///   notification's name, or `Payload`. A name that is not a Swift identifier, or that would hide a module or
    ///   keyword the source needs (`Swift`, `Foundation`, `Type`…), is made into one that is.
    /// - Returns: The source, ending in a newline.
    public func scaffold(typeName: String? = nil) -> String {
        let name =
            typeName ?? self.typeName
            ?? notificationName.map(FixtureScaffold.typeName(forNotification:)) ?? "Payload"
        return FixtureScaffold(capture: self).source(typeName: FixtureScaffold.topLevelName(name))
    }
}

/// Infers a payload type from a captured `userInfo` and prints it as Swift source.
struct FixtureScaffold {
    let capture: FixtureCapture

    /// The inferred type of one value.
    indirect enum Shape: Equatable {
        /// A Swift type, written with its module, such as `Swift.Int` or `Foundation.CGRect`.
        case scalar(String)
        /// `NSNull`: the type is not known, only that the value can be missing.
        case null
        /// A value of the wrapped shape in some samples and `NSNull` in others, such as an array's elements.
        case optional(Shape)
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
            case .bool: return .scalar("Swift.Bool")
            case .integer: return .scalar("Swift.Int")
            case .unsigned: return .scalar("Swift.UInt64")
            case .real: return .scalar("Swift.Double")
            }
        case .swiftNumber(let number):
            switch number {
            case .int: return .scalar("Swift.Int")
            case .int8: return .scalar("Swift.Int8")
            case .int16: return .scalar("Swift.Int16")
            case .int32: return .scalar("Swift.Int32")
            case .int64: return .scalar("Swift.Int64")
            case .uint: return .scalar("Swift.UInt")
            case .uint8: return .scalar("Swift.UInt8")
            case .uint16: return .scalar("Swift.UInt16")
            case .uint32: return .scalar("Swift.UInt32")
            case .uint64: return .scalar("Swift.UInt64")
            case .double: return .scalar("Swift.Double")
            case .float: return .scalar("Swift.Float")
            case .cgFloat: return .scalar("Foundation.CGFloat")
            case .bool: return .scalar("Swift.Bool")
            }
        case .decimal: return .scalar("Foundation.Decimal")
        case .string, .nsString: return .scalar("Swift.String")
        case .date: return .scalar("Foundation.Date")
        case .data: return .scalar("Foundation.Data")
        case .null: return .null
        case .url, .nsURL: return .scalar("Foundation.URL")
        case .uuid: return .scalar("Foundation.UUID")
        case .geometry(let geometry):
            switch geometry {
            case .rect: return .scalar("Foundation.CGRect")
            case .point: return .scalar("Foundation.CGPoint")
            case .size: return .scalar("Foundation.CGSize")
            case .range: return .scalar("Foundation.NSRange")
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
        case (.null, .optional), (.optional, .null): return left == .null ? right : left
        case (.null, _): return .optional(right)
        case (_, .null): return .optional(left)
        case (.optional(let a), .optional(let b)): return optional(unify(a, b))
        case (.optional(let a), _): return optional(unify(a, right))
        case (_, .optional(let b)): return optional(unify(left, b))
        case (.scalar(let a), .scalar(let b)) where Set([a, b]) == ["Swift.Int", "Swift.Double"]:
            return .scalar("Swift.Double")
        case (.array(let a), .array(let b)):
            guard let a else { return .array(b) }
            guard let b else { return .array(a) }
            return .array(unify(a, b))
        case (.integerKeyed(let a), .integerKeyed(let b)):
            guard let a else { return .integerKeyed(b) }
            guard let b else { return .integerKeyed(a) }
            return .integerKeyed(unify(a, b))
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
        case (.unknown, _): return left
        case (_, .unknown): return right
        default:
            return .unknown("values of different types")
        }
    }

    /// `shape` in some samples and `NSNull` in others.
    private static func optional(_ shape: Shape) -> Shape {
        switch shape {
        case .null, .optional, .unknown: return shape
        default: return .optional(shape)
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

    /// The words of a key: split at anything that cannot be part of a Swift identifier and at case changes, keeping
    /// acronyms together.
    static func words(_ key: String) -> [String] {
        var words: [String] = []
        var current = ""
        let characters = Array(key)
        for (index, character) in characters.enumerated() {
            guard (character.isLetter || character.isNumber) && isIdentifierCharacter(character) else {
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

    /// A Swift property name, without backticks: `NewValue` → `newValue`, `URL` → `url`, `old_device` → `oldDevice`,
    /// `1` → `key1`, and `value` for a key with no letter or digit.
    static func propertyName(_ key: String) -> String {
        let parts = words(key)
        guard let head = parts.first else { return "value" }
        let rest = parts.dropFirst().map { word in
            word == word.uppercased() && word.count > 1 ? word : word.prefix(1).uppercased() + word.dropFirst()
        }
        let name = head.lowercased() + rest.joined()
        guard let first = name.first, isIdentifierHead(first) else { return "key" + name }
        return name
    }

    /// A name as a declaration writes it: in backticks when it is a keyword.
    static func declared(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// A Swift type name: `keyboard-will-show` → `KeyboardWillShow`.
    static func upperCamel(_ text: String) -> String {
        let name = words(text).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        guard let first = name.first else { return "Value" }
        return isIdentifierHead(first) ? name : "Value" + name
    }

    /// The name of the top-level type: `name` itself when it is an identifier that hides nothing the source needs,
    /// otherwise one made from it (`My.Type` → `MyType`, `Swift` → `SwiftPayload`).
    static func topLevelName(_ name: String) -> String {
        // A type as `String(reflecting:)` writes it, `MyApp.KeyboardInfo`, is named without its module.
        var result = name.split(separator: ".").last.map(String.init) ?? name
        if !isIdentifier(result) || keywords.contains(result) {
            result = upperCamel(name)
        }
        return reservedTypeNames.contains(result) || keywords.contains(result) ? result + "Payload" : result
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

    /// The name of a nested struct for a property, before it is made unique: `items` → `Item`, `route` → `Route`.
    static func nestedTypeName(for property: String, inArray: Bool) -> String {
        var name = upperCamel(property)
        if inArray {
            if name.hasSuffix("ies") && name.count > 4 {
                name = String(name.dropLast(3)) + "y"
            } else if name.hasSuffix("s") && !name.hasSuffix("ss") && name.count > 3 {
                name.removeLast()
            } else {
                name += "Element"
            }
        }
        return reservedTypeNames.contains(name) || keywords.contains(name) ? name + "Value" : name
    }

    /// Words that a declaration writes in backticks: Swift's keywords, and the contextual ones too, which backticks
    /// always allow.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "precedencegroup", "private",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case",
        "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat",
        "return", "switch", "throw", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
        "super", "throws", "true", "try", "_", "associativity", "async", "convenience", "didSet", "dynamic", "final",
        "get", "indirect", "infix", "lazy", "left", "mutating", "none", "nonmutating", "optional", "override",
        "package", "postfix", "precedence", "prefix", "Protocol", "required", "right", "set", "some", "any", "Type",
        "unowned", "weak", "willSet", "actor", "macro", "isolated", "each", "copy", "discard", "consume", "then",
    ]

    /// Names no nested struct takes: a module, a keyword-like type, or a type that the source or a payload uses.
    static let reservedTypeNames: Set<String> = [
        "Swift", "Foundation", "Notificatable", "Type", "Self", "Protocol", "Any", "AnyObject", "CodingKeys",
        "CodingKey", "Codable", "Decodable", "Encodable", "Equatable", "Hashable", "Sendable", "Error", "Never",
        "Optional", "Array", "Dictionary", "Set", "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16",
        "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "CGFloat", "Decimal",
        "Date", "Data", "URL", "UUID", "CGRect", "CGPoint", "CGSize", "NSRange",
    ]
}
