import NotificatablePostgres

func redriveTimeouts(transport: DurablePostgresNotificationTransport) async throws {
    for letter in try await transport.deadLetters() where letter.error.contains("timed out") {
        try await transport.redrive(letter)
    }
}
