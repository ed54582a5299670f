import Foundation
import PostgresNIO

/// Runs the statements of one connection so that each one ends when the connection closes, even if PostgresNIO never
/// completes it: observed with PostgreSQL 15 and PostgresNIO 1.33, a statement in flight when the server ends the
/// session (`pg_ctl stop -m fast`, `pg_terminate_backend`, SQLSTATE 57P01) sometimes neither returns nor throws,
/// which would leave a transport waiting forever instead of reconnecting (seen in both transports: the at-most-once
/// one hung in its `SELECT 1` after a reconnection until it used this too). One watch per connection
/// (``watching(_:logger:)``), so a connection's close is observed once, not once per statement.
final class PostgresConnectionWatch: @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    private let lock = NSLock()
    private var closed = false
    private var nextID = 0
    private var prepared: Set<String> = []
    /// Statements under way: each entry fails its caller with ``PostgresTransportError/Kind/connectionLost``. Whoever
    /// removes an entry (the statement's completion or the connection's close) completes that caller, once.
    private var pending: [Int: @Sendable (any Error) -> Void] = [:]

    private init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The connections being watched, until they close.
    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var watches: [ObjectIdentifier: PostgresConnectionWatch] = [:]
    }
    private static let registry = Registry()

    /// The watch of `connection`, created on first use; it ends every statement still waiting when the connection
    /// closes, and is forgotten then.
    static func watching(_ connection: PostgresConnection, logger: Logger) -> PostgresConnectionWatch {
        let key = ObjectIdentifier(connection)
        let (watch, created): (PostgresConnectionWatch, Bool) = registry.lock.withLock {
            if let watch = registry.watches[key] { return (watch, false) }
            let watch = PostgresConnectionWatch(connection, logger: logger)
            registry.watches[key] = watch
            return (watch, true)
        }
        if created {
            connection.closeFuture.whenComplete { _ in
                watch.connectionClosed()
                registry.lock.withLock {
                    if registry.watches[key] === watch { registry.watches[key] = nil }
                }
            }
        }
        return watch
    }

    private func connectionClosed() {
        let waiting: [@Sendable (any Error) -> Void] = lock.withLock {
            closed = true
            defer { pending = [:] }
            return Array(pending.values)
        }
        for fail in waiting { fail(PostgresTransportError(kind: .connectionLost)) }
    }

    /// Registers a statement's caller, `fail` to be called if the connection closes first; nil once it is closed.
    func register(failingWith fail: @escaping @Sendable (any Error) -> Void) -> Int? {
        lock.withLock {
            guard !closed else { return nil }
            nextID += 1
            pending[nextID] = fail
            return nextID
        }
    }

    /// Registers a statement's awaiting caller; nil once the connection is closed.
    func register<T>(_ continuation: CheckedContinuation<T, any Error>) -> Int? {
        register { continuation.resume(throwing: $0) }
    }

    /// Whether the statement `id` is still waiting, taking it off the list.
    func complete(_ id: Int) -> Bool {
        lock.withLock { pending.removeValue(forKey: id) != nil }
    }

    /// Whether the session has the statement `name` prepared (by its user, with SQL `PREPARE`).
    func isPrepared(_ name: String) -> Bool { lock.withLock { prepared.contains(name) } }

    /// Notes that the session has the statement `name` prepared.
    func notePrepared(_ name: String) { _ = lock.withLock { prepared.insert(name) } }

    /// Runs `query`, its rows read on the event loop, and calls `completion` once: with the rows, the statement's
    /// error, or ``PostgresTransportError/Kind/connectionLost`` as soon as the connection closes.
    func query(_ query: PostgresQuery, completion: @escaping @Sendable (Result<[PostgresRow], any Error>) -> Void) {
        guard let id = register(failingWith: { completion(.failure($0)) }) else {
            completion(.failure(PostgresTransportError(kind: .connectionLost)))
            return
        }
        // The future-based query collects the rows on the event loop and completes there: no task to start, no row
        // sequence to iterate. It is started on the event loop: PostgresNIO's future-based query writes the
        // statement, then attaches its collector (`PSQLRowStream.all()`) to the row stream's future. Called from
        // another thread, that thread can be descheduled between the two (two cores, a loaded machine); the rows
        // then arrive with no collector, PostgresNIO holds back its next read (`RowStreamStateMachine`
        // `waitingForDemand`), and a server that closes the connection just then makes NIO read the rest anyway:
        // the trap of PostgresNIOTraps.swift (`RowStreamStateMachine.swift:94`), seen once in six full test runs
        // (`aServerRestartMidStreamLosesNothing`). On the event loop the collector is attached in the same turn as
        // the write, before any reply can be read.
        let (connection, logger) = (connection, logger)
        let future: EventLoopFuture<PostgresQueryResult> = connection.eventLoop.flatSubmit {
            connection.query(query, logger: logger)
        }
        future.whenComplete { result in
            if self.complete(id) { completion(result.map(\.rows)) }
        }
    }

    /// Runs `body` (statements the watch cannot run itself: a handler's transaction on the connection) in a task of
    /// its own, and returns its result; throws ``PostgresTransportError/Kind/connectionLost`` as soon as the
    /// connection closes, without waiting for `body`, whose task is cancelled then (a statement in flight when the
    /// server ends the session may never be answered). Cancelling the caller cancels `body` and waits for it.
    func untilClosed(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let outcome = DurableHandlerOutcome()
        guard let id = register(failingWith: { outcome.finish(.failure($0)) }) else {
            throw PostgresTransportError(kind: .connectionLost)
        }
        let work = Task {
            do {
                try await body()
                outcome.finish(.success(()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        defer { _ = complete(id) }
        do {
            try await withTaskCancellationHandler {
                try await outcome.value()
            } onCancel: {
                work.cancel()
            }
        } catch let error as PostgresTransportError where error.kind == .connectionLost {
            work.cancel()
            throw error
        }
    }

    /// Runs `query` and reads its rows to the end; throws ``PostgresTransportError/Kind/connectionLost`` as soon as
    /// the connection closes.
    func run(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await withCheckedThrowingContinuation { continuation in
            self.query(query) { continuation.resume(with: $0) }
        }
    }
}
