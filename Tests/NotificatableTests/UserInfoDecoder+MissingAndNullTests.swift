import Foundation
import Notificatable
import Testing

// A missing key is keyNotFound; NSNull or a nil Optional is valueNotFound for a non-optional and nil for an optional.

private struct Required: Codable, Equatable {
    var count: Int
    var name: String
}

private struct Outer: Codable, Equatable {
    var inner: Required
    var list: [Int]
}

private struct AllOptional: Codable, Equatable {
    var count: Int?
    var name: String?
    var inner: Required?
    var flag: Bool?
    var date: Date?
    var frame: CGRect?
}

@Suite("UserInfoDecoder: missing and null")
struct UserInfoDecoderMissingAndNullTests {
    @Test func missingKeyIsKeyNotFoundAtTheContainerPath() {
        expectDecodingError(.keyNotFound, at: [], missingKey: "count", message: "\"count\"") {
            try UserInfoDecoder().decode(Required.self, from: ["name": "x"])
        }
        expectDecodingError(.keyNotFound, at: ["inner"], missingKey: "name") {
            try UserInfoDecoder().decode(Outer.self, from: ["inner": ["count": 1], "list": [Any]()])
        }
        expectDecodingError(.keyNotFound, at: [], missingKey: "list") {
            try UserInfoDecoder().decode(Outer.self, from: ["inner": ["count": 1, "name": "n"]])
        }
    }

    @Test func missingKeyInsideAnArrayElement() {
        let userInfo: [AnyHashable: Any] = ["value": [["count": 1, "name": "a"], ["count": 2]] as [Any]]
        expectDecodingError(.keyNotFound, at: ["value", 1], missingKey: "name") {
            try UserInfoDecoder().decode(Box<[Required]>.self, from: userInfo)
        }
    }

    @Test(arguments: [
        Sample("NSNull", NSNull()), Sample("Optional<Int>.none", Optional<Int>.none as Any),
        Sample("Optional<String>.none", Optional<String>.none as Any),
        Sample("nested Optional.none", Optional<Int?>.some(nil) as Any),
    ])
    func nullForNonOptionalIsValueNotFoundAtTheKeyPath(sample: Sample) {
        expectDecodingError(.valueNotFound, at: ["count"], type: Int.self, message: "found null") {
            try UserInfoDecoder().decode(Required.self, from: ["count": sample.value, "name": "x"])
        }
        expectDecodingError(.valueNotFound, at: ["name"], type: String.self) {
            try UserInfoDecoder().decode(Required.self, from: ["count": 1, "name": sample.value])
        }
        expectDecodingError(.valueNotFound, at: ["inner"]) {
            try UserInfoDecoder().decode(Outer.self, from: ["inner": sample.value, "list": [1]])
        }
        expectDecodingError(.valueNotFound, at: ["list"]) {
            try UserInfoDecoder().decode(Outer.self, from: ["inner": ["count": 1, "name": "n"], "list": sample.value])
        }
        expectDecodingError(.valueNotFound, at: ["list", 1], type: Int.self) {
            try UserInfoDecoder().decode(
                Outer.self, from: ["inner": ["count": 1, "name": "n"], "list": [1, sample.value] as [Any]]
            )
        }
        for type in [Date.self, Data.self, URL.self, UUID.self, Decimal.self, CGRect.self, Bool.self, Double.self]
            as [any Codable.Type]
        {
            expectDecodingError(.valueNotFound, at: ["value"]) { try decodeBoxed(type, sample.value) }
        }
    }

    @Test func nullAndMissingAreNilForOptionals() throws {
        let decoder = UserInfoDecoder()
        let empty = AllOptional()
        #expect(try decoder.decode(AllOptional.self, from: [:]) == empty)
        let nulls: [AnyHashable: Any] = [
            "count": NSNull(), "name": Optional<String>.none as Any, "inner": NSNull(),
            "flag": Optional<Bool>.none as Any,
            "date": NSNull(), "frame": NSNull(),
        ]
        #expect(try decoder.decode(AllOptional.self, from: nulls) == empty)
        #expect(
            try decoder.decode([Int?].self, fromValue: [1, NSNull(), Optional<Int>.none as Any] as [Any]) == [
                1, nil, nil,
            ])
    }

    @Test func optionalSomeStoredInAnyIsUnwrapped() throws {
        let decoder = UserInfoDecoder()
        let userInfo: [AnyHashable: Any] = [
            "count": Optional(5) as Any, "name": Optional(Optional("n")) as Any,
        ]
        #expect(try decoder.decode(Required.self, from: userInfo) == Required(count: 5, name: "n"))
        let nested: [AnyHashable: Any] = [
            "inner": Optional<[String: Any]>.some(["count": 1, "name": "i"]) as Any, "list": Optional([1, 2]) as Any,
        ]
        #expect(
            try decoder.decode(Outer.self, from: nested) == Outer(inner: Required(count: 1, name: "i"), list: [1, 2]))
        #expect(try decoder.decode(OptionalBox<Int>.self, from: ["value": Optional(5) as Any]).value == 5)
        #expect(
            try decodeBoxed(CGRect.self, Optional(NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4))) as Any)
                == CGRect(x: 1, y: 2, width: 3, height: 4))
    }

    @Test func decodeNilInEveryContainer() throws {
        let userInfo: [AnyHashable: Any] = [
            "null": NSNull(), "none": Optional<Int>.none as Any, "five": 5, "some": Optional(5) as Any,
        ]
        let results = try inspect(userInfo) { decoder -> [Bool] in
            let container = try decoder.container(keyedBy: AnyKey.self)
            return [
                try container.decodeNil(forKey: "null"), try container.decodeNil(forKey: "none"),
                try container.decodeNil(forKey: "five"), try container.decodeNil(forKey: "some"),
            ]
        }
        #expect(results == [true, true, false, false])
        expectDecodingError(.keyNotFound, at: [], missingKey: "absent") {
            try inspect(userInfo) { decoder in
                try decoder.container(keyedBy: AnyKey.self).decodeNil(forKey: "absent")
            }
        }

        // Unkeyed: decodeNil moves on only when it finds a null.
        let unkeyed = try inspect([NSNull(), 1, Optional<Int>.none as Any] as [Any]) { decoder -> [Int] in
            var container = try decoder.unkeyedContainer()
            var trace: [Int] = []
            trace.append(try container.decodeNil() ? 1 : 0)
            trace.append(container.currentIndex)
            trace.append(try container.decodeNil() ? 1 : 0)
            trace.append(container.currentIndex)
            trace.append(try container.decode(Int.self))
            trace.append(try container.decodeNil() ? 1 : 0)
            trace.append(container.isAtEnd ? 1 : 0)
            return trace
        }
        #expect(unkeyed == [1, 1, 0, 1, 1, 1, 1])

        let single = try inspect(NSNull()) { try $0.singleValueContainer().decodeNil() }
        #expect(single)
        #expect(try inspect(0) { try $0.singleValueContainer().decodeNil() } == false)
        #expect(try inspect(Optional<String>.none as Any) { try $0.singleValueContainer().decodeNil() })
    }

    @Test func containsAndAllKeys() throws {
        let userInfo: [AnyHashable: Any] = ["a": 1, "b": NSNull(), 7: "seven"]
        let result = try inspect(userInfo) { decoder -> [String] in
            let container = try decoder.container(keyedBy: AnyKey.self)
            let contains = [
                container.contains("a"), container.contains("b"), container.contains("c"),
                container.contains(AnyKey(intValue: 7)), container.contains(AnyKey(intValue: 8)),
                // A key without an intValue never matches an integer key.
                container.contains("7"),
            ].map { $0 ? "y" : "n" }.joined()
            let keys = container.allKeys.map { "\($0.stringValue)/\($0.intValue.map(String.init) ?? "-")" }.sorted()
            return [contains] + keys
        }
        #expect(result == ["yynynn", "7/7", "a/-", "b/-"])
    }

    @Test func containsAndAllKeysWithAffixedKeys() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        let userInfo: [AnyHashable: Any] = [
            "UIKeyboardFrameEndUserInfoKey": 1, "UIKeyboardIsLocalUserInfoKey": true, "unrelated": 2, 3: "three",
        ]
        let result = try inspect(userInfo, using: decoder) { decoder -> [String] in
            let container = try decoder.container(keyedBy: AnyKey.self)
            let contains = [
                container.contains("frameEnd"), container.contains("isLocal"), container.contains("unrelated"),
                container.contains("UIKeyboardFrameEndUserInfoKey"), container.contains(AnyKey(intValue: 3)),
            ].map { $0 ? "y" : "n" }.joined()
            return [contains] + container.allKeys.map(\.stringValue).sorted()
        }
        #expect(result == ["yynny", "3", "frameEnd", "isLocal"])
    }

    @Test func nilUserInfoReadsAsEmpty() throws {
        let decoder = UserInfoDecoder()
        #expect(try decoder.decode(AllOptional.self, from: nil) == AllOptional())
        expectDecodingError(.keyNotFound, at: [], missingKey: "count") {
            try decoder.decode(Required.self, from: nil)
        }
        #expect(try decoder.decode([String: Int].self, from: nil).isEmpty)
    }
}
