import Foundation

/// How a relay channel becomes a PostgreSQL channel, and how a channel is quoted in SQL.
///
/// PostgresNIO (1.33.2) builds `LISTEN "<channel>";` and `UNLISTEN "<channel>";` by splicing the channel between
/// double quotes without doubling the quotes inside it. Inside a double-quoted identifier every character is taken
/// literally except `"` (and NUL, which PostgreSQL does not allow at all), so a channel without either is quoted
/// safely by that form: spaces, `;`, `'` and `\` cannot end the identifier or the statement. A channel that holds a
/// `"` or a NUL, is empty, or is longer than PostgreSQL's 63-byte identifiers (`LISTEN` would silently cut it, so it
/// would never match what `pg_notify` sends) is replaced by a prefix of it without those characters, a `#` and its
/// hash, so PostgresNIO never receives a name that could break its statement.
enum PostgresChannelName {
    /// PostgreSQL's identifier limit: `NAMEDATALEN - 1` bytes.
    static let maximumLength = 63

    /// The PostgreSQL channel for a relay channel. See ``PostgresNotificationTransport/serverChannel(for:)``.
    static func serverChannel(for channel: String) -> String {
        let bytes = channel.utf8
        if !bytes.isEmpty, bytes.count <= maximumLength, !bytes.contains(UInt8(ascii: "\"")), !bytes.contains(0) {
            return channel
        }
        // The relay's own form for long names (NotificationChannelName): a readable prefix, `#`, the hash.
        let budget = maximumLength - 17
        var prefix = ""
        var used = 0
        for scalar in channel.unicodeScalars where scalar != "\"" && scalar != "\u{0}" {
            let size = String(scalar).utf8.count
            if used + size > budget { break }
            prefix.unicodeScalars.append(scalar)
            used += size
        }
        return prefix + "#" + hexadecimal(fnv1a64(bytes))
    }

    /// `channel` as a double-quoted SQL identifier, each `"` doubled: `a"b` becomes `"a""b"`.
    ///
    /// Used for the statements this package writes itself; a channel from ``serverChannel(for:)`` has no `"` to
    /// double, so this quoting and PostgresNIO's agree on it.
    static func quotedIdentifier(_ channel: String) -> String {
        "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// FNV-1a, 64 bits: offset basis 0xcbf29ce484222325, prime 0x100000001b3, over the UTF-8 bytes.
    static func fnv1a64<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// Sixteen lowercase hexadecimal digits.
    static func hexadecimal(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
