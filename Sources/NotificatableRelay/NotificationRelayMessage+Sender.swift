import Foundation

extension NotificationRelayMessage {
    /// A new random sender id, in the form of `UUID().uuidString`: a version 4 UUID, 36 characters of upper-case
    /// hexadecimal digits and hyphens, such as `"5A0C1D2E-3F40-4A5B-8C6D-7E8F90A1B2C3"`.
    ///
    /// For a transport that gives every message a sender of its own (a durable outbox post has sequence number 1
    /// under a fresh sender, since concurrent transactions commit in any order). It costs two reads of the system's
    /// random number generator and no `UUID`: on Linux, `UUID().uuidString` took about 2.8 µs, more than the rest of
    /// a small message's encoding.
    ///
    /// ```swift
    /// let bytes = try NotificationRelayMessage.encoded(
    ///     OrderShipped(orderID: "A-17"), for: orderShipped, sender: NotificationRelayMessage.randomSender(),
    ///     sequence: 1)
    /// ```
    ///
    /// - Returns: The sender id.
    public static func randomSender() -> String {
        var generator = SystemRandomNumberGenerator()
        // The version (4) in the high nibble of byte 6, the variant (binary 10) in the high bits of byte 8.
        let high = (generator.next() as UInt64) & ~0xF000 | 0x4000
        let low = (generator.next() as UInt64) & ~(0xC0 << 56) | (0x80 << 56)
        return String(unsafeUninitializedCapacity: 36) { text in
            var index = 0
            func write(_ bits: UInt64, bytes: ClosedRange<Int>) {
                for byte in bytes {
                    let value = UInt8(truncatingIfNeeded: bits >> UInt64(8 * (7 - byte)))
                    text[index] = hexDigits[Int(value >> 4)]
                    text[index + 1] = hexDigits[Int(value & 0xF)]
                    index += 2
                }
            }
            func hyphen() {
                text[index] = UInt8(ascii: "-")
                index += 1
            }
            write(high, bytes: 0...3)
            hyphen()
            write(high, bytes: 4...5)
            hyphen()
            write(high, bytes: 6...7)
            hyphen()
            write(low, bytes: 0...1)
            hyphen()
            write(low, bytes: 2...7)
            return index
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
