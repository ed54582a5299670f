import Foundation
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

@testable import NotificatablePostgres

#if canImport(Glibc)
import Glibc
#endif

/// What an in-process processor saw: each call of its handler, and its events.
final class ProcessingRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var callsStorage: [(item: DurableItem, attempt: Int, id: DurableDeliveryID)] = []
    private var instantsStorage: [ContinuousClock.Instant] = []
    private var eventsStorage: [NotificationTransportEvent] = []

    func call(_ item: DurableItem, attempt: Int, id: DurableDeliveryID) {
        lock.withLock {
            callsStorage.append((item, attempt, id))
            instantsStorage.append(.now)
        }
    }

    func event(_ event: NotificationTransportEvent) { lock.withLock { eventsStorage.append(event) } }

    var calls: [(item: DurableItem, attempt: Int, id: DurableDeliveryID)] { lock.withLock { callsStorage } }
    /// When each call began.
    var instants: [ContinuousClock.Instant] { lock.withLock { instantsStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }
    var parked: [DurableProcessingError] {
        events.filter { $0.kind == .messageParked }.compactMap { $0.error as? DurableProcessingError }
    }
}

/// A processing transport of the test process, processing from the oldest stored message, quick retries.
func processingTransport(_ schema: String, consumer: String = "worker")
    throws -> DurablePostgresNotificationTransport
{
    guard let configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
        throw FixtureError("no server configured")
    }
    return try DurablePostgresNotificationTransport(configuration: configuration)
}

func quickOptions(attempts: Int = 5, concurrency: Int = 1) -> DurableProcessingOptions {
    var options = DurableProcessingOptions(maximumAttempts: attempts, maximumConcurrency: concurrency)
    options.initialRetryDelay = .milliseconds(5)
    options.maximumRetryDelay = .milliseconds(40)
    options.startsAtOldestStored = true
    return options
}

/// The `processed STREAM INDEX ATTEMPT` lines of a peer, as (stream, index).
func processedItems(_ lines: [String]) -> [(stream: Int, index: Int)] {
    lines.compactMap { line in
        let words = line.split(separator: " ")
        guard words.count == 4, words[0] == "processed", let stream = Int(words[1]), let index = Int(words[2]) else {
            return nil
        }
        return (stream, index)
    }
}

/// How many messages a kill test works off: `NOTIFICATABLE_PG_PROCESS_MESSAGES` when set (the figure is
/// 20,000), else `normal`.
func killTestMessages(_ normal: Int) -> Int {
    ProcessInfo.processInfo.environment["NOTIFICATABLE_PG_PROCESS_MESSAGES"].flatMap(Int.init) ?? normal
}

/// Publishes `count` items on stream 0 (or spread over `streams`) through a relay, and waits until they are stored.
func publishItems(_ schema: String, count: Int, streams: Int = 1) async throws {
    let sender = try DurableLocal(schema: schema, consumer: "sender")
    defer { sender.stop() }
    for index in 0..<count {
        sender.post(DurableItem(publisher: "S", stream: index % streams, index: index))
    }
    await sender.transport.flush()
}

extension PostgresIntegrationTests {
    /// Acknowledged processing (`process`, `processTransactionally`) against the real server.
    @Suite(.serialized) struct Processing {
        /// Kills the `durable-process` peer `kills` times at random points while it works off `count` items, restarts
        /// it each time, and returns the items processed over all runs and what the last run printed.
        func processKilled(
            schema: String, count: Int, kills: Int, concurrency: Int, mode: String, step: Duration = .microseconds(300)
        ) async throws -> [(stream: Int, index: Int)] {
            var processed: [(stream: Int, index: Int)] = []
            let microseconds = step.components.seconds * 1_000_000 + step.components.attoseconds / 1_000_000_000_000
            let arguments = ["durable-process", schema, "worker", String(concurrency), mode, String(microseconds)]
            for run in 0...kills {
                let peer = try LineProcess(peerPath, arguments)
                defer { peer.kill() }
                #expect(await peer.wait(for: "ready"))
                if run < kills {
                    // A random point: after a random number of items of this run, plus a random pause.
                    let target = Int.random(in: 1...(count / (kills + 2)))
                    #expect(await peer.wait(timeout: .seconds(120)) { processedItems($0).count >= target })
                    try await Task.sleep(for: .microseconds(Int.random(in: 0...2_000)))
                    kill(peer.processIdentifier, SIGKILL)
                    _ = peer.finish()
                    processed += processedItems(peer.lines)
                } else {
                    // Done when every message was processed, or (a lost message) when the stored position has
                    // reached the last message: then nothing more comes (a few seconds more for lines in the pipe).
                    let before = processed
                    let covered = { (lines: [String]) -> Bool in
                        Set((before + processedItems(lines)).map(\.index)).count >= count
                    }
                    let atEnd = """
                        SELECT (c.txid, c.id) >= (o.txid, o.id) FROM \(schema).consumers c,
                        (SELECT txid, id FROM \(schema).outbox ORDER BY txid DESC, id DESC LIMIT 1) o
                        WHERE c.consumer = 'worker/processing'
                        """
                    _ = await poll(timeout: .seconds(900), every: .milliseconds(200)) {
                        covered(peer.lines) || (try? sql(atEnd)) == "t"
                    }
                    let done = await peer.wait(timeout: .seconds(10), until: covered)
                    #expect(done, "the last run did not finish: \(peer.lines.suffix(5))")
                    processed += processedItems(peer.lines)
                }
            }
            return processed
        }

        @Test func aProcessorKilledFiveTimesAtRandomPointsProcessesEveryMessageAtLeastOnce() async throws {
            let schema = freshSchema("process_kill")
            let count = killTestMessages(20_000)
            let kills = 5
            try await publishItems(schema, count: count)
            let processed = try await processKilled(
                schema: schema, count: count, kills: kills, concurrency: 1, mode: "plain")
            let indexes = Set(processed.map(\.index))
            #expect(indexes.count == count, "missing \(count - indexes.count)")
            let duplicates = processed.count - indexes.count
            // Each kill repeats at most the messages handed out and not yet acknowledged in the database.
            let window = DurableProcessingOptions().maximumUnacknowledged
            #expect(duplicates <= kills * window, "duplicates \(duplicates)")
            print("process kill test: \(processed.count) calls for \(count) messages, \(duplicates) duplicates")
        }

        @Test func sixteenAtOnceKilledThreeTimesLoseNothing() async throws {
            let schema = freshSchema("process_sixteen")
            let count = killTestMessages(20_000)
            let kills = 3
            try await publishItems(schema, count: count)
            // Steps of up to 3 ms, so that sixteen at once finish far out of order: a position stored past a message
            // still running (the newest finished, not the oldest unfinished) loses it at a kill.
            let processed = try await processKilled(
                schema: schema, count: count, kills: kills, concurrency: 16, mode: "plain", step: .milliseconds(3))
            let indexes = Set(processed.map(\.index))
            #expect(indexes.count == count, "missing \(count - indexes.count)")
            let duplicates = processed.count - indexes.count
            #expect(duplicates <= kills * DurableProcessingOptions().maximumUnacknowledged, "duplicates \(duplicates)")
            print("process sixteen kill test: \(processed.count) calls, \(duplicates) duplicates")
        }

        /// With sixteen at once, the stored position stays before the oldest message not finished: a processor
        /// whose first message never finishes, stopped once the nineteen after it finished, leaves that message to
        /// the next process under its name (a position at the newest finished message would have passed it).
        @Test func withSixteenAtOnceThePositionStaysBeforeTheOldestUnfinishedMessage() async throws {
            let schema = freshSchema("process_oldest")
            try await publishItems(schema, count: 20)
            let first = try processingTransport(schema)
            let record = ProcessingRecord()
            let task = Task {
                try await first.process(DurableHandles.item, options: quickOptions(concurrency: 16)) { delivery in
                    // The first message never finishes: its handler waits until the processor stops.
                    while delivery.payload.index == 0 { try await Task.sleep(for: .milliseconds(10)) }
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            #expect(await poll(timeout: .seconds(60)) { record.calls.count == 19 })
            task.cancel()
            _ = await task.result
            let second = try processingTransport(schema)
            let again = ProcessingRecord()
            let next = Task {
                try await second.process(DurableHandles.item, options: quickOptions(concurrency: 16)) { delivery in
                    again.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { next.cancel() }
            #expect(await poll(timeout: .seconds(30)) { again.calls.contains { $0.item.index == 0 } })
        }

        @Test func aTransactionalHandlerKilledFiveTimesLeavesEveryEffectExactlyOnce() async throws {
            let schema = freshSchema("process_tx")
            // 5,000 by default, to keep CI short: each message is a transaction of its own (5,000 took 21 s and
            // 20,000 took 71 s on the loaded 2-core machine, debug build); NOTIFICATABLE_PG_PROCESS_MESSAGES=20000
            // runs the figure.
            let count = killTestMessages(5_000)
            try await publishItems(schema, count: count)
            try sql("CREATE TABLE \(schema).effects (stream int NOT NULL, index int NOT NULL)")
            let processed = try await processKilled(
                schema: schema, count: count, kills: 5, concurrency: 4, mode: "transactional")
            #expect(Set(processed.map(\.index)).count == count)
            let counts = try sql("SELECT count(*), count(DISTINCT index) FROM \(schema).effects")
            #expect(counts == "\(count)|\(count)", "effects (rows|distinct): \(counts)")
            print("process transactional kill test: \(processed.count) handler calls, effects \(counts)")
        }

        @Test func aHandlerThatThrowsThreeTimesIsRetriedAndProcessedOnce() async throws {
            let schema = freshSchema("process_retry")
            try await publishItems(schema, count: 3)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            var options = quickOptions(attempts: 5)
            options.initialRetryDelay = .milliseconds(40)
            options.maximumRetryDelay = .seconds(1)
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: options, onEvent: { record.event($0) }
                ) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                    if delivery.payload.index == 1 && delivery.attempt <= 3 { throw FixtureError("flaky") }
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(60)) { record.calls.count >= 6 })
            task.cancel()
            _ = await task.result
            let calls = record.calls
            #expect(calls.map(\.item.index) == [0, 1, 1, 1, 1, 2])
            #expect(calls.filter { $0.item.index == 1 }.map(\.attempt) == [1, 2, 3, 4])
            #expect(Set(calls.filter { $0.item.index == 1 }.map(\.id)).count == 1)  // a stable id
            #expect(record.parked.isEmpty)
            #expect(try sql("SELECT count(*) FROM \(schema).dead_letters") == "0")
            // The backoff was awaited and doubled: the waits before attempts 2, 3 and 4 are at least half of 40, 80
            // and 160 ms (a sleep never ends early; only lower bounds are checked, nothing about speed).
            let instants = record.instants
            for (retry, least) in [(2, 20), (3, 40), (4, 80)] {
                let gap = instants[retry] - instants[retry - 1]
                #expect(gap >= .milliseconds(least), "wait before attempt \(retry): \(gap)")
            }
        }

        /// The wait before each retry: the initial delay doubled per failed attempt, capped at the maximum, times a
        /// random factor in 0.5...1; and a huge configured delay does not overflow (it used to trap converting to
        /// nanoseconds).
        @Test func theRetryDelayDoublesIsCappedAndJittered() {
            var options = DurableProcessingOptions()
            options.initialRetryDelay = .milliseconds(100)
            options.maximumRetryDelay = .seconds(1)
            func delay(_ attempt: Int) -> Double {
                let duration = DurableProcessor<DurableItem>.retryDelay(after: attempt, options: options)
                return Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
            }
            for attempt in 1...70 {
                let nominal = min(0.1 * Double(1 << min(attempt - 1, 30)), 1)
                let delays = (0..<20).map { _ in delay(attempt) }
                #expect(delays.allSatisfy { $0 >= nominal * 0.5 - 1e-9 && $0 <= nominal + 1e-9 }, "attempt \(attempt)")
            }
            #expect(Set((0..<50).map { _ in delay(1) }).count > 1)  // jittered
            options.initialRetryDelay = .seconds(Int64.max)
            options.maximumRetryDelay = .seconds(Int64.max)
            #expect(delay(64) > 1e9)
        }

        @Test func aHandlerThatAlwaysThrowsParksTheMessageTheNextIsProcessedAndARedriveProcessesItOnce() async throws {
            let schema = freshSchema("process_park")
            try await publishItems(schema, count: 3)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let failing = FailSwitch()
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(attempts: 4), onEvent: { record.event($0) }
                ) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                    if delivery.payload.index == 1 && failing.on { throw FixtureError("card declined") }
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(60)) { record.calls.contains { $0.item.index == 2 } })
            #expect(record.calls.filter { $0.item.index == 1 }.map(\.attempt) == [1, 2, 3, 4])
            #expect(record.parked.map(\.kind) == [.handlerFailed])
            #expect(record.parked.first?.reason == "card declined")
            let rows = try sql("SELECT channel, attempts, error, redrive FROM \(schema).dead_letters")
            #expect(rows == "NotificatablePostgres.DurableItem|4|card declined|f")
            let letters = try await transport.deadLetters()
            #expect(letters.count == 1)
            #expect(letters.first?.attempts == 4)
            // Re-driven once the cause is fixed: processed once, and the dead letter is gone.
            failing.on = false
            let letter = try #require(letters.first)
            #expect(try await transport.redrive(letter))
            #expect(await poll(timeout: .seconds(30)) { record.calls.filter { $0.item.index == 1 }.count == 5 })
            #expect(
                await poll(timeout: .seconds(30)) { (try? sql("SELECT count(*) FROM \(schema).dead_letters")) == "0" })
            try await Task.sleep(for: .milliseconds(600))  // a few poll intervals: nothing more comes
            #expect(record.calls.filter { $0.item.index == 1 }.count == 5)
            #expect(record.calls.last?.item.index == 1)
            #expect(try await transport.deadLetters().isEmpty)
        }

        /// Two dead letters re-driven one after the other on a channel that receives nothing else: both are
        /// processed once. Before, the reader's wait that began while the first re-drive ran never looked at the dead
        /// letters again, so the second re-drive waited for the next message on the channel.
        @Test func aSecondRedriveOnAQuietChannelIsProcessed() async throws {
            let schema = freshSchema("process_redrives")
            try await publishItems(schema, count: 3)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let failing = FailSwitch()
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(attempts: 1), onEvent: { record.event($0) }
                ) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                    if delivery.payload.index > 0 && failing.on { throw FixtureError("not yet") }
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(60)) { record.parked.count == 2 })
            failing.on = false
            let letters = try await transport.deadLetters()
            #expect(letters.count == 2)
            for (offset, letter) in letters.enumerated() {
                #expect(try await transport.redrive(letter))
                let processed = await poll(timeout: .seconds(30), every: .milliseconds(20)) {
                    record.calls.count == 4 + offset
                }
                #expect(processed, "re-drive \(offset + 1) was not processed")
            }
            try await Task.sleep(for: .milliseconds(600))  // a few poll intervals: nothing more comes
            #expect(record.calls.map(\.item.index).sorted() == [0, 1, 1, 2, 2])
            #expect(try await transport.deadLetters().isEmpty)
        }

        @Test func unusableMessagesAreParkedWithTheReasonNotSkipped() async throws {
            let schema = freshSchema("process_unusable")
            let authenticator = try HMACMessageAuthenticator(
                keys: [try .init(id: "k1", secret: Data(repeating: 7, count: 32))])
            let sealing = try DurableLocal(schema: schema, consumer: "sender", authenticator: authenticator)
            defer { sealing.stop() }
            let plain = try DurableLocal(schema: schema, consumer: "plain")
            defer { plain.stop() }
            sealing.post(DurableItem(publisher: "S", stream: 0, index: 0))
            await sealing.transport.flush()
            plain.post(DurableItem(publisher: "S", stream: 0, index: 1))  // not sealed: refused
            await plain.transport.flush()
            // Sealed, but not a relay message; sealed, but a payload that does not decode as DurableItem.
            let channel = DurableHandles.item.name.rawValue
            let wrongPayload: [String: Any] = ["publisher": "S", "stream": 0, "index": "two"]
            let wrongMessage = try NotificationRelayMessage(
                name: DurableHandles.item.name, sender: "x", sequence: 1, payload: wrongPayload
            ).encoded()
            let sealed = [authenticator.seal(Data("not json".utf8)), authenticator.seal(wrongMessage)]
            for message in sealed {
                let text = String(decoding: message, as: UTF8.self).replacingOccurrences(of: "'", with: "''")
                try sql("INSERT INTO \(schema).outbox (channel, message) VALUES ('\(channel)', '\(text)')")
            }
            sealing.post(DurableItem(publisher: "S", stream: 0, index: 4))
            await sealing.transport.flush()
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(), authenticator: authenticator,
                    onEvent: { record.event($0) }
                ) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(60)) { record.calls.contains { $0.item.index == 4 } })
            #expect(record.calls.map(\.item.index) == [0, 4])
            #expect(record.parked.map(\.kind) == [.unauthenticated, .malformed, .undecodable])
            let reasons = try sql("SELECT attempts || ' ' || error FROM \(schema).dead_letters ORDER BY txid, id")
            #expect(reasons.split(separator: "\n").count == 3, "\(reasons)")
            #expect(reasons.contains("index"), "the coding path is in the reason: \(reasons)")
        }

        @Test func aPartitionKeyKeepsTheOrderPerKeyWithConcurrency() async throws {
            let schema = freshSchema("process_keys")
            let count = 400
            try await publishItems(schema, count: count, streams: 4)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            let task = Task {
                try await transport.process(
                    DurableHandles.item, options: quickOptions(concurrency: 8), partitionKey: { "\($0.stream)" }
                ) { delivery in
                    try await Task.sleep(for: .microseconds(Int.random(in: 0...2_000)))
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            #expect(await poll(timeout: .seconds(60)) { record.calls.count >= count })
            for stream in 0..<4 {
                let indexes = record.calls.filter { $0.item.stream == stream }.map(\.item.index)
                #expect(indexes == indexes.sorted() && indexes.count == count / 4, "stream \(stream)")
            }
            // Different keys ran at once: the overall order is not the stored one.
            #expect(record.calls.map(\.item.index) != Array(0..<count))
        }

        /// A processing consumer registers its position under the registrations' lock, as the relay's reader does:
        /// while the deletion of passed rows holds it alone, the registration waits (before, it went ahead, so a
        /// deletion that could not yet see the new position could delete rows the consumer should receive).
        @Test func aProcessingConsumerRegistersUnderTheRetentionLock() async throws {
            let schema = freshSchema("process_register")
            try await publishItems(schema, count: 1)  // creates the tables
            let logger = Logger(label: "test")
            let retention = try await testConnection()
            let quoted = "\"\(schema)\""
            try await retention.query("BEGIN", logger: logger)
            try await retention.query("SELECT pg_advisory_xact_lock(hashtext(\(quoted)), 1)::text", logger: logger)
            let transport = try processingTransport(schema)
            let record = ProcessingRecord()
            var atTheEnd = DurableProcessingOptions()
            atTheEnd.startsAtOldestStored = false  // the registration at the end is what the lock protects
            let task = Task {
                try await transport.process(DurableHandles.item, options: atTheEnd) { delivery in
                    record.call(delivery.payload, attempt: delivery.attempt, id: delivery.id)
                }
            }
            defer { task.cancel() }
            let waiting = """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = 1
                AND objsubid = 2 AND classid::int8 = (hashtext('\(quoted)')::int8 & 4294967295)
                """
            let waited = await poll(timeout: .seconds(30), every: .milliseconds(100)) {
                (try? sql(waiting)) == "1"
            }
            #expect(waited, "the registration did not wait for the retention lock")
            let registered = "SELECT count(*) FROM \(schema).consumers WHERE consumer = 'worker/processing'"
            #expect(try sql(registered) == "0")
            try await retention.query("COMMIT", logger: logger)
            #expect(await poll(timeout: .seconds(30), every: .milliseconds(50)) { (try? sql(registered)) == "1" })
            // Registered at the current end: the message stored before is not processed, the next one is.
            try await publishItems(schema, count: 1)
            #expect(await poll(timeout: .seconds(30)) { !record.calls.isEmpty })
            #expect(record.calls.count == 1)
            try await retention.close()
        }

        /// The second `process` of a channel on one transport throws `alreadyProcessing`. It is called once the
        /// first has registered its position (it claims the channel before that): before, the test slept 100 ms, and
        /// on a loaded machine the first task had not started by then, so the second call claimed the channel, ran
        /// on, and the test waited for it until CI's time ran out.
        @Test func processingTheSameChannelTwiceOnOneTransportThrows() async throws {
            let schema = freshSchema("process_twice")
            let transport = try processingTransport(schema)
            let first = Task { try await transport.process(DurableHandles.item) { _ in } }
            defer { first.cancel() }
            let registered = "SELECT count(*) FROM \(schema).consumers WHERE consumer = 'worker/processing'"
            #expect(await poll(timeout: .seconds(60), every: .milliseconds(20)) { (try? sql(registered)) == "1" })
            let errors = Recorded<any Error>()
            let second = Task {
                do { try await transport.process(DurableHandles.item) { _ in } } catch { errors.append(error) }
            }
            defer { second.cancel() }
            // Bounded: a second call that does not throw runs on; the test fails instead of waiting for it.
            #expect(await poll(timeout: .seconds(30)) { errors.count == 1 })
            #expect((errors.all.first as? DurableProcessingError)?.kind == .alreadyProcessing)
        }
    }
}

/// A flag the test flips while a handler reads it.
final class FailSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var value = true
    var on: Bool {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
