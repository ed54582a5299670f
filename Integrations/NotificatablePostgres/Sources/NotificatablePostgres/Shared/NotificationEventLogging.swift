import Foundation
import Logging
import NotificatableRelay

extension Logger {
    /// Logs a relay's or a transport's event as one line at the level of its severity (`error` for loss, refusal
    /// and unauthenticated messages, `warning` for a lost connection, `notice` for a standby, a takeover or a
    /// reconnection, `info` for good news), with structured metadata.
    ///
    /// ```swift
    /// let relay = NotificationRelay(transport: transport, onEvent: { event in logger.log(event) })
    /// ```
    ///
    /// The message is the event's sentence (the error's description when there is one). The metadata holds
    /// `notificatable.event` (the kind), and when known `notificatable.channel`, `notificatable.notification` (the
    /// notification's name), `notificatable.count` (messages missed, dropped or refused),
    /// `notificatable.backend_pid` (the server session concerned), `notificatable.error` (the
    /// ``PostgresTransportError`` kind), `notificatable.seconds` (how long) and `notificatable.sender` (the sending relay's id). Add your own (the consumer name, say) to the logger's
    /// metadata: the transports put `notificatable.consumer` there.
    ///
    /// - Parameter event: The event.
    public func log(_ event: NotificationTransportEvent) {
        log(level: Logger.Level(event.severity), "\(event.sentence)", metadata: event.logMetadata)
    }
}

extension Logger.Level {
    /// The swift-log level of a `NotificationTransportEvent.Severity`: the same name.
    ///
    /// - Parameter severity: The event's severity.
    public init(_ severity: NotificationTransportEvent.Severity) {
        switch severity {
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        default: self = .error
        }
    }
}

extension NotificationTransportEvent {
    /// The event as one sentence: the error's description, or what the kind means.
    var sentence: String {
        var subject = ""
        if let name { subject = name.rawValue }
        if let channel, channel != name?.rawValue {
            subject += (subject.isEmpty ? "" : " ") + "on channel \"\(channel)\""
        }
        let prefix = subject.isEmpty ? "" : subject + ": "
        if let error { return prefix + "\(error)" }
        switch kind {
        case .reconnected: return prefix + "Connected again; listening on every channel."
        case .connectionLost: return prefix + "The connection was lost; reconnecting."
        default: return prefix + "\(kind)."
        }
    }

    /// The event's structured metadata for swift-log.
    var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["notificatable.event": "\(kind)"]
        if let channel { metadata["notificatable.channel"] = "\(channel)" }
        if let name { metadata["notificatable.notification"] = "\(name.rawValue)" }
        if let error = error as? PostgresTransportError {
            metadata["notificatable.error"] = "\(error.kind)"
            if let count = error.count { metadata["notificatable.count"] = "\(count)" }
            if let pid = error.backendPID { metadata["notificatable.backend_pid"] = "\(pid)" }
            if let seconds = error.seconds { metadata["notificatable.seconds"] = "\(seconds)" }
            if let role = error.role { metadata["notificatable.role"] = "\(role)" }
        } else if let error = error as? NotificationRelayError {
            if let count = error.missedCount ?? error.duplicateCount { metadata["notificatable.count"] = "\(count)" }
            if let sender = error.sender { metadata["notificatable.sender"] = "\(sender)" }
        }
        return metadata
    }
}

extension NotificationTransportEvent {
    /// The event at the severity its ``PostgresTransportError`` calls for, when that differs from its kind's: a
    /// standby and a takeover are `notice`, the server's queue back under its threshold `info`; a connection that
    /// cannot be made yet, a filling queue and a full receive buffer `warning`.
    var graded: NotificationTransportEvent {
        guard let error = error as? PostgresTransportError else { return self }
        let severity: Severity
        switch error.kind {
        case .consumerInUse, .consumerTakenOver: severity = .notice
        case .notificationQueueBelowThreshold: severity = .info
        case .notificationQueueFilling, .receiveBufferFull, .connectFailed, .deliveryStalled, .connectionWaiting:
            severity = .warning
        default: return self
        }
        return NotificationTransportEvent(kind: kind, name: name, channel: channel, error: error, severity: severity)
    }
}
