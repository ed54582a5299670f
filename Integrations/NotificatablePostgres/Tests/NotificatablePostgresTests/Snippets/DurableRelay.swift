import Logging
import NotificatablePostgres

func relayOrdersDurably(secret: String, logger: Logger) throws -> NotificationRelay {
    let transport = try DurablePostgresNotificationTransport(
        configuration: .init(
            host: "db.internal", username: "app", password: secret, database: "app",
            consumer: "billing-worker"))  // stable across restarts of this process
    let relay = NotificationRelay(transport: transport, onEvent: { event in logger.warning("\(event)") })
    relay.forward(Notificatable.orderPlaced)
    return relay
}
