// The root README's durable-delivery block, verbatim (imports aside).
//
// README.md marks the block with `<!-- readme-example: <this file> -->`, so `ReadmeExamplesTests` in the root package
// checks that the text matches, and this package's build (`scripts/postgres.sh`) compiles it. It is compiled, not
// run: the durable transport's tests (`DurableDeliveryTests`) run the same calls against a real server.

import Foundation
import Notificatable
import NotificatablePostgres
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle

/// The README's `Order` and its handle, which the block forwards.
struct ReadmeOrder: Codable, Sendable {
    var id: Int
}

extension Notificatable where Info == ReadmeOrder {
    static let orderDidShip = Notificatable.name("OrderDidShip")
}

/// The README's block, in a function whose parameters are what the block uses without declaring.
func readmeDurableExample(secret: String, logger: Logger) async throws {
    let transport = try DurablePostgresNotificationTransport(
        configuration: .init(
            host: "db.internal", username: "app", password: secret, database: "app",
            consumer: "billing"))  // this process's name: its position is stored under it
    let relay = NotificationRelay(transport: transport, onEvent: { event in logger.warning("\(event)") })
    relay.forward(Notificatable.orderDidShip)  // every consumer gets every post, in order, after a restart too
    // On SIGTERM: store what was posted, then stop.
    let group = ServiceGroup(services: [transport], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
}
