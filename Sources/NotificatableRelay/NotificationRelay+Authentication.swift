import Foundation

/// How a ``NotificationRelay`` applies its ``NotificationMessageAuthenticator``: seals what it sends, opens what it
/// receives, and reports every message it refuses. Without an authenticator, both are the identity.
///
/// Kept apart from the relay so that the relay calls it once on the send path and once on the receive path. Never
/// called with the relay's lock held: the authenticator is user code.
struct RelayMessageSealing: Sendable {
    let authenticator: (any NotificationMessageAuthenticator)?
    /// The authenticator's ``NotificationMessageAuthenticator/maximumOverhead``, read once; 0 without one.
    let overhead: Int
    /// The transport's ``NotificationTransportLimits/maximumMessageSize``.
    let limit: Int?
    let report: @Sendable (NotificationTransportEvent) -> Void

    init(
        authenticator: (any NotificationMessageAuthenticator)?,
        limit: Int?,
        report: @escaping @Sendable (NotificationTransportEvent) -> Void
    ) {
        self.authenticator = authenticator
        self.overhead = max(0, authenticator?.maximumOverhead ?? 0)
        self.limit = limit
        self.report = report
    }

    /// What to hand the transport for `message`, or `nil` when it cannot be sealed or is too large sealed (both
    /// reported, with the message's name: the relay wrote it).
    func seal(_ message: Data, on channel: String) -> Data? {
        guard let authenticator else { return message }
        let sealed: Data
        do {
            sealed = try authenticator.seal(message)
        } catch {
            let name = NotificationRelayMessage.name(in: message)
            report(NotificationTransportEvent(kind: .encodingFailed, name: name, channel: channel, error: error))
            return nil
        }
        if let limit, sealed.count > limit {
            // The authenticator added more than its maximumOverhead; the relay's size check could not see it coming.
            let error = NotificationRelayError.messageTooLarge(size: sealed.count, limit: limit)
            let name = NotificationRelayMessage.name(in: message)
            report(NotificationTransportEvent(kind: .messageTooLarge, name: name, channel: channel, error: error))
            return nil
        }
        return sealed
    }

    /// The message sealed in `data`, or `nil` (reported as unauthenticated) when it does not open.
    func open(_ data: Data, on channel: String) -> Data? {
        guard let authenticator else { return data }
        do {
            return try authenticator.open(data)
        } catch {
            report(NotificationTransportEvent(kind: .unauthenticatedMessage, channel: channel, error: error))
            return nil
        }
    }
}
