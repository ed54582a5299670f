import Foundation
import Notificatable

// MARK: - Issue 11: small legacy payloads, the fixed cost of a decode, the encoder on a small struct

/// A 1-key legacy payload: the keyboard's end frame, boxed in an `NSValue` as the system posts it.
struct FrameOnly: Codable, Equatable, Sendable {
    var frameEnd: CGRect

    static let sample = FrameOnly(frameEnd: KeyboardInfo.sample.frameEnd)

    var digest: UInt64 { UInt64(truncatingIfNeeded: Int(frameEnd.maxY + frameEnd.width)) }
}

/// A 2-key legacy payload: one `NSValue` rect and one `NSNumber`, the shape of issue 11's target row.
struct FrameAndDuration: Codable, Equatable, Sendable {
    var frameEnd: CGRect
    var animationDuration: Double

    static let sample = FrameAndDuration(
        frameEnd: KeyboardInfo.sample.frameEnd, animationDuration: KeyboardInfo.sample.animationDuration
    )

    var digest: UInt64 {
        UInt64(truncatingIfNeeded: Int(frameEnd.maxY + frameEnd.width)) &+ animationDuration.bitPattern
    }
}

/// A struct with no properties: decoding it measures the fixed cost of a decode call.
struct EmptyInfo: Codable, Equatable, Sendable {}

/// A 1-key struct read from one `NSNumber`: the fixed cost plus the cheapest value read.
struct DurationOnly: Codable, Equatable, Sendable {
    var animationDuration: Double

    static let sample = DurationOnly(animationDuration: KeyboardInfo.sample.animationDuration)
}

enum SmallPayloadFixture {
    /// `[UIKeyboardFrameEndUserInfoKey: NSValue(rect:)]`.
    static func oneKey() -> [AnyHashable: Any] {
        [KeyboardKey.frameEnd: NSValue(rect: FrameOnly.sample.frameEnd)]
    }

    /// The 1-key payload plus `UIKeyboardAnimationDurationUserInfoKey: NSNumber`.
    static func twoKeys() -> [AnyHashable: Any] {
        [
            KeyboardKey.frameEnd: NSValue(rect: FrameAndDuration.sample.frameEnd),
            KeyboardKey.animationDuration: NSNumber(value: FrameAndDuration.sample.animationDuration),
        ]
    }

    /// `[UIKeyboardAnimationDurationUserInfoKey: NSNumber]`.
    static func durationOnly() -> [AnyHashable: Any] {
        [KeyboardKey.animationDuration: NSNumber(value: DurationOnly.sample.animationDuration)]
    }
}

/// The unchecked casts of the independent benchmark: `as? NSValue` and `.rectValue` (no check of what the value
/// holds), and `as? Double` for the number, or `as? NSNumber` and `.doubleValue` in the `fastNumber` variant.
enum UncheckedReader {
    @inline(__always)
    static func frameOnly(_ u: [AnyHashable: Any]) -> FrameOnly? {
        guard let frame = (u[KeyboardKey.frameEnd] as? NSValue)?.rectValue else { return nil }
        return FrameOnly(frameEnd: frame)
    }

    @inline(__always)
    static func frameAndDuration(_ u: [AnyHashable: Any]) -> FrameAndDuration? {
        guard let frame = (u[KeyboardKey.frameEnd] as? NSValue)?.rectValue,
            let duration = u[KeyboardKey.animationDuration] as? Double
        else { return nil }
        return FrameAndDuration(frameEnd: frame, animationDuration: duration)
    }

    @inline(__always)
    static func frameAndDurationFastNumber(_ u: [AnyHashable: Any]) -> FrameAndDuration? {
        guard let frame = (u[KeyboardKey.frameEnd] as? NSValue)?.rectValue,
            let duration = (u[KeyboardKey.animationDuration] as? NSNumber)?.doubleValue
        else { return nil }
        return FrameAndDuration(frameEnd: frame, animationDuration: duration)
    }

    @inline(__always)
    static func durationOnly(_ u: [AnyHashable: Any]) -> DurationOnly? {
        guard let duration = (u[KeyboardKey.animationDuration] as? NSNumber)?.doubleValue else { return nil }
        return DurationOnly(animationDuration: duration)
    }
}

enum SmallPayloadWorkloads {
    static let legacyName = Notification.Name("UIKeyboardDidChangeFrameNotification")

    /// A legacy post of `userInfo` (built once, as the system would) to one typed subscriber of `T`.
    static func typedLegacyPost<T: Decodable & Sendable>(
        _ type: T.Type, userInfo: [AnyHashable: Any], digest: @escaping @Sendable (T) -> UInt64
    ) -> Workload {
        Workload(label: "typed subscriber") {
            let center = NotificationCenter()
            let counter = DeliveryCounter()
            let handle = legacyName.notificatable(userInfoType: T.self, decoder: CoderWorkloads.makeDecoder())
            let subscription = handle.subscribe(center: center) { note in
                counter.record(Int(truncatingIfNeeded: digest(note.userInfo)))
            }
            return { n in
                try withExtendedLifetime(subscription) {
                    try postAndCount(n, counter) { center.post(name: legacyName, object: nil, userInfo: userInfo) }
                }
            }
        }
    }

    /// The same post to a raw block observer that reads the payload with `read`.
    static func rawLegacyPost<T>(
        label: String, userInfo: [AnyHashable: Any], read: @escaping @Sendable ([AnyHashable: Any]) -> T?,
        digest: @escaping @Sendable (T) -> UInt64
    ) -> Workload {
        Workload(label: label) {
            let center = NotificationCenter()
            let counter = DeliveryCounter()
            let token = center.addObserver(forName: legacyName, object: nil, queue: nil) { note in
                if let userInfo = note.userInfo, let value = read(userInfo) {
                    counter.record(Int(truncatingIfNeeded: digest(value)))
                }
            }
            return { n in
                try withExtendedLifetime(token) {
                    try postAndCount(n, counter) { center.post(name: legacyName, object: nil, userInfo: userInfo) }
                }
            }
        }
    }

    /// `UserInfoDecoder.decode` of `T` from `userInfo`, with the keyboard's affixed key strategy.
    static func decode<T: Decodable>(
        _ type: T.Type, from userInfo: [AnyHashable: Any], digest: @escaping (T) -> UInt64
    ) -> Workload {
        Workload(label: "UserInfoDecoder .affixed") {
            let decoder = CoderWorkloads.makeDecoder()
            return { n in try repeatOps(n) { digest(try decoder.decode(T.self, from: userInfo)) } }
        }
    }

    /// Hand-written unchecked casts of `userInfo`.
    static func handWritten<T>(
        _ label: String, _ userInfo: [AnyHashable: Any], read: @escaping ([AnyHashable: Any]) -> T?,
        digest: @escaping (T) -> UInt64
    ) -> Workload {
        Workload(label: label) {
            { n in
                try repeatOps(n) {
                    guard let value = read(userInfo) else { throw BenchError("hand-written cast failed") }
                    return digest(value)
                }
            }
        }
    }

    static var encodeSmall: Workload {
        Workload(label: "UserInfoEncoder()") {
            let encoder = UserInfoEncoder()
            let info = FrameAndDuration.sample
            return { n in try repeatOps(n) { UInt64(try encoder.encode(info).count) } }
        }
    }

    static var literalSmall: Workload {
        Workload(label: "hand-written literal") {
            let info = FrameAndDuration.sample
            return { n in repeatOps(n) { UInt64(HandWrittenSmallWriter.defaultKeys(info).count) } }
        }
    }
}

/// What `UserInfoEncoder()` writes for ``FrameAndDuration``, as a literal.
enum HandWrittenSmallWriter {
    static func defaultKeys(_ i: FrameAndDuration) -> [AnyHashable: Any] {
        [
            "frameEnd": [
                [Double(i.frameEnd.origin.x), Double(i.frameEnd.origin.y)] as [Any],
                [Double(i.frameEnd.size.width), Double(i.frameEnd.size.height)] as [Any],
            ] as [Any],
            "animationDuration": i.animationDuration,
        ]
    }
}

enum SmallPayloadChecks {
    static func decoded<T: Decodable & Equatable>(_ type: T.Type, _ userInfo: [AnyHashable: Any], _ expected: T)
        throws -> String?
    {
        let decoded = try CoderWorkloads.makeDecoder().decode(T.self, from: userInfo)
        return decoded == expected ? nil : "decoded \(decoded), expected \(expected)"
    }

    static func handWritten<T: Equatable>(_ value: T?, _ expected: T) -> String? {
        value == expected ? nil : "hand-written read \(String(describing: value)), expected \(expected)"
    }

    static func encoder() throws -> String? {
        let info = FrameAndDuration.sample
        let encoded = try UserInfoEncoder().encode(info)
        let literal = HandWrittenSmallWriter.defaultKeys(info)
        guard NSDictionary(dictionary: encoded).isEqual(NSDictionary(dictionary: literal)) else {
            return "encoder wrote \(encoded), literal is \(literal)"
        }
        let back = try UserInfoDecoder().decode(FrameAndDuration.self, from: encoded)
        return back == info ? nil : "decoded back \(back)"
    }
}

/// Issue 11's rows. Every ratio is candidate ÷ baseline.
func smallPayloadComparisons() -> [Comparison] {
    let oneKey = SmallPayloadFixture.oneKey()
    let twoKeys = SmallPayloadFixture.twoKeys()
    let durationOnly = SmallPayloadFixture.durationOnly()
    let deliveryGroup = "legacy post of a small payload → typed subscriber"
    let decodeGroup = "fixed cost of one decode"
    let frameDigest: @Sendable (FrameOnly) -> UInt64 = { $0.digest }
    let pairDigest: @Sendable (FrameAndDuration) -> UInt64 = { $0.digest }
    return [
        Comparison(
            id: "legacy-1key-post", row: "1 key (NSValue rect)", group: deliveryGroup,
            candidate: SmallPayloadWorkloads.typedLegacyPost(FrameOnly.self, userInfo: oneKey, digest: frameDigest),
            baseline: SmallPayloadWorkloads.rawLegacyPost(
                label: "raw, as? NSValue + .rectValue", userInfo: oneKey, read: UncheckedReader.frameOnly,
                digest: frameDigest),
            target: .atMost(1.3),
            check: {
                try SmallPayloadChecks.decoded(FrameOnly.self, oneKey, .sample)
                    ?? SmallPayloadChecks.handWritten(UncheckedReader.frameOnly(oneKey), .sample)
            }
        ),
        // The target row of issue 11, against the casts of the independent benchmark.
        Comparison(
            id: "legacy-2key-post", row: "2 keys (NSValue rect, NSNumber)", group: deliveryGroup,
            candidate: SmallPayloadWorkloads.typedLegacyPost(
                FrameAndDuration.self, userInfo: twoKeys, digest: pairDigest),
            baseline: SmallPayloadWorkloads.rawLegacyPost(
                label: "raw, .rectValue + as? Double", userInfo: twoKeys, read: UncheckedReader.frameAndDuration,
                digest: pairDigest),
            target: .atMost(1.3),
            check: {
                try SmallPayloadChecks.decoded(FrameAndDuration.self, twoKeys, .sample)
                    ?? SmallPayloadChecks.handWritten(UncheckedReader.frameAndDuration(twoKeys), .sample)
            }
        ),
        // The same against the faster number read (`as? NSNumber` + `.doubleValue`).
        Comparison(
            id: "legacy-2key-post-nsnumber", row: "2 keys, vs as? NSNumber", group: deliveryGroup,
            candidate: SmallPayloadWorkloads.typedLegacyPost(
                FrameAndDuration.self, userInfo: twoKeys, digest: pairDigest),
            baseline: SmallPayloadWorkloads.rawLegacyPost(
                label: "raw, .rectValue + as? NSNumber", userInfo: twoKeys,
                read: UncheckedReader.frameAndDurationFastNumber, digest: pairDigest),
            check: {
                SmallPayloadChecks.handWritten(UncheckedReader.frameAndDurationFastNumber(twoKeys), .sample)
            }
        ),
        Comparison(
            id: "decode-empty", row: "empty struct, from the 2-key payload", group: decodeGroup,
            candidate: SmallPayloadWorkloads.decode(EmptyInfo.self, from: twoKeys) { _ in 1 },
            check: { try SmallPayloadChecks.decoded(EmptyInfo.self, twoKeys, EmptyInfo()) }
        ),
        Comparison(
            id: "decode-1key", row: "1-key struct (NSNumber)", group: decodeGroup,
            candidate: SmallPayloadWorkloads.decode(DurationOnly.self, from: durationOnly) {
                $0.animationDuration.bitPattern
            },
            baseline: SmallPayloadWorkloads.handWritten(
                "as? NSNumber + .doubleValue", durationOnly, read: UncheckedReader.durationOnly
            ) { $0.animationDuration.bitPattern },
            check: {
                try SmallPayloadChecks.decoded(DurationOnly.self, durationOnly, .sample)
                    ?? SmallPayloadChecks.handWritten(UncheckedReader.durationOnly(durationOnly), .sample)
            }
        ),
        Comparison(
            id: "decode-2key", row: "2-key struct (NSValue rect, NSNumber)", group: decodeGroup,
            candidate: SmallPayloadWorkloads.decode(FrameAndDuration.self, from: twoKeys) { $0.digest },
            baseline: SmallPayloadWorkloads.handWritten(
                "unchecked .rectValue + as? Double", twoKeys, read: UncheckedReader.frameAndDuration
            ) { $0.digest },
            check: { try SmallPayloadChecks.decoded(FrameAndDuration.self, twoKeys, .sample) }
        ),
        Comparison(
            id: "encode-small", row: "UserInfoEncoder(), 2-key struct", group: "encode a small struct",
            candidate: SmallPayloadWorkloads.encodeSmall, baseline: SmallPayloadWorkloads.literalSmall,
            target: .atMost(1.5), check: SmallPayloadChecks.encoder
        ),
    ]
}
