import Foundation
import Testing

@testable import Notificatable

/// Property-based tests of the coder's promise: any userInfo tree either decodes or throws a `DecodingError` whose
/// coding path leads to the offending value, and any `Encodable` value comes back equal from a round trip.
///
/// CI runs ``decodeCases`` random trees, each decoded into one of the ``ReliabilityTargets``, and ``roundTripCases``
/// random round trips. A manual run takes millions:
///
/// ```
/// NOTIFICATABLE_PROPERTY_CASES=5000000 swift test --filter ReliabilityPropertyTests
/// ```
///
/// Every run draws a new master seed unless `NOTIFICATABLE_PROPERTY_SEED` is set. A failure names the seed of the
/// failing case; `NOTIFICATABLE_PROPERTY_SEED=<that seed> NOTIFICATABLE_PROPERTY_CASES=1` replays exactly that case.
@Suite("Reliability: property-based decoding and round trips")
struct ReliabilityPropertyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let decodeCases = environment["NOTIFICATABLE_PROPERTY_CASES"].flatMap { Int($0) } ?? 100_000
    static let roundTripCases = max(1, decodeCases / 20)
    static let masterSeed: UInt64 =
        environment["NOTIFICATABLE_PROPERTY_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0...UInt64.max)
    /// Shards run in parallel; each one covers a contiguous range of case numbers.
    static let shards = 8

    /// The seed of case number `index`: case 0 uses the master seed itself, so a printed case seed replays alone.
    static func caseSeed(_ index: Int) -> UInt64 {
        masterSeed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
    }

    static func range(of shard: Int, total: Int) -> Range<Int> {
        let size = (total + shards - 1) / shards
        return min(total, shard * size)..<min(total, (shard + 1) * size)
    }

    @Test(arguments: 0..<shards)
    func randomTreesDecodeOrFailAtTheOffendingValue(shard: Int) {
        var failures = 0
        for index in Self.range(of: shard, total: Self.decodeCases) {
            let seed = Self.caseSeed(index)
            var entropy = ReliabilitySplitMix64(seed: seed)
            let target = entropy.below(ReliabilityTargets.count)
            guard let problem = ReliabilityHarness.decodeCase(&entropy, targets: [target]) else { continue }
            Issue.record(
                """
                case \(index) of \(Self.decodeCases): \(problem)
                replay with NOTIFICATABLE_PROPERTY_SEED=\(seed) NOTIFICATABLE_PROPERTY_CASES=1 \
                (master seed \(Self.masterSeed))
                """
            )
            failures += 1
            if failures == 3 { return }
        }
    }

    @Test(arguments: 0..<shards)
    func randomValuesRoundTripToEqualValues(shard: Int) {
        var failures = 0
        for index in Self.range(of: shard, total: Self.roundTripCases) {
            let seed = Self.caseSeed(index)
            var entropy = ReliabilitySplitMix64(seed: seed)
            _ = entropy.below(ReliabilityTargets.count)  // the same first draw as a decode case
            guard let problem = ReliabilityHarness.roundTripCase(&entropy) else { continue }
            Issue.record(
                """
                round trip \(index) of \(Self.roundTripCases): \(problem)
                replay with NOTIFICATABLE_PROPERTY_SEED=\(seed) NOTIFICATABLE_PROPERTY_CASES=5 (master seed \(Self.masterSeed))
                """
            )
            failures += 1
            if failures == 3 { return }
        }
    }

    /// The path check itself must be able to fail: a wrong path, a present key reported missing and a non-null
    /// reported as null are all caught.
    @Test func thePathCheckRejectsWrongPaths() {
        let tree: [AnyHashable: Any] = ["a": ["b": 1] as [String: Any], "list": [NSNull(), "x"] as [Any]]
        let setup = ReliabilityDecoderSetup(choice: 0)
        func context(_ path: [any CodingKey]) -> DecodingError.Context { .init(codingPath: path, debugDescription: "") }
        let index = { (i: Int) in AnyKey(intValue: i) }
        #expect(
            ReliabilityPathCheck.problem(
                with: .keyNotFound(AnyKey(stringValue: "b"), context([AnyKey(stringValue: "a")])), in: tree,
                setup: setup) != nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .keyNotFound(AnyKey(stringValue: "c"), context([AnyKey(stringValue: "a")])), in: tree,
                setup: setup) == nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .valueNotFound(Int.self, context([AnyKey(stringValue: "list"), index(1)])), in: tree, setup: setup
            ) != nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .valueNotFound(Int.self, context([AnyKey(stringValue: "list"), index(0)])), in: tree, setup: setup
            ) == nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .valueNotFound(Int.self, context([AnyKey(stringValue: "list"), index(2)])), in: tree, setup: setup
            ) == nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .typeMismatch(Int.self, context([AnyKey(stringValue: "a"), AnyKey(stringValue: "b")])), in: tree,
                setup: setup) != nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .typeMismatch(Int.self, context([AnyKey(stringValue: "list"), index(1)])), in: tree, setup: setup)
                == nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .dataCorrupted(context([AnyKey(stringValue: "a"), AnyKey(stringValue: "zz")])), in: tree,
                setup: setup) != nil)
        #expect(
            ReliabilityPathCheck.problem(
                with: .dataCorrupted(context([AnyKey(stringValue: "nope"), AnyKey(stringValue: "b")])), in: tree,
                setup: setup) != nil)
    }

    /// Every kind of value, every target and every decoder setup is reached within the CI budget.
    @Test func theGeneratorCoversEveryKind() {
        var entropy = ReliabilitySplitMix64(seed: 1)
        var kinds = Set<String>()
        for _ in 0..<3000 {
            var generator = ReliabilityTreeGenerator(entropy: entropy)
            let value = generator.value(depth: 0)
            kinds.insert(String(describing: type(of: value)))
            generator.breakCycles()
            entropy = generator.entropy
        }
        for expected in [
            "NSNumber", "Int", "Int8", "UInt64", "Double", "Float", "CGFloat", "Bool", "String", "NSString", "Date",
            "Data", "URL", "NSNull", "Decimal", "NSDecimalNumber", "Array<Any>", "Dictionary<String, Any>",
            "Dictionary<AnyHashable, Any>", "NSMutableDictionary", "NSMutableArray", "Optional<Any>", "Array<Int>",
        ] {
            #expect(kinds.contains(expected), "never generated \(expected); got \(kinds.sorted())")
        }
        #expect(kinds.contains { $0.contains("NSValue") || $0.contains("NSSpecialValue") })
    }
}
