import Dispatch
import Foundation
import Testing

@testable import Notificatable

// The encoder's frames double as the dictionaries their keyed containers fill, and keep their key names in a cache
// per key type. These tests pin what that must not change: every frame is released after `encode`, a container
// held past its frame's change of mind writes nowhere, the directly written types stay direct, and the key cache
// fills correctly from many threads at once.

/// Weak references to the encoders a value was handed, to check that none outlives `encode`.
private final class FrameProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [Weak] = []

    private struct Weak {
        weak var object: AnyObject?
    }

    func record(_ encoder: any Encoder) {
        let object = encoder as AnyObject
        lock.withLock { frames.append(Weak(object: object)) }
    }

    var recorded: Int { lock.withLock { frames.count } }
    var alive: Int { lock.withLock { frames.filter { $0.object != nil }.count } }
    /// How many different frames alive were recorded.
    var distinctAlive: Int { lock.withLock { Set(frames.compactMap { $0.object.map(ObjectIdentifier.init) }).count } }
}

private struct Leaf: Encodable {
    let probe: FrameProbe
    var number = 1
    func encode(to encoder: any Encoder) throws {
        probe.record(encoder)
        var container = encoder.container(keyedBy: FrameKey.self)
        try container.encode(number, forKey: FrameKey("number"))
    }
}

/// Every way a frame can be made and shared: nested values, arrays of them, super encoders (twice for one key, so
/// the second shares the first's dictionary), nested containers merged with a super encoder, and a frame that
/// writes a single value after a keyed container.
private struct Everything: Encodable {
    let probe: FrameProbe
    func encode(to encoder: any Encoder) throws {
        probe.record(encoder)
        var container = encoder.container(keyedBy: FrameKey.self)
        try container.encode(Leaf(probe: probe), forKey: FrameKey("leaf"))
        try container.encode([Leaf(probe: probe), Leaf(probe: probe, number: 2)], forKey: FrameKey("leaves"))
        let first = container.superEncoder(forKey: FrameKey("shared"))
        probe.record(first)
        var firstKeyed = first.container(keyedBy: FrameKey.self)
        try firstKeyed.encode(1, forKey: FrameKey("a"))
        let second = container.superEncoder(forKey: FrameKey("shared"))
        probe.record(second)
        var secondKeyed = second.container(keyedBy: FrameKey.self)
        try secondKeyed.encode(2, forKey: FrameKey("b"))
        var nested = container.nestedContainer(keyedBy: FrameKey.self, forKey: FrameKey("merged"))
        try nested.encode(3, forKey: FrameKey("c"))
        let merged = container.superEncoder(forKey: FrameKey("merged"))
        probe.record(merged)
        var mergedKeyed = merged.container(keyedBy: FrameKey.self)
        try mergedKeyed.encode(4, forKey: FrameKey("d"))
        try SingleAfterKeyed(probe: probe).encode(to: container.superEncoder(forKey: FrameKey("single")))
        try Leaf(probe: probe, number: 5).encode(to: container.superEncoder())
    }
}

/// Encodes a leaf and an array of leaves, then counts the leaves' frames still alive, while its own frame runs.
private struct ParentOfLeaves: Encodable {
    let probe: FrameProbe
    let aliveAfterChildren: FrameCount
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FrameKey.self)
        try container.encode(Leaf(probe: probe), forKey: FrameKey("leaf"))
        try container.encode([Leaf(probe: probe, number: 2)], forKey: FrameKey("leaves"))
        aliveAfterChildren.value = probe.alive
    }
}

private final class FrameCount: @unchecked Sendable {
    var value = -1
}

/// Writes a leaf, then fails.
private struct FailingLeaf: Encodable {
    struct Failure: Error {}
    let probe: FrameProbe
    func encode(to encoder: any Encoder) throws {
        probe.record(encoder)
        var container = encoder.container(keyedBy: FrameKey.self)
        try container.encode(Leaf(probe: probe), forKey: FrameKey("leaf"))
        throw Failure()
    }
}

extension UserInfoEncoder {
    /// Encodes `first` under "first" and `second` under "second" of one dictionary.
    fileprivate func encode(_ first: some Encodable, _ second: some Encodable) throws -> [AnyHashable: Any] {
        try encode(Pair(first: first, second: second))
    }
}

private struct Pair<First: Encodable, Second: Encodable>: Encodable {
    var first: First
    var second: Second
}

/// Opens a keyed container, then writes a single value instead: the single value wins.
private struct SingleAfterKeyed: Encodable {
    let probe: FrameProbe
    func encode(to encoder: any Encoder) throws {
        probe.record(encoder)
        var keyed = encoder.container(keyedBy: FrameKey.self)
        try keyed.encode(1, forKey: FrameKey("dropped"))
        var single = encoder.singleValueContainer()
        try single.encode("single")
    }
}

/// Writes through a keyed container, replaces it with a single value and then with a second keyed container, and
/// only then writes through the first container again: as before frames held their dictionaries, only what the
/// second container wrote is kept.
private struct StaleContainer: Encodable {
    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: FrameKey.self)
        try first.encode(1, forKey: FrameKey("first"))
        var single = encoder.singleValueContainer()
        try single.encode(2)
        var second = encoder.container(keyedBy: FrameKey.self)
        try second.encode(3, forKey: FrameKey("second"))
        try first.encode(4, forKey: FrameKey("late"))
    }
}

private struct StaleInside: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FrameKey.self)
        try container.encode(StaleContainer(), forKey: FrameKey("inner"))
    }
}

private struct FrameKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Every type the encoder writes directly, with a `Codable` form of its own that differs from what it writes.
private struct DirectValues: Encodable {
    var date = Date(timeIntervalSince1970: 1_000)
    var data = Data([1, 2])
    var url = URL(string: "https://example.com/a")
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    var decimal = Decimal(string: "0.1")
    var rect = CGRect(x: 1, y: 2, width: 3, height: 4)
    var point = CGPoint(x: 5, y: 6)
    var size = CGSize(width: 7, height: 8)
    var float = CGFloat(9.5)
}

@Suite("UserInfoEncoder: frames")
struct UserInfoEncoderFrameTests {
    @Test func everyFrameIsReleasedAfterEncode() throws {
        let probe = FrameProbe()
        let encoded = try UserInfoEncoder().encode(Everything(probe: probe))
        #expect(probe.recorded == 9)
        #expect(probe.alive == 0)
        // And what the frames wrote is all there.
        #expect((encoded["leaf"] as? [String: Any])?["number"] as? Int == 1)
        #expect((encoded["leaves"] as? [Any])?.count == 2)
        let shared = try #require(encoded["shared"] as? [String: Any])
        #expect(shared["a"] as? Int == 1 && shared["b"] as? Int == 2)
        let merged = try #require(encoded["merged"] as? [String: Any])
        #expect(merged["c"] as? Int == 3 && merged["d"] as? Int == 4)
        #expect(encoded["single"] as? String == "single")
        #expect((encoded["super"] as? [String: Any])?["number"] as? Int == 5)
    }

    /// Issue 32: a nested struct or array is finished when its `encode(to:)` returns, and its frame, emptied, encodes
    /// the next nested value: the frames alive while the parent runs are one per level of nesting, not one per value
    /// (before the fast finish the parent held every child's frame until the end; after it, each was released and a
    /// new one allocated for the next value).
    @Test func aNestedValuesFrameEncodesTheNextOneWhenItsEncodeReturns() throws {
        let probe = FrameProbe()
        let alive = FrameCount()
        let encoder = UserInfoEncoder()
        let encoded = try encoder.encode(ParentOfLeaves(probe: probe, aliveAfterChildren: alive))
        #expect(probe.recorded == 2)
        // The leaf's frame, then the array's frame (the same object, used again) and the frame of the array's leaf.
        #expect(alive.value == 2)
        #expect((encoded["leaf"] as? [String: Any])?["number"] as? Int == 1)
        #expect(((encoded["leaves"] as? [Any])?.first as? [String: Any])?["number"] as? Int == 2)
        // Five leaves in a row: one frame for all of them.
        let leaves = FrameProbe()
        _ = try encoder.encode(["leaves": (0..<5).map { Leaf(probe: leaves, number: $0) }] as [String: [Leaf]])
        #expect(leaves.recorded == 5)
        #expect(leaves.distinctAlive == 1)
    }

    /// The frames an encoder keeps for its next call go with it: nothing keeps them alive in a cycle.
    @Test func keptFramesAreReleasedWithTheEncoder() throws {
        let probe = FrameProbe()
        var encoder: UserInfoEncoder? = UserInfoEncoder()
        _ = try encoder?.encode(["outer": ["leaf": Leaf(probe: probe)]] as [String: [String: Leaf]])
        #expect(probe.alive == 1)
        encoder = nil
        #expect(probe.alive == 0)
    }

    @Test func framesAreReleasedWhenEncodingFails() {
        let probe = FrameProbe()
        #expect(throws: EncodingError.self) { try UserInfoEncoder().encode([Leaf(probe: probe)]) }
        #expect(throws: FailingLeaf.Failure.self) {
            try UserInfoEncoder().encode(["ok": Leaf(probe: probe)] as [String: Leaf], FailingLeaf(probe: probe))
        }
        #expect(probe.recorded == 4)
        #expect(probe.alive == 0)
    }

    @Test func aContainerHeldPastItsFrameWritesNowhere() throws {
        let top = try UserInfoEncoder().encode(StaleContainer())
        #expect(Set(top.keys.compactMap { $0.base as? String }) == ["second"])
        let nested = try UserInfoEncoder().encode(StaleInside())
        #expect((nested["inner"] as? [String: Any]).map { Set($0.keys) } == ["second"])
    }

    @Test func directTypesAreWrittenDirectly() throws {
        let encoded = try UserInfoEncoder().encode(DirectValues())
        #expect(encoded["date"] as? Date == Date(timeIntervalSince1970: 1_000))
        #expect(encoded["data"] as? Data == Data([1, 2]))
        #expect(encoded["url"] as? String == "https://example.com/a")
        #expect(encoded["uuid"] as? String == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(encoded["decimal"] as? String == "0.1")
        #expect(encoded["rect"] as? [[Double]] == [[1, 2], [3, 4]])
        #expect(encoded["point"] as? [Double] == [5, 6])
        #expect(encoded["size"] as? [Double] == [7, 8])
        #expect(encoded["float"] as? Double == 9.5)
        for value in [
            try UserInfoEncoder().encodeValue(CGFloat(9.5)), try UserInfoEncoder().encodeValue([CGFloat(9.5)]),
        ] {
            #expect(value as? Double == 9.5 || (value as? [Any])?.first as? Double == 9.5)
        }
    }

    /// `encode(_:)` refuses every direct type, which is a single value, before encoding anything.
    @Test func directTypesAreNotDictionaries() {
        let encoder = UserInfoEncoder()
        #expect(throws: EncodingError.self) { try encoder.encode(Date()) }
        #expect(throws: EncodingError.self) { try encoder.encode(CGRect.zero) }
        #expect(throws: EncodingError.self) { try encoder.encode(CGFloat(1)) }
        #expect(throws: EncodingError.self) { try encoder.encode(Decimal(1)) }
    }

    /// Key names reach the cache one at a time: a second type of the same key type with more keys, and a
    /// container that meets a new key after the cache was read.
    @Test func keyNamesGrowAcrossTypesOfOneKeyType() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .affixed(prefix: "P", suffix: "S")
        struct Writer: Encodable {
            let keys: [String]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: FrameKey.self)
                for (index, key) in keys.enumerated() { try container.encode(index, forKey: FrameKey(key)) }
            }
        }
        let first = try encoder.encode(Writer(keys: ["one", "two"]))
        #expect(first["POneS"] as? Int == 0 && first["PTwoS"] as? Int == 1)
        let second = try encoder.encode(Writer(keys: ["two", "three", "one", "three"]))
        #expect(Set(second.keys.compactMap { $0.base as? String }) == ["PTwoS", "PThreeS", "POneS"])
        #expect(second["PThreeS"] as? Int == 3)
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let snake = try encoder.encode(Writer(keys: ["oneTwo", "one"]))
        #expect(Set(snake.keys.compactMap { $0.base as? String }) == ["one_two", "one"])
    }
}

/// A key type whose dictionaries are keyed containers with the same coding key type as `[String: V]`'s.
private enum Flavor: String, CodingKeyRepresentable, Hashable, Encodable {
    case sweetTooth
}

/// The same for a single value written twice: the object's `deinit` writes a third value through a held copy.
private struct SingleValueReplacedWhileWriting: Encodable {
    struct Inner: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            let held = HeldSingleValue(container)
            try container.encode(UserInfoPassthrough(wrappedValue: ReleaseHook { try? held.container.encode(3) }))
            try container.encode(2)
        }
    }
    var value = Inner()
}

/// A copy of a single-value container, kept in an object of its own.
private final class HeldSingleValue {
    var container: any SingleValueEncodingContainer
    init(_ container: any SingleValueEncodingContainer) { self.container = container }
}

extension UserInfoEncoderFrameTests {
    /// Whether a frame's keys are a `[String: V]`'s is decided per encoded type and cached: alternating types on one
    /// encoder, and a `[Flavor: V]` whose keys are renamed sharing a coding key type with `[String: V]`, whose keys
    /// are not.
    @Test func stringKeyedDictionariesStayVerbatimBesideOtherTypes() throws {
        struct Sweet: Encodable { var sweetTooth = 1 }
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        for _ in 0..<3 {
            #expect(try encoder.encode(Sweet())["sweet_tooth"] as? Int == 1)
            #expect(try encoder.encode([Flavor.sweetTooth: 2])["sweet_tooth"] as? Int == 2)
            #expect(try encoder.encode(["sweetTooth": 3] as [String: Int])["sweetTooth"] as? Int == 3)
            let nested = try encoder.encode(["outerKey": ["sweetTooth": 4]] as [String: [String: Int]])
            #expect((nested["outerKey"] as? [String: Int]) == ["sweetTooth": 4])
        }
    }
}

/// Run under ThreadSanitizer by `scripts/tsan.sh` (its filter matches `ConcurrencyTests`).
/// Runs a closure when it is released.
private final class ReleaseHook {
    let onRelease: () -> Void
    init(_ onRelease: @escaping () -> Void) { self.onRelease = onRelease }
    deinit { onRelease() }
}

/// A copy of a keyed container, kept in an object of its own so that a `deinit` can write through it.
private final class HeldContainer<Key: CodingKey> {
    var container: KeyedEncodingContainer<Key>
    init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
}

/// Writes key `k` twice: first an object passed through as it is, then a number. The object's `deinit`, which runs
/// when the second write replaces it, writes key `late` into the same container.
private struct ReplacedWhileWriting: Encodable {
    enum CodingKeys: String, CodingKey { case k, late }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let held = HeldContainer(container)
        try container.encode(
            UserInfoPassthrough(wrappedValue: ReleaseHook { try? held.container.encode("from deinit", forKey: .late) }),
            forKey: .k)
        try container.encode(2, forKey: .k)
    }
}

extension UserInfoEncoderFrameTests {
    /// The encoder's frame skips run-time exclusivity checks, so a write must never run user code while it changes
    /// the frame: a value that a second write for its key replaces is released after that write, and its `deinit`
    /// may write to the same container. Before, the release ran inside the write, and the nested write was a
    /// "simultaneous accesses" trap.
    @Test func aReplacedValueIsReleasedAfterTheWriteThatReplacedIt() throws {
        let encoded = try UserInfoEncoder().encode(ReplacedWhileWriting())
        #expect(encoded["k"] as? Int == 2)
        #expect(encoded["late"] as? String == "from deinit")
        #expect(encoded.count == 2)

        let single = try UserInfoEncoder().encode(SingleValueReplacedWhileWriting())
        #expect(single["value"] as? Int == 3)
    }
}

@Suite("UserInfoEncoder: key cache shared between threads")
struct EncoderKeyCacheConcurrencyTests {
    private struct Wide: Encodable, Sendable {
        var index: Int
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: FrameKey.self)
            // Each thread meets the keys in its own order, so that they are added to the cache concurrently.
            for offset in 0..<12 {
                let key = (index + offset) % 12
                try container.encode(key, forKey: FrameKey("keyNumber\(key)"))
            }
        }
    }

    @Test func freshKeyCachesFilledByManyThreads() {
        let failures = NSLock()
        nonisolated(unsafe) var messages: [String] = []
        for strategy in [
            UserInfoEncoder.KeyEncodingStrategy.affixed(prefix: "Pre", suffix: "Suf"), .convertToSnakeCase,
        ] {
            for _ in 0..<10 {
                let encoder = UserInfoEncoder()
                encoder.keyEncodingStrategy = strategy
                DispatchQueue.concurrentPerform(iterations: 16) { index in
                    do {
                        let encoded = try encoder.encode(Wide(index: index))
                        for key in 0..<12 {
                            let name: String
                            if case .convertToSnakeCase = strategy {
                                name = "key_number\(key)"
                            } else {
                                name = "PreKeyNumber\(key)Suf"
                            }
                            if encoded[name] as? Int != key { failures.withLock { messages.append("\(encoded)") } }
                        }
                    } catch {
                        failures.withLock { messages.append("\(error)") }
                    }
                }
            }
        }
        #expect(failures.withLock { messages }.isEmpty)
    }
}
