import Foundation
import PostgresNIO

// Two traps of PostgresNIO (1.33.2) that a server closing a connection can spring, and how this package keeps out of
// them. Both were found by DurableServerCloseTests, which ends a consumer's sessions over and over.
//
// 1. Rows. Every statement of this package reads its rows here, whole, on the connection's event loop, never through
// PostgresNIO's async row sequence. Measured with PostgresNIO 1.33.2 and PostgreSQL 15: when the server closes a
// connection (a restart, `pg_terminate_backend`) while a multi-row result read through the row sequence waits for
// its consumer to ask for more, NIO still reads the rest of the socket, and PostgresNIO's row stream traps
// (`RowStreamStateMachine.channelReadComplete`: "How can we receive a body part, after a channelReadComplete, but
// no read has been forwarded yet", state `waitingForDemand`). That ended the process: it took down a consumer
// whose server was restarted mid-page. The future-based query collects the rows as they arrive and asks for more
// at once, on the event loop, so there is never such a wait: the same scenario throws PostgresNIO's error instead
// (`scripts/lint.sh` rejects `.collect()` and row-sequence loops in this module). The price is PostgresNIO's
// prepared statements, which it runs through the row sequence only (the exception: a statement without result rows,
// PostgresConnectionWatch.perform).
//
// 2. Listeners. `PostgresConnection.addListener` writes the listener to the channel; when the channel is already
// closed, NIO drops the write and the listener's deinit traps ("Notification closure had not been used").
// ``PostgresListener`` adds it on the event loop, only while the channel is open; then the write reaches
// PostgresNIO's handler, which fails the listener properly if the connection ends.

extension PostgresConnection {
    /// Runs `query` and returns all its rows, read on the connection's event loop; throws
    /// ``PostgresTransportError/Kind/connectionLost`` as soon as the connection closes (``PostgresConnectionWatch``).
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await PostgresConnectionWatch.watching(self, logger: logger).run(query)
    }
}

extension PostgresClient {
    /// Runs `query` on a leased connection and returns all its rows, read on that connection's event loop.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.rows(query, logger: logger) }
    }
}

/// A `LISTEN` on one connection, added on its event loop only while the connection is open (see the top of this
/// file). A connection that closed first gets none: its owner reconnects and listens again on the new one.
final class PostgresListener: @unchecked Sendable {
    private let lock = NSLock()
    private var context: PostgresListenContext?
    private var stopped = false

    /// Listens on `channel`; `handler` runs on the event loop for each notification. Returns at once: the listener
    /// is added on the event loop, before any statement written to `connection` after this call.
    init(
        _ connection: PostgresConnection, channel: String,
        handler: @escaping @Sendable (PostgresMessage.NotificationResponse) -> Void
    ) {
        let add: @Sendable () -> Void = { [self] in
            guard !connection.isClosed else { return }
            let context = connection.addListener(channel: channel) { _, notification in handler(notification) }
            let stopNow = lock.withLock {
                self.context = context
                return stopped
            }
            if stopNow { context.stop() }
        }
        if connection.eventLoop.inEventLoop { add() } else { connection.eventLoop.execute(add) }
    }

    /// Stops listening (PostgresNIO sends `UNLISTEN` when it was the channel's last listener).
    func stop() {
        let context: PostgresListenContext? = lock.withLock {
            stopped = true
            return self.context
        }
        context?.stop()
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting, and keeps it alive until the close completes: released while
    /// closing, PostgresNIO's `deinit` asserts that it is closed, a trap in a debug build (seen when a batch
    /// processor stopped and dropped its idle connections).
    func closeInBackground() {
        close().whenComplete { _ in withExtendedLifetime(self) {} }
    }
}
