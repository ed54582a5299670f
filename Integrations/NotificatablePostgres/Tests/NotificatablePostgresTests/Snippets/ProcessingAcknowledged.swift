import NotificatablePostgres

protocol BillingClient: Sendable {
    func charge(_ order: OrderPlaced, idempotencyKey: String) async throws
}

func processOrders(secret: String, billing: some BillingClient) async throws {
    let transport = try DurablePostgresNotificationTransport(
        configuration: .init(
            host: "db.internal", username: "app", password: secret, database: "app", consumer: "billing"))
    try await transport.process(Notificatable.orderPlaced, options: .init(maximumAttempts: 5)) { delivery in
        try await billing.charge(delivery.payload, idempotencyKey: delivery.id.description)
    }
}
