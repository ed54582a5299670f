import Foundation
import Notificatable
import Testing

// Key strategies against the reference coders (issue 16 items 4 and 5, issue 14 item 4): the snake-case conversions
// match JSONEncoder's and JSONDecoder's key for key, keys that convert to the same key are resolved the same way on
// every run, and the keys of a `[String: V]` are data that no strategy renames.

/// Keys for the conversion tests, including words with combining marks, diacritics, titlecase digraphs, digits,
/// emoji, acronyms and underscores at either end.
private let camelCaseKeys = [
    "", "a", "aA", "single", "simpleOneTwo", "myURL", "myURLProperty", "thisIsAnXMLProperty", "singleCharacterAtEndX",
    "version4Thing", "dataPoint22", "dataPoint22Word", "partCAPS", "partCAPSLowerAGAIN", "already_snake_case",
    "_oneTwoThree", "oneTwoThree_", "__oneTwoThree__", "_test", "test__", "ABc", "Abc", "aBC", "A", "façadeÉtat",
    "asdfĆqer", "ǅungla", "helloǅungla", "🐧🐟", "🐧Fish", "a_B", "x9Y", "über", "ÜberCool",
    // Combining marks on the letters, and U+0345, which uppercases to a capital iota, on a capital before a capital.
    "m\u{349}\u{31F}y\u{326}G\u{34D}r\u{324}\u{345}ea\u{332}tU\u{347}R\u{359}L\u{325}\u{345}R\u{329}eq\u{348}u\u{31E}est",
    "fetchURL\u{345}Request", "e\u{301}tatCivil", "caf\u{301}eAu\u{301}Lait",
]

private let snakeCaseKeys = [
    "", "a", "ALLCAPS", "ALL_CAPS", "single", "snake_case", "one_two_three", "one_2_three", "one2_three", "snake_Ćase",
    "snake_ćase", "alreadyCamelCase", "__this_and_that", "this__and__that", "this_and_that__", "this_aNd_that", "_",
    "__", "___", "_test_", "🐧_🐟", "a_ǆungla", "a_ǅungla", "one_2three", "x_éclair", "e\u{301}_tat", "mixed_CASE_words",
    "m\u{349}y\u{326}_g\u{34D}r\u{324}\u{345}eat_u\u{347}rl\u{325}\u{345}",
]

/// Writes one key, named at run time, so that the encoder's key strategy converts it.
private struct OneKey: Encodable {
    var name: String
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        try container.encode(true, forKey: AnyKey(stringValue: name))
    }
}

/// The names of the keys a keyed container sees.
private struct KeyNames: Decodable {
    var names: [String]
    init(from decoder: any Decoder) throws {
        names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
    }
}

private struct Inner: Codable, Equatable {
    var countValue: Int
}

@Suite("Coder: key strategies against the reference coders")
struct CoderKeyStrategyTests {
    // MARK: - Snake case, key for key

    @Test(arguments: camelCaseKeys)
    func convertToSnakeCaseMatchesJSONEncoder(key: String) throws {
        let jsonEncoder = JSONEncoder()
        jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
        let json = try JSONSerialization.jsonObject(with: try jsonEncoder.encode(OneKey(name: key)))
        let expected = try #require(json as? [String: Any]).keys.sorted()

        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let written = try encoder.encode(OneKey(name: key)).keys.compactMap { $0.base as? String }
        #expect(written == expected)
    }

    @Test(arguments: snakeCaseKeys)
    func convertFromSnakeCaseMatchesJSONDecoder(key: String) throws {
        let jsonDecoder = JSONDecoder()
        jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        let expected = try jsonDecoder.decode(KeyNames.self, from: try JSONSerialization.data(withJSONObject: [key: 1]))
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(KeyNames.self, from: [key: 1]).names == expected.names)
    }

    // MARK: - Keys that convert to the same key

    /// `foo_bar`, `FOO_BAR`, `Foo_Bar`, … and `fooBar` all read the property `fooBar`: the exact key wins, whatever
    /// the dictionary's hash order (which changes from run to run).
    @Test func snakeCaseCollisionsPreferTheExactKey() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var userInfo: [AnyHashable: Any] = ["fooBar": "exact"]
        for variant in caseVariants("foo") { userInfo[variant + "_bar"] = variant }
        for variant in caseVariants("bar") { userInfo["foo_" + variant] = variant }
        for _ in 0..<20 {
            let keys = try inspect(userInfo, using: decoder) { decoder -> [String] in
                try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            }
            #expect(keys == ["fooBar"])
            #expect(try decoder.decode(FooBar.self, from: userInfo).fooBar == "exact")
        }
    }

    /// Without an exact key, the dictionary key that sorts first wins (Swift's `<` on `String`).
    @Test func snakeCaseCollisionsWithoutAnExactKeyPickTheFirstInSortedOrder() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var userInfo: [AnyHashable: Any] = [:]
        for variant in caseVariants("foo") { userInfo[variant + "_bar"] = variant + "_bar" }
        userInfo["foo__bar"] = "foo__bar"
        let expected = try #require(userInfo.keys.compactMap { $0.base as? String }.min())
        #expect(expected == "FOO_bar")
        #expect(try decoder.decode(FooBar.self, from: userInfo).fooBar == expected)
    }

    // MARK: - Dictionary keys are data

    @Test func snakeCaseLeavesDictionaryKeysAlone() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let userInfo = try encoder.encode(
            Tagged(tagValues: ["leaveMeAlone": 1], innerByName: ["someName": .init(countValue: 2)]))
        #expect(userInfo.keys.compactMap { $0.base as? String }.sorted() == ["inner_by_name", "tag_values"])
        #expect(userInfo["tag_values"] as? [String: Int] == ["leaveMeAlone": 1])
        // The dictionary's key stays; the properties of its values are still converted.
        let inner = try #require(userInfo["inner_by_name"] as? [String: Any])
        #expect(inner.keys.sorted() == ["someName"])
        #expect((inner["someName"] as? [String: Any])?.keys.sorted() == ["count_value"])
        #expect(try encoder.encode(["leaveMeAlone": 1] as [String: Int]).keys.first?.base as? String == "leaveMeAlone")
        #expect(try encoder.encodeValue(["leaveMeAlone": 1] as [String: Int]) as? [String: Int] == ["leaveMeAlone": 1])

        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode([String: String].self, from: ["leave_me_alone": "x"]) == ["leave_me_alone": "x"])
        let read = try decoder.decode(Tagged.self, from: userInfo)
        #expect(read == Tagged(tagValues: ["leaveMeAlone": 1], innerByName: ["someName": .init(countValue: 2)]))
        let nested = try decoder.decode(
            [String: [String: Inner]].self, from: ["top_level": ["sub_level": ["count_value": 3]]]
        )
        #expect(nested == ["top_level": ["sub_level": Inner(countValue: 3)]])
    }

    @Test func errorPathsNameTheDictionaryKeysAsTheyAre() {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        expectDecodingError(.typeMismatch, at: ["leave_me_alone"], type: Int.self) {
            try decoder.decode([String: Int].self, from: ["leave_me_alone": "test"])
        }
        expectDecodingError(.typeMismatch, at: ["top_level", "sub_level", "countValue"], type: Int.self) {
            try decoder.decode(
                [String: [String: Inner]].self, from: ["top_level": ["sub_level": ["count_value": "x"]]]
            )
        }
    }

    @Test func affixedAndCustomLeaveDictionaryKeysAlone() throws {
        let value = Tagged(tagValues: ["NaN": 1, "": 2, "already": 3], innerByName: ["x": .init(countValue: 4)])

        let affixedEncoder = UserInfoEncoder()
        affixedEncoder.keyEncodingStrategy = .affixed(prefix: "My", suffix: "Key")
        let affixedDecoder = UserInfoDecoder()
        affixedDecoder.keyDecodingStrategy = .affixed(prefix: "My", suffix: "Key")
        let affixed = try affixedEncoder.encode(value)
        #expect(affixed["MyTagValuesKey"] as? [String: Int] == ["NaN": 1, "": 2, "already": 3])
        #expect(((affixed["MyInnerByNameKey"] as? [String: Any])?["x"] as? [String: Int]) == ["MyCountValueKey": 4])
        #expect(try affixedDecoder.decode(Tagged.self, from: affixed) == value)
        #expect(try affixedDecoder.decode([String: Int].self, from: ["NaN": 1]) == ["NaN": 1])

        let customEncoder = UserInfoEncoder()
        customEncoder.keyEncodingStrategy = .custom { path in
            AnyKey(stringValue: "x-" + path[path.count - 1].stringValue)
        }
        let customDecoder = UserInfoDecoder()
        customDecoder.keyDecodingStrategy = .custom { path in
            AnyKey(stringValue: String(path[path.count - 1].stringValue.dropFirst(2)))
        }
        let custom = try customEncoder.encode(value)
        #expect(custom["x-tagValues"] as? [String: Int] == ["NaN": 1, "": 2, "already": 3])
        #expect(try customDecoder.decode(Tagged.self, from: custom) == value)
    }
}

private struct FooBar: Decodable {
    var fooBar: String
}

private struct Tagged: Codable, Equatable {
    var tagValues: [String: Int]
    var innerByName: [String: Inner]
}
