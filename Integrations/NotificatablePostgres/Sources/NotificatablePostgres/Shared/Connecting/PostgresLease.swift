import Foundation
import Logging
import PostgresNIO

/// A connection leased from the application's `PostgresClient` with a bounded wait.
///
/// `PostgresClient.withConnection` waits in the pool for as long as it takes, with no timeout of its own: after an
/// outage, PostgresNIO 1.33.2 was seen serving 2 of 3 queued leases and leaving the third waiting for good (see
/// POSTGRES.md, "PostgresClient after an outage"). A lease request ends only when its task is cancelled. So the
/// request runs in a task of its own that hands the connection over and holds the lease until the caller is done;
/// when no connection came within the timeout, that task is cancelled (the pool drops the request) and the caller gets a
/// ``PostgresLeaseTimeout``, to try again with backoff. A fresh request is served as soon as the pool has a
/// connection.
enum PostgresLease {
    /// Runs `body` on a connection leased from `client`, waiting at most `timeout` for it.
    ///
    /// - Throws: ``PostgresConnectFailure`` (wrapping a ``PostgresLeaseTimeout``, or the pool's error) when no
    ///   connection came; `body`'s error.
    static func withConnection<T: Sendable>(
        from client: PostgresClient, timeout: Duration, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let handoff = Handoff()
        // An unstructured task, not a child: a request the pool never answers, even when cancelled, must not keep
        // the caller waiting for the task to end.
        let lease = Task {
            do {
                try await client.withConnection { connection in
                    guard handoff.offer(connection) else { return }  // the caller gave up: hand it back
                    await handoff.waitUntilReturned()
                }
            } catch {
                handoff.fail(error)
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            handoff.timeOut(after: timeout)
        }
        let outcome = await withTaskCancellationHandler {
            await handoff.connection()
        } onCancel: {
            handoff.fail(CancellationError())
        }
        timer.cancel()
        switch outcome {
        case .failed(let error):
            lease.cancel()
            throw PostgresConnectFailure(error: error)
        case .leased(let connection):
            defer { handoff.giveBack() }
            return try await body(connection)
        }
    }

    enum Outcome: Sendable {
        case leased(PostgresConnection)
        case failed(any Error)
    }

    /// The meeting point of the task that holds the lease and the caller that uses the connection.
    final class Handoff: @unchecked Sendable {
        private let lock = NSLock()
        private var outcome: Outcome?
        private var waiter: CheckedContinuation<Outcome, Never>?
        private var returned = false
        private var holder: CheckedContinuation<Void, Never>?

        /// The lease task's connection; false if the caller no longer waits for it.
        func offer(_ connection: PostgresConnection) -> Bool {
            settle(.leased(connection))
        }

        /// The lease failed, the wait timed out, or the caller was cancelled: the caller gets `error`
        /// unless it has a connection already.
        func fail(_ error: any Error) {
            _ = settle(.failed(error))
        }

        func timeOut(after timeout: Duration) {
            fail(PostgresLeaseTimeout(waited: timeout))
        }

        /// Stores `value` unless there is an outcome already; whether it was stored.
        private func settle(_ value: Outcome) -> Bool {
            let (stored, waiter): (Bool, CheckedContinuation<Outcome, Never>?) = lock.withLock {
                guard outcome == nil else { return (false, nil) }
                outcome = value
                defer { self.waiter = nil }
                return (true, self.waiter)
            }
            waiter?.resume(returning: value)
            return stored
        }

        /// The outcome, once there is one.
        func connection() async -> Outcome {
            await withCheckedContinuation { continuation in
                let ready: Outcome? = lock.withLock {
                    if let outcome { return outcome }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        /// Holds the lease until ``giveBack()``.
        func waitUntilReturned() async {
            await withCheckedContinuation { continuation in
                let done = lock.withLock {
                    if returned { return true }
                    holder = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        }

        /// The caller is done with the connection: the lease task ends the lease.
        func giveBack() {
            let holder: CheckedContinuation<Void, Never>? = lock.withLock {
                returned = true
                defer { self.holder = nil }
                return self.holder
            }
            holder?.resume()
        }
    }
}

/// No connection came from the application's `PostgresClient` within the lease timeout.
struct PostgresLeaseTimeout: Error, CustomStringConvertible {
    /// How long the request waited.
    var waited: Duration

    var description: String { "no connection from the PostgresClient within \(waited)" }
}
