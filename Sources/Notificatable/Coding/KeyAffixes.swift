import Foundation

/// A coder's mapping from Swift keys to dictionary keys: `.affixed(prefix:suffix:)` in both coders and the
/// encoder's snake-case keys. The caches of mapped keys are the decoder's ``DecodingPlan`` and the encoder's
/// ``EncoderKeyNames``, both bounded by ``maximumCachedKeys``.
final class KeyAffixes: @unchecked Sendable {
    /// How a Swift key becomes a dictionary key.
    enum Mapping {
        case affixed(prefix: String, suffix: String)
        case snakeCase
    }

    let mapping: Mapping

    /// The most mapped keys a cache keeps for one type: a type with more (a custom `encode(to:)` or `init(from:)`
    /// whose keys are data) has its keys mapped on each use, so that no cache grows with the data it sees.
    static let maximumCachedKeys = 256

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
