import Logging
import NotificatablePostgres

func relayOrdersAtMostOnce(secret: String, logger: Logger) throws -> NotificationRelay {
    let transport = try PostgresNotificationTransport(
        configuration: .init(host: "db.internal", port: 5432, username: "app", password: secret, database: "app"))
    let relay = NotificationRelay(transport: transport, onEvent: { event in logger.warning("\(event)") })
    relay.forward(Notificatable.orderPlaced)  // every instance's local posts reach every other instance, typed
    return relay
}
