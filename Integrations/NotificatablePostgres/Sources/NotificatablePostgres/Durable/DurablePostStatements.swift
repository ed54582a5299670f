import Foundation
import PostgresNIO

// The transactional post's two statements (DurableOutboxPost in DurableNotificationPublisher.swift), prepared once
// per connection by PostgresNIO, then only bound and executed. They run on a connection of the user's, inside the
// user's transaction, whose `search_path` is not ours to set: their SQL names the outbox's schema. PostgresNIO takes a
// prepared statement's name and SQL from static properties of its type, read in the task that calls `execute`
// before anything is sent; so these types read them from a task-local value that the post sets around its
// `execute` (`DurablePostStatementSchema.current`), and a statement outside it is one that fails
// (`SELECT notificatable_post_outside_its_schema()`), never one that writes somewhere else.
//
// A prepare that fails is remembered by PostgresNIO for the connection and its statement name, forever: a post inside
// a transaction that had already failed, or before the schema existed, would make every later post on that connection
// fail with the same error. So each failure of a post moves the schema's statements to new names
// (`DurablePostStatementSchema.generation`), and the next post prepares afresh under them. The cost: each failure
// leaves the statements of the old names prepared in the sessions that had them (a session holds one more pair per
// failure it saw renamed), so a stream of failing posts grows every pooled session by a small plan each time.

/// The schema and the statement names of the transactional post for the task that executes it.
struct DurablePostStatementSchema: Sendable {
    /// The schema whose outbox the post writes to, for the `execute` under way in this task.
    @TaskLocal static var current: DurablePostStatementSchema?

    /// The statements' SQL.
    let schema: DurableOutboxSchema
    /// The suffix that makes the statement names this schema's and this generation's.
    let suffix: String

    /// The post statements of `schema` under their current names.
    init(_ schema: DurableOutboxSchema) {
        self.schema = schema
        self.suffix = schema.statementKey + "_" + String(Self.generation(of: schema.name))
    }

    /// Names every post statement of `schema` anew: after a failure, which PostgresNIO may have cached.
    static func renew(_ schema: DurableOutboxSchema) {
        generations.lock.withLock { generations.values[schema.name, default: 0] += 1 }
    }

    /// The current generation of `schema`'s statement names.
    private static func generation(of name: String) -> Int {
        generations.lock.withLock { generations.values[name] ?? 0 }
    }

    /// Each schema's generation, 0 until a post fails.
    private final class Generations: @unchecked Sendable {
        let lock = NSLock()
        var values: [String: Int] = [:]
    }

    private static let generations = Generations()

    /// The SQL of a statement run outside ``current``: an error, never a write.
    static let unbound = "SELECT notificatable_post_outside_its_schema()"
}

/// One transactional post: `$1` channel, `$2` message, `$3` wake channel. No rows back (an `INSERT` without
/// `RETURNING` at the top): the notification comes from a CTE joined in once, as in the writer's insert.
struct DurablePostOneStatement: PostgresPreparedStatement {
    /// The statement's name on a connection: this schema's and generation's.
    static var name: String { "notificatable_post_one_" + (DurablePostStatementSchema.current?.suffix ?? "unbound") }
    /// ``DurableOutboxSchema/insertOne`` of the schema.
    static var sql: String {
        DurablePostStatementSchema.current?.schema.insertOne ?? DurablePostStatementSchema.unbound
    }
    /// No rows.
    typealias Row = Void

    /// The channel a relay uses for the post's name.
    var channel: String
    /// The message's text.
    var message: String
    /// The readers' wake channel.
    var wakeChannel: String

    /// `$1`, `$2`, `$3`.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(channel)
        bindings.append(message)
        bindings.append(wakeChannel)
        return bindings
    }

    /// Never called: the statement returns no rows.
    func decodeRow(_ row: PostgresRow) throws {}
}

/// A batch of transactional posts on one channel, in order: `$1` channel, `$2` messages (`text[]`), `$3` wake
/// channel (``DurableOutboxSchema/insertPosts``).
struct DurablePostBatchStatement: PostgresPreparedStatement {
    /// The statement's name on a connection: this schema's and generation's.
    static var name: String {
        "notificatable_post_batch_" + (DurablePostStatementSchema.current?.suffix ?? "unbound")
    }
    /// ``DurableOutboxSchema/insertPosts`` of the schema.
    static var sql: String {
        DurablePostStatementSchema.current?.schema.insertPosts ?? DurablePostStatementSchema.unbound
    }
    /// No rows.
    typealias Row = Void

    /// The channel a relay uses for the posts' name.
    var channel: String
    /// The messages' texts, in order.
    var messages: [String]
    /// The readers' wake channel.
    var wakeChannel: String

    /// `$1`, `$2`, `$3`.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(channel)
        bindings.append(messages)
        bindings.append(wakeChannel)
        return bindings
    }

    /// Never called: the statement returns no rows.
    func decodeRow(_ row: PostgresRow) throws {}
}
