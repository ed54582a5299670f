import Dispatch
import Foundation
import Notificatable
import Testing

// The decoder remembers, per decoder configuration and top-level type, how each type is read and the dictionary key
// of each affixed key, so that the second decode of a type builds nothing. What it remembers must never change a
// result: these tests decode the same types again and again, in different orders, past the plan's size limits,
// after errors, and from many threads at once.

/// A type that reads keys it makes from data, as many as `count` says: more than a plan keeps.
private struct ManyKeys: Decodable, Equatable {
    var values: [Int]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let count = try container.decode(Int.self, forKey: Key(stringValue: "count"))
        values = try (0..<count).map { try container.decode(Int.self, forKey: Key(stringValue: "value\($0)")) }
    }

    static func userInfo(count: Int, prefix: String, suffix: String = "") -> [AnyHashable: Any] {
        var userInfo: [AnyHashable: Any] = [prefix + "Count" + suffix: count]
        for index in 0..<count { userInfo[prefix + "Value\(index)" + suffix] = index * 2 }
        return userInfo
    }
}

private struct Inner: Codable, Equatable {
    var size: CGSize
    var names: [String]
}

private struct Outer: Codable, Equatable {
    var inner: Inner
    var inners: [Inner]
    var frame: CGRect
    var count: Int
}

/// Shares the key names of ``Outer`` with other types.
private struct SameKeysOtherTypes: Codable, Equatable {
    var inner: String
    var count: Double
}

private func makeOuterUserInfo() -> [AnyHashable: Any] {
    [
        "PInnerS": ["PSizeS": NSValue(size: CGSize(width: 3, height: 4)), "PNamesS": ["a", "b"]] as [AnyHashable: Any],
        "PInnersS": [["PSizeS": [5, 6], "PNamesS": [] as [String]] as [AnyHashable: Any]],
        "PFrameS": NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4)),
        "PCountS": 7,
    ]
}

private let outerExpected = Outer(
    inner: Inner(size: CGSize(width: 3, height: 4), names: ["a", "b"]),
    inners: [Inner(size: CGSize(width: 5, height: 6), names: [])],
    frame: CGRect(x: 1, y: 2, width: 3, height: 4), count: 7
)

/// Immutable test data shared with concurrent closures.
private struct SharedInput: @unchecked Sendable {
    let value: [AnyHashable: Any]
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func record(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}

@Suite("Decoding plans")
struct DecodingPlanTests {
    private func affixed() -> UserInfoDecoder {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "P", suffix: "S")
        return decoder
    }

    @Test func moreKeysThanAPlanKeepsAreReadOnEveryDecode() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "Many", suffix: "")
        let userInfo = ManyKeys.userInfo(count: 400, prefix: "Many")
        for _ in 0..<3 {
            let decoded = try decoder.decode(ManyKeys.self, from: userInfo)
            #expect(decoded.values == (0..<400).map { $0 * 2 })
        }
        // A smaller dictionary afterwards still reads its own keys, and a key the plan knows but the dictionary
        // lacks is still missing, with its path.
        #expect(try decoder.decode(ManyKeys.self, from: ManyKeys.userInfo(count: 2, prefix: "Many")).values == [0, 2])
        var short = ManyKeys.userInfo(count: 300, prefix: "Many")
        short["ManyValue299"] = nil
        expectDecodingError(.keyNotFound, at: [], missingKey: "value299") {
            try decoder.decode(ManyKeys.self, from: short)
        }
    }

    @Test func nestedTypesAndKeysAreRememberedPerTopLevelType() throws {
        let decoder = affixed()
        for _ in 0..<3 {
            #expect(try decoder.decode(Outer.self, from: makeOuterUserInfo()) == outerExpected)
            // The same key names, read as other types, under another top-level type.
            let other = try decoder.decode(SameKeysOtherTypes.self, from: ["PInnerS": "x", "PCountS": 2.5])
            #expect(other == SameKeysOtherTypes(inner: "x", count: 2.5))
            // A nested type on its own is a top-level type with its own plan.
            let inner = try decoder.decode(Inner.self, from: ["PSizeS": [1, 2], "PNamesS": ["c"]])
            #expect(inner == Inner(size: CGSize(width: 1, height: 2), names: ["c"]))
        }
    }

    @Test func errorsKeepTheirPathsOnceThePlanIsLearned() throws {
        let decoder = affixed()
        var bad = makeOuterUserInfo()
        bad["PInnersS"] = [["PSizeS": [5, 6], "PNamesS": ["ok", 3]] as [AnyHashable: Any]]
        // Before the plan exists, while it is being learned and after.
        for _ in 0..<3 {
            expectDecodingError(.typeMismatch, at: ["inners", 0, "names", 1], type: String.self) {
                try decoder.decode(Outer.self, from: bad)
            }
            #expect(try decoder.decode(Outer.self, from: makeOuterUserInfo()) == outerExpected)
        }
        var missing = makeOuterUserInfo()
        missing["PFrameS"] = nil
        expectDecodingError(.keyNotFound, at: [], missingKey: "frame", message: "\"PFrameS\"") {
            try decoder.decode(Outer.self, from: missing)
        }
    }

    @Test func aNewKeyStrategyStartsFromNothing() throws {
        let decoder = affixed()
        #expect(try decoder.decode(Outer.self, from: makeOuterUserInfo()) == outerExpected)
        decoder.keyDecodingStrategy = .affixed(prefix: "Q", suffix: "")
        expectDecodingError(.keyNotFound, at: [], missingKey: "inner") {
            try decoder.decode(Outer.self, from: makeOuterUserInfo())
        }
        let renamed: [AnyHashable: Any] = ["QInner": "y", "QCount": 1]
        #expect(try decoder.decode(SameKeysOtherTypes.self, from: renamed) == SameKeysOtherTypes(inner: "y", count: 1))
        // Other options keep the key strategy's plans, and still apply.
        decoder.dateDecodingStrategy = .secondsSince1970
        #expect(try decoder.decode(SameKeysOtherTypes.self, from: renamed) == SameKeysOtherTypes(inner: "y", count: 1))
        decoder.keyDecodingStrategy = .useDefaultKeys
        #expect(
            try decoder.decode(SameKeysOtherTypes.self, from: ["inner": "z", "count": 3])
                == SameKeysOtherTypes(inner: "z", count: 3))
    }

}

/// Named so that `scripts/tsan.sh` runs it under ThreadSanitizer.
@Suite("Decoding plans learned by many threads")
struct DecodingPlanConcurrencyTests {
    private func affixed() -> UserInfoDecoder {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "P", suffix: "S")
        return decoder
    }

    @Test func threadsLearnPlansForSeveralTypesAtOnce() {
        let failures = Failures()
        let outer = SharedInput(value: makeOuterUserInfo())
        for _ in 0..<10 {
            let decoder = affixed()
            DispatchQueue.concurrentPerform(iterations: 12) { index in
                do {
                    // Each thread meets the types in its own order, so plans are made and extended concurrently.
                    for step in 0..<3 {
                        switch (index + step) % 3 {
                        case 0:
                            if try decoder.decode(Outer.self, from: outer.value) != outerExpected {
                                failures.record("outer \(index)")
                            }
                        case 1:
                            let many = try decoder.decode(
                                ManyKeys.self, from: ManyKeys.userInfo(count: 20, prefix: "P", suffix: "S"))
                            if many.values != (0..<20).map({ $0 * 2 }) { failures.record("many \(index)") }
                        default:
                            let inner = try decoder.decode(Inner.self, from: ["PSizeS": [1, 2], "PNamesS": ["c"]])
                            if inner != Inner(size: CGSize(width: 1, height: 2), names: ["c"]) {
                                failures.record("inner \(index)")
                            }
                        }
                    }
                } catch {
                    failures.record("\(index): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    }
}
