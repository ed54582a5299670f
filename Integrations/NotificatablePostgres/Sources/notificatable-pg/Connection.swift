import ArgumentParser
import Foundation
import Logging
import NotificatablePostgres
import PostgresNIO

/// The options every command takes: where the database is, which schema, and the output format.
struct ConnectionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "postgres://user:password@host:port/database (default: the PG* environment variables).",
            valueName: "url"))
    var url: String?

    @Option(help: "The schema of the outbox's tables (the transports' Configuration.schema).")
    var schema: String = "notificatable"

    @Flag(help: "Print one JSON document instead of text.")
    var json = false

    @Option(help: "The longest wait for a connection, in seconds.")
    var connectTimeout: Int = 10

    /// The client settings from `--url` or the environment.
    func clientConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (PostgresClient.Configuration, String)
    {
        var host = environment["PGHOST"] ?? "localhost"
        var port = environment["PGPORT"].flatMap(Int.init) ?? 5432
        var user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        var password = environment["PGPASSWORD"]
        var database = environment["PGDATABASE"]
        var sslMode = environment["PGSSLMODE"] ?? "prefer"
        if let url {
            guard let components = URLComponents(string: url),
                components.scheme == "postgres" || components.scheme == "postgresql"
            else { throw ValidationError("--url must look like postgres://user:password@host:port/database") }
            if let value = components.host, !value.isEmpty { host = value.removingPercentEncoding ?? value }
            if let value = components.port { port = value }
            if let value = components.user, !value.isEmpty { user = value }
            if let value = components.password { password = value }
            let path = components.path.drop { $0 == "/" }
            if !path.isEmpty { database = String(path).removingPercentEncoding ?? String(path) }
            for item in components.queryItems ?? [] {
                switch item.name {
                case "host": host = item.value ?? host
                case "sslmode": sslMode = item.value ?? sslMode
                case "port": port = item.value.flatMap(Int.init) ?? port
                default: break
                }
            }
        }
        guard ["disable", "allow", "prefer"].contains(sslMode) else {
            throw ValidationError(
                "sslmode \(sslMode) asks for TLS, which notificatable-pg does not speak yet: run it on the database "
                    + "host, over a Unix socket, or through a tunnel (sslmode=disable).")
        }
        database = database ?? user
        if host.hasPrefix("/") {
            let socket = host.hasSuffix(".s.PGSQL.\(port)") ? host : host + "/.s.PGSQL.\(port)"
            return (
                .init(unixSocketPath: socket, username: user, password: password, database: database),
                socket
            )
        }
        return (
            .init(host: host, port: port, username: user, password: password, database: database, tls: .disable),
            "\(host):\(port)"
        )
    }

    /// Runs `body` with the administration of the schema over a client that runs meanwhile.
    func withAdministration<T: Sendable>(
        _ body: @Sendable (PostgresNotificationAdministration) async throws -> T
    ) async throws -> T {
        let (configuration, place) = try clientConfiguration()
        let quiet = Logger(label: "notificatable-pg") { _ in SwiftLogNoOpLogHandler() }
        let client = PostgresClient(configuration: configuration, backgroundLogger: quiet)
        let administration = PostgresNotificationAdministration(
            client: client, schema: schema, leaseTimeout: .seconds(max(1, connectTimeout)), logger: quiet)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                return try await body(administration)
            } catch let error as PostgresTransportError where error.kind == .connectionWaiting {
                throw OperatorError(
                    message: "could not connect to PostgreSQL at \(place) within \(connectTimeout) s "
                        + "(check PGHOST, PGPORT, --url, and that the server runs)")
            }
        }
    }
}

/// A sentence for an error: PostgresNIO's `PSQLError` hides the server's message from `description` (it may hold
/// data), which an operator at a terminal needs.
func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        return String(reflecting: error)
    }
    return String(describing: error)
}
