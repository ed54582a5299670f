import Foundation
import Notificatable

/// The rule that turns a notification name into a channel name that fits a ``NotificationTransport``.
///
/// Engines limit channel names (PostgreSQL to 63 bytes), and reverse-DNS notification names are often longer. A name
/// that fits is its own channel. A longer one becomes a readable prefix of the name, a `#`, and 16 lowercase hex digits
/// of the 64-bit FNV-1a hash of the whole name's UTF-8 bytes, in at most `maximumLength` bytes:
///
/// ```swift
/// NotificationChannelName.channel(for: "OrderShipped", maximumLength: 63)   // "OrderShipped"
/// NotificationChannelName.channel(
///     for: "com.example.warehouse.notifications.OrderShippedToCustomerNotification", maximumLength: 63)
/// // "com.example.warehouse.notifications.OrderShippe#3a6d7c1f0b2e4d58" (the digits depend on the name)
/// ```
///
/// Two names may share a channel (a hash can collide); that costs nothing but a wasted delivery, because every
/// message carries the full notification name and the receiving relay checks it. A service in another language
/// computes the same channel with FNV-1a (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`).
public enum NotificationChannelName {
    /// The channel for a notification name.
    ///
    /// - Parameters:
    ///   - name: The notification name.
    ///   - maximumLength: The longest channel the engine accepts, in bytes of UTF-8, or `nil` for no limit.
    /// - Returns: `name` itself if it is not empty and fits, otherwise a prefix of it plus `#` and its hash. The
    ///   prefix ends on a character boundary. Below 17 bytes, the result is the first `maximumLength` hex digits of
    ///   the hash.
    public static func channel(for name: String, maximumLength: Int?) -> String {
        let bytes = name.utf8.count
        if bytes > 0, bytes <= maximumLength ?? .max { return name }
        let hash = fnv1a64(name)
        let digits = String(hash, radix: 16)
        let hex = String(repeating: "0", count: 16 - digits.count) + digits
        guard let maximumLength else { return "#" + hex }
        guard maximumLength >= 17 else { return String(hex.prefix(max(maximumLength, 0))) }
        let budget = maximumLength - 17
        var prefix = ""
        var used = 0
        for scalar in name.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > budget { break }
            prefix.unicodeScalars.append(scalar)
            used += size
        }
        return prefix + "#" + hex
    }

    /// The channel for a notification name.
    ///
    /// - Parameters:
    ///   - name: The notification name.
    ///   - maximumLength: The longest channel the engine accepts, in bytes of UTF-8, or `nil` for no limit.
    /// - Returns: The channel, as for ``channel(for:maximumLength:)-(String,_)``.
    public static func channel(for name: Notification.Name, maximumLength: Int?) -> String {
        channel(for: name.rawValue, maximumLength: maximumLength)
    }

    /// 64-bit FNV-1a of the UTF-8 bytes: tiny, stable across processes and languages, and not seeded.
    static func fnv1a64(_ string: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in string.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
