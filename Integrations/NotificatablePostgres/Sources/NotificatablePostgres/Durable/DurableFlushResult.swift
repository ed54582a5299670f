import Foundation

extension DurablePostgresNotificationTransport {
    /// What ``DurablePostgresNotificationTransport/flush()`` found: whether everything it waited for was stored.
    ///
    /// ```swift
    /// let flushed = await transport.flush()
    /// if !flushed.isComplete {
    ///     logger.error("\(flushed.messagesNotStored) messages were not stored: \(String(describing: flushed.lastError))")
    /// }
    /// ```
    public struct FlushResult: Sendable {
        /// How many of the messages published since the previous `flush()` call (or since the start) will never be
        /// stored: refused by `publish` (over ``Configuration/maximumMessageSize``, not text, the queue full) or
        /// refused by the server because of the message itself (SQLSTATE classes 22, 23 and 54). Each one was also
        /// reported with a `publishFailed` event. Refusals that can pass (read-only, a lock timeout, a full disk)
        /// are not counted: those messages stay queued, and `flush()` waits until they are stored.
        public var messagesNotStored: Int
        /// The error of the last of those messages, a ``PostgresTransportError``.
        public var lastError: PostgresTransportError?
        /// Whether the transport was stopped before the flush was done: what was still queued was not stored, and
        /// the positions were perhaps not saved.
        public var stopped: Bool

        /// Whether every message the flush waited for was stored (and the positions saved): none refused, and the
        /// transport not stopped.
        public var isComplete: Bool { messagesNotStored == 0 && !stopped }
    }
}
