import Foundation
import Notificatable
import Testing

// Issue 14, items 2, 3 and 4 for the coder: no trap for an `NSValue` that Foundation cannot describe, an encoder
// depth cap in the decoder's units, and (in CoderKeyStrategyTests) deterministic snake-case collisions.

/// An `NSValue` subclass that overrides nothing: Foundation traps when it is asked for `objCType` or its value.
private final class OpaqueValue: NSValue, @unchecked Sendable {}

/// An `NSValue` subclass that claims to hold a point but cannot hand over its bytes (`getValue(_:)` traps).
private final class LyingValue: NSValue, @unchecked Sendable {
    override var objCType: UnsafePointer<CChar> { NSValue(point: .zero).objCType }
}

/// The decoder's depth cap, which the encoder shares.
private let cap = 512

/// A linked list as deep as you like.
private final class Node: Codable, @unchecked Sendable {
    let value: Int
    var next: Node?
    init(_ value: Int, next: Node?) {
        self.value = value
        self.next = next
    }

    static func list(length: Int) -> Node {
        var node = Node(length - 1, next: nil)
        for index in stride(from: length - 2, through: 0, by: -1) { node = Node(index, next: node) }
        return node
    }

    /// Unlinks the list node by node, so that releasing a long list does not recurse.
    static func release(_ head: Node) {
        var node = head.next
        head.next = nil
        while let current = node {
            node = current.next
            current.next = nil
        }
    }

    var count: Int {
        var count = 0
        var node: Node? = self
        while let current = node {
            count += 1
            node = current.next
        }
        return count
    }
}

/// A tree whose levels each cost two frames (the node and its array of children), as an indirect enum's do.
private struct Tree: Codable, Equatable {
    var children: [Tree]

    static func chain(levels: Int) -> Tree {
        var tree = Tree(children: [])
        for _ in 1..<levels { tree = Tree(children: [tree]) }
        return tree
    }

    var levels: Int {
        var levels = 1
        var tree = self
        while let child = tree.children.first {
            levels += 1
            tree = child
        }
        return levels
    }
}

/// Recurses through super encoders and super decoders, as deep as `depth` says.
private struct SuperChain: Codable {
    var depth: Int
    init(depth: Int) { self.depth = depth }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        depth = try container.decode(Int.self, forKey: "depth")
        if depth > 0 { _ = try SuperChain(from: container.superDecoder()) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        try container.encode(depth, forKey: "depth")
        if depth > 0 { try SuperChain(depth: depth - 1).encode(to: container.superEncoder()) }
    }
}

@Suite("Coder: traps and stack overflows (issue 14)")
struct CoderReliabilityTests {
    // MARK: - NSValue that Foundation cannot describe

    @Test(arguments: [
        Sample("NSValue()", NSValue()), Sample("a subclass that overrides nothing", OpaqueValue()),
        Sample("a subclass that overrides only objCType", LyingValue()),
    ])
    func anNSValueWithoutObjCTypeIsATypeMismatch(_ sample: Sample) {
        let decoder = UserInfoDecoder()
        expectDecodingError(.typeMismatch, at: ["value"], type: String.self) {
            try decodeBoxed(String.self, sample.value, using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Int.self) {
            try decodeBoxed(Int.self, sample.value, using: decoder)
        }
        expectDecodingError(.typeMismatch, at: ["value"], type: Bool.self) {
            try decodeBoxed(Bool.self, sample.value, using: decoder)
        }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([CGRect].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([CGPoint].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([CGSize].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([NSRange].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([Date].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([Decimal].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: [0]) { try decoder.decode([URL].self, fromValue: [sample.value]) }
        expectDecodingError(.typeMismatch, at: ["value"]) {
            try decoder.decode(Box<[String: Int]>.self, from: ["value": sample.value])
        }
    }

    // MARK: - Encoder depth

    /// A 10,000-node list is refused at the cap, with the path, instead of overflowing the stack.
    @Test func aTenThousandNodeListIsRefusedNotOverflowed() throws {
        let list = Node.list(length: 10_000)
        defer { Node.release(list) }
        do {
            _ = try UserInfoEncoder().encode(list)
            Issue.record("a 10,000-node list encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.count == cap)
            #expect(context.codingPath.allSatisfy { $0.stringValue == "next" })
            #expect(context.debugDescription.contains("512"))
        }
        #expect(throws: EncodingError.self) { try UserInfoEncoder().encodeValue(list) }
    }

    /// At the boundary, what the encoder writes the decoder reads back, and one node more is refused by both.
    @Test func theEncoderAndTheDecoderShareOneCap() throws {
        let longest = Node.list(length: cap)
        defer { Node.release(longest) }
        let written = try UserInfoEncoder().encode(longest)
        #expect(try UserInfoDecoder().decode(Node.self, from: written).count == cap)

        let tooLong = Node.list(length: cap + 1)
        defer { Node.release(tooLong) }
        #expect(throws: EncodingError.self) { try UserInfoEncoder().encode(tooLong) }
        // Built by hand, the same tree is refused by the decoder too.
        var tree: [String: Any] = ["value": cap]
        for index in stride(from: cap - 1, through: 0, by: -1) { tree = ["value": index, "next": tree] }
        expectDecodingError(.dataCorrupted, at: Array(repeating: "next", count: cap)) {
            try UserInfoDecoder().decode(Node.self, from: tree)
        }
    }

    /// A 300-level tree of two frames a level: either it round-trips, or the encoder refuses it with the path.
    @Test(arguments: [100, 255, 256, 300])
    func aDeepTreeRoundTripsOrIsRefusedByTheEncoder(levels: Int) throws {
        let tree = Tree.chain(levels: levels)
        let written: [AnyHashable: Any]
        do {
            written = try UserInfoEncoder().encode(tree)
        } catch let EncodingError.invalidValue(_, context) {
            #expect(levels > 256)
            #expect(context.codingPath.count == cap)
            #expect(context.debugDescription.contains("nested more than 512 levels deep"))
            return
        }
        #expect(levels <= 256)
        #expect(try UserInfoDecoder().decode(Tree.self, from: written).levels == levels)
    }

    @Test func superEncodersCountTowardsTheCap() throws {
        let written = try UserInfoEncoder().encode(SuperChain(depth: cap - 1))
        #expect(try UserInfoDecoder().decode(SuperChain.self, from: written).depth == cap - 1)
        do {
            _ = try UserInfoEncoder().encode(SuperChain(depth: 10_000))
            Issue.record("a 10,000-level super chain encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.count == cap)
            #expect(context.codingPath.allSatisfy { $0.stringValue == "super" })
        }
    }
}

extension HandleDefaultCenterTests {
    /// Through a handle that posts plain keys, a payload the encoder refuses for its depth is reported (to the global
    /// handler, which this serialized suite may replace), and the typed post still goes out.
    @Test func aTooDeepPayloadPostedWithPlainKeysIsReportedNotACrash() throws {
        let recorded = FailureRecorder()
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = recorded.handler
        defer { NotificationDecodingFailure.handler = previous }

        let center = NotificationCenter()
        let handle = Notificatable<DeepPayload>.name(uniqueName()).postingPlainKeys()
        let received = ValueRecorder<Int>()
        let subscription = handle.subscribe(center: center) { note in received.append(note.userInfo.list.count) }
        defer { subscription.dispose() }
        let list = Node.list(length: 10_000)
        defer { Node.release(list) }
        handle.post(DeepPayload(list: list), center: center)

        #expect(received.values == [10_000])
        let failure = try #require(recorded.values.first { $0.name == handle.name })
        #expect(failure.kind == .plainKeysEncodingFailed)
        #expect(failure.codingPath.count == cap)
        #expect(failure.codingPath.first?.stringValue == "list")
        #expect(failure.error is EncodingError)
    }
}

private struct DeepPayload: Codable, Sendable {
    var list: Node
}
