import Foundation

/// A coder's mapping from Swift keys to dictionary keys, with a cache so that each Swift key is turned into its
/// dictionary key once per coder configuration, not once per lookup. It serves `.affixed(prefix:suffix:)` in both
/// coders and the encoder's snake-case keys.
final class KeyAffixes: @unchecked Sendable {
    /// How a Swift key becomes a dictionary key.
    enum Mapping {
        case affixed(prefix: String, suffix: String)
        case snakeCase
    }

    let mapping: Mapping
    private let lock = NSLock()
    private var tables: [ObjectIdentifier: KeyTable] = [:]

    init(_ mapping: Mapping) {
        self.mapping = mapping
    }

    convenience init(prefix: String, suffix: String) {
        self.init(.affixed(prefix: prefix, suffix: suffix))
    }

    static func map(_ key: String, with mapping: Mapping) -> String {
        switch mapping {
        case .affixed(let prefix, let suffix): prefix + key.prefix(1).uppercased() + key.dropFirst() + suffix
        case .snakeCase: SnakeCase.toSnakeCase(key)
        }
    }

    /// The mapped keys of one `CodingKey` type. Synthesized coding keys are few and their names short, so a linear
    /// scan comparing small strings beats hashing them. A container reads the table once, then looks keys up in that
    /// snapshot without taking the lock.
    final class KeyTable: @unchecked Sendable {
        struct Snapshot {
            var swiftKeys: [String] = []
            var dictionaryKeys: [String] = []

            func index(of key: String) -> Int? {
                var index = 0
                while index < swiftKeys.count {
                    if swiftKeys[index] == key { return index }
                    index += 1
                }
                return nil
            }
        }

        private let lock = NSLock()
        private var current = Snapshot()
        let mapping: Mapping

        init(mapping: Mapping) {
            self.mapping = mapping
        }

        var snapshot: Snapshot { lock.withLock { current } }

        /// The dictionary key for `key`, from `snapshot` when it is there, otherwise built once and cached.
        func dictionaryKey(for key: String, in snapshot: Snapshot) -> String {
            if let index = snapshot.index(of: key) { return snapshot.dictionaryKeys[index] }
            let mapped = KeyAffixes.map(key, with: mapping)
            lock.withLock {
                if current.index(of: key) == nil {
                    current.swiftKeys.append(key)
                    current.dictionaryKeys.append(mapped)
                }
            }
            return mapped
        }
    }

    /// The table asked for last, which a coder decoding one type over and over asks for again, without hashing.
    private var last: (id: ObjectIdentifier, table: KeyTable)?

    /// The table for one `CodingKey` type, created on first use.
    func table(for keyType: any CodingKey.Type) -> KeyTable {
        let id = ObjectIdentifier(keyType)
        lock.lock()
        defer { lock.unlock() }
        if let last, last.id == id { return last.table }
        let table = tables[id] ?? KeyTable(mapping: mapping)
        tables[id] = table
        last = (id, table)
        return table
    }

    /// The Swift key for a dictionary key, or `nil` when the key does not carry the prefix and suffix.
    ///
    /// This is the inverse used by `allKeys`: it lowercases the first letter of what lies between the affixes, so a
    /// property whose name starts with an acronym (`URLString`) is not recovered; look such keys up directly.
    func swiftKey(for dictionaryKey: String) -> String? {
        guard case .affixed(let prefix, let suffix) = mapping else { return dictionaryKey }
        guard dictionaryKey.count > prefix.count + suffix.count,
            dictionaryKey.hasPrefix(prefix), dictionaryKey.hasSuffix(suffix)
        else { return nil }
        let middle = dictionaryKey.dropFirst(prefix.count).dropLast(suffix.count)
        return middle.prefix(1).lowercased() + middle.dropFirst()
    }
}

/// Snake-case conversions with the same rules as `JSONDecoder` and `JSONEncoder`, checked against them key for key
/// by the tests.
package enum SnakeCase {
    /// `base_url` → `baseUrl`; leading and trailing underscores are kept.
    package static func toCamelCase(_ key: String) -> String {
        guard !key.isEmpty, key.contains("_") else { return key }
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first && key[last] == "_" { last = key.index(before: last) }
        let core = key[first...last]
        let words = core.split(separator: "_", omittingEmptySubsequences: true)
        guard let head = words.first else { return key }
        // Like JSONDecoder, the first word is lowercased when there is more than one (`ALL_CAPS` → `allCaps`), and
        // each later word is capitalized by Foundation's rules (`ǆ` becomes the titlecase `ǅ`).
        let joined =
            (words.count > 1 ? head.lowercased() : String(head))
            + words.dropFirst().map { String($0).capitalized }.joined()
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }

    /// `myURLProperty` → `my_url_property`, `version4Thing` → `version4_thing`.
    ///
    /// A word ends before an uppercase letter (Unicode categories Lu and Lt), and a run of uppercase letters is a
    /// word of its own up to the last capital before a lowercase letter (Ll): `URLRequest` is `url` and `request`.
    /// Letters are judged by the first scalar of each character, so the combining marks on a letter don't hide it
    /// (`m̀yURL̥ͅRequest` breaks like `myURLRequest`), and everything is lowercased at the end.
    ///
    /// One deliberate difference from `JSONEncoder`: a key that starts with a run of capitals keeps it as one word
    /// (`URLString` → `url_string`, where `JSONEncoder` writes `u_rl_string`), as this encoder always has.
    static func toSnakeCase(_ key: String) -> String {
        let characters = Array(key)
        guard characters.count > 1 else { return key.lowercased() }
        func firstIndex(from start: Int, where matches: (Character) -> Bool) -> Int? {
            var index = start
            while index < characters.count {
                if matches(characters[index]) { return index }
                index += 1
            }
            return nil
        }
        var words: [Range<Int>] = []
        var wordStart = 0
        var searchFrom = isUppercaseLetter(characters[0]) ? 0 : 1
        while let upper = firstIndex(from: searchFrom, where: isUppercaseLetter) {
            if upper > wordStart { words.append(wordStart..<upper) }
            guard let lower = firstIndex(from: upper + 1, where: isLowercaseLetter) else {
                // Only capitals (and other characters) are left: they are the last word.
                wordStart = upper
                break
            }
            if lower == upper + 1 {
                // A capital followed by a lowercase letter starts a word.
                wordStart = upper
            } else {
                // A run of capitals is a word, except its last capital, which starts the next word.
                words.append(upper..<(lower - 1))
                wordStart = lower - 1
            }
            searchFrom = lower + 1
        }
        words.append(wordStart..<characters.count)
        return words.map { String(characters[$0]).lowercased() }.joined(separator: "_")
    }

    private static func isUppercaseLetter(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        let category = scalar.properties.generalCategory
        return category == .uppercaseLetter || category == .titlecaseLetter
    }

    private static func isLowercaseLetter(_ character: Character) -> Bool {
        character.unicodeScalars.first?.properties.generalCategory == .lowercaseLetter
    }
}
