import Foundation
import Testing

@testable import Notificatable

// Issue 32: a frame keeps the keyed container it made for its own dictionary and hands it out again for its next
// value. These tests pin what that must not change: the container follows the key type and the encoded type (which
// decides how keys are written), and no frame is kept alive after its call, whether the value returned, threw, or
// kept its encoder and used it later.

private struct KeptKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A weak reference to the frame a value was encoded in, filled by the value.
private final class FrameProbe: @unchecked Sendable {
    weak var frame: AnyObject?
    var encoder: (any Encoder)?
}

/// Writes a key, records its frame, and throws.
private struct ThrowsAfterWriting: Encodable {
    struct Failure: Error {}
    let probe: FrameProbe

    func encode(to encoder: any Encoder) throws {
        probe.frame = encoder as AnyObject
        var container = encoder.container(keyedBy: KeptKey.self)
        try container.encode(1, forKey: KeptKey("written"))
        throw Failure()
    }
}

/// Writes a key, records its frame, and keeps its encoder.
private struct KeepsItsEncoder: Encodable {
    let probe: FrameProbe

    func encode(to encoder: any Encoder) throws {
        probe.frame = encoder as AnyObject
        probe.encoder = encoder
        var container = encoder.container(keyedBy: KeptKey.self)
        try container.encode(1, forKey: KeptKey("written"))
    }
}

@Suite("UserInfoEncoder: keyed containers kept by their frames")
struct UserInfoEncoderKeptContainerTests {
    /// `[Int: V]` and `[String: V]` use one key type, but a strategy renames only the integer-keyed dictionary's keys
    /// (which are numbers, written as they are) and never the string-keyed one's: a frame that encoded the first
    /// must not hand its container to the second.
    @Test func aKeptContainerFollowsTheEncodedType() throws {
        struct Both: Encodable {
            var numbers: [Int: Int] = [7: 1]
            var names: [String: Int] = ["someName": 2]
            var more: [Int: Int] = [8: 3]
            var again: [String: Int] = ["otherName": 4]
        }
        for strategy: UserInfoEncoder.KeyEncodingStrategy in [
            .convertToSnakeCase, .affixed(prefix: "P", suffix: "S"),
        ] {
            let encoder = UserInfoEncoder()
            encoder.keyEncodingStrategy = strategy
            for _ in 0..<2 {
                let encoded = try encoder.encode(Both())
                func value(_ property: String) -> [String: Int]? {
                    encoded.first { ($0.key.base as? String)?.lowercased().contains(property) == true }?.value
                        as? [String: Int]
                }
                #expect(value("names") == ["someName": 2], "\(strategy)")
                #expect(value("again") == ["otherName": 4], "\(strategy)")
                #expect(value("numbers") == ["7": 1], "\(strategy)")
            }
        }
    }

    /// One type whose `encode(to:)` asks for a different key type case by case, element after element of an array
    /// (one frame encodes them all): each element's container has its own key type.
    @Test func aKeptContainerFollowsTheKeyTypeOfOneEncodedType() throws {
        enum Shape: Encodable {
            case circle(radius: Int)
            case square(side: Int)

            enum CircleKeys: CodingKey { case radius, kind }
            enum SquareKeys: CodingKey { case side, kind }

            func encode(to encoder: any Encoder) throws {
                switch self {
                case .circle(let radius):
                    var container = encoder.container(keyedBy: CircleKeys.self)
                    try container.encode(radius, forKey: .radius)
                    try container.encode("circle", forKey: .kind)
                case .square(let side):
                    var container = encoder.container(keyedBy: SquareKeys.self)
                    try container.encode(side, forKey: .side)
                    try container.encode("square", forKey: .kind)
                }
            }
        }
        struct Drawing: Encodable {
            var shapes: [Shape]
        }
        let encoder = UserInfoEncoder()
        for _ in 0..<2 {
            let encoded = try encoder.encode(
                Drawing(shapes: [.circle(radius: 1), .square(side: 2), .circle(radius: 3)]))
            let shapes = try #require(encoded["shapes"] as? [[String: Any]])
            #expect(
                shapes.map { $0 as NSDictionary } == [
                    ["radius": 1, "kind": "circle"], ["side": 2, "kind": "square"], ["radius": 3, "kind": "circle"],
                ])
        }
    }

    /// A value that throws after writing through its container: its frame goes with the call (a kept container
    /// that still held the frame would keep it, and the container with it, alive for ever).
    @Test func aFrameWhoseValueThrewIsReleased() {
        struct Nested: Encodable {
            let inner: ThrowsAfterWriting
        }
        for nested in [false, true] {
            let probe = FrameProbe()
            do {
                let encoder = UserInfoEncoder()
                #expect(throws: ThrowsAfterWriting.Failure.self) {
                    if nested {
                        _ = try encoder.encode(Nested(inner: ThrowsAfterWriting(probe: probe)))
                    } else {
                        _ = try encoder.encode(ThrowsAfterWriting(probe: probe))
                    }
                }
            }
            #expect(probe.frame == nil, nested ? "nested" : "top level")
        }
    }

    /// A value that kept its encoder, used after its call: the container it asks for then is an ordinary one, and
    /// the frame goes once the value lets the encoder go.
    @Test func anEncoderKeptPastItsCallIsReleasedWithItsValue() throws {
        struct Nested: Encodable {
            let inner: KeepsItsEncoder
        }
        for nested in [false, true] {
            let probe = FrameProbe()
            do {
                let encoder = UserInfoEncoder()
                if nested {
                    _ = try encoder.encode(Nested(inner: KeepsItsEncoder(probe: probe)))
                } else {
                    _ = try encoder.encode(KeepsItsEncoder(probe: probe))
                }
                let kept = try #require(probe.encoder)
                var late = kept.container(keyedBy: KeptKey.self)
                try late.encode(2, forKey: KeptKey("late"))
                // The next call does not see the late write.
                let next = try encoder.encode(["own": 3])
                #expect((next as NSDictionary) == ["own": 3])
            }
            probe.encoder = nil
            #expect(probe.frame == nil, nested ? "nested" : "top level")
        }
    }
}
