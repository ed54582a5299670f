import Foundation
import Notificatable

/// Something that happened to a ``NotificationRelay`` or its ``NotificationTransport`` other than a received
/// message: a message refused or not sent, a lost connection, a reconnection, messages found missing.
///
/// A relay hands every event to its `onEvent:` handler (see ``NotificationRelay/init(transport:center:authenticator:maximumTrackedSenders:onEvent:onFailure:)``).
/// A transport builds events and reports them through ``NotificationTransportHandler/report(_:)``.
///
/// ```swift
/// let relay = NotificationRelay(transport: transport, onEvent: { event in
///     if event.kind == .reconnected { refreshCaches() }   // whatever was sent meanwhile is lost
///     logger.warning("\(event)")
/// })
/// ```
public struct NotificationTransportEvent: Sendable, CustomStringConvertible {
    /// What happened. New kinds may be added; compare with `==` rather than switching exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: String

        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// A post was not sent because its message is larger than the transport's
        /// ``NotificationTransportLimits/maximumMessageSize``. Reported by the relay, at post time; nothing was
        /// sent, nothing was truncated, and later posts are sent as usual.
        public static let messageTooLarge = Kind("messageTooLarge")
        /// A post was not sent because its payload could not be encoded; ``NotificationTransportEvent/error`` is the
        /// `EncodingError`, or the `NotificationDecodingFailure` if the notification held no payload of the
        /// handle's type. Reported by the relay, at post time.
        public static let encodingFailed = Kind("encodingFailed")
        /// The transport could not send a message. Reported by the transport; later messages are still tried.
        public static let publishFailed = Kind("publishFailed")
        /// The transport lost its connection to the engine. Messages sent to this process until
        /// ``reconnected`` are lost.
        public static let connectionLost = Kind("connectionLost")
        /// The transport is connected and listening again after ``connectionLost``. Messages sent meanwhile were not
        /// received and will not be: this is a gap.
        public static let reconnected = Kind("reconnected")
        /// The relay received a message whose sequence number skipped some numbers of the same sender: the
        /// messages in between were lost. ``NotificationTransportEvent/error`` says how many.
        public static let messagesMissed = Kind("messagesMissed")
        /// The relay dropped messages it had received before from the same sender (an engine that delivers twice,
        /// a replay). ``NotificationTransportEvent/error`` says how many: the duplicates of one sender and name are
        /// counted and reported together, when the next new message arrives (of any sender), when the name stops
        /// being forwarded, or when the relay stops.
        public static let duplicatesDropped = Kind("duplicatesDropped")
        /// The relay received a sequence number far from the sender's recent ones (more than 256 away, above or
        /// below): a replay of an old message, a stray or forged message, a sender whose numbers started again, or a
        /// long outage. The message was posted, and the sender's recent numbers stay checked, so such a number can
        /// neither stop its later messages nor make the relay forget the recent ones. Every message posted below the
        /// recent numbers is reported, not only the first of a run. ``NotificationTransportEvent/error`` says from
        /// which number (the highest recent one) to which.
        public static let sequenceJumped = Kind("sequenceJumped")
        /// The relay refused a received message because its ``NotificationMessageAuthenticator`` could not open it:
        /// the message carries no tag, a tag under a key the authenticator does not hold, or a tag that does not
        /// match its bytes. ``NotificationTransportEvent/error`` is the authenticator's error, and
        /// ``NotificationTransportEvent/channel`` the channel it arrived on; ``NotificationTransportEvent/name`` is
        /// `nil`, because nothing in an unauthenticated message is trusted. Nothing was posted. Reported by the relay,
        /// on the transport's thread, for every such message: anyone who can publish on the engine can cause these.
        public static let unauthenticatedMessage = Kind("unauthenticatedMessage")
        /// A durable consumer parked a message in its dead letters instead of processing it: its handler failed
        /// every attempt, or the message could not be used at all (refused by the authenticator, malformed, not
        /// decodable as the handle's type). ``NotificationTransportEvent/error`` says why (a `DurableProcessingError`,
        /// in the PostgreSQL package); the consumer goes on with the next message, and the parked one can be re-driven.
        public static let messageParked = Kind("messageParked")
        /// A consumer waits as a standby: another process holds its consumer name (or, for a durable processor, its
        /// consumer name and channel), and this one receives nothing until that process stops. Nothing failed: a
        /// rolling deploy or a second replica looks like this. ``NotificationTransportEvent/error`` names the holder
        /// (the engine's error type, such as `PostgresTransportError` of kind `consumerInUse`). Reported once per wait;
        /// ``consumerTakenOver`` follows when the name is free.
        public static let consumerStandby = Kind("consumerStandby")
        /// A consumer that waited as a standby (``consumerStandby``) holds its consumer name now, and goes on from
        /// the stored position. Nothing failed.
        public static let consumerTakenOver = Kind("consumerTakenOver")
        /// A durable consumer's handler has been running on one message for longer than its stall threshold (the
        /// handler is still running: nothing was given up). ``NotificationTransportEvent/error`` says which message
        /// and for how long (a `DurableProcessingError`, in the PostgreSQL package). Reported once per attempt.
        public static let handlerStalled = Kind("handlerStalled")
        /// Any other error of the transport, such as a failed `LISTEN`; transports also report news under it that
        /// has no kind of its own, at the severity that fits: read ``NotificationTransportEvent/severity``.
        public static let transportError = Kind("transportError")
        /// A relay (or the service that owns one) was started with no handle to forward: it sends and receives
        /// nothing, which is almost always a forgotten `forward`. Reported once, by whoever owns the relay.
        public static let nothingForwarded = Kind("nothingForwarded")

        /// The name of the kind, such as `messageTooLarge`.
        public var description: String { rawValue }
    }

    /// What happened.
    public let kind: Kind
    /// The notification concerned, when the event is about one post.
    public let name: Notification.Name?
    /// The channel concerned, if any.
    public let channel: String?
    /// The underlying error, if any: a ``NotificationRelayError``, an `EncodingError`, or the engine's error.
    public let error: (any Error)?
    /// How much it matters: the kind's ``Kind/defaultSeverity`` unless the reporter gave another.
    public let severity: Severity

    /// Creates an event; transports call it to report what happened to them.
    ///
    /// ```swift
    /// handler.report(NotificationTransportEvent(kind: .connectionLost, error: error))
    /// ```
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - name: The notification concerned, if any.
    ///   - channel: The channel concerned, if any.
    ///   - error: The underlying error, if any.
    ///   - severity: How much it matters; `nil` (the default) for the kind's ``Kind/defaultSeverity``.
    public init(
        kind: Kind,
        name: Notification.Name? = nil,
        channel: String? = nil,
        error: (any Error)? = nil,
        severity: Severity? = nil
    ) {
        self.kind = kind
        self.name = name
        self.channel = channel
        self.error = error
        self.severity = severity ?? kind.defaultSeverity
    }

    /// A one-line diagnostic, such as `messageTooLarge (OrderShipped on channel "OrderShipped"): …`.
    public var description: String {
        var parts: [String] = []
        if let name { parts.append(name.rawValue) }
        if let channel { parts.append("on channel \"\(channel)\"") }
        var text = kind.description
        if !parts.isEmpty { text += " (" + parts.joined(separator: " ") + ")" }
        if let error { text += ": \(error)" }
        return text
    }
}

/// An error that a ``NotificationRelay`` reports in a ``NotificationTransportEvent``.
public struct NotificationRelayError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        case messageTooLarge(size: Int, limit: Int)
        case messagesMissed(sender: String, count: Int)
        case duplicatesDropped(sender: String, count: Int)
        case sequenceJumped(sender: String, from: Int, to: Int)
    }
    private let storage: Storage

    /// A message of `size` bytes exceeds the transport's limit of `limit` bytes.
    ///
    /// - Parameters:
    ///   - size: The encoded message's size in bytes.
    ///   - limit: The transport's ``NotificationTransportLimits/maximumMessageSize``.
    /// - Returns: The error.
    public static func messageTooLarge(size: Int, limit: Int) -> NotificationRelayError {
        NotificationRelayError(storage: .messageTooLarge(size: size, limit: limit))
    }

    /// `count` messages of the relay `sender` were not received.
    ///
    /// - Parameters:
    ///   - sender: The sending relay's ``NotificationRelay/id``.
    ///   - count: How many sequence numbers were skipped.
    /// - Returns: The error.
    public static func messagesMissed(sender: String, count: Int) -> NotificationRelayError {
        NotificationRelayError(storage: .messagesMissed(sender: sender, count: count))
    }

    /// `count` messages of the relay `sender` were dropped because they had been received before.
    ///
    /// - Parameters:
    ///   - sender: The sending relay's ``NotificationRelay/id``.
    ///   - count: How many duplicates were dropped.
    /// - Returns: The error.
    public static func duplicatesDropped(sender: String, count: Int) -> NotificationRelayError {
        NotificationRelayError(storage: .duplicatesDropped(sender: sender, count: count))
    }

    /// The relay `sender`'s sequence numbers jumped from `from` to `to`, further than the window of recent numbers.
    ///
    /// - Parameters:
    ///   - sender: The sending relay's ``NotificationRelay/id``.
    ///   - from: The highest recent number of the sender.
    ///   - to: The number received.
    /// - Returns: The error.
    public static func sequenceJumped(sender: String, from: Int, to: Int) -> NotificationRelayError {
        NotificationRelayError(storage: .sequenceJumped(sender: sender, from: from, to: to))
    }

    /// The message's size in bytes, for a message that was too large.
    public var messageSize: Int? {
        if case .messageTooLarge(let size, _) = storage { return size }
        return nil
    }

    /// How many messages were missed, for a gap in a sender's sequence numbers.
    public var missedCount: Int? {
        if case .messagesMissed(_, let count) = storage { return count }
        return nil
    }

    /// How many duplicates were dropped, for ``NotificationTransportEvent/Kind/duplicatesDropped``.
    public var duplicateCount: Int? {
        if case .duplicatesDropped(_, let count) = storage { return count }
        return nil
    }

    /// The sending relay's ``NotificationRelay/id``, for every error but a message that was too large.
    public var sender: String? {
        switch storage {
        case .messageTooLarge: nil
        case .messagesMissed(let sender, _), .duplicatesDropped(let sender, _), .sequenceJumped(let sender, _, _):
            sender
        }
    }

    /// The numbers a sender's sequence jumped between, for ``NotificationTransportEvent/Kind/sequenceJumped``.
    public var sequenceJump: (from: Int, to: Int)? {
        if case .sequenceJumped(_, let from, let to) = storage { return (from, to) }
        return nil
    }

    /// A sentence that says what went wrong.
    public var description: String {
        switch storage {
        case .messageTooLarge(let size, let limit):
            "The message is \(size) bytes, over the transport's limit of \(limit) bytes; it was not sent."
        case .messagesMissed(let sender, let count):
            "\(count) message\(count == 1 ? "" : "s") from relay \(sender) did not arrive."
        case .duplicatesDropped(let sender, let count):
            "\(count) duplicate message\(count == 1 ? "" : "s") from relay \(sender) \(count == 1 ? "was" : "were") "
                + "dropped: \(count == 1 ? "it had" : "they had") been received before."
        case .sequenceJumped(let sender, let from, let to):
            "The sequence numbers of relay \(sender) jumped from \(from) to \(to): a replay of an old message, a "
                + "stray or forged message, a restart of its numbers, or more than \(RemoteSenderTable.windowSize) "
                + "messages lost. The message was posted, and the numbers near \(from) are still checked."
        }
    }
}
