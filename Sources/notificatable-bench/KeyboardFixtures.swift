import Foundation

// MARK: - The 7-key keyboard userInfo, the struct it decodes into, and the hand-written baselines

/// The keyboard notification payload that issue 2's rows decode and encode.
struct KeyboardInfo: Codable, Equatable, Sendable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var centerBegin: CGPoint
    var centerEnd: CGPoint
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool

    /// A folded summary for ``BlackHole``.
    var digest: UInt64 {
        UInt64(truncatingIfNeeded: animationCurve) &+ (isLocal ? 1 : 0)
            &+ UInt64(truncatingIfNeeded: Int(frameEnd.maxY + centerEnd.x + frameBegin.minY + centerBegin.y))
            &+ animationDuration.bitPattern
    }

    /// The values every fixture holds.
    static let sample = KeyboardInfo(
        frameBegin: CGRect(x: 0, y: 844, width: 390, height: 336),
        frameEnd: CGRect(x: 0, y: 508, width: 390, height: 336),
        centerBegin: CGPoint(x: 195, y: 1012),
        centerEnd: CGPoint(x: 195, y: 676),
        animationDuration: 0.25,
        animationCurve: 7,
        isLocal: true
    )
}

/// The same payload with the system's key names spelled out, for `JSONDecoder` and `PropertyListDecoder`, which
/// have no affixed key strategy. Explicit `CodingKeys` are what most code writes, and the cheapest option for them.
struct KeyboardInfoLongKeys: Codable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var centerBegin: CGPoint
    var centerEnd: CGPoint
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool

    enum CodingKeys: String, CodingKey {
        case frameBegin = "UIKeyboardFrameBeginUserInfoKey"
        case frameEnd = "UIKeyboardFrameEndUserInfoKey"
        case centerBegin = "UIKeyboardCenterBeginUserInfoKey"
        case centerEnd = "UIKeyboardCenterEndUserInfoKey"
        case animationDuration = "UIKeyboardAnimationDurationUserInfoKey"
        case animationCurve = "UIKeyboardAnimationCurveUserInfoKey"
        case isLocal = "UIKeyboardIsLocalUserInfoKey"
    }

    var info: KeyboardInfo {
        KeyboardInfo(
            frameBegin: frameBegin, frameEnd: frameEnd, centerBegin: centerBegin, centerEnd: centerEnd,
            animationDuration: animationDuration, animationCurve: animationCurve, isLocal: isLocal
        )
    }
}

/// The system's userInfo keys, as `String` constants like `UIResponder.keyboardFrameEndUserInfoKey`.
enum KeyboardKey {
    static let frameBegin = "UIKeyboardFrameBeginUserInfoKey"
    static let frameEnd = "UIKeyboardFrameEndUserInfoKey"
    static let centerBegin = "UIKeyboardCenterBeginUserInfoKey"
    static let centerEnd = "UIKeyboardCenterEndUserInfoKey"
    static let animationDuration = "UIKeyboardAnimationDurationUserInfoKey"
    static let animationCurve = "UIKeyboardAnimationCurveUserInfoKey"
    static let isLocal = "UIKeyboardIsLocalUserInfoKey"
}

enum KeyboardFixture {
    /// The userInfo as the system posts it: geometry boxed in `NSValue`, numbers in `NSNumber`.
    static func nsValueForm(_ i: KeyboardInfo = .sample) -> [AnyHashable: Any] {
        [
            KeyboardKey.frameBegin: NSValue(rect: i.frameBegin),
            KeyboardKey.frameEnd: NSValue(rect: i.frameEnd),
            KeyboardKey.centerBegin: NSValue(point: i.centerBegin),
            KeyboardKey.centerEnd: NSValue(point: i.centerEnd),
            KeyboardKey.animationDuration: NSNumber(value: i.animationDuration),
            KeyboardKey.animationCurve: NSNumber(value: i.animationCurve),
            KeyboardKey.isLocal: NSNumber(value: i.isLocal),
        ]
    }

    /// The userInfo with geometry in its Codable array form (`[[x, y], [w, h]]`, `[x, y]`) of `NSNumber` doubles:
    /// a JSON-able dictionary, like one that came out of `JSONSerialization`.
    static func arrayForm(_ i: KeyboardInfo = .sample) -> [AnyHashable: Any] {
        func n(_ x: CGFloat) -> NSNumber { NSNumber(value: Double(x)) }
        func rect(_ r: CGRect) -> [Any] {
            [[n(r.origin.x), n(r.origin.y)] as [Any], [n(r.size.width), n(r.size.height)] as [Any]]
        }
        func point(_ p: CGPoint) -> [Any] { [n(p.x), n(p.y)] }
        return [
            KeyboardKey.frameBegin: rect(i.frameBegin),
            KeyboardKey.frameEnd: rect(i.frameEnd),
            KeyboardKey.centerBegin: point(i.centerBegin),
            KeyboardKey.centerEnd: point(i.centerEnd),
            KeyboardKey.animationDuration: NSNumber(value: i.animationDuration),
            KeyboardKey.animationCurve: NSNumber(value: i.animationCurve),
            KeyboardKey.isLocal: NSNumber(value: i.isLocal),
        ]
    }
}

/// An error for a baseline that could not read its input.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The hand-written baselines: what a careful programmer writes against `userInfo` without a decoder.
///
/// Keys are `String` constants (as UIKit's are), numbers go through `as? NSNumber` and `.doubleValue` (the fast
/// path; `as? Double` on an NSNumber costs about 5× more on Linux), and NSValue geometry is checked with `objCType`
/// before `.rectValue`/`.pointValue`.
struct HandWrittenKeyboardReader {
    private let rectType: [CChar]
    private let pointType: [CChar]

    init() {
        rectType = Array(String(cString: NSValue(rect: .zero).objCType).utf8CString)
        pointType = Array(String(cString: NSValue(point: .zero).objCType).utf8CString)
    }

    /// Reads the NSValue form; `nil` if any value is missing or of the wrong type.
    func readNSValueForm(_ u: [AnyHashable: Any]) -> KeyboardInfo? {
        guard let frameBegin = rect(u[KeyboardKey.frameBegin]),
            let frameEnd = rect(u[KeyboardKey.frameEnd]),
            let centerBegin = point(u[KeyboardKey.centerBegin]),
            let centerEnd = point(u[KeyboardKey.centerEnd]),
            let duration = u[KeyboardKey.animationDuration] as? NSNumber,
            let curve = u[KeyboardKey.animationCurve] as? NSNumber,
            let isLocal = u[KeyboardKey.isLocal] as? NSNumber
        else { return nil }
        return KeyboardInfo(
            frameBegin: frameBegin, frameEnd: frameEnd, centerBegin: centerBegin, centerEnd: centerEnd,
            animationDuration: duration.doubleValue, animationCurve: curve.intValue, isLocal: isLocal.boolValue
        )
    }

    /// Reads the NSValue form the way most hand-written code does: `as? NSValue` and `.rectValue` with no check of
    /// what the value holds. This is the limit the decoder is measured against; on Linux it traps when a value holds
    /// another geometry kind, which is why ``readNSValueForm(_:)`` exists too.
    func readNSValueFormUnchecked(_ u: [AnyHashable: Any]) -> KeyboardInfo? {
        guard let frameBegin = (u[KeyboardKey.frameBegin] as? NSValue)?.rectValue,
            let frameEnd = (u[KeyboardKey.frameEnd] as? NSValue)?.rectValue,
            let centerBegin = (u[KeyboardKey.centerBegin] as? NSValue)?.pointValue,
            let centerEnd = (u[KeyboardKey.centerEnd] as? NSValue)?.pointValue,
            let duration = u[KeyboardKey.animationDuration] as? NSNumber,
            let curve = u[KeyboardKey.animationCurve] as? NSNumber,
            let isLocal = u[KeyboardKey.isLocal] as? NSNumber
        else { return nil }
        return KeyboardInfo(
            frameBegin: frameBegin, frameEnd: frameEnd, centerBegin: centerBegin, centerEnd: centerEnd,
            animationDuration: duration.doubleValue, animationCurve: curve.intValue, isLocal: isLocal.boolValue
        )
    }

    /// Reads the array form; `nil` if any value is missing or of the wrong type.
    func readArrayForm(_ u: [AnyHashable: Any]) -> KeyboardInfo? {
        guard let frameBegin = rectFromArray(u[KeyboardKey.frameBegin]),
            let frameEnd = rectFromArray(u[KeyboardKey.frameEnd]),
            let centerBegin = pointFromArray(u[KeyboardKey.centerBegin]),
            let centerEnd = pointFromArray(u[KeyboardKey.centerEnd]),
            let duration = u[KeyboardKey.animationDuration] as? NSNumber,
            let curve = u[KeyboardKey.animationCurve] as? NSNumber,
            let isLocal = u[KeyboardKey.isLocal] as? NSNumber
        else { return nil }
        return KeyboardInfo(
            frameBegin: frameBegin, frameEnd: frameEnd, centerBegin: centerBegin, centerEnd: centerEnd,
            animationDuration: duration.doubleValue, animationCurve: curve.intValue, isLocal: isLocal.boolValue
        )
    }

    private func rect(_ any: Any?) -> CGRect? {
        guard let value = any as? NSValue, strcmp(value.objCType, rectType) == 0 else { return nil }
        return value.rectValue
    }

    private func point(_ any: Any?) -> CGPoint? {
        guard let value = any as? NSValue, strcmp(value.objCType, pointType) == 0 else { return nil }
        return value.pointValue
    }

    private func pair(_ any: Any?) -> (Double, Double)? {
        guard let a = any as? [Any], a.count == 2,
            let x = a[0] as? NSNumber, let y = a[1] as? NSNumber
        else { return nil }
        return (x.doubleValue, y.doubleValue)
    }

    private func rectFromArray(_ any: Any?) -> CGRect? {
        guard let a = any as? [Any], a.count == 2, let origin = pair(a[0]), let size = pair(a[1]) else { return nil }
        return CGRect(x: origin.0, y: origin.1, width: size.0, height: size.1)
    }

    private func pointFromArray(_ any: Any?) -> CGPoint? {
        guard let p = pair(any) else { return nil }
        return CGPoint(x: p.0, y: p.1)
    }
}

/// The hand-written dictionary literals that build what `UserInfoEncoder` writes by default: property-list types
/// only, a rect as `[[x, y], [w, h]]` of `Double`s, a point as `[x, y]`.
enum HandWrittenKeyboardWriter {
    /// Default keys (the property names), as a default `UserInfoEncoder()` writes them.
    static func defaultKeys(_ i: KeyboardInfo) -> [AnyHashable: Any] {
        [
            "frameBegin": [
                [Double(i.frameBegin.origin.x), Double(i.frameBegin.origin.y)] as [Any],
                [Double(i.frameBegin.size.width), Double(i.frameBegin.size.height)] as [Any],
            ] as [Any],
            "frameEnd": [
                [Double(i.frameEnd.origin.x), Double(i.frameEnd.origin.y)] as [Any],
                [Double(i.frameEnd.size.width), Double(i.frameEnd.size.height)] as [Any],
            ] as [Any],
            "centerBegin": [Double(i.centerBegin.x), Double(i.centerBegin.y)] as [Any],
            "centerEnd": [Double(i.centerEnd.x), Double(i.centerEnd.y)] as [Any],
            "animationDuration": i.animationDuration,
            "animationCurve": i.animationCurve,
            "isLocal": i.isLocal,
        ]
    }

    /// The system's long keys, as `UserInfoEncoder` with `.affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")`
    /// writes them.
    static func affixedKeys(_ i: KeyboardInfo) -> [AnyHashable: Any] {
        [
            KeyboardKey.frameBegin: [
                [Double(i.frameBegin.origin.x), Double(i.frameBegin.origin.y)] as [Any],
                [Double(i.frameBegin.size.width), Double(i.frameBegin.size.height)] as [Any],
            ]
                as [Any],
            KeyboardKey.frameEnd: [
                [Double(i.frameEnd.origin.x), Double(i.frameEnd.origin.y)] as [Any],
                [Double(i.frameEnd.size.width), Double(i.frameEnd.size.height)] as [Any],
            ] as [Any],
            KeyboardKey.centerBegin: [Double(i.centerBegin.x), Double(i.centerBegin.y)] as [Any],
            KeyboardKey.centerEnd: [Double(i.centerEnd.x), Double(i.centerEnd.y)] as [Any],
            KeyboardKey.animationDuration: i.animationDuration,
            KeyboardKey.animationCurve: i.animationCurve,
            KeyboardKey.isLocal: i.isLocal,
        ]
    }
}
