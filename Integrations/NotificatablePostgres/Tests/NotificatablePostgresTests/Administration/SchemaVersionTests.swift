import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

/// The tables exactly as the release before schema versions created them (`creationBlock` of main before issue 40):
/// every statement `IF NOT EXISTS`, `redrive_starts` added by an `ALTER`, and no `schema_migrations`.
func previousReleaseSchemaSQL(_ schema: String) -> String {
    let q = "\"\(schema)\""
    return """
        DO $notificatable$ BEGIN PERFORM pg_advisory_xact_lock(7236140519284756391);
        CREATE SCHEMA IF NOT EXISTS \(q);
        CREATE TABLE IF NOT EXISTS \(q).outbox (
            txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            id bigint GENERATED ALWAYS AS IDENTITY,
            channel text NOT NULL,
            message text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (txid, id)
        );
        CREATE TABLE IF NOT EXISTS \(q).consumers (
            consumer text NOT NULL,
            channel text NOT NULL,
            txid xid8 NOT NULL,
            id bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (consumer, channel)
        );
        CREATE TABLE IF NOT EXISTS \(q).retention (
            single boolean PRIMARY KEY DEFAULT true CHECK (single),
            txid xid8 NOT NULL,
            id bigint NOT NULL
        );
        CREATE TABLE IF NOT EXISTS \(q).attempts (
            consumer text NOT NULL,
            channel text NOT NULL,
            txid xid8 NOT NULL,
            id bigint NOT NULL,
            attempts integer NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (consumer, channel, txid, id)
        );
        CREATE TABLE IF NOT EXISTS \(q).acknowledgements (
            consumer text NOT NULL,
            channel text NOT NULL,
            txid xid8 NOT NULL,
            id bigint NOT NULL,
            acknowledged_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (consumer, channel, txid, id)
        );
        CREATE TABLE IF NOT EXISTS \(q).dead_letters (
            consumer text NOT NULL,
            channel text NOT NULL,
            txid xid8 NOT NULL,
            id bigint NOT NULL,
            message text NOT NULL,
            error text NOT NULL,
            attempts integer NOT NULL,
            parked_at timestamptz NOT NULL DEFAULT now(),
            redrive boolean NOT NULL DEFAULT false,
            PRIMARY KEY (consumer, channel, txid, id)
        );
        ALTER TABLE \(q).dead_letters ADD COLUMN IF NOT EXISTS redrive_starts integer NOT NULL DEFAULT 0;
        END $notificatable$
        """
}

/// Rows in every table of `schema`: `messages` outbox rows on channel `orders`, two consumers' positions, two dead
/// letters (one asked to be re-driven), an acknowledgement and an attempt count.
func fillPreviousReleaseRows(_ schema: String, messages: Int = 3) throws {
    let q = "\"\(schema)\""
    try sql(
        """
        INSERT INTO \(q).outbox (channel, message) SELECT 'orders', 'message ' || i FROM generate_series(1, \(messages)) i;
        INSERT INTO \(q).consumers (consumer, channel, txid, id) VALUES ('billing', 'orders', '5', 1),
            ('billing/processing', 'orders', '6', 2);
        INSERT INTO \(q).dead_letters (consumer, channel, txid, id, message, error, attempts, redrive, redrive_starts)
            VALUES ('billing', 'orders', '7', 3, 'poison', 'card declined', 5, false, 0),
                   ('billing', 'orders', '8', 4, 'slow', 'timed out', 5, true, 2);
        INSERT INTO \(q).acknowledgements (consumer, channel, txid, id) VALUES ('billing', 'orders', '9', 5);
        INSERT INTO \(q).attempts (consumer, channel, txid, id, attempts) VALUES ('billing', 'orders', '9', 6, 2);
        """)
}

/// Every row of every table of `schema`, as text, for comparing before and after.
func tableContents(_ schema: String) throws -> [String: String] {
    var contents: [String: String] = [:]
    for table in ["outbox", "consumers", "retention", "attempts", "acknowledgements", "dead_letters"] {
        contents[table] = try sql(
            "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM \"\(schema)\".\(table) t")
    }
    return contents
}

/// Runs `body` with an administration of `schema` over a running client of the test server.
func withTestAdministration<T: Sendable>(
    _ schema: String, _ body: (PostgresNotificationAdministration) async throws -> T
) async throws -> T {
    let client = try testClient(applicationName: freshApplicationName("administration"))
    let running = RunningGroup([client])
    do {
        let result = try await body(PostgresNotificationAdministration(client: client, schema: schema))
        try await running.shutDown()
        return result
    } catch {
        try? await running.shutDown()
        throw error
    }
}

extension PostgresIntegrationTests {
    /// Schema versions: numbered migrations, the transports' refusal of another version.
    @Suite(.serialized) struct SchemaVersions {
        @Test func thePreviousReleasesSchemaWithRowsMigratesToTheCurrentVersionAndKeepsEveryRow() async throws {
            let schema = freshSchema("previous")
            try sql(previousReleaseSchemaSQL(schema))
            try fillPreviousReleaseRows(schema, messages: 10_000)
            let before = try tableContents(schema)
            #expect(before["outbox"]?.split(separator: "\n").count == 10_000)

            let version = try await withTestAdministration(schema) { try await $0.schemaVersion() }
            #expect(version.version == 0)
            #expect(version.outboxExists)
            #expect(version.pending.map(\.version) == [1, 2, 3])

            let result = try await withTestAdministration(schema) { try await $0.migrateSchema() }
            #expect(result.fromVersion == 0)
            #expect(result.toVersion == PostgresNotificationAdministration.currentSchemaVersion)
            #expect(result.applied.map(\.version) == [1, 2, 3])
            print("migration of the previous release's schema with 10,000 messages: \(result.seconds) s")
            #expect(try tableContents(schema) == before)
            #expect(
                try sql("SELECT string_agg(version::text, ',' ORDER BY version) FROM \"\(schema)\".schema_migrations")
                    == "1,2,3")

            // Once only: a second migration applies nothing.
            let again = try await withTestAdministration(schema) { try await $0.migrateSchema() }
            #expect(again.applied.isEmpty)
            #expect(again.fromVersion == 3)

            // The migrated schema works: a consumer that only checks the version receives.
            let receiver = try DurableLocal(schema: schema, consumer: "receiver") { $0.createsSchema = false }
            defer { receiver.stop() }
            let sender = try DurableLocal(schema: schema, consumer: "sender") { $0.createsSchema = false }
            defer { sender.stop() }
            await receiver.transport.flush()
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 1))
            #expect(await receiver.wait(timeout: .seconds(30)) { $0.items.contains { $0.publisher == "sender" } })
            #expect(
                receiver.events.allSatisfy { ($0.error as? PostgresTransportError)?.kind != .schemaVersionMismatch })
        }

        @Test func anEarlierSchemaWithoutTheAttemptsTableNorRedriveStartsGetsThem() async throws {
            let schema = freshSchema("earlier")
            let q = "\"\(schema)\""
            try sql(previousReleaseSchemaSQL(schema))
            try sql("DROP TABLE \(q).attempts; ALTER TABLE \(q).dead_letters DROP COLUMN redrive_starts;")
            try sql(
                "INSERT INTO \(q).dead_letters (consumer, channel, txid, id, message, error, attempts) "
                    + "VALUES ('billing', 'orders', '7', 3, 'poison', 'card declined', 5)")
            _ = try await withTestAdministration(schema) { try await $0.migrateSchema() }
            #expect(try sql("SELECT to_regclass('\(q).attempts') IS NOT NULL") == "t")
            #expect(try sql("SELECT redrive_starts FROM \(q).dead_letters") == "0")
            #expect(try sql("SELECT error FROM \(q).dead_letters") == "card declined")
        }

        @Test func twoProcessesMigratingAtOnceApplyEachMigrationOnce() async throws {
            let schema = freshSchema("race")
            let results = try await withTestAdministration(schema) { administration in
                try await withThrowingTaskGroup(of: PostgresSchemaMigrationResult.self) { group in
                    for _ in 0..<4 { group.addTask { try await administration.migrateSchema() } }
                    var results: [PostgresSchemaMigrationResult] = []
                    for try await result in group { results.append(result) }
                    return results
                }
            }
            #expect(results.flatMap(\.applied).map(\.version).sorted() == [1, 2, 3])
            #expect(results.allSatisfy { $0.toVersion == 3 })
            #expect(try sql("SELECT count(*) FROM \"\(schema)\".schema_migrations") == "3")
        }

        @Test func aNewerSchemaIsRefusedByTheTransportAndThePublisher() async throws {
            let schema = freshSchema("newer")
            _ = try await withTestAdministration(schema) { try await $0.migrateSchema() }
            try sql("INSERT INTO \"\(schema)\".schema_migrations (version, name) VALUES (4, 'from the future')")

            let consumer = try DurableLocal(schema: schema, consumer: "old-release")  // createsSchema: on
            defer { consumer.stop() }
            let refusal = {
                consumer.events.compactMap { $0.error as? PostgresTransportError }
                    .first { $0.kind == .schemaVersionMismatch }
            }
            #expect(await consumer.wait(timeout: .seconds(30)) { _ in refusal() != nil })
            #expect(refusal()?.foundSchemaVersion == 4)
            #expect(refusal()?.expectedSchemaVersion == 3)
            #expect(refusal()?.description.contains("newer than version 3") == true)
            // Not migrated down, nothing else touched.
            #expect(try sql("SELECT max(version) FROM \"\(schema)\".schema_migrations") == "4")

            let client = try testClient(applicationName: freshApplicationName("newer"))
            let publisher = DurableNotificationPublisher(
                client: client, configuration: .init(schema: schema))
            let running = RunningGroup([client])
            let error = await #expect(throws: PostgresTransportError.self) { try await publisher.ready() }
            #expect(error?.kind == .schemaVersionMismatch)
            #expect(error?.foundSchemaVersion == 4)
            try await running.shutDown()
        }

        @Test func anOlderSchemaWithoutCreatesSchemaIsRefusedNamingTheMigrateCommandThenRunsOnceMigrated() async throws
        {
            let schema = freshSchema("older")
            try sql(previousReleaseSchemaSQL(schema))
            let consumer = try DurableLocal(schema: schema, consumer: "checker") { $0.createsSchema = false }
            defer { consumer.stop() }
            let refusal = {
                consumer.events.compactMap { $0.error as? PostgresTransportError }
                    .first { $0.kind == .schemaVersionMismatch }
            }
            #expect(await consumer.wait(timeout: .seconds(30)) { _ in refusal() != nil })
            #expect(refusal()?.foundSchemaVersion == 0)
            #expect(refusal()?.expectedSchemaVersion == 3)
            #expect(refusal()?.description.contains("notificatable-pg schema migrate") == true)
            #expect(refusal()?.description.contains("created before versions were recorded") == true)
            // It did not migrate.
            #expect(try sql("SELECT to_regclass('\"\(schema)\".schema_migrations') IS NULL") == "t")

            // Migrated by the operator, the waiting transport starts on its next attempt.
            _ = try await withTestAdministration(schema) { try await $0.migrateSchema() }
            await consumer.transport.flush()
            let sender = try DurableLocal(schema: schema, consumer: "sender") { $0.createsSchema = false }
            defer { sender.stop() }
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 7))
            #expect(await consumer.wait(timeout: .seconds(30)) { $0.items.contains { $0.publisher == "sender" } })
        }
    }
}
