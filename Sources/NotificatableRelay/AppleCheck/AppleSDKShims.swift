// The Apple SDK declaration that Foundation on Linux lacks for this module, for the Apple-branch check build only.
//
// `scripts/apple-check.sh` builds and tests the package on Linux with `-Xswiftc -DNOTIFICATABLE_APPLE_CHECK`, which
// selects the Apple branch of every platform `#if` (see "Platforms and availability" in the Decoding Rules article).
// The declaration below copies Apple's signature and cites where Apple documents it. Nothing here is compiled into a
// normal build, on Linux or on Apple platforms.

#if NOTIFICATABLE_APPLE_CHECK && !canImport(Darwin)
import Foundation

/// A notification dispatch mechanism that enables the broadcast of notifications across task boundaries.
///
/// Apple: `class DistributedNotificationCenter : NotificationCenter`, Foundation, macOS 10.0
/// (https://developer.apple.com/documentation/foundation/distributednotificationcenter). Foundation on Linux has no
/// such class. This stand-in is an ordinary in-process `NotificationCenter`, so the check build compiles and runs
/// `DistributedNotificationTransport` against it within one process; crossing processes is Apple's part. It is
/// `public` only because the transport's public initializer names it, and it exists only in the check build.
open class DistributedNotificationCenter: NotificationCenter, @unchecked Sendable {
    private static let shared = DistributedNotificationCenter()

    /// Returns the default distributed notification center.
    ///
    /// Apple: `class func `default`() -> DistributedNotificationCenter`, macOS 10.0
    /// (https://developer.apple.com/documentation/foundation/distributednotificationcenter/default()).
    open class func `default`() -> DistributedNotificationCenter {
        shared
    }

    /// Creates a notification with a given name, sender, and information and posts it to the receiver.
    ///
    /// Apple: `func postNotificationName(_ name: NSNotification.Name, object: String?,
    /// userInfo: [AnyHashable : Any]? = nil, deliverImmediately: Bool)`, macOS 10.0
    /// (https://developer.apple.com/documentation/foundation/distributednotificationcenter/postnotificationname(_:object:userinfo:deliverimmediately:)).
    /// Delivery here is always immediate and in-process.
    open func postNotificationName(
        _ name: NSNotification.Name,
        object: String?,
        userInfo: [AnyHashable: Any]? = nil,
        deliverImmediately: Bool
    ) {
        post(name: name, object: object, userInfo: userInfo)
    }
}
#endif
