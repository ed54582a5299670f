import NotificatablePostgres

// The Operating article's readiness endpoint, for a Hummingbird 2 application. The route's lines are the article's;
// the few Hummingbird types it uses are stood in for at the bottom of this file (same names and call shapes), so
// that this test target compiles the example without depending on Hummingbird.

func addReadiness(to router: Router<BasicRequestContext>, notifications: PostgresNotificationService) {
    router.get("ready") { _, _ -> String in
        let status = notifications.status()
        let report = status.processing.map { "\($0.channel): \($0.state), \($0.lagMessages ?? 0) waiting" }
        guard status.isHealthy else {
            throw HTTPError(.serviceUnavailable, message: report.joined(separator: "\n"))
        }
        return report.joined(separator: "\n")
    }
}

// MARK: - Stand-ins for Hummingbird's `Router`, `BasicRequestContext`, `Request` and `HTTPError`

struct BasicRequestContext {}
struct Request {}

final class Router<Context> {
    private(set) var routes: [String: @Sendable (Request, Context) async throws -> String] = [:]

    @discardableResult
    func get(_ path: String, use handler: @escaping @Sendable (Request, Context) async throws -> String) -> Self {
        routes[path] = handler
        return self
    }
}

struct HTTPError: Error {
    enum Status { case serviceUnavailable }
    let status: Status
    let message: String

    init(_ status: Status, message: String) {
        self.status = status
        self.message = message
    }
}
