import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// Signals and timers: wake-ups from NOTIFY, the reader's wait, the poll and retention ticks.
extension DurablePostgresNotificationTransport {
    // MARK: - Signals and timers

    /// A `NOTIFY` on the wake channel. One from this transport's own writer is ignored when no read could have
    /// skipped rows because of that insert: the rows are this relay's own messages, which it ignores anyway, and
    /// the next read passes them. This keeps a sending process from reading back everything it sends. Rows of
    /// another writer can be held back only by an insert of ours that took its xid first, so was in flight when
    /// they committed and their wake-up arrived: a round woken by another writer that overlapped an insert of ours
    /// marks the next own wake-up as needed; a round that began with no insert of ours in flight clears the mark.
    func wokenUp(by payload: String) {
        let ignore = lock.withLock {
            guard payload == wakeToken else {
                state.foreignWakeUp = true
                return false
            }
            // During a round woken by another writer, the round's outcome is not known yet: honour it.
            return !state.readingWokenRound && !state.ownInsertMayHideRows
        }
        if !ignore { signalReader() }
    }

    func signalReader() {
        let wakeUp: CheckedContinuation<Void, Never>? = lock.withLock {
            if let wakeUp = state.readerWakeUp {
                state.readerWakeUp = nil
                return wakeUp
            }
            state.readerSignalled = true
            return nil
        }
        wakeUp?.resume()
    }

    /// Waits for a wake-up, a listen, a flush, the poll timer or a closed connection; false once stopped.
    func waitForReaderSignal() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock {
                if state.stopped || state.readerSignalled {
                    state.readerSignalled = false
                    return true
                }
                state.readerWakeUp = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return !isStopped
    }

    func takeHorizonCheck() -> Bool {
        lock.withLock {
            defer { horizonCheckDue = false }
            return horizonCheckDue
        }
    }

    func takeRetentionDue() -> Bool {
        lock.withLock {
            defer { retentionDue = false }
            return retentionDue
        }
    }

    /// Wakes the reader every poll interval, and marks the retention due every retention interval.
    func tick() async {
        let poll = Self.seconds(configuration.pollInterval)
        let retention = configuration.retentionInterval.map(Self.seconds)
        var sinceRetention = 0.0
        while !isStopped {
            do { try await Task.sleep(nanoseconds: UInt64(max(poll, 0.001) * 1e9)) } catch { return }
            sinceRetention += poll
            lock.withLock {
                horizonCheckDue = true
                state.saveDue = true
                if let retention, sinceRetention >= retention {
                    retentionDue = true
                    sinceRetention = 0
                }
            }
            signalReader()
        }
    }
}
