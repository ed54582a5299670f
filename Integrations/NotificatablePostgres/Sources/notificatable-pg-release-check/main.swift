// Checks, in the build configuration it was compiled in, that the default event handlers log: a relay over a
// PostgreSQL transport given no `onEvent:`, and a `PostgresNotificationService` given none, send every event to the
// transport's swift-log `Logger` at the level of its severity. `scripts/postgres.sh` runs it from its debug build
// with `--any-configuration` (a relay's default used to print in debug builds only: the lint now refuses
// configuration conditions in the library's sources), and `scripts/postgres.sh release-log` from a release build. It needs no server: the transport is pointed
// at a closed port, so its events are a refused connection (`connectFailed`, warning) and, from the relay, a post
// over the size limit (`messageTooLarge`, error); the idle service reports `nothingForwarded` (warning).
//
// Prints one line per check and exits 0 when every entry was recorded at its level, 1 otherwise.

import Foundation
import InMemoryLogging
import Logging
import Notificatable
import NotificatablePostgres
import NotificatableRelay

struct Large: Codable, Sendable {
    var text: String
}

let handle = Notificatable<Large>.name("NotificatablePostgres.ReleaseCheck")
let logs = InMemoryLogHandler()
let logger = Logger(label: "release-check", factory: { _ in logs })

var configuration = DurablePostgresNotificationTransport.Configuration(
    host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, consumer: "release-check")
configuration.maximumMessageSize = 256
configuration.initialReconnectDelay = .seconds(5)
configuration.maximumReconnectDelay = .seconds(5)

let transport = try DurablePostgresNotificationTransport(configuration: configuration, logger: logger)
let center = NotificationCenter()
let relay = NotificationRelay(transport: transport, center: center)  // no onEvent: the transport's default handler
relay.forward(handle)
handle.post(Large(text: String(repeating: "x", count: 1_000)), center: center)

var serviceConfiguration = configuration
serviceConfiguration.consumer = "release-check-service"
let service = try PostgresNotificationService(
    configuration: serviceConfiguration, center: NotificationCenter(), logger: logger)
let serviceRun = Task { try await service.run() }

/// The entry logged for the event `kind` (and, if given, the transport error `error`), waited for up to 30 s.
func entry(event kind: String, error: String? = nil) async -> InMemoryLogHandler.Entry? {
    for _ in 0..<300 {
        let found = logs.entries.first { entry in
            entry.metadata["notificatable.event"] == "\(kind)"
                && (error == nil || entry.metadata["notificatable.error"] == "\(error ?? "")")
        }
        if let found { return found }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return nil
}

var failures = 0
// CI runs it from the debug build (`--any-configuration`): the library's sources hold no configuration condition
// (`scripts/lint.sh` refuses `#if DEBUG`, `assert` and the like in them), so what a debug build logs, a release build
// logs too; `scripts/postgres.sh release-log` still builds it with -c release on demand.
#if DEBUG
if !CommandLine.arguments.contains("--any-configuration") {
    print("release-check: built in debug; run it from a release build (-c release), or pass --any-configuration")
    failures += 1
}
#endif
let expected: [(kind: String, error: String?, level: Logger.Level)] = [
    ("messageTooLarge", nil, .error),
    ("transportError", "connectFailed", .warning),
    ("nothingForwarded", nil, .warning),
]
for check in expected {
    let label = check.kind + (check.error.map { " (\($0))" } ?? "")
    guard let found = await entry(event: check.kind, error: check.error) else {
        print("release-check: FAIL \(label): not logged")
        failures += 1
        continue
    }
    if found.level == check.level {
        print("release-check: ok \(label) at \(found.level): \(found.message)")
    } else {
        print("release-check: FAIL \(label) logged at \(found.level), expected \(check.level)")
        failures += 1
    }
}
serviceRun.cancel()
_ = await serviceRun.result
relay.stop()
service.relay.stop()
exit(failures == 0 ? 0 : 1)
