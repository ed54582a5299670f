import Foundation
import InMemoryLogging
import Logging
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

@testable import NotificatablePostgres

/// The kind of the ``PostgresTransportError`` that `body` throws, if it throws one.
private func transportErrorKind(_ body: () async throws -> Void) async -> PostgresTransportError.Kind? {
    do {
        try await body()
        return nil
    } catch let error as PostgresTransportError {
        return error.kind
    } catch {
        return nil
    }
}

/// The kind of the ``PostgresTransportError`` that `body` (a `process` call) throws within five seconds; nil if it
/// throws nothing else or is still running then (it is cancelled: a refused `process` must throw at once, not run).
private func refusalKind(_ body: @escaping @Sendable () async throws -> Void) async -> PostgresTransportError.Kind? {
    let outcome = ProcessingRecord()
    let task = Task {
        do {
            try await body()
        } catch {
            outcome.event(NotificationTransportEvent(kind: .transportError, error: error))
        }
    }
    _ = await poll(timeout: .seconds(5)) { !outcome.events.isEmpty }
    task.cancel()
    return (outcome.events.first?.error as? PostgresTransportError)?.kind
}

/// Parks `count` items: a processor whose handler always throws, one attempt each; returns once they are parked.
private func parkItems(_ schema: String, count: Int) async throws {
    try await publishItems(schema, count: count)
    let transport = try processingTransport(schema)
    let record = ProcessingRecord()
    let task = Task {
        try await transport.process(
            DurableHandles.item, options: quickOptions(attempts: 1, concurrency: 8), onEvent: { record.event($0) }
        ) { _ in throw FixtureError("always") }
    }
    #expect(await poll(timeout: .seconds(60)) { record.parked.count >= count })
    task.cancel()
    _ = await task.result
}

extension PostgresIntegrationTests {
    /// Issue 38: poison messages, no silent skip, the first run, operator logs; against the real server.
    @Suite(.serialized) struct ProcessingSafety {
        // MARK: - Poison messages

        /// A handler that ends the process on one message: the attempts are counted in the database before each
        /// start, so after `maximumAttempts` starts (each ended by `exit`) the next run parks the message without
        /// starting it, and processes the others. Before, each run counted from 1 again: it ended every run.
        @Test func aHandlerThatEndsTheProcessIsParkedAfterItsAttemptsAcrossRestarts() async throws {
            let schema = freshSchema("poison")
            try await publishItems(schema, count: 6)
            let attempts = 3
            let arguments = ["durable-process", schema, "worker", "1", "plain", "0", "exit:2", String(attempts)]
            var exits: [String] = []
            for _ in 1...attempts {
                let peer = try LineProcess(peerPath, arguments)
                defer { peer.kill() }
                #expect(await peer.wait(timeout: .seconds(60)) { $0.contains { $0.hasPrefix("exiting 2") } })
                #expect(peer.finish() == 3)
                exits += peer.lines.filter { $0.hasPrefix("exiting") }
            }
            #expect(exits == (1...attempts).map { "exiting 2 \($0)" })
            let last = try LineProcess(peerPath, arguments)
            defer { last.kill() }
            let done = await last.wait(timeout: .seconds(60)) { lines in
                Set(processedItems(lines).map(\.index)).isSuperset(of: [3, 4, 5])
            }
            #expect(done, "the run after the last attempt: \(last.lines.suffix(5))")
            #expect(!last.lines.contains { $0.hasPrefix("exiting") })
            #expect(last.lines.contains { $0.hasPrefix("event messageParked") })
            let letter = try sql(
                "SELECT attempts || ' ' || (error LIKE '%never returned%') FROM \(schema).dead_letters")
            #expect(letter == "\(attempts) true")
        }

        /// The same across a re-drive: a parked message re-driven to a handler that ends the process is counted on
        /// its dead-letter row before each start, so after `maximumAttempts` starts the next run parks it again
        /// (`redrive` off, "never returned") instead of ending every run; before, a re-drive counted in memory.
        @Test func aRedrivenMessageWhoseHandlerEndsTheProcessIsParkedAgainAfterItsAttempts() async throws {
            let schema = freshSchema("poison_redrive")
            try await publishItems(schema, count: 4)
            let attempts = 2
            let arguments = ["durable-process", schema, "worker", "1", "plain", "0", "exit:2", String(attempts)]
            func runUntilExit() async throws -> [String] {
                let peer = try LineProcess(peerPath, arguments)
                defer { peer.kill() }
                #expect(await peer.wait(timeout: .seconds(60)) { $0.contains { $0.hasPrefix("exiting 2") } })
                #expect(peer.finish() == 3)
                return peer.lines.filter { $0.hasPrefix("exiting") }
            }
            /// A run that must not exit: it parks item 2 (and, from the outbox, goes on with item 3).
            func runThatParks(processingItem3: Bool) async throws {
                let peer = try LineProcess(peerPath, arguments)
                defer { peer.kill() }
                let parked = await peer.wait(timeout: .seconds(60)) { lines in
                    lines.contains { $0.hasPrefix("event messageParked") }
                        && (!processingItem3 || processedItems(lines).contains { $0.index == 3 })
                }
                #expect(parked, "\(peer.lines.suffix(5))")
                #expect(!peer.lines.contains { $0.hasPrefix("exiting") })
                try await Task.sleep(for: .seconds(2))  // the position passes item 3 (saved every poll interval)
            }
            for _ in 1...attempts { _ = try await runUntilExit() }
            try await runThatParks(processingItem3: true)
            #expect(try sql("SELECT count(*) FROM \(schema).dead_letters WHERE NOT redrive") == "1")

            _ = try sql("UPDATE \(schema).dead_letters SET redrive = true")
            var exits: [String] = []
            for _ in 1...attempts { exits += try await runUntilExit() }
            #expect(exits == (1...attempts).map { "exiting 2 \($0)" })
            try await runThatParks(processingItem3: false)
            let letter = try sql(
                "SELECT redrive || ' ' || (error LIKE '%never returned%') || ' ' || redrive_starts "
                    + "FROM \(schema).dead_letters")
            #expect(letter == "false true 0")
        }

        /// `handlerTimeout` cancels a handler that runs too long (even one that ignores cancellation) and counts a
        /// failed attempt; after the last one the message is parked as timed out, and the next ones go on.
        @Test func aHandlerTimeoutCancelsTheHandlerAndCountsAFailedAttempt() async throws {
            let schema = freshSchema("timeout")
            try await publishItems(schema, count: 3)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            var options = quickOptions(attempts: 2)
            options.handlerTimeout = .milliseconds(200)
            let task = Task {
                try await transport.process(DurableHandles.item, options: options, onEvent: { record.event($0) }) {
                    delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                    // Ignores cancellation (a wait that nothing cancels): only the timeout takes the message away.
                    if delivery.payload.index == 1 {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            DispatchQueue.global().asyncAfter(deadline: .now() + 3) { done.resume() }
                        }
                    }
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(30)) { record.calls.contains { $0.item.index == 2 } })
            let calls = record.calls.map { "\($0.item.index)/\($0.attempt)" }
            #expect(calls == ["0/1", "1/1", "1/2", "2/1"])
            #expect(record.parked.map(\.kind) == [.handlerTimedOut])
            #expect(record.parked.first?.attempts == 2)
        }

        /// A handler running past `handlerStallThreshold` is reported once, with its message id and the seconds, as
        /// the event kind `handlerStalled`; it is not interrupted.
        @Test func aLongHandlerIsReportedOnceAsStalled() async throws {
            let schema = freshSchema("stalled")
            try await publishItems(schema, count: 2)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            var options = quickOptions()
            options.handlerStallThreshold = .milliseconds(150)
            let task = Task {
                try await transport.process(DurableHandles.item, options: options, onEvent: { record.event($0) }) {
                    delivery in
                    if delivery.payload.index == 0 { try await Task.sleep(for: .milliseconds(700)) }
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(30)) { record.calls.count == 2 })
            let stalled = record.events.filter { $0.kind == .handlerStalled }
            #expect(stalled.count == 1)
            let error = stalled.first?.error as? DurableProcessingError
            #expect(error?.id == record.calls.first?.id)
            #expect(abs((error?.seconds ?? 0) - 0.15) < 0.001)
            #expect(stalled.first?.severity == .warning)
            #expect(record.parked.isEmpty)
        }

        /// A re-drive whose handler hangs does not stop the other dead letters from being re-driven. Before, no
        /// re-drive was looked for while one ran.
        @Test func aHungRedriveDoesNotBlockTheOthers() async throws {
            let schema = freshSchema("hung_redrive")
            try await parkItems(schema, count: 4)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let release = ProcessingRecord()  // a call recorded here lets the hung handler go
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(attempts: 1, concurrency: 2)
                ) { delivery in
                    while delivery.payload.index == 0 && release.calls.isEmpty {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            try sql(
                "UPDATE \(schema).dead_letters SET redrive = true WHERE id = (SELECT min(id) FROM \(schema).dead_letters)"
            )
            try await Task.sleep(for: .milliseconds(800))  // the first one's re-drive is running, and hangs
            _ = try sql("UPDATE \(schema).dead_letters SET redrive = true")
            let others = await poll(timeout: .seconds(10)) { Set(record.calls.map(\.item.index)) == [1, 2, 3] }
            #expect(others, "re-driven meanwhile: \(record.calls.map(\.item.index))")
            release.call(
                DurableItem(publisher: "", stream: 0, index: 0), attempt: 1, id: .init(transactionID: 0, rowID: 0))
            #expect(await poll(timeout: .seconds(10)) { record.calls.count == 4 })
            #expect(
                await poll(timeout: .seconds(10)) { (try? sql("SELECT count(*) FROM \(schema).dead_letters")) == "0" })
        }

        /// 300 dead letters re-driven at once take seconds: a batch is read per look, and the next batch at once when
        /// the batch was full. Before, `maximumConcurrency` letters were read per poll interval (300 took 75 s).
        @Test func threeHundredDeadLettersAreRedrivenInSeconds() async throws {
            let schema = freshSchema("redrive_300")
            try await parkItems(schema, count: 300)
            guard var configuration = TestServer.durableConfiguration(consumer: "worker", schema: schema) else {
                throw FixtureError("no server configured")
            }
            configuration.pollInterval = .seconds(1)  // the default, as in the issue's figure (75 s before)
            let transport = try DurablePostgresNotificationTransport(configuration: configuration)
            let record = ProcessingRecord()
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(attempts: 1, concurrency: 4)
                ) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            let start = ContinuousClock.now
            _ = try sql("UPDATE \(schema).dead_letters SET redrive = true")
            let done = await poll(timeout: .seconds(10)) {
                (try? sql("SELECT count(*) FROM \(schema).dead_letters")) == "0"
            }
            let elapsed = ContinuousClock.now - start
            #expect(done, "re-driven in 10 s: \(record.calls.count)")
            #expect(Set(record.calls.map(\.item.index)).count == 300)
            print("re-drive of 300 dead letters at concurrency 4: \(elapsed)")
        }

        // MARK: - No silent skip

        /// A relay consumer name that would share a processor's position row or lock is refused: the processing
        /// rows are named `CONSUMER/processing`, and locks `CONSUMER/processing CHANNEL`. Before, a relay consumer
        /// named `worker/processing` and the processor of consumer `worker` moved one position.
        @Test func noConsumerNameReachesAProcessorsPositionOrLock() async throws {
            guard var configuration = TestServer.durableConfiguration(consumer: "worker/processing", schema: "x") else {
                throw FixtureError("no server configured")
            }
            #expect(
                await transportErrorKind { _ = try DurablePostgresNotificationTransport(configuration: configuration) }
                    == .invalidConfiguration)
            configuration.consumer = "worker/processing NotificatablePostgres.DurableItem"
            #expect(
                await transportErrorKind { _ = try DurablePostgresNotificationTransport(configuration: configuration) }
                    == .invalidConfiguration)
            configuration.consumer = "worker/processing-eu"  // neither a position row nor a lock name of a processor
            _ = try DurablePostgresNotificationTransport(configuration: configuration)
        }

        /// Every configuration value out of its range throws `invalidConfiguration` naming it, at init (transport)
        /// or when `process` starts (options). Before, a page size of 0 delivered nothing, -1 failed every round, and
        /// the processor clamped attempts and concurrency silently.
        @Test func everyConfigurationValueOutOfRangeThrowsNamingIt() async throws {
            guard let base = TestServer.durableConfiguration(consumer: "worker", schema: freshSchema("config")) else {
                throw FixtureError("no server configured")
            }
            let cases: [(String, (inout DurablePostgresNotificationTransport.Configuration) -> Void)] = [
                ("pageSize", { $0.pageSize = 0 }), ("pageSize", { $0.pageSize = -1 }),
                ("maximumBatchSize", { $0.maximumBatchSize = 0 }),
                ("maximumQueuedMessages", { $0.maximumQueuedMessages = -5 }),
                ("maximumMessageSize", { $0.maximumMessageSize = 0 }),
                ("pollInterval", { $0.pollInterval = .zero }), ("pollInterval", { $0.pollInterval = .seconds(-1) }),
                ("retentionAge", { $0.retentionAge = .seconds(-1) }),
                ("retentionInterval", { $0.retentionInterval = .zero }),
                ("stallThreshold", { $0.stallThreshold = .seconds(Int64.max) }),
                ("consumer", { $0.consumer = "" }), ("consumer", { $0.consumer = "a\u{0}b" }),
                ("schema", { $0.schema = String(repeating: "s", count: 64) }),
            ]
            for (setting, change) in cases {
                var configuration = base
                change(&configuration)
                do {
                    _ = try DurablePostgresNotificationTransport(configuration: configuration)
                    Issue.record("no error for \(setting)")
                } catch let error as PostgresTransportError {
                    #expect(error.kind == .invalidConfiguration)
                    #expect(error.setting == setting)
                    #expect("\(error)".contains(setting))
                }
            }
            let transport = try DurablePostgresNotificationTransport(configuration: base)
            let options: [(String, (inout DurableProcessingOptions) -> Void)] = [
                ("maximumAttempts", { $0.maximumAttempts = 0 }), ("maximumConcurrency", { $0.maximumConcurrency = 0 }),
                (
                    "maximumUnacknowledged",
                    {
                        $0.maximumUnacknowledged = 1
                        $0.maximumConcurrency = 4
                    }
                ),
                ("initialRetryDelay", { $0.initialRetryDelay = .seconds(-1) }),
                ("maximumRetryDelay", { $0.maximumRetryDelay = .milliseconds(1) }),
                ("handlerTimeout", { $0.handlerTimeout = .zero }),
                ("handlerStallThreshold", { $0.handlerStallThreshold = .seconds(-3) }),
            ]
            for (setting, change) in options {
                var value = DurableProcessingOptions()
                change(&value)
                let options = value
                let refused = ProcessingRecord()
                let kind = await refusalKind {
                    do {
                        try await transport.process(DurableHandles.item, options: options) { _ in }
                    } catch {
                        refused.event(NotificationTransportEvent(kind: .transportError, error: error))
                        throw error
                    }
                }
                #expect(kind == .invalidConfiguration, "\(setting)")
                let error = refused.events.first?.error as? PostgresTransportError
                #expect(error?.setting == "DurableProcessingOptions." + setting)
            }
        }

        /// The at-most-once transport checks its configuration the same way (before, a batch size of 0 sent nothing
        /// and a threshold of 2 never reported a filling queue).
        @Test func theAtMostOnceTransportThrowsForAValueOutOfRange() throws {
            let base = try #require(TestServer.configuration)
            let cases: [(String, (inout PostgresNotificationTransport.Configuration) -> Void)] = [
                ("maximumPayloadSize", { $0.maximumPayloadSize = 0 }),
                ("maximumQueuedMessages", { $0.maximumQueuedMessages = 0 }),
                ("maximumBatchSize", { $0.maximumBatchSize = -1 }),
                ("notificationQueueCheckInterval", { $0.notificationQueueCheckInterval = .zero }),
                ("notificationQueueUsageThreshold", { $0.notificationQueueUsageThreshold = 2 }),
                ("notificationQueueUsageThreshold", { $0.notificationQueueUsageThreshold = .nan }),
                ("maximumReceiveBufferBytes", { $0.maximumReceiveBufferBytes = 0 }),
            ]
            for (setting, change) in cases {
                var configuration = base
                change(&configuration)
                #expect {
                    _ = try PostgresNotificationTransport(configuration: configuration)
                } throws: { error in
                    let error = error as? PostgresTransportError
                    return error?.kind == .invalidConfiguration && error?.setting == setting
                }
            }
            _ = try PostgresNotificationTransport(configuration: base)
        }

        /// A channel name the database cannot store (a NUL character) is refused when it is registered, with a
        /// clear error, and the consumer's other channels go on. Before, the reader's page read failed on it every
        /// round, so no channel of the consumer received anything.
        @Test func aChannelNameWithANulIsRefusedAndTheOtherChannelsGoOn() async throws {
            let schema = freshSchema("nul_channel")
            let bad = Notificatable<DurableItem>.name("bad\u{0}channel")
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            await receiver.transport.flush()  // its position on the good channel is stored
            receiver.relay?.forward(bad)  // no flush: on the old code it waited for good
            let sender = try DurableLocal(schema: schema, consumer: "sender")
            defer { sender.stop() }
            sender.post(DurableItem(publisher: "s", stream: 0, index: 7))
            #expect(await receiver.wait(timeout: .seconds(10)) { $0.items.count == 1 })
            #expect(
                receiver.events.contains { ($0.error as? PostgresTransportError)?.kind == .invalidChannelName })
            let transport = try processingTransport(schema)
            #expect(await refusalKind { try await transport.process(bad) { _ in } } == .invalidChannelName)
        }

        /// A transport stopped under `process` (its relay released by the app) makes `process` throw
        /// `transportStopped` and log it. Before, `process` returned as if done: no event, no log, no error.
        @Test func aProcessOnATransportWhoseRelayWasReleasedThrows() async throws {
            let schema = freshSchema("released")
            let transport = try processingTransport(schema)
            do {
                let relay = NotificationRelay(transport: transport, center: NotificationCenter())
                relay.forward(DurableHandles.item)
            }
            let kind = await refusalKind { try await transport.process(DurableHandles.item) { _ in } }
            #expect(kind == .transportStopped)
        }

        /// A processor behind the retention horizon reports what it can no longer process: `messagesMissed` with
        /// `behindRetention` (and the missed-messages counter). Before, the rows were gone with no word.
        @Test func aProcessorBehindTheRetentionReportsWhatItMissed() async throws {
            let schema = freshSchema("process_retention")
            try await publishItems(schema, count: 1)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let first = Task {
                try await transport.process(DurableHandles.item, options: quickOptions()) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            #expect(await poll(timeout: .seconds(30)) { record.calls.count == 1 })
            try await Task.sleep(for: .milliseconds(300))  // its position is stored
            first.cancel()
            _ = await first.result
            try await publishItems(schema, count: 3)
            try sql("UPDATE \(schema).outbox SET created_at = now() - interval '2 days'")
            guard var configuration = TestServer.durableConfiguration(consumer: "janitor", schema: schema) else {
                throw FixtureError("no server configured")
            }
            configuration.retentionAge = .seconds(86_400)
            let janitor = try DurablePostgresNotificationTransport(configuration: configuration)
            #expect(try await janitor.enforceRetention() >= 3)
            let events = ProcessingRecord()
            let second = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(), onEvent: { events.event($0) }
                ) { _ in }
            }
            defer { second.cancel() }
            #expect(
                await poll(timeout: .seconds(20)) {
                    events.events.contains {
                        $0.kind == .messagesMissed && ($0.error as? PostgresTransportError)?.kind == .behindRetention
                    }
                })
        }

        // MARK: - The first run

        /// A processor's first run starts at the oldest stored message by default: what was stored before it is
        /// processed. Before, it started at the end of the outbox and skipped it silently.
        @Test func aFirstRunProcessesWhatWasStoredBeforeItByDefault() async throws {
            let schema = freshSchema("first_run")
            try await publishItems(schema, count: 3)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let task = Task {
                try await transport.process(DurableHandles.item) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(20)) { record.calls.count == 3 })
            #expect(record.calls.map(\.item.index) == [0, 1, 2])
        }

        // MARK: - Logs an operator can read

        /// Each failed attempt is one `warning` line with the message id, the attempt and the error; a standby and a
        /// takeover of a processor are events of their own kinds, logged at `notice` (not `transportError`).
        @Test func failedAttemptsAndStandbysLogLinesAnOperatorCanRead() async throws {
            let schema = freshSchema("operator_logs")
            try await publishItems(schema, count: 1)
            let logs = InMemoryLogHandler()
            guard let configuration = TestServer.durableConfiguration(consumer: "worker", schema: schema) else {
                throw FixtureError("no server configured")
            }
            let logger = Logger(label: "test", factory: { _ in logs })
            let first = try DurablePostgresNotificationTransport(configuration: configuration, logger: logger)
            let second = try DurablePostgresNotificationTransport(configuration: configuration, logger: logger)
            let record = ProcessingRecord()
            let holder = Task {
                try await first.process(DurableHandles.item, options: quickOptions(attempts: 3)) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                    if delivery.attempt < 3 { throw FixtureError("not yet") }
                }
            }
            #expect(await poll(timeout: .seconds(20)) { record.calls.count == 3 })
            let failures = logs.entries.filter { $0.message.description.hasPrefix("handler failed") }
            #expect(failures.count == 2)
            #expect(failures.allSatisfy { $0.level == .warning })
            #expect(failures.first?.message.description.contains("not yet") == true)
            let standby = Task { try await second.process(DurableHandles.item) { _ in } }
            defer { standby.cancel() }
            #expect(
                await poll(timeout: .seconds(20)) {
                    logs.entries.contains { $0.metadata["notificatable.event"] == "consumerStandby" }
                })
            holder.cancel()
            _ = await holder.result
            #expect(
                await poll(timeout: .seconds(20)) {
                    logs.entries.contains { $0.metadata["notificatable.event"] == "consumerTakenOver" }
                })
            let kinds = logs.entries.filter {
                ["consumerStandby", "consumerTakenOver"].contains($0.metadata["notificatable.event"]?.description)
            }
            #expect(kinds.allSatisfy { $0.level == .notice })
            #expect(!logs.entries.contains { $0.metadata["notificatable.event"] == "transportError" })
        }
    }
}
