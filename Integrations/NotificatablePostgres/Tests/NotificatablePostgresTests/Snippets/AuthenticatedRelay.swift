import Foundation
import Logging
import NotificatablePostgres

struct MissingRelayKey: Error {}

func authenticatedRelay(
    environment: [String: String], configuration: PostgresNotificationTransport.Configuration, logger: Logger
) throws -> NotificationRelay {
    // The secret: at least 32 random bytes, e.g. `openssl rand -base64 32`, kept in your secret store.
    // Data(base64Encoded: "") is empty Data, not nil: check for a missing variable and for an empty key.
    guard let encoded = environment["RELAY_KEY_2026_11"], let secret = Data(base64Encoded: encoded), !secret.isEmpty
    else { throw MissingRelayKey() }
    let authenticator = try HMACMessageAuthenticator(keys: [.init(id: "2026-11", secret: secret)])
    return NotificationRelay(
        transport: try PostgresNotificationTransport(configuration: configuration),
        authenticator: authenticator,
        onEvent: { event in logger.warning("\(event)") })  // unauthenticatedMessage: refused, never posted
}
