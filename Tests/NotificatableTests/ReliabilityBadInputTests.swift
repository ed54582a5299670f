import Foundation
import Testing

@testable import Notificatable

// Every row of the bad-input table in `Sources/Notificatable/Documentation.docc/BadInput.md` is backed by a test
// here (or by the test that the table names). Each error test checks the error's kind and its coding path.

private struct ReliabilityPerson: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

private struct ReliabilityOptionalPerson: Codable, Equatable {
    var name: String?
    var age: Int?
    var tags: [String]?
}

private final class ReliabilityChain: Decodable {
    var next: ReliabilityChain?
    var value: Int?
}

private indirect enum ReliabilityNested: Decodable {
    case list([ReliabilityNested])
    init(from decoder: any Decoder) throws { self = .list(try [ReliabilityNested](from: decoder)) }
}

/// An `NSDictionary` subclass with its own storage, as Foundation on Linux allows.
private final class ReliabilityDictionarySubclass: NSDictionary {
    private let backing: [String: Any] = [
        "inner": NSMutableDictionary(dictionary: ["name": "n", "age": 3, "tags": NSMutableArray(array: ["t"])])
    ]
    override var count: Int { backing.count }
    override func object(forKey key: Any) -> Any? {
        if let key = key as? String { return backing[key] }
        return (key as? NSString).flatMap { backing[String($0)] }
    }
    override func keyEnumerator() -> NSEnumerator { NSArray(array: Array(backing.keys)).objectEnumerator() }
}

@Suite("Reliability: bad input")
struct ReliabilityBadInputTests {
    // MARK: Payloads

    @Test func wrongPayloadTypeUnderThePayloadKeyIsReportedNotDelivered() throws {
        let center = NotificationCenter()
        let handle = Notificatable<ReliabilityPerson>.name(uniqueName())
        let delivered = Counter()
        let failures = FailureRecorder()
        let subscription = handle.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { subscription.dispose() }
        center.post(name: handle.name, object: nil, userInfo: [NotificatableUserInfoKey: "not a person"])
        #expect(delivered.count == 0)
        let failure = try #require(failures.values.first)
        #expect(failures.count == 1)
        #expect(failure.kind == .payloadTypeMismatch)
        #expect(paths(failure) == [NotificatableUserInfoKey])
        let error = try #require(failure.error as? DecodingError)
        #expect(error.kind == .typeMismatch)
    }

    @Test func nilUserInfoReadsAsAnEmptyDictionary() throws {
        #expect(try UserInfoDecoder().decode(ReliabilityOptionalPerson.self, from: nil) == ReliabilityOptionalPerson())
        expectDecodingError(.keyNotFound, at: [], missingKey: "name") {
            try UserInfoDecoder().decode(ReliabilityPerson.self, from: nil)
        }
        // Through a handle: a legacy post without userInfo is a decoding failure with the same error.
        let center = NotificationCenter()
        let handle = Notificatable<ReliabilityPerson>.name(uniqueName())
        let failures = FailureRecorder()
        let subscription = handle.subscribe(center: center, onFailure: failures.handler) { _ in }
        defer { subscription.dispose() }
        center.post(name: handle.name, object: nil, userInfo: nil)
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .decodingFailed)
        #expect((failure.error as? DecodingError)?.kind == .keyNotFound)
        #expect(paths(failure) == [])
    }

    // MARK: Keys

    @Test func keysThatAreNeitherStringsNorIntegersAreIgnored() throws {
        let userInfo: [AnyHashable: Any] = [
            AnyHashable(Date(timeIntervalSinceReferenceDate: 0)): 1, AnyHashable(2.5): 2, AnyHashable(true): 3,
            AnyHashable(UUID()): 4, "a": 5, AnyHashable(7): 6,
        ]
        #expect(try UserInfoDecoder().decode([String: Int].self, from: userInfo) == ["a": 5, "7": 6])
        expectDecodingError(.keyNotFound, at: [], missingKey: "name") {
            try UserInfoDecoder().decode(ReliabilityPerson.self, from: [AnyHashable(Date()): "x", AnyHashable(1.5): 2])
        }
    }

    @Test func emptyAndOddStringKeysAreOrdinaryKeys() throws {
        let userInfo: [AnyHashable: Any] = ["": 1, "a\u{0}b": 2, "🙂": 3]
        #expect(try UserInfoDecoder().decode([String: Int].self, from: userInfo) == ["": 1, "a\u{0}b": 2, "🙂": 3])
    }

    // MARK: Nulls

    @Test func nullEverywhere() throws {
        let decoder = UserInfoDecoder()
        let nulls: [AnyHashable: Any] = ["name": NSNull(), "age": NSNull(), "tags": NSNull()]
        #expect(try decoder.decode(ReliabilityOptionalPerson.self, from: nulls) == ReliabilityOptionalPerson())
        expectDecodingError(.valueNotFound, at: ["name"], type: String.self) {
            try decoder.decode(ReliabilityPerson.self, from: nulls)
        }
        expectDecodingError(.valueNotFound, at: [], type: [String: Any].self) {
            try decoder.decode(ReliabilityPerson.self, fromValue: NSNull())
        }
        #expect(try decoder.decode([Int?].self, fromValue: [NSNull(), NSNull()]) == [nil, nil])
        expectDecodingError(.valueNotFound, at: [1], type: Int.self) {
            try decoder.decode([Int].self, fromValue: [1, NSNull()] as [Any])
        }
        expectDecodingError(.valueNotFound, at: ["tags", 0], type: String.self) {
            try decoder.decode(ReliabilityOptionalPerson.self, from: ["tags": [NSNull()]])
        }
        // An `Optional` stored in `Any` that holds nil or NSNull is null as well (a fuzz finding).
        let optionalNull: Any = Optional<Any>.some(NSNull()) as Any
        #expect(
            try decoder.decode(ReliabilityOptionalPerson.self, from: ["age": optionalNull])
                == ReliabilityOptionalPerson())
        expectDecodingError(.valueNotFound, at: ["age"], type: Int.self) {
            try decoder.decode(ReliabilityPerson.self, from: ["name": "n", "age": optionalNull])
        }
        expectDecodingError(.valueNotFound, at: [], type: [String: Any].self) {
            try decoder.decode(ReliabilityPerson.self, fromValue: optionalNull)
        }
    }

    /// Containers reached through an `Optional` stored in `Any` read their elements normally (a fuzz finding:
    /// every element was a type mismatch, "Expected a string but found a string").
    @Test func optionalWrappedContainersDecode() throws {
        let decoder = UserInfoDecoder()
        let list: Any = Optional<Any>.some(["x", "y"] as [Any]) as Any
        #expect(try decoder.decode([String].self, fromValue: list) == ["x", "y"])
        let person: Any = Optional<Any>.some(["name": "n", "age": 3] as [String: Any]) as Any
        #expect(try decoder.decode(ReliabilityPerson.self, fromValue: person) == ReliabilityPerson(name: "n", age: 3))
        expectDecodingError(.typeMismatch, at: ["people", 0, "age"], type: Int.self) {
            try decoder.decode(
                [String: [ReliabilityPerson]].self,
                from: ["people": Optional<Any>.some([["name": "n", "age": "3"] as [String: Any]] as [Any]) as Any]
            )
        }
    }

    // MARK: Numbers

    private static func overflowCases() -> [(String, () throws -> Any)] {
        let decoder = UserInfoDecoder()
        func read<T: Codable>(_ type: T.Type, _ value: Any) -> () throws -> Any {
            { try decoder.decode(Box<T>.self, from: ["value": value]).value }
        }
        return [
            ("Int8 128", read(Int8.self, NSNumber(value: 128))),
            ("Int8 -129", read(Int8.self, NSNumber(value: -129))),
            ("Int16 32768", read(Int16.self, NSNumber(value: 32768))),
            ("Int16 -32769", read(Int16.self, -32769)),
            ("Int32 2^31", read(Int32.self, NSNumber(value: Int64(Int32.max) + 1))),
            ("Int32 -2^31-1", read(Int32.self, Int64(Int32.min) - 1)),
            ("Int64 UInt64.max", read(Int64.self, NSNumber(value: UInt64.max))),
            ("Int UInt64.max", read(Int.self, UInt64.max)),
            ("UInt8 256", read(UInt8.self, NSNumber(value: 256))),
            ("UInt8 -1", read(UInt8.self, NSNumber(value: -1))),
            ("UInt16 65536", read(UInt16.self, 65536)),
            ("UInt32 2^32", read(UInt32.self, NSNumber(value: UInt64(UInt32.max) + 1))),
            ("UInt64 -1", read(UInt64.self, NSNumber(value: -1))),
            ("UInt -1", read(UInt.self, Int64(-1))),
            ("UInt64 1e20", read(UInt64.self, NSNumber(value: 1e20))),
            ("Int64 9.3e18", read(Int64.self, 9.3e18)),
            ("Float 1e300", read(Float.self, NSNumber(value: 1e300))),
        ]
    }

    @Test func integerOverflowAtEveryWidthIsDataCorrupted() {
        for (label, decode) in Self.overflowCases() {
            let context = expectDecodingError(.dataCorrupted, at: ["value"], message: "does not fit") { try decode() }
            #expect(context != nil, "\(label)")
        }
    }

    @Test func nanAndInfinityIntoIntegersAreDataCorrupted() throws {
        for value: Any in [
            Double.nan, Double.infinity, -Double.infinity, NSNumber(value: Double.nan),
            NSNumber(value: Double.infinity),
            NSNumber(value: -Double.infinity), Float.nan, CGFloat.infinity,
        ] {
            expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
                try decodeBoxed(Int.self, value)
            }
            expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
                try decodeBoxed(Int8.self, value)
            }
            expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
                try decodeBoxed(UInt64.self, value)
            }
            expectDecodingError(.dataCorrupted, at: ["value"], message: "not an integer") {
                try decodeBoxed(Int32.self, value)
            }
        }
        // Into floating point they are values, not errors.
        #expect(try decodeBoxed(Double.self, NSNumber(value: Double.nan)).isNaN)
        #expect(try decodeBoxed(Float.self, -Double.infinity) == -.infinity)
    }

    @Test func stringsAndBooleansAreNotNumbers() {
        expectDecodingError(.typeMismatch, at: ["value"], type: Int.self, message: "found a string") {
            try decodeBoxed(Int.self, "42")
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Int.self, message: "found a boolean") {
            try decodeBoxed(Int.self, true)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Bool.self) { try decodeBoxed(Bool.self, 2) }
        expectDecodingError(.typeMismatch, at: ["value"], type: Bool.self) { try decodeBoxed(Bool.self, "true") }
    }

    // MARK: Depth

    /// 10,000 levels of every kind of collection: the depth cap answers, and nothing overflows the stack.
    @Test(arguments: ["swift dictionary", "foundation dictionary", "swift array", "foundation array"])
    func tenThousandLevelsStopAtTheDepthCap(kind: String) {
        let depth = 10_000
        var value: Any = [String: Any]()
        for _ in 0..<depth {
            switch kind {
            case "swift dictionary": value = ["next": value] as [String: Any]
            case "foundation dictionary":
                let next = NSMutableDictionary()
                next["next"] = value
                value = next
            case "swift array": value = [value] as [Any]
            default:
                let next = NSMutableArray()
                next.add(value)
                value = next
            }
        }
        if kind.hasSuffix("dictionary") {
            // Each level is one nested value, so the 512th `next` is where the cap stops.
            expectDecodingError(
                .dataCorrupted, at: Array(repeating: "next", count: 512), message: "nested more than 512"
            ) {
                try UserInfoDecoder().decode(ReliabilityChain.self, fromValue: value)
            }
        } else {
            expectDecodingError(.dataCorrupted, at: Array(repeating: 0, count: 512), message: "nested more than 512") {
                try UserInfoDecoder().decode(ReliabilityNested.self, fromValue: value)
            }
        }
    }

    /// A self-containing NSMutableDictionary, reached from a Swift userInfo: no hang, no crash, the depth cap.
    @Test func selfReferencingDictionaryInsideAUserInfo() {
        let cycle = NSMutableDictionary()
        cycle["value"] = 1
        cycle["next"] = cycle
        defer { cycle.removeAllObjects() }
        expectDecodingError(.dataCorrupted, at: Array(repeating: "next", count: 512), message: "nested more than 512") {
            try UserInfoDecoder().decode(ReliabilityChain.self, from: ["next": cycle, "value": 0])
        }
        // A type that does not follow the cycle reads it like any other dictionary.
        expectDecodingError(.typeMismatch, at: ["next"], type: Int.self, message: "found a dictionary") {
            try UserInfoDecoder().decode([String: Int].self, fromValue: cycle)
        }
    }

    /// Nested Foundation collections are read through Core Foundation on Linux; subclasses of `NSDictionary` and
    /// `NSArray`, and `NSNumber` keys, still read as before.
    @Test func foundationCollectionSubclassesAndNumberKeysStillRead() throws {
        let dictionary = ReliabilityDictionarySubclass()
        let person = try UserInfoDecoder().decode([String: ReliabilityOptionalPerson].self, fromValue: dictionary)
        #expect(person == ["inner": ReliabilityOptionalPerson(name: "n", age: 3, tags: ["t"])])
        let numbers = NSMutableDictionary(dictionary: [5: "five", 6: NSMutableArray(array: ["six"])])
        #expect(
            try UserInfoDecoder().decode([Int: [String]].self, fromValue: NSDictionary(dictionary: [6: ["six"]])) == [
                6: ["six"]
            ])
        expectDecodingError(.typeMismatch, at: [.intKey(5)], type: [Any].self) {
            try UserInfoDecoder().decode([Int: [String]].self, fromValue: numbers)
        }
        numbers.removeAllObjects()
    }

    // MARK: Size

    @Test func aMillionElementArrayDecodesOrFailsAtItsLastElement() throws {
        let count = 1_000_000
        let numbers = (0..<count).map { NSNumber(value: $0 % 100) }
        let decoded = try UserInfoDecoder().decode([Int8].self, fromValue: numbers)
        #expect(decoded.count == count)
        #expect(decoded.last == Int8((count - 1) % 100))
        let foundation = NSMutableArray(array: numbers)
        foundation.add(NSNumber(value: 1000))
        expectDecodingError(.dataCorrupted, at: [.index(count)], message: "does not fit in Int8") {
            try UserInfoDecoder().decode([Int8].self, fromValue: foundation)
        }
    }

    // MARK: System values

    @Test func malformedSystemValuesAreDataCorrupted() {
        let decoder = UserInfoDecoder()
        decoder.dataDecodingStrategy = .base64
        decoder.dateDecodingStrategy = .iso8601
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(Data.self, "not base64!", using: decoder) }
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(Date.self, "yesterday", using: decoder) }
        expectDecodingError(.typeMismatch, at: ["value"], type: CGPoint.self) {
            try decodeBoxed(CGPoint.self, NSValue(rect: .zero))
        }
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(CGRect.self, "{{1, 2}, {3}}") }
        expectDecodingError(.dataCorrupted, at: ["value"]) { try decodeBoxed(URL.self, "") }
    }
}
