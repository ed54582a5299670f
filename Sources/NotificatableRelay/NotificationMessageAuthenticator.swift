import Foundation

/// Seals every message a ``NotificationRelay`` sends and opens every message it receives, so that only the holders of
/// a key can post through the relays: a message that does not open is refused and reported, never posted.
///
/// An engine such as PostgreSQL lets anyone who can connect to it publish on any channel, and the wire format is
/// plain JSON, so without an authenticator any process that reaches the engine can make every relay post any typed
/// notification. Give each relay the same authenticator (the same keys), and a relay posts only what a holder of a
/// key sealed:
///
/// ```swift
/// let relay = NotificationRelay(transport: transport, authenticator: authenticator, onEvent: { event in
///     if event.kind == .unauthenticatedMessage { logger.warning("refused: \(event)") }
/// })
/// ```
///
/// This library holds no cryptography, so it ships no authenticator. `HMACMessageAuthenticator`, in the
/// `NotificatablePostgres` package, signs with HMAC-SHA256 through swift-crypto and works with any transport; its
/// framing is in the wire-format section of <doc:AcrossProcesses>, with what a tag protects and what it doesn't.
///
/// The relay seals a message after encoding it and numbering it, on the thread that hands it to the transport, one
/// message at a time, in order; and opens a received message before it reads anything in it, on the transport's
/// thread. It never calls the authenticator while holding one of its locks. Both methods may be called from several
/// threads at once (several relays sharing one authenticator), so keep an authenticator immutable.
public protocol NotificationMessageAuthenticator: Sendable {
    /// The most bytes that ``seal(_:)`` adds to a message.
    ///
    /// The relay reads it once, when it is created, and counts it when it checks a post against the transport's
    /// ``NotificationTransportLimits/maximumMessageSize``, so that a post refused for its size is refused on the
    /// posting thread, reported as ``NotificationTransportEvent/Kind/messageTooLarge`` with the sealed size, and
    /// takes no sequence number. A sealed message larger than the limit all the same is not sent either, and is
    /// reported the same way.
    var maximumOverhead: Int { get }

    /// Seals `message`, the exact bytes of one encoded message, for sending.
    ///
    /// - Parameter message: The message as the relay encoded it (see ``NotificationRelayMessage``).
    /// - Returns: What the transport sends: the message and its tag, at most ``maximumOverhead`` bytes longer, and
    ///   text when the message is text (PostgreSQL's `NOTIFY` carries text only).
    /// - Throws: Any error; the relay reports it as ``NotificationTransportEvent/Kind/encodingFailed`` and sends
    ///   nothing.
    func seal(_ message: Data) throws -> Data

    /// Opens a received message: checks its tag and returns the message it seals.
    ///
    /// - Parameter sealed: The bytes exactly as the transport received them.
    /// - Returns: The message, exactly as it was before ``seal(_:)``.
    /// - Throws: Any error, when the bytes carry no tag, a tag under a key this authenticator does not hold, or a
    ///   tag that does not match. The relay reports it as ``NotificationTransportEvent/Kind/unauthenticatedMessage``
    ///   and posts nothing.
    func open(_ sealed: Data) throws -> Data
}
