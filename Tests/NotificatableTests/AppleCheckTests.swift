#if NOTIFICATABLE_APPLE_CHECK
import Foundation
import Notificatable
import Testing

// Compiled only in the Apple-branch check build (`scripts/apple-check.sh`), where every platform `#if` takes its Apple
// branch. The whole suite runs there; these tests pin what only that build has: the UIKit boxing of the shim, read
// through the `objCType` check and `getValue(_:size:)`. `scripts/apple-check.sh` fails if this suite did not pass,
// which proves that the flag reached the test target.

@Suite("Apple-branch check build")
struct AppleCheckTests {
    static let rect = CGRect(x: 1, y: 2, width: 3, height: 4)

    @Test func uikitBoxedGeometryReadsThroughTheObjCTypeCheck() throws {
        #expect(try decodeBoxed(CGRect.self, NSValue(cgRect: Self.rect)) == Self.rect)
        #expect(try decodeBoxed(CGPoint.self, NSValue(cgPoint: CGPoint(x: -1.5, y: 2))) == CGPoint(x: -1.5, y: 2))
        #expect(
            try decodeBoxed(CGSize.self, NSValue(cgSize: CGSize(width: 5, height: 6))) == CGSize(width: 5, height: 6))
    }

    @Test func theWrongKindIsATypeMismatchNamingWhatWasFound() {
        expectDecodingError(
            .typeMismatch, at: ["value"], type: CGRect.self,
            message: "Expected an NSValue holding CGRect but found an NSValue holding CGPoint"
        ) {
            try decodeBoxed(CGRect.self, NSValue(cgPoint: CGPoint(x: 1, y: 2)))
        }
        expectDecodingError(
            .typeMismatch, at: ["value"], type: CGPoint.self,
            message: "Expected an NSValue holding CGPoint but found an NSValue holding CGRect"
        ) {
            try decodeBoxed(CGPoint.self, NSValue(cgRect: Self.rect))
        }
    }

    @Test func theShimCopiesTheBoxedStruct() {
        var rect = CGRect.zero
        withUnsafeMutableBytes(of: &rect) { bytes in
            if let base = bytes.baseAddress {
                NSValue(cgRect: Self.rect).getValue(base, size: MemoryLayout<CGRect>.size)
            }
        }
        #expect(rect == Self.rect)
        #expect(NSValue(cgRect: Self.rect).cgRectValue == Self.rect)
    }
}
#endif
