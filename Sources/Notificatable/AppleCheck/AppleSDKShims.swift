// The Apple SDK declarations that Foundation on Linux lacks, for the Apple-branch check build only.
//
// `scripts/apple-check.sh` builds and tests the package on Linux with `-Xswiftc -DNOTIFICATABLE_APPLE_CHECK`. That flag
// selects the Apple branch of every platform `#if` in Sources/ and Tests/ (see "Platforms and availability" in the
// Decoding Rules article), and this file supplies, for that build alone, the few Apple declarations those branches
// call. Each declaration copies Apple's signature exactly and cites where Apple documents it; each body does on
// Linux what Apple's does. Nothing here is compiled into a normal build, on Linux or on Apple platforms.
//
// The declarations are `package`, not `public` as Apple's are: NotificatableTesting and the test target call the
// UIKit ones too, and no client outside the package should ever see them.

#if NOTIFICATABLE_APPLE_CHECK && !canImport(Darwin)
import Foundation

// MARK: - Foundation

extension NSValue {
    /// Copies the value into the specified buffer.
    ///
    /// Apple: `func getValue(_ value: UnsafeMutableRawPointer, size: Int)`, Foundation, iOS 11, macOS 10.13, tvOS 11,
    /// watchOS 4 (https://developer.apple.com/documentation/foundation/nsvalue/getvalue(_:size:)). Foundation on
    /// Linux has only `getValue(_:)`, which copies the whole value. Apple raises an exception when `size` is not the
    /// value's size; that cannot be checked here, so callers must match `objCType` first, as ours do.
    package func getValue(_ value: UnsafeMutableRawPointer, size: Int) {
        getValue(value)
    }
}

// MARK: - UIKit (NSValue's UIGeometry additions)

extension NSValue {
    /// Creates a new value object containing the specified CoreGraphics rectangle structure.
    ///
    /// Apple: `init(cgRect rect: CGRect)`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/init(cgrect:)). Its `objCType` is
    /// `{CGRect={CGPoint=dd}{CGSize=dd}}`, as `NSValue(rect:)`'s is on Linux.
    package convenience init(cgRect rect: CGRect) {
        self.init(rect: rect)
    }

    /// Creates a new value object containing the specified CoreGraphics point structure.
    ///
    /// Apple: `init(cgPoint point: CGPoint)`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/init(cgpoint:)).
    package convenience init(cgPoint point: CGPoint) {
        self.init(point: point)
    }

    /// Creates a new value object containing the specified CoreGraphics size structure.
    ///
    /// Apple: `init(cgSize size: CGSize)`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/init(cgsize:)).
    package convenience init(cgSize size: CGSize) {
        self.init(size: size)
    }

    /// Returns the CoreGraphics rectangle structure representation of the value.
    ///
    /// Apple: `var cgRectValue: CGRect { get }`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/cgrectvalue).
    package var cgRectValue: CGRect { rectValue }

    /// Returns the CoreGraphics point structure representation of the value.
    ///
    /// Apple: `var cgPointValue: CGPoint { get }`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/cgpointvalue).
    package var cgPointValue: CGPoint { pointValue }

    /// Returns the CoreGraphics size structure representation of the value.
    ///
    /// Apple: `var cgSizeValue: CGSize { get }`, UIKit, iOS 2, tvOS 9, watchOS 2
    /// (https://developer.apple.com/documentation/foundation/nsvalue/cgsizevalue).
    package var cgSizeValue: CGSize { sizeValue }
}
#endif
