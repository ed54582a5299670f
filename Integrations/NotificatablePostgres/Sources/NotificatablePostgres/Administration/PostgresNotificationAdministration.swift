import Foundation
import Logging
import PostgresNIO

/// What an operator asks of the durable outbox's tables, from Swift: the schema version and its migration, who
/// consumes what and how far behind, and the dead letters (list, re-drive, purge). The `notificatable-pg` command
/// line is a thin layer over it; an admin endpoint of your own can be too.
///
/// ```swift
/// let administration = PostgresNotificationAdministration(client: client, schema: "notificatable")
/// let status = try await administration.status()
/// for consumer in status.consumers where consumer.lagMessages > 1_000 {
///     logger.warning("\(consumer.consumer) is \(consumer.lagMessages) messages behind on \(consumer.channel)")
/// }
/// ```
///
/// Every call leases one connection from the client for its duration (waiting at most ``leaseTimeout``) and keeps
/// no state on it; the client must run (its `run()`, or the client in the application's `ServiceGroup`). Nothing
/// here runs in the background.
public final class PostgresNotificationAdministration: Sendable {
    /// The schema of the tables, as given (`notificatable` by default, as the transport's).
    public let schema: String
    /// The longest wait for a connection from the client: past it a call throws a ``PostgresTransportError`` of
    /// kind ``PostgresTransportError/Kind/connectionWaiting``. Ten seconds.
    public let leaseTimeout: Duration
    let client: PostgresClient
    let outbox: DurableOutboxSchema
    let logger: Logger

    /// Creates the administration of one schema over the application's client. It connects nowhere until used.
    ///
    /// - Parameters:
    ///   - client: A `PostgresClient` that runs.
    ///   - schema: The schema of the outbox's tables (the transports' `Configuration.schema`).
    ///   - leaseTimeout: The longest wait for a connection from `client`.
    ///   - logger: Where the statements log. `Logger(label: "NotificatablePostgres")` by default.
    public init(
        client: PostgresClient, schema: String = "notificatable", leaseTimeout: Duration = .seconds(10),
        logger: Logger? = nil
    ) {
        self.client = client
        self.schema = schema
        self.leaseTimeout = leaseTimeout
        self.outbox = DurableOutboxSchema(schema)
        self.logger = logger ?? Logger(label: "NotificatablePostgres")
    }

    /// The schema version this release reads and writes (the transports refuse any other).
    public static var currentSchemaVersion: Int { DurableOutboxSchema.currentVersion }

    /// The SQL that creates the schema, or migrates one of any earlier version to ``currentSchemaVersion``: one
    /// `DO` block that takes the migration lock and applies each missing migration in one transaction, recording it
    /// in `schema_migrations`. For a migration tool that owns the schema (with `createsSchema` off); what
    /// `notificatable-pg schema print` prints.
    ///
    /// - Parameter schema: The schema of the outbox's tables.
    /// - Returns: The SQL, ending with a newline.
    public static func migrationSQL(schema: String = "notificatable") -> String {
        DurableOutboxSchema(schema).migrationScript
    }

    // MARK: - Schema versions

    /// The schema's version, the migrations applied and those this release would apply.
    ///
    /// - Returns: The version found (0 when none is recorded: no schema, or one created before versions).
    /// - Throws: PostgresNIO's error; ``PostgresTransportError`` of kind
    ///   ``PostgresTransportError/Kind/connectionWaiting``.
    public func schemaVersion() async throws -> PostgresSchemaVersion {
        let state = try await withRows { run in try await DurableSchemaState.read(outbox, run: run) }
        return PostgresSchemaVersion(schema: schema, state: state)
    }

    /// Creates the schema, or applies the migrations it lacks, up to ``currentSchemaVersion``: in one transaction,
    /// under an advisory lock (two processes migrating at once are safe: the second waits, then finds nothing to
    /// do). The rows in the tables are kept.
    ///
    /// - Returns: The versions before and after, the migrations applied now, and how long it took.
    /// - Throws: ``PostgresTransportError`` of kind ``PostgresTransportError/Kind/schemaVersionMismatch`` when the
    ///   schema is newer than this release (nothing is changed); PostgresNIO's error when the server refuses (a role
    ///   without `CREATE`).
    public func migrateSchema() async throws -> PostgresSchemaMigrationResult {
        let started = ContinuousClock.now
        // The version before is read under the migration lock, in the migration's transaction (the lock is taken
        // again by the migration block, which a session may do), so that of processes migrating at once each
        // reports only what it applied.
        let (before, after) = try await withRows { run in
            _ = try await run(PostgresQuery(unsafeSQL: "BEGIN"))
            do {
                _ = try await run(
                    PostgresQuery(
                        unsafeSQL: "SELECT pg_advisory_xact_lock(\(DurableOutboxSchema.migrationLockKey))::text"))
                let before = try await DurableSchemaState.read(outbox, run: run)
                let after = try await DurableSchemaState.ensureCurrent(outbox, migrating: true, run: run)
                _ = try await run(PostgresQuery(unsafeSQL: "COMMIT"))
                return (before, after)
            } catch {
                _ = try? await run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                throw error
            }
        }
        let applied = after.applied.filter { $0.version > before.version }
        return PostgresSchemaMigrationResult(
            schema: schema, fromVersion: before.version, toVersion: after.version, applied: applied,
            seconds: DurablePostgresNotificationTransport.seconds(ContinuousClock.now - started))
    }

    // MARK: - Running statements

    /// Leases a connection and calls `body` with a function that runs a query on it and returns its rows.
    func withRows<T: Sendable>(
        _ body: ((PostgresQuery) async throws -> [PostgresRow]) async throws -> T
    ) async throws -> T {
        do {
            return try await PostgresLease.withConnection(from: client, timeout: leaseTimeout) { connection in
                try await body { query in try await connection.rows(query, logger: logger) }
            }
        } catch let failure as PostgresConnectFailure {
            if let timeout = failure.error as? PostgresLeaseTimeout {
                throw PostgresTransportError(
                    kind: .connectionWaiting, underlying: timeout,
                    seconds: PostgresReconnectBackoff.seconds(timeout.waited), role: "administration")
            }
            throw failure.error
        }
    }

    /// Throws ``PostgresTransportError/Kind/schemaMissing`` when the outbox does not exist.
    func requireOutbox(_ run: (PostgresQuery) async throws -> [PostgresRow]) async throws {
        let state = try await DurableSchemaState.read(outbox, run: run)
        guard state.outboxExists else { throw PostgresTransportError(kind: .schemaMissing, schema: outbox.quoted) }
    }
}

// MARK: - Schema version values

/// A schema's version, as ``PostgresNotificationAdministration/schemaVersion()`` reads it. Its JSON (the output
/// of `notificatable-pg schema version --json`) has these field names.
public struct PostgresSchemaVersion: Sendable, Codable {
    /// A migration this release would apply.
    public struct PendingMigration: Sendable, Codable, Hashable {
        /// Its number.
        public let version: Int
        /// What it changes.
        public let name: String
    }

    /// The schema, as given.
    public let schema: String
    /// The version recorded (0: none; see ``outboxExists``).
    public let version: Int
    /// The version this release reads and writes.
    public let expectedVersion: Int
    /// Whether the outbox table exists (with ``version`` 0: a schema created before versions were recorded).
    public let outboxExists: Bool
    /// The migrations recorded, oldest first.
    public let applied: [PostgresSchemaMigration]
    /// The migrations `migrate` would apply, in order (none when the schema is current or newer).
    public let pending: [PendingMigration]

    init(schema: String, state: DurableSchemaState) {
        self.schema = schema
        self.version = state.version
        self.expectedVersion = DurableOutboxSchema.currentVersion
        self.outboxExists = state.outboxExists
        self.applied = state.applied
        self.pending = DurableOutboxSchema.migrations.filter { $0.version > state.version }.map {
            PendingMigration(version: $0.version, name: $0.name)
        }
    }
}

/// What ``PostgresNotificationAdministration/migrateSchema()`` did. Its JSON (the output of
/// `notificatable-pg schema migrate --json`) has these field names.
public struct PostgresSchemaMigrationResult: Sendable, Codable {
    /// The schema, as given.
    public let schema: String
    /// The version before (0: none recorded).
    public let fromVersion: Int
    /// The version after: ``PostgresNotificationAdministration/currentSchemaVersion``.
    public let toVersion: Int
    /// The migrations applied by this call, in order (none when the schema was current already).
    public let applied: [PostgresSchemaMigration]
    /// How long the call took, in seconds, waiting for the lock included.
    public let seconds: Double
}
