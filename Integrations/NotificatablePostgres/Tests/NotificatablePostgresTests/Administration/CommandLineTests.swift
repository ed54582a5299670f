import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

/// The `notificatable-pg` executable: NOTIFICATABLE_PG_CLI, or beside the test bundle.
var commandLinePath: String {
    if let path = TestServer.path("NOTIFICATABLE_PG_CLI") { return path }
    return Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("notificatable-pg").path
        ?? "notificatable-pg"
}

/// What a run of `notificatable-pg` printed and how it ended.
struct CommandRun: Sendable {
    var status: Int32
    var output: String
    var errors: String

    /// The standard output read as JSON into `T` (dates ISO 8601, as the command writes them).
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(output.utf8))
    }

    /// The standard output read as a JSON object, for checking field names as a script would.
    func object() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(output.utf8))
        guard let object = value as? [String: Any] else { throw FixtureError("not a JSON object: \(output)") }
        return object
    }
}

/// Runs `notificatable-pg` with `arguments`, connected to the test server through the PG* variables (or only
/// `environment` when given).
func runCommandLine(_ arguments: [String], environment: [String: String]? = nil) throws -> CommandRun {
    let server = ProcessInfo.processInfo.environment
    let process = Process()
    process.executableURL = URL(fileURLWithPath: commandLinePath)
    process.arguments = arguments
    process.environment =
        environment ?? [
            "PGHOST": server["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1",
            "PGPORT": server["NOTIFICATABLE_PG_PORT"] ?? "5432",
            "PGUSER": server["NOTIFICATABLE_PG_USER"] ?? "notificatable",
            "PGDATABASE": server["NOTIFICATABLE_PG_DATABASE"] ?? "postgres",
        ]
    let output = Pipe()
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("notificatable-pg-\(UUID()).err")
    _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    process.standardOutput = output
    process.standardError = try FileHandle(forWritingTo: errorFile)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    return CommandRun(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self), errors: errors)
}

/// The JSON of the `dead-letters` commands, read back with the documented field names.
struct DeadLettersJSON: Decodable {
    struct Letter: Decodable {
        struct ID: Decodable, Equatable {
            var transactionID: Int64
            var rowID: Int64
        }

        var consumer: String
        var channel: String
        var id: ID
        var message: String
        var error: String
        var attempts: Int
        var parkedAt: Date
        var redriveRequested: Bool
    }

    var command: String
    var applied: Bool?
    var count: Int
    var deadLetters: [Letter]
}

extension PostgresIntegrationTests {
    /// `notificatable-pg`, spawned as an operator would run it, against the real server.
    @Suite(.serialized) struct CommandLine {
        /// A migrated schema with three dead letters of `billing` (two on `orders`, one on `refunds`, parked 3
        /// hours, 2 hours and 1 minute ago) and one of `shipping`.
        func schemaWithDeadLetters(_ label: String) async throws -> String {
            let schema = freshSchema(label)
            let migrated = try runCommandLine(["schema", "migrate", "--schema", schema, "--json"])
            #expect(migrated.status == 0, "\(migrated.errors)")
            try sql(
                """
                INSERT INTO "\(schema)".dead_letters (consumer, channel, txid, id, message, error, attempts, parked_at)
                VALUES ('billing', 'orders', '100', 1, '{"order":1}', 'Card declined: insufficient funds', 5,
                        now() - interval '3 hours'),
                       ('billing', 'orders', '100', 2, '{"order":2}', 'Gateway TIMED OUT after 30 s', 5,
                        now() - interval '2 hours'),
                       ('billing', 'refunds', '101', 3, '{"refund":3}', 'timed out', 1, now() - interval '1 minute'),
                       ('shipping', 'orders', '100', 1, '{"order":1}', 'no address', 3, now() - interval '3 hours')
                """)
            return schema
        }

        @Test func statusJSONShowsConsumersTheirSessionsLagDeadLettersAndTheHoldingTransaction() async throws {
            let schema = try await schemaWithDeadLetters("status")
            let channel = DurableHandles.item.name.rawValue
            // A running consumer that holds its name, caught up.
            let running = try DurableLocal(schema: schema, consumer: "running")
            defer { running.stop() }
            await running.transport.flush()
            // A stopped consumer 5 messages behind on another channel.
            try sql(
                """
                INSERT INTO "\(schema)".consumers (consumer, channel, txid, id) VALUES ('stopped', 'audit', '1', 0);
                INSERT INTO "\(schema)".outbox (channel, message, created_at)
                SELECT 'audit', 'm' || i, now() - interval '10 minutes' FROM generate_series(1, 5) i;
                """)
            let readerPID = try sql(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                    + "AND objid::int8 = hashtextextended('\"\(schema)\" running', 0) & 4294967295")

            // A transaction that has written and stays open, then a committed message behind it.
            let blocker = try await testConnection()
            _ = try await blocker.query("BEGIN", logger: Logger(label: "test")).collect()
            var blockerPID: Int32 = 0
            for try await row in try await blocker.query(
                "SELECT pg_backend_pid(), pg_current_xact_id()::text", logger: Logger(label: "test")
            ).decode((Int32, String).self) { blockerPID = row.0 }
            try sql("INSERT INTO \"\(schema)\".outbox (channel, message) VALUES ('audit', 'held back')")

            let run = try runCommandLine(["status", "--schema", schema, "--json"])
            #expect(run.status == 0, "\(run.errors)")
            let status = try run.decode(PostgresNotificationStatus.self)
            #expect(status.schema == schema)
            #expect(status.schemaVersion == 3)
            #expect(status.expectedSchemaVersion == 3)

            let runningRow = try #require(status.consumers.first { $0.consumer == "running" })
            #expect(runningRow.channel == channel)
            #expect(runningRow.kind == .relay)
            #expect(runningRow.state == .running)
            #expect(runningRow.lagMessages == 0)
            #expect(runningRow.session.map { String($0.pid) } == readerPID)
            #expect(runningRow.session?.clientAddress == "127.0.0.1")

            let stopped = try #require(status.consumers.first { $0.consumer == "stopped" })
            #expect(stopped.state == .stopped)
            #expect(stopped.session == nil)
            #expect(stopped.lagMessages == 6)
            #expect(stopped.lagSeconds >= 590)

            #expect(
                status.deadLetters.map { "\($0.consumer) \($0.channel) \($0.count)" }
                    == ["billing orders 2", "billing refunds 1", "shipping orders 1"])
            #expect(status.heldBackMessages == 1)
            #expect(status.holdingTransaction?.pid == Int(blockerPID))
            #expect(status.holdingTransaction?.state == "idle in transaction")

            // The field names a script reads.
            let object = try run.object()
            #expect(
                Set(object.keys)
                    == [
                        "schema", "schemaVersion", "expectedSchemaVersion", "consumers", "deadLetters",
                        "heldBackMessages", "holdingTransaction",
                    ])
            let first = try #require((object["consumers"] as? [[String: Any]])?.first)
            #expect(
                Set(first.keys).isSuperset(of: [
                    "consumer", "kind", "channel", "position", "positionSavedAt", "lagMessages", "lagSeconds",
                    "state", "waitingSessions",
                ]))

            // Text output: one line per consumer, the holder named.
            let text = try runCommandLine(["status", "--schema", schema])
            #expect(text.status == 0)
            #expect(text.output.contains("stopped"))
            #expect(
                text.output.contains(
                    "delivery held back: 1 committed message(s) wait behind the transaction of pid \(blockerPID)"))

            _ = try await blocker.query("ROLLBACK", logger: Logger(label: "test")).collect()
            try await blocker.close()
            let after = try runCommandLine(["status", "--schema", schema, "--json"]).decode(
                PostgresNotificationStatus.self)
            #expect(after.holdingTransaction == nil)
            #expect(after.heldBackMessages == 0)
        }

        @Test func deadLettersListFiltersAndShowReadBackAsJSON() async throws {
            let schema = try await schemaWithDeadLetters("list")
            let all = try runCommandLine(["dead-letters", "list", "--schema", schema, "--json"])
            #expect(all.status == 0, "\(all.errors)")
            let listed = try all.decode(DeadLettersJSON.self)
            #expect(listed.command == "list")
            #expect(listed.count == 4)
            #expect(listed.deadLetters.first?.error == "Card declined: insufficient funds")  // oldest first
            #expect(listed.deadLetters.first?.id == .init(transactionID: 100, rowID: 1))

            func ids(_ filters: [String]) throws -> [String] {
                let run = try runCommandLine(["dead-letters", "list", "--schema", schema, "--json"] + filters)
                #expect(run.status == 0, "\(run.errors)")
                return try run.decode(DeadLettersJSON.self).deadLetters.map {
                    "\($0.consumer) \($0.id.transactionID):\($0.id.rowID)"
                }
            }
            #expect(try ids(["--consumer", "billing"]) == ["billing 100:1", "billing 100:2", "billing 101:3"])
            #expect(try ids(["--channel", "refunds"]) == ["billing 101:3"])
            #expect(try ids(["--error", "timed out"]) == ["billing 100:2", "billing 101:3"])  // any case
            #expect(try ids(["--older-than", "1h"]) == ["billing 100:1", "shipping 100:1", "billing 100:2"])
            #expect(try ids(["--older-than", "150m", "--consumer", "billing"]) == ["billing 100:1"])
            #expect(try ids(["--limit", "1"]).count == 1)

            let show = try runCommandLine([
                "dead-letters", "show", "100:1", "--consumer", "billing", "--schema", schema, "--json",
            ])
            #expect(show.status == 0, "\(show.errors)")
            let shown = try show.decode(DeadLettersJSON.self)
            #expect(shown.deadLetters.map(\.message) == ["{\"order\":1}"])
            #expect(shown.deadLetters.first?.attempts == 5)
            let text = try runCommandLine(["dead-letters", "show", "100:1", "--schema", schema])
            #expect(text.output.contains("consumer:  shipping"))
            #expect(text.output.contains("error:     Card declined: insufficient funds"))
            let missing = try runCommandLine(["dead-letters", "show", "999:9", "--schema", schema])
            #expect(missing.status == 1)
            #expect(missing.errors.contains("no dead letter 999:9"))
        }

        @Test func redriveAndPurgeOnlyShowWhatTheyWouldDoWithoutYes() async throws {
            let schema = try await schemaWithDeadLetters("change")
            let dryRedrive = try runCommandLine(
                ["dead-letters", "redrive", "--error", "timed out", "--schema", schema, "--json"])
            #expect(dryRedrive.status == 0, "\(dryRedrive.errors)")
            let wouldRedrive = try dryRedrive.decode(DeadLettersJSON.self)
            #expect(wouldRedrive.applied == false)
            #expect(wouldRedrive.count == 2)
            #expect(try sql("SELECT count(*) FROM \"\(schema)\".dead_letters WHERE redrive") == "0")

            // The wake-up reaches a listener on the schema's wake channel.
            let redriven = try runCommandLine(
                ["dead-letters", "redrive", "--error", "timed out", "--yes", "--schema", schema, "--json"])
            #expect(redriven.status == 0, "\(redriven.errors)")
            let marked = try redriven.decode(DeadLettersJSON.self)
            #expect(marked.applied == true)
            #expect(marked.deadLetters.allSatisfy { $0.redriveRequested })
            #expect(
                try sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM \"\(schema)\".dead_letters WHERE redrive")
                    == "2,3")

            let dryPurge = try runCommandLine(["dead-letters", "purge", "--consumer", "shipping", "--schema", schema])
            #expect(dryPurge.status == 0)
            #expect(dryPurge.output.contains("would purge 1 dead letter(s) (add --yes to do it)"))
            #expect(try sql("SELECT count(*) FROM \"\(schema)\".dead_letters") == "4")
            let purged = try runCommandLine(
                ["dead-letters", "purge", "--consumer", "shipping", "--yes", "--schema", schema, "--json"])
            #expect(purged.status == 0, "\(purged.errors)")
            #expect(try purged.decode(DeadLettersJSON.self).count == 1)
            #expect(try sql("SELECT count(*) FROM \"\(schema)\".dead_letters") == "3")
            #expect(try sql("SELECT count(*) FROM \"\(schema)\".dead_letters WHERE consumer = 'shipping'") == "0")
        }

        @Test func aReDriveFromTheCommandLineIsProcessedByTheRunningConsumer() async throws {
            let schema = freshSchema("redrive")
            try await publishItems(schema, count: 1)
            let transport = try processingTransport(schema, consumer: "billing")
            defer { transport.stop() }
            let succeeded = Recorded<Int>()
            let accepting = Recorded<Bool>()  // empty: the handler fails; then it succeeds
            let task = Task {
                try await transport.process(DurableHandles.item, options: quickOptions(attempts: 1)) { delivery in
                    guard accepting.count > 0 else { throw FixtureError("declined") }
                    succeeded.append(delivery.payload.index)
                }
            }
            defer { task.cancel() }
            #expect(
                await poll(timeout: .seconds(30)) {
                    (try? sql("SELECT count(*) FROM \"\(schema)\".dead_letters")) == "1"
                })
            accepting.append(true)
            let run = try runCommandLine([
                "dead-letters", "redrive", "--consumer", "billing", "--yes", "--schema", schema,
            ])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("re-drive asked for: 1 dead letter(s)"))
            #expect(await poll(timeout: .seconds(30)) { succeeded.all == [0] })
            #expect(
                await poll(timeout: .seconds(30)) {
                    (try? sql("SELECT count(*) FROM \"\(schema)\".dead_letters")) == "0"
                })
        }

        @Test func schemaCommandsPrintMigrateAndShowTheVersion() async throws {
            let schema = freshSchema("schema")
            let printed = try runCommandLine(["schema", "print", "--schema", schema])
            #expect(printed.status == 0)
            #expect(printed.output.contains("CREATE TABLE IF NOT EXISTS \"\(schema)\".schema_migrations"))
            // What it prints is what migrates: run it with psql.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(schema).sql")
            try printed.output.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let (psqlOutput, psqlStatus) = try TestServer.psql(["-f", file.path])
            #expect(psqlStatus == 0, "\(psqlOutput)")

            let version = try runCommandLine(["schema", "version", "--schema", schema, "--json"])
            #expect(version.status == 0, "\(version.errors)")
            let read = try version.decode(PostgresSchemaVersion.self)
            #expect(read.version == 3)
            #expect(read.applied.map(\.version) == [1, 2, 3])
            #expect(read.pending.isEmpty)

            let other = freshSchema("schema")
            try sql(previousReleaseSchemaSQL(other))
            let old = try runCommandLine(["schema", "version", "--schema", other])
            #expect(old.output.contains("version 0 (created before versions were recorded)"))
            #expect(old.output.contains("pending 3: dead_letters.redrive_starts"))
            let migrated = try runCommandLine(["schema", "migrate", "--schema", other])
            #expect(migrated.status == 0, "\(migrated.errors)")
            #expect(migrated.output.contains("version 0 -> 3"))
            let again = try runCommandLine(["schema", "migrate", "--schema", other, "--json"])
            #expect(try again.decode(PostgresSchemaMigrationResult.self).applied.isEmpty)
        }

        @Test func exitStatusIsTwoForUsageOneForErrorsAndUrlAndSocketConnect() async throws {
            let server = ProcessInfo.processInfo.environment
            let host = server["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1"
            let port = server["NOTIFICATABLE_PG_PORT"] ?? "5432"
            let user = server["NOTIFICATABLE_PG_USER"] ?? "notificatable"
            let database = server["NOTIFICATABLE_PG_DATABASE"] ?? "postgres"

            #expect(try runCommandLine(["dead-letters", "frobnicate"]).status == 2)
            #expect(try runCommandLine(["dead-letters", "list", "--older-than", "soon"]).status == 2)
            #expect(try runCommandLine(["status", "--url", "mysql://x"]).status == 2)
            #expect(try runCommandLine(["--help"]).status == 0)

            let missing = try runCommandLine(["status", "--schema", freshSchema("missing")])
            #expect(missing.status == 1)
            #expect(missing.errors.contains("does not exist"))
            let unreachable = try runCommandLine(
                ["status", "--url", "postgres://\(user)@127.0.0.1:1/\(database)", "--connect-timeout", "1"],
                environment: [:])
            #expect(unreachable.status == 1)
            #expect(unreachable.errors.contains("could not connect to PostgreSQL at 127.0.0.1:1"))

            let schema = freshSchema("url")
            let byURL = try runCommandLine(
                ["schema", "migrate", "--url", "postgres://\(user)@\(host):\(port)/\(database)", "--schema", schema],
                environment: [:])
            #expect(byURL.status == 0, "\(byURL.errors)")
            // The socket directory of scripts/postgres.sh is beside the data directory.
            if let data = server["NOTIFICATABLE_PG_DATA"] {
                let socketDirectory = URL(fileURLWithPath: data).deletingLastPathComponent().path
                let bySocket = try runCommandLine(
                    ["schema", "version", "--schema", schema, "--json"],
                    environment: ["PGHOST": socketDirectory, "PGPORT": port, "PGUSER": user, "PGDATABASE": database])
                #expect(bySocket.status == 0, "\(bySocket.errors)")
                #expect(try bySocket.decode(PostgresSchemaVersion.self).version == 3)
            }
        }
    }
}
