import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// An `NSValue` subclass that implements neither `objCType` nor `getValue(_:)`: asking it for either traps.
private final class EncodinglessValue: NSValue, @unchecked Sendable {}

/// An `NSValue` subclass that claims to hold a point but cannot hand over its bytes (`getValue(_:)` traps).
private final class PointClaimingValue: NSValue, @unchecked Sendable {
    override var objCType: UnsafePointer<CChar> { NSValue(point: .zero).objCType }
}

// The fixture capture reads an `NSValue`'s kind the way the decoder does: only the classes that answer `objCType`
// and `getValue(_:)` are asked (`answersObjCType` in Sources/Notificatable/Coding/NSValue+Geometry.swift). Any other
// `NSValue` is a value of unknown kind, written as a placeholder: never a trap. This suite runs in the normal build
// and in the Apple-branch check (scripts/apple-check.sh), where the capture takes its Apple geometry read.
@Suite("Fixture capture: an NSValue without an encoding is a placeholder, not a trap")
struct FixtureCaptureValueKindTests {
    @Test(
        arguments: [
            ("a plain NSValue()", NSValue()), ("a subclass that overrides nothing", EncodinglessValue()),
            ("a subclass that overrides only objCType", PointClaimingValue()),
        ] as [(String, NSValue)])
    func anNSValueWithoutAnEncodingIsAPlaceholder(_ name: String, _ value: NSValue) throws {
        let capture = FixtureCapture(userInfo: ["frame": value, "list": [value] as [Any], "count": NSNumber(value: 3)])
        #expect(capture.notes.map(\.location) == ["userInfo.frame", "userInfo.list[0]"], "\(name)")
        #expect(capture.notes.allSatisfy { $0.isPlaceholder }, "\(name)")
        #expect(capture.notes.allSatisfy { $0.message.contains("kind is unknown") }, "\(name): \(capture.notes)")
        #expect(capture.propertyList.contains("<key>$placeholder</key>"), "\(name)")

        // Read back, the placeholder is a type mismatch at its path; the rest decodes.
        struct Counted: Decodable { var count: Int }
        struct Framed: Decodable { var frame: CGRect }
        let userInfo = capture.userInfo
        #expect(try UserInfoDecoder().decode(Counted.self, from: userInfo).count == 3)
        expectDecodingError(.typeMismatch, at: ["frame"]) { try UserInfoDecoder().decode(Framed.self, from: userInfo) }
    }

    /// Geometry that Foundation boxed is still read exactly, next to a value of unknown kind.
    @Test func geometryNextToAnEncodinglessValueIsStillRead() throws {
        let capture = FixtureCapture(userInfo: [
            "frame": NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4)), "unknown": NSValue(),
        ])
        #expect(capture.notes.map(\.location) == ["userInfo.unknown"])
        #expect(capture.propertyList.contains("<key>$rect</key>"))
    }
}
