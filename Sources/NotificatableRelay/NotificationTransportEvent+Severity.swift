import Foundation

// MARK: - Severity

extension NotificationTransportEvent {
    /// How much an event matters to whoever runs the process, from routine to loss: the level a log line of it
    /// gets. Each ``Kind`` has a default (``Kind/defaultSeverity``); a transport may report an event at another
    /// severity when it knows better (a standby waiting for a consumer name is a `notice`, not an error).
    ///
    /// The five severities are swift-log's `info` to `error`, so an integration maps them one to one:
    ///
    /// ```swift
    /// let relay = NotificationRelay(transport: transport, onEvent: { event in
    ///     if event.severity >= .warning { alerts.raise("\(event)") }
    /// })
    /// ```
    public struct Severity: Hashable, Comparable, Sendable, CustomStringConvertible {
        private let rank: Int
        private let name: String

        private init(_ rank: Int, _ name: String) {
            self.rank = rank
            self.name = name
        }

        /// Detail useful only when looking into the relay itself.
        public static let debug = Severity(0, "debug")
        /// Routine and good news: a connection regained, the server's queue back under its threshold.
        public static let info = Severity(1, "info")
        /// Worth knowing, nothing lost: a standby waiting for its consumer name, a takeover, duplicates dropped.
        public static let notice = Severity(2, "notice")
        /// Something is wrong and may lead to loss: a lost connection, a queue filling up, a jump in a sender's
        /// numbers.
        public static let warning = Severity(3, "warning")
        /// Messages were lost, refused or not sent, or a message did not authenticate (an attack or a wrong key).
        public static let error = Severity(4, "error")

        /// The severity's name, such as `warning`.
        public var description: String { name }

        /// Orders severities from ``debug`` to ``error``.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }
}

extension NotificationTransportEvent.Kind {
    /// The severity of an event of this kind unless its reporter gives another: ``NotificationTransportEvent/Severity/error``
    /// for loss and refusal (`messageTooLarge`, `encodingFailed`, `publishFailed`, `messagesMissed`,
    /// `unauthenticatedMessage`, `transportError`), ``NotificationTransportEvent/Severity/warning`` for
    /// `connectionLost`, `sequenceJumped`, `nothingForwarded` and `handlerStalled`,
    /// ``NotificationTransportEvent/Severity/notice`` for `reconnected`, `duplicatesDropped`, `consumerStandby` and
    /// `consumerTakenOver`.
    public var defaultSeverity: NotificationTransportEvent.Severity {
        switch self {
        case .connectionLost, .sequenceJumped, .nothingForwarded, .handlerStalled: .warning
        case .reconnected, .duplicatesDropped, .consumerStandby, .consumerTakenOver: .notice
        default: .error
        }
    }
}
