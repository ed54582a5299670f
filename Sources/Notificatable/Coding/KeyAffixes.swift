import Foundation

/// The `.affixed(prefix:suffix:)` key mapping shared by ``UserInfoDecoder`` and ``UserInfoEncoder``, with a cache so
/// that each Swift key is turned into its dictionary key once per coder configuration, not once per lookup.
final class KeyAffixes: @unchecked Sendable {
    let prefix: String
    let suffix: String
    private let lock = NSLock()
    private var cache: [String: String] = [:]

    init(prefix: String, suffix: String) {
        self.prefix = prefix
        self.suffix = suffix
    }

    /// The current cache. A container reads it once, then looks keys up without taking the lock.
    var snapshot: [String: String] { lock.withLock { cache } }

    /// The dictionary key for a Swift key: the prefix, the key with its first letter uppercased, then the suffix.
    func dictionaryKey(for key: String, snapshot: [String: String]) -> String {
        if let hit = snapshot[key] { return hit }
        let mapped = prefix + key.prefix(1).uppercased() + key.dropFirst() + suffix
        lock.withLock { cache[key] = mapped }
        return mapped
    }

    /// The Swift key for a dictionary key, or `nil` when the key does not carry the prefix and suffix.
    ///
    /// This is the inverse used by `allKeys`: it lowercases the first letter of what lies between the affixes, so a
    /// property whose name starts with an acronym (`URLString`) is not recovered; look such keys up directly.
    func swiftKey(for dictionaryKey: String) -> String? {
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
        let joined = String(head) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
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
