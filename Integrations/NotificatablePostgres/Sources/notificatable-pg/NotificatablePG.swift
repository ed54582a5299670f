import ArgumentParser
import Foundation
import NotificatablePostgres

/// `notificatable-pg`: the operator's command line of the durable outbox. Every command is a thin layer over
/// `PostgresNotificationAdministration`; exit status 0 when it worked, 1 on an error, 2 on a usage error.
@main
struct NotificatablePG: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notificatable-pg",
        abstract: "Inspect and steer NotificatablePostgres' durable outbox: consumers, dead letters, schema versions.",
        discussion: """
            Connects with the usual PostgreSQL environment variables (PGHOST, a socket directory allowed, PGPORT, \
            PGUSER, PGPASSWORD, PGDATABASE) or --url postgres://user:password@host:port/database. Without TLS: \
            run it on the database host, over a Unix socket, or through a tunnel. --json prints one JSON document \
            (field names documented in the Operating article). Exit status: 0 ok, 1 error, 2 usage.
            """,
        subcommands: [Status.self, DeadLetters.self, Schema.self])

    /// ArgumentParser's own `main` exits with 64 on a usage error; this one with 2 (and 1 on any other error).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as OperatorError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            Foundation.exit(1)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)  // --help, --version
            }
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            FileHandle.standardError.write(Data("error: \(describe(error))\n".utf8))
            Foundation.exit(1)
        }
    }
}

/// A failure the command explains itself (exit status 1).
struct OperatorError: Error {
    var message: String
}
