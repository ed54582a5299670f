import Foundation

// MARK: - Issue 32: the least any `Encoder` can do, against the same literals
//
// The encode rows compare `UserInfoEncoder` with a dictionary literal, which pays for none of `Encodable`'s protocol:
// the synthesized `encode(to:)` asking for a container, each value passing through `KeyedEncodingContainer`'s box and
// a generic `encode<T>`, a key turned into its string. `FloorEncoder` is that protocol and nothing else: one reused
// object per level, a cached container, values stored as they come. It checks nothing, has no strategies, no coding
// path and no error reporting; it knows only the types of the rows below (a date, a rect, a point by metatype). What it
// costs over the literal is what any `Encoder` costs on this platform, so these rows show how much of
// `UserInfoEncoder`'s ratio is the protocol's.

/// An `Encoder` that does the least an encoder can: see the comment above. For measurement only.
final class FloorEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// Where a keyed container writes: `top` at the top level, `nested` below it.
    let isTopLevel: Bool
    var top: [AnyHashable: Any] = [:]
    var nested: [String: Any] = [:]
    var array: [Any] = []
    var wroteArray = false
    /// The frame that encodes this one's nested values, reused for each.
    private var child: FloorEncoder?
    /// The keyed container made for this frame, and its key type.
    private var cached: (key: ObjectIdentifier, box: AnyObject)?

    init(isTopLevel: Bool) { self.isTopLevel = isTopLevel }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let cached, cached.key == ObjectIdentifier(Key.self) {
            return unsafeBitCast(cached.box, to: KeyedEncodingContainer<Key>.self)
        }
        let container = KeyedEncodingContainer(FloorKeyedContainer<Key>(encoder: self))
        cached = (ObjectIdentifier(Key.self), unsafeBitCast(container, to: AnyObject.self))
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        wroteArray = true
        return FloorUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { FloorUnkeyedContainer(encoder: self) }

    /// A value as this floor writes it: a date, a rect or a point directly, anything else through its `encode(to:)`.
    func plain<T: Encodable>(_ value: T) -> Any {
        // Told by the metatype, which costs no dynamic cast.
        if T.self == Date.self { return unsafeBitCast(value, to: Date.self) }
        if T.self == CGRect.self {
            let rect = unsafeBitCast(value, to: CGRect.self)
            return [
                [Double(rect.origin.x), Double(rect.origin.y)] as [Any],
                [Double(rect.size.width), Double(rect.size.height)] as [Any],
            ] as [Any]
        }
        if T.self == CGPoint.self {
            let point = unsafeBitCast(value, to: CGPoint.self)
            return [Double(point.x), Double(point.y)] as [Any]
        }
        let frame = child ?? FloorEncoder(isTopLevel: false)
        child = nil
        try? value.encode(to: frame)
        let written: Any
        if frame.wroteArray {
            written = frame.array
            frame.array = []
            frame.wroteArray = false
        } else {
            written = frame.nested
            frame.nested = [:]
        }
        child = frame
        return written
    }

    func store(_ value: Any, for key: String) {
        if isTopLevel { top[key] = value } else { nested[key] = value }
    }

    /// Encodes `value` into a `userInfo`-shaped dictionary.
    func encode<T: Encodable>(_ value: T) -> [AnyHashable: Any] {
        // Room for twice the last value's keys, as `UserInfoEncoder` allocates: fewer keys share a bucket.
        top = [AnyHashable: Any](minimumCapacity: lastCount * 2)
        try? value.encode(to: self)
        defer { top = [:] }
        lastCount = top.count
        return top
    }

    private var lastCount = 4
}

struct FloorKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    unowned(unsafe) let encoder: FloorEncoder
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) {}
    mutating func encode(_ value: String, forKey key: Key) { encoder.store(value, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) { encoder.store(value, for: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) { encoder.store(value, for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) { encoder.store(value, for: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {
        encoder.store(encoder.plain(value), for: key.stringValue)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    { encoder.container(keyedBy: keyType) }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

/// The floor's unkeyed and single-value container: values appended to the frame's array.
struct FloorUnkeyedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    unowned(unsafe) let encoder: FloorEncoder
    var codingPath: [any CodingKey] { [] }
    var count: Int { encoder.array.count }
    mutating func encodeNil() {}
    mutating func encode(_ value: String) { encoder.array.append(value) }
    mutating func encode(_ value: Double) { encoder.array.append(value) }
    mutating func encode(_ value: Int) { encoder.array.append(value) }
    mutating func encode(_ value: Bool) { encoder.array.append(value) }
    mutating func encode<T: Encodable>(_ value: T) { encoder.array.append(encoder.plain(value)) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    { encoder.container(keyedBy: keyType) }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { encoder }
}

/// A floor row: `value` through `FloorEncoder` against `baseline`, the literal that writes `literal`; its check
/// requires the floor to write what the literal holds, or it would measure something else.
private func floorComparison<T: Encodable>(
    id: String, row: String, value: T, baseline: Workload, literal: @escaping () -> [AnyHashable: Any]
) -> Comparison {
    Comparison(
        id: id, row: row, group: "encode: the floor of any Encoder",
        candidate: Workload(label: "FloorEncoder, the least an Encoder does") {
            let encoder = FloorEncoder(isTopLevel: true)
            return { n in repeatOps(n) { UInt64(encoder.encode(value).count) } }
        },
        baseline: baseline,
        check: {
            let written = FloorEncoder(isTopLevel: true).encode(value)
            let expected = literal()
            return NSDictionary(dictionary: written).isEqual(NSDictionary(dictionary: expected))
                ? nil : "the floor wrote \(written), the literal is \(expected)"
        }
    )
}

/// The floor's rows: the encode rows' literals against `FloorEncoder`.
func encoderFloorComparisons() -> [Comparison] {
    [
        floorComparison(
            id: "encode-keyboard-floor", row: "FloorEncoder, KeyboardInfo", value: KeyboardInfo.sample,
            baseline: CoderWorkloads.handWrittenLiteral(affixedKeys: false),
            literal: { HandWrittenKeyboardWriter.defaultKeys(.sample) }),
        floorComparison(
            id: "encode-small-floor", row: "FloorEncoder, 2-key struct", value: FrameAndDuration.sample,
            baseline: SmallPayloadWorkloads.literalSmall, literal: { HandWrittenSmallWriter.defaultKeys(.sample) }),
        floorComparison(
            id: "encode-nested-floor", row: "FloorEncoder, nested struct", value: NestedOrder.sample,
            baseline: RelayWorkloads.literalNested, literal: { NestedOrder.literal(.sample) }),
    ]
}
