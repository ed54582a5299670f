import Foundation
import Notificatable

extension NotificationRelayMessage {
    /// The bytes that a ``NotificationRelay`` forwarding `handle` sends for a post of `payload`, as sender `sender`
    /// with sequence number `sequence`: the payload written with the handle's plain-keys encoder (its own for a
    /// `postingPlainKeys()` handle, a default `UserInfoEncoder` otherwise), exactly as the relay writes it.
    ///
    /// For a transport that posts outside a relay, such as the transactional post of a durable outbox: what it
    /// writes is read by every relay as if a relay had sent it.
    ///
    /// ```swift
    /// let bytes = try NotificationRelayMessage.encoded(
    ///     OrderShipped(orderID: "A-17"), for: orderShipped, sender: UUID().uuidString, sequence: 1)
    /// ```
    ///
    /// - Parameters:
    ///   - payload: The payload.
    ///   - handle: The handle it is posted on: its name and its encoder.
    ///   - sender: The sender id that receivers use to drop duplicates and keep order; see ``sender``.
    ///   - sequence: The sender's sequence number for this name, 1 for its first message.
    ///   - headers: The message's ``headers`` (a trace context, say); none by default.
    /// - Returns: The message's UTF-8 JSON bytes.
    /// - Throws: The `EncodingError` of the payload, with its coding path, or at `headers` for headers over the
    ///   limits.
    public static func encoded<Info: Codable>(
        _ payload: Info, for handle: Notificatable<Info>, sender: String, sequence: Int,
        headers: [String: String] = [:]
    ) throws -> Data {
        let plain = try handle.relayPlainKeysEncoding.encode(payload)
        return try messageBytes(name: handle.name, sender: sender, sequence: sequence, payload: plain, headers: headers)
    }

    /// The bytes that a ``NotificationRelay`` forwarding `handle`, a handle without payload, sends for a post, as
    /// sender `sender` with sequence number `sequence`.
    ///
    /// ```swift
    /// let bytes = try NotificationRelayMessage.encoded(for: cacheInvalidated, sender: "billing-1", sequence: 7)
    /// ```
    ///
    /// - Parameters:
    ///   - handle: The handle.
    ///   - sender: The sender id.
    ///   - sequence: The sender's sequence number for this name.
    ///   - headers: The message's ``headers``; none by default.
    /// - Returns: The message's UTF-8 JSON bytes.
    /// - Throws: `EncodingError` at `headers` for headers over the limits; nothing else.
    public static func encoded(
        for handle: Notificatable<Never>, sender: String, sequence: Int, headers: [String: String] = [:]
    ) throws -> Data {
        try messageBytes(name: handle.name, sender: sender, sequence: sequence, payload: nil, headers: headers)
    }
}
