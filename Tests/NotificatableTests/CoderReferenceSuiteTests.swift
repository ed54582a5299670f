import Foundation
import Notificatable
import Testing

// What the reference coders' own test suites (JSONEncoder/JSONDecoder, PropertyListEncoder) expect, and we did not
// do: each test here failed before its fix (issue 16).

// MARK: - Two containers for one key merge

/// Writes one sub-object in two parts, as two extensions of a real type each write their own part.
private struct WrittenInParts: Encodable {
    enum Keys: String, CodingKey { case sub, list, parent }
    enum SubKeys: String, CodingKey { case a, b, c, d }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var first = container.nestedContainer(keyedBy: SubKeys.self, forKey: .sub)
        try first.encode(1, forKey: .a)
        var second = container.nestedContainer(keyedBy: SubKeys.self, forKey: .sub)
        try second.encode(2, forKey: .b)
        // A super encoder for the same key writes into the same dictionary.
        var third = container.superEncoder(forKey: .sub).container(keyedBy: SubKeys.self)
        try third.encode(3, forKey: .c)
        var fourth = container.nestedContainer(keyedBy: SubKeys.self, forKey: .sub)
        try fourth.encode(4, forKey: .d)

        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode(1)
        var more = container.nestedUnkeyedContainer(forKey: .list)
        try more.encode(2)

        // Two super encoders for `super` (the key of `superEncoder()`).
        var parentA = container.superEncoder().container(keyedBy: SubKeys.self)
        try parentA.encode("x", forKey: .a)
        var parentB = container.superEncoder().container(keyedBy: SubKeys.self)
        try parentB.encode("y", forKey: .b)
    }
}

private struct ReadInParts: Decodable, Equatable {
    var a, b, c, d: Int
    var list: [Int]
    var superA, superB: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: WrittenInParts.Keys.self)
        let sub = try container.nestedContainer(keyedBy: WrittenInParts.SubKeys.self, forKey: .sub)
        a = try sub.decode(Int.self, forKey: .a)
        b = try sub.decode(Int.self, forKey: .b)
        c = try sub.decode(Int.self, forKey: .c)
        d = try sub.decode(Int.self, forKey: .d)
        list = try container.decode([Int].self, forKey: .list)
        let parent = try container.superDecoder().container(keyedBy: WrittenInParts.SubKeys.self)
        superA = try parent.decode(String.self, forKey: .a)
        superB = try parent.decode(String.self, forKey: .b)
    }
}

@Suite("Coder: what the reference coders' suites expect")
struct CoderReferenceSuiteTests {
    @Test func twoNestedContainersForOneKeyMerge() throws {
        let userInfo = try UserInfoEncoder().encode(WrittenInParts())
        let sub = try #require(userInfo["sub"] as? [String: Any])
        #expect(sub.keys.sorted() == ["a", "b", "c", "d"])
        #expect(userInfo["list"] as? [Int] == [1, 2])
        let parent = try #require(userInfo["super"] as? [String: Any])
        #expect(parent.keys.sorted() == ["a", "b"])

        let read = try UserInfoDecoder().decode(ReadInParts.self, from: userInfo)
        #expect(read.a == 1 && read.b == 2 && read.c == 3 && read.d == 4)
        #expect(read.list == [1, 2])
        #expect(read.superA == "x" && read.superB == "y")
    }

    @Test func twoNestedContainersMergeUnderEveryKeyStrategy() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .affixed(prefix: "My", suffix: "Key")
        let userInfo = try encoder.encode(WrittenInParts())
        let sub = try #require(userInfo["MySubKey"] as? [String: Any])
        #expect(sub.keys.sorted() == ["MyAKey", "MyBKey", "MyCKey", "MyDKey"])
    }

    // MARK: - The dynamic metatype passed to decode

    @Test func decodeUsesTheDynamicMetatypeAtTheTopLevel() throws {
        let userInfo: [AnyHashable: Any] = ["name": "Ada", "company": "Analytical Engines"]
        let type: Person.Type = Employee.self
        let decoded = try UserInfoDecoder().decode(type, from: userInfo)
        let employee = try #require(decoded as? Employee)
        #expect(employee.name == "Ada" && employee.company == "Analytical Engines")

        let fromValue = try UserInfoDecoder().decode(type, fromValue: userInfo)
        #expect(fromValue is Employee)
    }

    /// Unkeyed and single-value containers receive the metatype as passed. (`KeyedDecodingContainer`, the standard
    /// library's wrapper, hands its box `T.self`, so a keyed read decodes the static type with every decoder.)
    @Test func decodeUsesTheDynamicMetatypeInUnkeyedAndSingleValueContainers() throws {
        let employee: [String: Any] = ["name": "Ada", "company": "AE"]
        let decoded = try inspect([employee, employee]) { decoder -> [Bool] in
            let type: Person.Type = Employee.self
            var list = try decoder.unkeyedContainer()
            let first = try list.decode(type)
            let second = try list.decode(Reader.self)
            return [first is Employee, second.person is Employee]
        }
        #expect(decoded == [true, true])
    }

    @Test func theDynamicMetatypeReportsItsOwnErrors() {
        // `Employee` needs `company`, which `Person` does not: the error proves which type was decoded.
        let type: Person.Type = Employee.self
        expectDecodingError(.keyNotFound, at: [], missingKey: "company") {
            try UserInfoDecoder().decode(type, from: ["name": "Ada"])
        }
    }

    // MARK: - allKeys lists each coding key once

    @Test func allKeysListsEachKeyOnceUnderCustomWithExactMatchWinning() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            AnyKey(stringValue: path[path.count - 1].stringValue.lowercased())
        }
        // Eight spellings of `abc`; the exact one wins, whatever the dictionary's hash order.
        var userInfo: [AnyHashable: Any] = [:]
        for (index, spelling) in caseVariants("abc").enumerated() { userInfo[spelling] = index }
        let exact = try #require(userInfo["abc"] as? Int)
        let (keys, value) = try inspect(userInfo, using: decoder) { decoder -> ([String], Int) in
            let container = try decoder.container(keyedBy: AnyKey.self)
            return (container.allKeys.map(\.stringValue), try container.decode(Int.self, forKey: "abc"))
        }
        #expect(keys == ["abc"])
        #expect(value == exact)
    }

    @Test func withoutAnExactMatchTheFirstDictionaryKeyInSortedOrderWins() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            AnyKey(stringValue: path[path.count - 1].stringValue.lowercased())
        }
        var userInfo: [AnyHashable: Any] = [:]
        for spelling in caseVariants("abc") where spelling != "abc" { userInfo[spelling] = spelling }
        let (keys, value) = try inspect(userInfo, using: decoder) { decoder -> ([String], String) in
            let container = try decoder.container(keyedBy: AnyKey.self)
            return (container.allKeys.map(\.stringValue), try container.decode(String.self, forKey: "abc"))
        }
        #expect(keys == ["abc"])
        #expect(value == "ABC")
    }

    @Test func allKeysListsAnIntegerKeyAndItsDecimalStringOnce() throws {
        let keys = try inspect([1: "int", "1": "string", "2": "two"] as [AnyHashable: Any]) { decoder -> [String] in
            try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
        }
        #expect(keys == ["1", "2"])
    }

    @Test func allKeysListsTwoAffixedSpellingsOfOneKeyOnce() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UI", suffix: "Key")
        let keys = try inspect(["UIFrameKey": 1, "UIframeKey": 2] as [AnyHashable: Any], using: decoder) {
            decoder -> [String] in
            try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        }
        #expect(keys == ["frame"])
    }

    // MARK: - An explicit nil is written as NSNull

    @Test func explicitEncodeNilWritesNullAndReadsBack() throws {
        let userInfo = try UserInfoEncoder().encode(ExplicitNulls(note: nil, count: nil, flag: true))
        #expect(userInfo["note"] is NSNull)
        #expect(userInfo["count"] == nil, "encodeIfPresent of nil leaves the key out")
        #expect(userInfo["flag"] as? Bool == true)
        let read = try UserInfoDecoder().decode(ExplicitNulls.self, from: userInfo)
        #expect(read == ExplicitNulls(note: nil, count: nil, flag: true))

        let nested = try UserInfoEncoder().encode(Box(value: ExplicitNulls(note: "hi", count: 3, flag: false)))
        #expect(try UserInfoDecoder().decode(Box<ExplicitNulls>.self, from: nested).value.note == "hi")
    }
}

/// A class hierarchy, for decoding through a metatype whose dynamic type is a subclass.
private class Person: Decodable {
    let name: String
    required init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: AnyKey.self).decode(String.self, forKey: "name")
    }
}

private final class Employee: Person {
    let company: String
    required init(from decoder: any Decoder) throws {
        company = try decoder.container(keyedBy: AnyKey.self).decode(String.self, forKey: "company")
        try super.init(from: decoder)
    }
}

/// Reads a `Person` through a single-value container, with the metatype of an `Employee`.
private struct Reader: Decodable {
    let person: Person
    init(from decoder: any Decoder) throws {
        let type: Person.Type = Employee.self
        person = try decoder.singleValueContainer().decode(type)
    }
}

/// A type that writes `encodeNil(forKey:)` and reads `decodeNil(forKey:)`, which must read its own output.
private struct ExplicitNulls: Codable, Equatable {
    var note: String?
    var count: Int?
    var flag: Bool
    enum CodingKeys: String, CodingKey { case note, count, flag }

    init(note: String?, count: Int?, flag: Bool) {
        self.note = note
        self.count = count
        self.flag = flag
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        note = try container.decodeNil(forKey: .note) ? nil : try container.decode(String.self, forKey: .note)
        count = try container.decodeIfPresent(Int.self, forKey: .count)
        flag = try container.decode(Bool.self, forKey: .flag)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let note { try container.encode(note, forKey: .note) } else { try container.encodeNil(forKey: .note) }
        try container.encodeIfPresent(count, forKey: .count)
        try container.encode(flag, forKey: .flag)
    }
}

/// Every spelling of `word` that differs only in case, such as `abc`, `aBc`, `ABC`.
func caseVariants(_ word: String) -> [String] {
    word.reduce([""]) { partial, character in
        partial.flatMap { [$0 + character.lowercased(), $0 + character.uppercased()] }
    }
}
