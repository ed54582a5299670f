import ArgumentParser
import Foundation
import NotificatablePostgres

/// `notificatable-pg schema print|migrate|version`.
struct Schema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The outbox's schema version: print the migration SQL, migrate, show the version.",
        subcommands: [Print.self, Migrate.self, Version.self])

    struct Print: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the SQL that creates the schema or migrates it to this release's version (no connection).")

        @OptionGroup var options: ConnectionOptions

        func run() async throws {
            let sql = PostgresNotificationAdministration.migrationSQL(schema: options.schema)
            if options.json {
                struct Printed: Encodable {
                    var schema: String
                    var version: Int
                    var sql: String
                }
                return try printJSON(
                    Printed(
                        schema: options.schema, version: PostgresNotificationAdministration.currentSchemaVersion,
                        sql: sql))
            }
            print(sql, terminator: "")
        }
    }

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the schema, or apply the migrations it lacks (one transaction, under a lock).")

        @OptionGroup var options: ConnectionOptions

        func run() async throws {
            let result = try await options.withAdministration { try await $0.migrateSchema() }
            if options.json { return try printJSON(result) }
            if result.applied.isEmpty {
                print("schema \(result.schema) is at version \(result.toVersion): nothing to do")
                return
            }
            for migration in result.applied { print("applied \(migration.version): \(migration.name)") }
            print(
                "schema \(result.schema): version \(result.fromVersion) -> \(result.toVersion) in "
                    + String(format: "%.3f s", result.seconds))
        }
    }

    struct Version: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the schema's version, the migrations applied and those pending.")

        @OptionGroup var options: ConnectionOptions

        func run() async throws {
            let version = try await options.withAdministration { try await $0.schemaVersion() }
            if options.json { return try printJSON(version) }
            let note =
                version.version == 0
                ? (version.outboxExists ? " (created before versions were recorded)" : " (no tables)") : ""
            print(
                "schema \(version.schema): version \(version.version)\(note); this release: \(version.expectedVersion)")
            for migration in version.applied {
                print("  applied \(migration.version): \(migration.name) at \(format(migration.appliedAt))")
            }
            for migration in version.pending { print("  pending \(migration.version): \(migration.name)") }
            if version.version > version.expectedVersion {
                print("newer than this release: run the release that migrated it")
            }
        }
    }
}
