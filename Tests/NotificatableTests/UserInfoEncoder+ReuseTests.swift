import Dispatch
import Foundation
import Testing

@testable import Notificatable

// Issue 32: an encoder keeps its frames between calls, and a frame whose nested value is finished encodes the next
// one. These tests pin what reuse must not change: what a value kept of its encoder or containers past its
// `encode(to:)` never reaches a later value's output, coding paths are the new value's, a failed call leaves
// nothing behind, and calls from many threads at once each get frames of their own.

/// What a value kept of its encoder past its `encode(to:)`: the encoder and a keyed container.
private final class Stash: @unchecked Sendable {
    var encoder: (any Encoder)?
    var container: KeyedEncodingContainer<ReuseKey>?
}

private struct ReuseKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// What a ``Keeper`` keeps.
private enum Kept: CaseIterable { case encoder, container }

/// Writes `name`, and keeps its encoder or its container in `stash`.
private struct Keeper: Encodable {
    let stash: Stash
    let kept: Kept
    var name = "kept"

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ReuseKey.self)
        try container.encode(1, forKey: ReuseKey(name))
        switch kept {
        case .encoder: stash.encoder = encoder
        case .container: stash.container = container
        }
    }
}

/// Writes `name`, then writes `stale` through what `stash` kept of an earlier value, while its own frame runs.
private struct LateWriter: Encodable {
    let stash: Stash
    var name = "own"

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ReuseKey.self)
        try container.encode(2, forKey: ReuseKey(name))
        if var kept = stash.container { try kept.encode(3, forKey: ReuseKey("stale")) }
        if let kept = stash.encoder {
            var keptContainer = kept.container(keyedBy: ReuseKey.self)
            try keptContainer.encode(3, forKey: ReuseKey("stale"))
        }
    }
}

/// Records the coding path it is encoded at.
private final class Paths: @unchecked Sendable {
    var recorded: [String] = []
}

private struct PathRecorder: Encodable {
    let paths: Paths
    var value = 1

    func encode(to encoder: any Encoder) throws {
        paths.recorded.append(encoder.codingPath.map(\.stringValue).joined(separator: "."))
        var container = encoder.container(keyedBy: ReuseKey.self)
        try container.encode(value, forKey: ReuseKey("value"))
    }
}

/// Fails after writing two keys and a nested value.
private struct Failing: Encodable {
    struct Failure: Error {}
    var written = ["a", "b"]

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ReuseKey.self)
        for key in written { try container.encode(key, forKey: ReuseKey(key)) }
        try container.encode(Inner(), forKey: ReuseKey("inner"))
        throw Failure()
    }

    struct Inner: Encodable {
        var x = 1
        var y = "y"
    }
}

/// A nested value whose frame makes a nested container and a super encoder, between two plain nested values.
private struct Mixed: Encodable {
    struct Plain: Encodable { var p = 1 }
    struct WithNested: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: ReuseKey.self)
            var nested = container.nestedContainer(keyedBy: ReuseKey.self, forKey: ReuseKey("nested"))
            try nested.encode(1, forKey: ReuseKey("n"))
            var superContainer = container.superEncoder().container(keyedBy: ReuseKey.self)
            try superContainer.encode(2, forKey: ReuseKey("s"))
        }
    }

    var first = Plain()
    var middle = WithNested()
    var last = Plain(p: 3)
}

/// A nested order, as the bench encodes it.
private struct ReuseOrder: Encodable, Sendable {
    struct Line: Encodable, Sendable {
        var sku: String
        var quantity: Int
    }
    var id: Int
    var lines: [Line]
}

@Suite("UserInfoEncoder: frames used again")
struct UserInfoEncoderReuseTests {
    /// A top-level value that kept its encoder or container: the next call must not write into that frame, or the
    /// late write would land in the next call's output.
    @Test func aTopLevelFrameKeptByItsValueIsNotUsedAgain() throws {
        for kept in Kept.allCases {
            let encoder = UserInfoEncoder()
            let stash = Stash()
            _ = try encoder.encode(Keeper(stash: stash, kept: kept))
            let next = try encoder.encode(LateWriter(stash: stash))
            #expect(Set(next.keys.compactMap { $0.base as? String }) == ["own"], "kept the \(kept)")
            let after = try encoder.encode(LateWriter(stash: Stash()))
            #expect(Set(after.keys.compactMap { $0.base as? String }) == ["own"], "kept the \(kept)")
        }
    }

    /// The same one level down: a nested value that kept its encoder or container, then its sibling.
    @Test func aNestedFrameKeptByItsValueIsNotUsedAgain() throws {
        struct Pair: Encodable {
            let keeper: Keeper
            let writer: LateWriter
        }
        for kept in Kept.allCases {
            let stash = Stash()
            let encoded = try UserInfoEncoder().encode(
                Pair(keeper: Keeper(stash: stash, kept: kept), writer: LateWriter(stash: stash))
            )
            #expect((encoded["keeper"] as? [String: Any]).map { Set($0.keys) } == ["kept"], "kept the \(kept)")
            #expect((encoded["writer"] as? [String: Any]).map { Set($0.keys) } == ["own"], "kept the \(kept)")
        }
    }

    /// A frame used again reports the path of its new value, in `codingPath` and in the encoder's errors.
    @Test func aFrameUsedAgainHasItsNewValuesPath() throws {
        struct Holder: Encodable {
            var first: PathRecorder
            var list: [PathRecorder]
            var last: PathRecorder
        }
        let paths = Paths()
        let encoder = UserInfoEncoder()
        for _ in 0..<2 {
            paths.recorded = []
            let holder = Holder(
                first: PathRecorder(paths: paths), list: [PathRecorder(paths: paths), PathRecorder(paths: paths)],
                last: PathRecorder(paths: paths)
            )
            _ = try encoder.encode(holder)
            #expect(paths.recorded == ["first", "list.Index 0", "list.Index 1", "last"])
        }
        // An error thrown by the encoder itself in the second element of an array, after the first used the frame.
        struct TooDeep: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ReuseKey.self)
                try container.encode(TooDeep(), forKey: ReuseKey("d"))
            }
        }
        enum TooDeepOrNot: Encodable {
            case fine, deep
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ReuseKey.self)
                switch self {
                case .fine: try container.encode(1, forKey: ReuseKey("f"))
                case .deep: try container.encode(TooDeep(), forKey: ReuseKey("d"))
                }
            }
        }
        struct Deep: Encodable {
            var list: [TooDeepOrNot]
        }
        do {
            _ = try encoder.encode(Deep(list: [.fine, .deep]))
            Issue.record("a value nested 512 levels deep was encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.prefix(3).map(\.stringValue) == ["list", "Index 1", "d"])
        }
    }

    /// A call that fails midway leaves nothing of what it wrote to the next call on the same encoder.
    @Test func aFailedCallLeavesNothingBehind() throws {
        struct Clean: Encodable {
            var c = 1
            var inner = Failing.Inner(x: 2, y: "z")
        }
        let encoder = UserInfoEncoder()
        for _ in 0..<2 {
            #expect(throws: Failing.Failure.self) { try encoder.encode(Failing()) }
            let clean = try encoder.encode(Clean())
            #expect(Set(clean.keys.compactMap { $0.base as? String }) == ["c", "inner"])
            let inner = try #require(clean["inner"] as? [String: Any])
            #expect(Set(inner.keys) == ["x", "y"])
            #expect(inner["x"] as? Int == 2 && inner["y"] as? String == "z")
        }
    }

    /// A nested value that makes a nested container and a super encoder, between plain ones: every value is whole,
    /// call after call.
    @Test func nestedContainersAndSuperEncodersBetweenPlainValues() throws {
        let encoder = UserInfoEncoder()
        for _ in 0..<3 {
            let encoded = try encoder.encode(Mixed())
            #expect((encoded["first"] as? [String: Int]) == ["p": 1])
            #expect((encoded["last"] as? [String: Int]) == ["p": 3])
            let middle = try #require(encoded["middle"] as? [String: Any])
            #expect((middle["nested"] as? [String: Int]) == ["n": 1])
            #expect((middle["super"] as? [String: Int]) == ["s": 2])
            #expect(middle.count == 2)
        }
    }

    /// An unkeyed container keeps finished values as the plain array it becomes; a nested container or super encoder
    /// among them moves the elements to the general path. Order, indices in coding paths, and every element stay.
    @Test func anArrayWithContainersAmongFinishedValues() throws {
        struct Mixed: Encodable {
            let paths: Paths
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ReuseKey.self)
                var list = container.nestedUnkeyedContainer(forKey: ReuseKey("list"))
                try list.encode(1)
                try list.encode(PathRecorder(paths: paths, value: 2))
                var nested = list.nestedContainer(keyedBy: ReuseKey.self)
                try nested.encode(3, forKey: ReuseKey("n"))
                try list.encode("four")
                try PathRecorder(paths: paths, value: 5).encode(to: list.superEncoder())
                try list.encode(PathRecorder(paths: paths, value: 6))
                try list.encodeNil()
                #expect(list.count == 7)
            }
        }
        let encoder = UserInfoEncoder()
        for _ in 0..<2 {
            let paths = Paths()
            let encoded = try encoder.encode(Mixed(paths: paths))
            let list = try #require(encoded["list"] as? [Any])
            #expect(list.count == 7)
            #expect(list.first as? Int == 1)
            #expect((list[1] as? [String: Int]) == ["value": 2])
            #expect((list[2] as? [String: Int]) == ["n": 3])
            #expect(list[3] as? String == "four")
            #expect((list[4] as? [String: Int]) == ["value": 5])
            #expect((list[5] as? [String: Int]) == ["value": 6])
            #expect(list[6] is NSNull)
            #expect(paths.recorded == ["list.Index 1", "list.Index 4", "list.Index 5"])
        }
    }

    /// Keys renamed by a strategy, a property spelled like another's renamed key, and a different strategy after
    /// the frames were kept.
    @Test func renamedKeysOnKeptFrames() throws {
        struct Snake: Encodable {
            struct Inner: Encodable {
                enum CodingKeys: String, CodingKey {
                    case someValue
                    case spelledRenamed = "some_value"
                }
                var someValue = 1
                var spelledRenamed = 2
            }
            enum CodingKeys: String, CodingKey {
                case innerValue
                case spelledRenamed = "inner_value"
            }
            var innerValue = Inner()
            var spelledRenamed = 3
        }
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        for _ in 0..<2 {
            let encoded = try encoder.encode(Snake())
            // Two properties for one key: the later write wins, as in JSONEncoder.
            #expect(encoded["inner_value"] as? Int == 3)
            #expect(encoded.count == 1)
        }
        encoder.keyEncodingStrategy = .affixed(prefix: "P", suffix: "S")
        let affixed = try encoder.encode(Snake())
        #expect(Set(affixed.keys.compactMap { $0.base as? String }) == ["PInnerValueS", "PInner_valueS"])
        #expect((affixed["PInnerValueS"] as? [String: Int]) == ["PSomeValueS": 1, "PSome_valueS": 2])
    }

    /// Calls from many threads at once on one encoder: each takes frames of its own.
    @Test func concurrentCallsEachGetTheirOwnFrames() {
        let encoder = UserInfoEncoder()
        let failures = NSLock()
        nonisolated(unsafe) var messages: [String] = []
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<200 {
                let id = thread * 1_000 + index
                let lines = (0..<(index % 4)).map { ReuseOrder.Line(sku: "\(id)-\($0)", quantity: $0) }
                let order = ReuseOrder(id: id, lines: lines)
                do {
                    let encoded = try encoder.encode(order)
                    let lines = encoded["lines"] as? [[String: Any]] ?? []
                    let skus = lines.compactMap { $0["sku"] as? String }
                    if encoded["id"] as? Int != id || encoded.count != 2
                        || skus != order.lines.map(\.sku) || lines.contains(where: { $0.count != 2 })
                    {
                        failures.withLock { messages.append("\(encoded)") }
                    }
                } catch {
                    failures.withLock { messages.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { messages }.isEmpty)
    }
}
