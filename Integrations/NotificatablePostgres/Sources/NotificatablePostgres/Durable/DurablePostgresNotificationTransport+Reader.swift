import Foundation
import Notificatable
import NotificatableRelay
import PostgresNIO

// The reader: positions loaded, pages read in (txid, id) order and handed to the relay, positions saved lazily.
extension DurablePostgresNotificationTransport {
    // MARK: - Reading

    func readLoop(_ connection: PostgresConnectionWatch) async throws {
        guard try await holdConsumerName(on: connection) else { return }
        let listener = PostgresListener(connection.connection, channel: schema.wakeChannel) {
            [weak self] notification in
            self?.wokenUp(by: notification.payload)
        }
        defer { listener.stop() }
        _ = try await connection.run("SELECT 1")  // the LISTEN is in effect
        // Positions in memory stay, unless another process of this consumer name moved them meanwhile.
        try await reconcilePositions(on: connection)
        var checkHorizon = true
        while true {
            if lock.withLock({ state.abandonReaderConnection }) { throw PostgresTransportError(kind: .connectionLost) }
            let barriers: [DurableBarrier] = lock.withLock {
                defer { state.readerBarriers = [] }
                return state.readerBarriers
            }
            let (startedBefore, finishedBefore, woken) = lock.withLock {
                state.readingWokenRound = state.foreignWakeUp
                state.foreignWakeUp = false
                state.readRounds += 1
                return (state.insertsStarted, state.insertsFinished, state.readingWokenRound)
            }
            do {
                try await loadPositions(on: connection)
                let periodic = checkHorizon || takeHorizonCheck()
                if periodic {
                    try await checkRetentionHorizon(on: connection)
                    checkHorizon = false
                }
                while try await readPage(on: connection) {}
                if periodic { try await measureLag(on: connection) }
            } catch {
                lock.withLock {
                    state.readingWokenRound = false
                    state.ownInsertMayHideRows = true
                }
                handBack(barriers)
                throw error
            }
            lock.withLock {
                state.readingWokenRound = false
                // Another writer's rows can be held back only by an insert of ours that took its xid before theirs,
                // so was in flight when they committed, before their wake-up arrived. Such an insert overlapped the
                // round that wake-up caused (then the insert's own wake-up must be honoured) or had finished (and
                // committed) before the round began (then the round read those rows).
                let overlapped = startedBefore > finishedBefore || state.insertsStarted > startedBefore
                if overlapped && woken {
                    state.ownInsertMayHideRows = true
                } else if startedBefore == finishedBefore {
                    state.ownInsertMayHideRows = false
                }
            }
            if !barriers.isEmpty || lock.withLock({ state.saveDue }) {
                lock.withLock { state.saveDue = false }
                do {
                    try await savePositions(on: connection)
                } catch {
                    handBack(barriers)
                    throw error
                }
            }
            for barrier in barriers { barrier.resume() }
            if takeRetentionDue() { try await deleteExpired(on: connection) }
            guard await waitForReaderSignal() else { return }
        }
    }

    /// Gives the flushes that a failed read or save was serving back to the reader, for the next connection to
    /// serve; once the transport is stopped, releases them instead.
    func handBack(_ barriers: [DurableBarrier]) {
        let orphans: [DurableBarrier] = lock.withLock {
            guard !state.stopped else { return barriers }
            state.readerBarriers.insert(contentsOf: barriers, at: 0)
            return []
        }
        for barrier in orphans { barrier.interrupt() }
    }

    /// Loads (or creates at the current end) the position of every channel that has none yet, in one transaction
    /// that holds the registrations' lock (see ``DurableOutboxSchema/lockRegistrations``).
    func loadPositions(on connection: PostgresConnectionWatch) async throws {
        let missing = lock.withLock { state.channels.filter { $0.value == nil }.map(\.key) }
        guard !missing.isEmpty else { return }
        var schemaName = PostgresBindings(capacity: 1)
        schemaName.append(schema.quoted)
        try await storageQuery("BEGIN", on: connection)
        try await storageQuery(schema.lockRegistrations, schemaName, on: connection)
        var loaded: [String: Position] = [:]
        for channel in missing {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(configuration.consumer)
            bindings.append(channel)
            let rows = try await storageQuery(schema.registerPosition, bindings, on: connection)
            guard let row = rows.first else { continue }
            let (txid, id) = try row.decode((Int64, Int64).self)
            loaded[channel] = Position(txid: txid, id: id)
        }
        try await storageQuery("COMMIT", on: connection)
        lock.withLock {
            for (channel, position) in loaded {
                guard let current = state.channels[channel], current == nil else { continue }
                state.channels[channel] = position
                state.savedPositions[channel] = position
            }
        }
    }

    /// Reads and delivers one page; true if the page was full (there may be more).
    func readPage(on connection: PostgresConnectionWatch) async throws -> Bool {
        let positions: [String: Position] = lock.withLock {
            state.channels.compactMapValues { $0 }
        }
        guard let start = positions.values.min() else { return false }
        let statement = DurableReadPageStatement(
            channels: Array(positions.keys), after: start, limit: configuration.pageSize)
        let rows = try await storage { try await connection.readPage(statement) }
        guard !rows.isEmpty else { return false }
        // Positions are saved lazily (every save is a transaction that takes an xid, and holds back every reader's
        // snapshot xmin while it runs), but never more than one page behind what was delivered.
        if lock.withLock({ state.unsavedRows > 0 && state.unsavedRows + rows.count > configuration.pageSize }) {
            try await savePositions(on: connection)
        }
        var last = start
        var (received, delivered, refused): ([String: Int], [String: Int], [String: Int]) = ([:], [:], [:])
        defer {
            metrics.count(NotificationMetrics.received, received)
            metrics.count(NotificationMetrics.delivered, delivered)
            metrics.count(NotificationMetrics.refused, refused)
        }
        for row in rows {
            if isDeliveryPaused { break }  // a service shutting down: hand nothing more over, advance no further
            let (position, channel, message) = (row.position, row.channel, row.message)
            guard let channelPosition = positions[channel], channelPosition < position else {
                last = position
                continue
            }
            received[channel, default: 0] += 1
            guard admits(message, on: channel, at: position) else {
                refused[channel, default: 0] += 1
                last = position
                continue
            }
            // The pause is checked again where the message is handed over, under the lock, and the hand-over is
            // marked: a pause waits for it (``pauseDelivery()``), so a message is either handed over before the
            // service's handlers finish, or not handed over and not passed.
            let (paused, handler): (Bool, NotificationTransportHandler?) = lock.withLock {
                if state.deliveryPaused { return (true, nil) }
                guard !state.stopped, state.channels[channel] != nil, let handler = state.handler else {
                    return (false, nil)
                }
                state.delivering = true
                return (false, handler)
            }
            if paused { break }
            last = position
            delivered[channel, default: 0] += 1
            guard let handler else { continue }
            handler.receive(Data(message.utf8), on: channel)
            let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
                state.delivering = false
                defer { state.pauseWaiters = [:] }
                return Array(state.pauseWaiters.values)
            }
            for waiter in waiting { waiter.resume() }
        }
        // Every channel read has been covered up to `last`.
        let advanced: [String] = lock.withLock {
            var advanced: [String] = []
            for channel in positions.keys {
                guard let current = state.channels[channel], let current, current < last else { continue }
                state.channels[channel] = last
                advanced.append(channel)
            }
            return advanced
        }
        if !advanced.isEmpty {
            lock.withLock {
                state.unsavedChannels.formUnion(advanced)
                state.unsavedRows += rows.count
            }
        }
        return rows.count == configuration.pageSize && !isDeliveryPaused
    }

    /// Saves the in-memory position of every channel delivered since the last save.
    func savePositions(on connection: PostgresConnectionWatch) async throws {
        // A service's handlers must have handled what they were handed before a position passes it.
        guard await mayTakeSave() else { return }
        let unsaved: [String: Position] = lock.withLock {
            var unsaved: [String: Position] = [:]
            for channel in state.unsavedChannels {
                if let position = knownPosition(of: channel) {
                    unsaved[channel] = savablePosition(position, for: channel)
                }
            }
            state.unsavedChannels = []
            state.unsavedRows = 0
            return unsaved
        }
        do {
            for (position, channels) in Dictionary(grouping: unsaved.keys.sorted(), by: { unsaved[$0] }) {
                guard let position else { continue }
                var save = PostgresBindings(capacity: 4)
                save.append(configuration.consumer)
                save.append(position.txid)
                save.append(position.id)
                save.append(channels)
                try await storageQuery(schema.savePositions, save, on: connection)
                lock.withLock { for channel in channels { state.savedPositions[channel] = position } }
            }
        } catch {
            lock.withLock { state.unsavedChannels.formUnion(unsaved.keys) }
            throw error
        }
    }

    /// The position this process has reached on `channel`, listened to or parked; `nil` when not loaded. Called with
    /// `lock` held.
    func knownPosition(of channel: String) -> Position? {
        if let listened = state.channels[channel] { return listened }
        return state.parkedPositions[channel]
    }

    /// Reports `messagesMissed` for every channel whose position is behind rows deleted for age.
    func checkRetentionHorizon(on connection: PostgresConnectionWatch) async throws {
        let rows = try await storageQuery(schema.readHorizon, on: connection)
        guard let row = rows.first else { return }
        let (txid, id) = try row.decode((Int64, Int64).self)
        let horizon = Position(txid: txid, id: id)
        let behind: [String] = lock.withLock {
            var behind: [String] = []
            for (channel, position) in state.channels {
                guard let position, position < horizon, state.reportedHorizon[channel] != horizon else { continue }
                state.reportedHorizon[channel] = horizon
                behind.append(channel)
            }
            return behind
        }
        for channel in behind.sorted() {
            report(
                NotificationTransportEvent(
                    kind: .messagesMissed, channel: channel, error: PostgresTransportError(kind: .behindRetention)))
        }
    }
}
