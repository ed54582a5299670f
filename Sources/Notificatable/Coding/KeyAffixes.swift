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

/// Snake-case conversions with the same rules as `JSONDecoder` and `JSONEncoder`.
enum SnakeCase {
    /// `base_url` → `baseUrl`; leading and trailing underscores are kept.
    static func toCamelCase(_ key: String) -> String {
        guard !key.isEmpty, key.contains("_") else { return key }
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first && key[last] == "_" { last = key.index(before: last) }
        let core = key[first...last]
        let words = core.split(separator: "_", omittingEmptySubsequences: true)
        guard let head = words.first else { return key }
        // Like JSONDecoder, the first word is lowercased when there is more than one: `ALL_CAPS` → `allCaps`.
        let joined =
            (words.count > 1 ? head.lowercased() : String(head))
            + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }

    /// `baseURL` → `base_url`, `myValue` → `my_value`: an underscore goes before an uppercase letter that follows a
    /// lowercase letter or digit, or that starts a new word after an acronym.
    static func toSnakeCase(_ key: String) -> String {
        let characters = Array(key)
        var result = ""
        result.reserveCapacity(characters.count + 4)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLowercase = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLowercase) {
                    result.append("_")
                }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }
}
