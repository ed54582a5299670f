import Foundation
import PostgresNIO

// Schema versions. Every change to the tables is a numbered migration, applied once, in order; the versions applied
// are rows of `schema_migrations` in the outbox's schema. All pending migrations run in one statement (a `DO` block:
// one transaction) under the transaction-level advisory lock that creating the schema always took, so processes
// migrating at once wait for each other and the second finds nothing left to do, and a migration that fails leaves
// the schema as it was. Each migration's statements are idempotent (`IF NOT EXISTS`): a schema created before
// versions were recorded (version 0, every table made by `CREATE … IF NOT EXISTS`) is adopted as it is, its rows
// kept, and only what it lacks is added.
//
// A release never runs against a version other than its own (`DurableSchemaVersionCheck`): an older schema is
// migrated when the process may create the schema (`createsSchema`), refused otherwise; a newer one is always
// refused (a newer release migrated it; an older process does not know its tables).

/// One numbered change to the tables.
struct DurableSchemaMigration: Sendable {
    /// Its number: 1 for the first, then one more for each.
    let version: Int
    /// A short description, stored in `schema_migrations.name`.
    let name: String
    /// Its statements for one schema, each idempotent.
    let statements: @Sendable (DurableOutboxSchema) -> [String]
}

extension DurableOutboxSchema {
    /// Every migration, in order. Append; never change one that shipped.
    static let migrations: [DurableSchemaMigration] = [
        DurableSchemaMigration(version: 1, name: "outbox, consumers, retention, acknowledgements, dead_letters") {
            $0.outboxTableStatements + $0.processingTableStatements
        },
        DurableSchemaMigration(version: 2, name: "attempts") { [$0.attemptsTableStatement] },
        DurableSchemaMigration(version: 3, name: "dead_letters.redrive_starts") { [$0.redriveStartsColumnStatement] },
    ]

    /// The version this release reads and writes: the last migration's.
    static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// The table of versions applied.
    var migrationsTable: String { quoted + ".schema_migrations" }

    /// The advisory lock (one `bigint` key, transaction level) that creating or migrating any schema takes: the key
    /// of the creation block before versions, so a process of an earlier release creating its tables meanwhile
    /// waits too.
    static let migrationLockKey: Int64 = 7_236_140_519_284_756_391

    /// One statement that creates the schema and the table of versions if they are missing, then applies, under
    /// the migration lock and in one transaction, every migration above the version recorded (none when the schema
    /// is newer than this release: the caller checks the version afterwards).
    var migrationBlock: String {
        var body = [
            "PERFORM pg_advisory_xact_lock(\(Self.migrationLockKey));",
            "CREATE SCHEMA IF NOT EXISTS \(quoted);",
            """
            CREATE TABLE IF NOT EXISTS \(migrationsTable) (
                version integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """,
            "SELECT coalesce(max(version), 0) INTO applied FROM \(migrationsTable);",
        ]
        for migration in Self.migrations {
            body.append("IF applied < \(migration.version) THEN")
            body += migration.statements(self).map { $0 + ";" }
            body.append(
                "INSERT INTO \(migrationsTable) (version, name) VALUES (\(migration.version), "
                    + "\(DurableReadPageStatement.escapeStringLiteral(migration.name)));")
            body.append("END IF;")
        }
        return "DO $notificatable$ DECLARE applied integer; BEGIN\n" + body.joined(separator: "\n")
            + "\nEND $notificatable$"
    }

    /// The SQL that brings a schema of any earlier version (or none) to the current one, as
    /// `notificatable-pg schema print` shows it: the migration block, which a migration tool can run as it is.
    var migrationScript: String { migrationBlock + ";\n" }

    /// Whether the table of versions and the outbox exist: two booleans.
    var tablesExist: PostgresQuery {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(migrationsTable)
        bindings.append(quoted + ".outbox")
        return PostgresQuery(
            unsafeSQL: "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL", binds: bindings)
    }

    /// The versions applied, oldest first: version, name, when (run only when the table exists).
    var appliedMigrations: PostgresQuery {
        PostgresQuery(
            unsafeSQL: "SELECT version::int8, name, applied_at FROM \(migrationsTable) ORDER BY version")
    }
}

/// The schema's version as read from the server.
struct DurableSchemaState: Sendable {
    /// Whether the outbox table exists.
    var outboxExists: Bool
    /// The highest version applied; 0 when none is recorded (no schema, or one created before versions).
    var version: Int
    /// The versions applied, oldest first.
    var applied: [PostgresSchemaMigration]

    /// Reads it with `run`, which runs a query and returns its rows.
    static func read(
        _ schema: DurableOutboxSchema, run: (PostgresQuery) async throws -> [PostgresRow]
    ) async throws -> DurableSchemaState {
        let exist = try await run(schema.tablesExist)
        let (versioned, outbox) = try exist.first?.decode((Bool, Bool).self) ?? (false, false)
        guard versioned else { return DurableSchemaState(outboxExists: outbox, version: 0, applied: []) }
        let applied = try await run(schema.appliedMigrations).map { row in
            let (version, name, appliedAt) = try row.decode((Int64, String, Date).self)
            return PostgresSchemaMigration(version: Int(version), name: name, appliedAt: appliedAt)
        }
        return DurableSchemaState(outboxExists: outbox, version: applied.map(\.version).max() ?? 0, applied: applied)
    }

    /// Makes sure the schema is at this release's version: migrates it when `migrating` (creating it if missing),
    /// checks it otherwise. `run` runs a statement on the tables (refusals wrapped as the caller wants); the version
    /// errors are thrown here, unwrapped.
    ///
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaVersionMismatch`` (newer,
    ///   or older without `migrating`) or ``PostgresTransportError/Kind/schemaMissing`` (no outbox, not
    ///   `migrating`); `run`'s errors.
    @discardableResult
    static func ensureCurrent(
        _ schema: DurableOutboxSchema, migrating: Bool, run: (PostgresQuery) async throws -> [PostgresRow]
    ) async throws -> DurableSchemaState {
        var state = try await read(schema, run: run)
        if migrating && state.version < DurableOutboxSchema.currentVersion {
            _ = try await run(PostgresQuery(unsafeSQL: schema.migrationBlock))
            state = try await read(schema, run: run)
        }
        if !migrating && !state.outboxExists {
            throw PostgresTransportError(kind: .schemaMissing, schema: schema.quoted)
        }
        guard state.version == DurableOutboxSchema.currentVersion else {
            throw PostgresTransportError(
                kind: .schemaVersionMismatch, schema: schema.quoted, foundSchemaVersion: state.version,
                expectedSchemaVersion: DurableOutboxSchema.currentVersion)
        }
        return state
    }
}

/// A schema migration applied to the outbox's tables: a row of `schema_migrations`.
public struct PostgresSchemaMigration: Sendable, Hashable, Codable {
    /// Its number: 1 for the first.
    public let version: Int
    /// What it changed, such as `attempts`.
    public let name: String
    /// When it was applied.
    public let appliedAt: Date

    /// Creates a record of a migration.
    ///
    /// - Parameters:
    ///   - version: Its number.
    ///   - name: What it changed.
    ///   - appliedAt: When it was applied.
    public init(version: Int, name: String, appliedAt: Date) {
        self.version = version
        self.name = name
        self.appliedAt = appliedAt
    }
}
