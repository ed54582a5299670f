import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A relay over the durable transport in this process, recording the items and events it receives.
final class DurableLocal: @unchecked Sendable {
    let center = NotificationCenter()
    let transport: DurablePostgresNotificationTransport
    private(set) var relay: NotificationRelay?
    private let lock = NSLock()
    private var itemsStorage: [DurableItem] = []
    private var eventsStorage: [NotificationTransportEvent] = []
    private var failuresStorage: [NotificationDecodingFailure] = []
    private var subscription: Disposable?

    init(
        schema: String, consumer: String, authenticator: (any NotificationMessageAuthenticator)? = nil,
        configure: (inout DurablePostgresNotificationTransport.Configuration) -> Void = { _ in }
    ) throws {
        guard var configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
            throw FixtureError("no server configured")
        }
        configure(&configuration)
        transport = try DurablePostgresNotificationTransport(configuration: configuration)
        let relay = NotificationRelay(
            transport: transport, center: center, authenticator: authenticator,
            onEvent: { [weak self] event in self?.lock.withLock { self?.eventsStorage.append(event) } },
            onFailure: { [weak self] failure in self?.lock.withLock { self?.failuresStorage.append(failure) } }
        )
        self.relay = relay
        relay.forward(DurableHandles.item)
        subscription = DurableHandles.item.subscribe(center: center) { [weak self] note in
            self?.lock.withLock { self?.itemsStorage.append(note.userInfo) }
        }
    }

    var items: [DurableItem] { lock.withLock { itemsStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }
    var failures: [NotificationDecodingFailure] { lock.withLock { failuresStorage } }

    func post(_ item: DurableItem) { DurableHandles.item.post(item, center: center) }

    @discardableResult
    func wait(timeout: Duration = .seconds(120), until condition: (DurableLocal) -> Bool) async -> Bool {
        await poll(timeout: timeout, every: .milliseconds(10)) { condition(self) }
    }

    func stop() {
        relay?.stop()
        relay = nil
        lock.withLock { subscription }?.dispose()
    }
}

/// A schema of its own for each test, so that tests never see each other's rows.
func freshSchema(_ label: String) -> String {
    "durable_\(label)_\(UUID().uuidString.prefix(8).lowercased())"
}

/// Runs SQL through psql; returns the unaligned, tuples-only output.
@discardableResult
func sql(_ statement: String) throws -> String {
    let (output, status) = try TestServer.psql(["-tA", "-c", statement])
    guard status == 0 else { throw FixtureError("psql failed (\(status)): \(output)") }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A connection of the test's own, for transactions.
func testConnection() async throws -> PostgresConnection {
    guard let configuration = TestServer.configuration else { throw FixtureError("no server configured") }
    return try await PostgresConnection.connect(
        configuration: configuration.connection, id: Int.random(in: 1000...9999), logger: Logger(label: "test"))
}

/// Checks that, per (publisher, stream), the indexes received are 0..<count in order once duplicates are removed,
/// and returns how many duplicates there were.
func checkCompleteAndOrdered(_ items: [(publisher: String, stream: Int, index: Int)], expected: [String: [Int: Int]])
    -> (missing: Int, outOfOrder: Int, duplicates: Int)
{
    var next: [String: Int] = [:]
    var seen = Set<String>()
    var outOfOrder = 0
    var duplicates = 0
    for item in items {
        let key = "\(item.publisher) \(item.stream)"
        if !seen.insert("\(key) \(item.index)").inserted {
            duplicates += 1
            continue
        }
        if item.index != next[key, default: 0] { outOfOrder += 1 }
        next[key] = max(next[key, default: 0], item.index + 1)
    }
    var missing = 0
    for (publisher, streams) in expected {
        for (stream, count) in streams {
            for index in 0..<count where !seen.contains("\(publisher) \(stream) \(index)") { missing += 1 }
        }
    }
    return (missing, outOfOrder, duplicates)
}

extension PostgresIntegrationTests {
    /// The durable transport against the real server. Nested in the serialized integration suite: one test here
    /// and one there stop and start the server.
    @Suite(.serialized) struct Durable {
        @Test func messagesTravelAndAMegabytePayloadArrivesByteIdenticalOneOverTheLimitIsRefused() async throws {
            let schema = freshSchema("basic")
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            let sender = try DurableLocal(schema: schema, consumer: "sender")
            defer { sender.stop() }
            await receiver.transport.flush()

            let limit = receiver.transport.limits.maximumMessageSize ?? 0
            #expect(limit == 1_048_576)
            // The largest blob that fits: the message's other bytes are measured with an empty blob.
            let overhead = try NotificationRelayMessage.encoded(
                DurableItem(publisher: "sender", stream: 0, index: 1, blob: ""), for: DurableHandles.item,
                sender: sender.relay?.id ?? "", sequence: 2
            ).count
            let blob = String(
                (0..<(limit - overhead)).map { index in Character(UnicodeScalar(UInt8(97 + index % 26))) })
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 0))
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 1, blob: blob))
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 2, blob: blob + "x"))  // one byte over
            sender.post(DurableItem(publisher: "sender", stream: 0, index: 3))
            #expect(await receiver.wait { $0.items.count >= 3 })
            await sender.transport.flush()
            await receiver.transport.flush()
            #expect(receiver.items.map(\.index) == [0, 1, 3])
            #expect(receiver.items.count == 3)
            #expect(receiver.items.dropFirst().first?.blob == blob)
            let refused = sender.events.filter { $0.kind == .messageTooLarge }
            #expect(refused.count == 1)
            let error = refused.first?.error as? NotificationRelayError
            #expect(error?.messageSize == limit + 1)
            #expect(receiver.failures.isEmpty)
            // The stored row of the megabyte message is byte-identical to what the relay encoded.
            let stored = try sql("SELECT max(octet_length(message)) FROM \(schema).outbox")
            #expect(stored == "\(limit)")
        }

        @Test func asAServiceItStoresWhatWasPublishedOnGracefulShutdownThenStops() async throws {
            let schema = freshSchema("service")
            let sender = try DurableLocal(schema: schema, consumer: "sender")
            defer { sender.stop() }
            await sender.transport.flush()
            let group = ServiceGroup(services: [sender.transport], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                for index in 0..<100 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "100")
            sender.post(DurableItem(publisher: "S", stream: 0, index: 100))  // stopped: not stored
            await sender.transport.flush()  // returns at once after stop
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "100")
        }

        @Test func theAtMostOnceTransportIsAServiceThatFlushesOnGracefulShutdown() async throws {
            let local = try LocalRelay("service")
            defer { local.stop() }
            let other = try LocalRelay("other")
            defer { other.stop() }
            await local.transport.flush()
            await other.transport.flush()
            let group = ServiceGroup(services: [local.transport], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                for number in 0..<50 { local.greet(number) }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            // Everything published before the shutdown was sent before the transport stopped.
            #expect(await other.wait { $0.greetings.count >= 50 })
            #expect(other.greetings.map(\.number) == Array(0..<50))
        }

        @Test func aTransactionThatTookItsXidEarlyIsNotSkipped() async throws {
            let schema = freshSchema("xid")
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            await receiver.transport.flush()
            try sql("CREATE TABLE \(schema).other (x int)")
            let early = try await testConnection()
            let late = try await testConnection()
            let logger = Logger(label: "test")
            // T1 takes its xid first by writing something else; T2 inserts a message (smaller id, larger xid) and
            // stays open; T1 then posts (larger id, smaller xid) and commits; T2 commits last.
            try await early.query("BEGIN", logger: logger)
            try await early.query("INSERT INTO \(unescaped: schema).other VALUES (1)", logger: logger)
            try await late.query("BEGIN", logger: logger)
            try await receiver.transport.post(
                DurableItem(publisher: "T2", stream: 0, index: 0), on: DurableHandles.item, in: late)
            try await receiver.transport.post(
                DurableItem(publisher: "T1", stream: 0, index: 0), on: DurableHandles.item, in: early)
            let ids = try sql("SELECT string_agg(id::text || ':' || txid::text, ' ' ORDER BY id) FROM \(schema).outbox")
            try await early.query("COMMIT", logger: logger)
            // What a reader ordering by id alone sees now: T1's row (id 2); its cursor would pass id 1.
            let naive = try sql(
                "SELECT string_agg(id::text, ' ' ORDER BY id) FROM \(schema).outbox "
                    + "WHERE txid < pg_snapshot_xmin(pg_current_snapshot()) AND id > 0")
            #expect(naive == "2", "rows (id:txid) \(ids)")
            #expect(await receiver.wait(timeout: .seconds(30)) { $0.items.count >= 1 })
            try await late.query("COMMIT", logger: logger)
            #expect(await receiver.wait { $0.items.count >= 2 })
            // A naive `id > 2` reader would never see T2's row (id 1); the durable reader does.
            let naiveAfter = try sql(
                "SELECT count(*) FROM \(schema).outbox WHERE txid < pg_snapshot_xmin(pg_current_snapshot()) AND id > 2")
            #expect(naiveAfter == "0")
            #expect(Set(receiver.items.map(\.publisher)) == ["T1", "T2"])
            try await early.close()
            try await late.close()
        }

        @Test func transactionalPostIsDeliveredOnlyIfItsTransactionCommits() async throws {
            let schema = freshSchema("tx")
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            await receiver.transport.flush()
            let connection = try await testConnection()
            let logger = Logger(label: "test")
            struct RolledBack: Error {}
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    try await receiver.transport.post(
                        DurableItem(publisher: "rolled back", stream: 0, index: 0), on: DurableHandles.item,
                        in: connection)
                    throw RolledBack()
                }
            } catch {}
            try await connection.withTransaction(logger: logger) { connection in
                try await receiver.transport.post(
                    DurableItem(publisher: "committed", stream: 0, index: 0), on: DurableHandles.item, in: connection)
            }
            // A later relay post from the same process, to know the reader has passed the committed one.
            receiver.post(DurableItem(publisher: "marker", stream: 0, index: 0))
            #expect(await receiver.wait { $0.items.contains { $0.publisher == "marker" } })
            await receiver.transport.flush()
            #expect(receiver.items.filter { $0.publisher == "committed" }.count == 1)
            #expect(!receiver.items.contains { $0.publisher == "rolled back" })
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "2")
            try await connection.close()
        }

        @Test func aTransactionalPostIsSealedForRelaysThatAuthenticate() async throws {
            let schema = freshSchema("sealed")
            let authenticator = try HMACMessageAuthenticator(
                keys: [try .init(id: "k1", secret: Data(repeating: 7, count: 32))])
            let receiver = try DurableLocal(schema: schema, consumer: "receiver", authenticator: authenticator)
            defer { receiver.stop() }
            await receiver.transport.flush()
            let connection = try await testConnection()
            try await receiver.transport.post(
                DurableItem(publisher: "unsealed", stream: 0, index: 0), on: DurableHandles.item, in: connection)
            try await receiver.transport.post(
                DurableItem(publisher: "sealed", stream: 0, index: 0), on: DurableHandles.item, in: connection,
                authenticator: authenticator)
            #expect(await receiver.wait { $0.items.contains { $0.publisher == "sealed" } })
            #expect(!receiver.items.contains { $0.publisher == "unsealed" })
            #expect(receiver.events.contains { $0.kind == .unauthenticatedMessage })
            try await connection.close()
        }

        @Test func aKilledConsumerRestartedUnderItsNameReceivesEverythingInOrder() async throws {
            let schema = freshSchema("kill")
            let count = 10_000
            var consumer = try LineProcess(peerPath, ["durable-consume", schema, "worker"])
            defer { consumer.kill() }
            #expect(await consumer.wait(for: "ready"))
            let sender = try DurableLocal(schema: schema, consumer: "sender")
            defer { sender.stop() }
            for index in 0..<(count / 2) { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
            // Kill the consumer in the middle of the stream, then send the second half while it is down.
            #expect(await consumer.wait(timeout: .seconds(120)) { $0.filter { $0.hasPrefix("item ") }.count >= 2_000 })
            kill(consumer.processIdentifier, SIGKILL)
            _ = consumer.finish()
            for index in (count / 2)..<count { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
            let firstRun = consumer.lines.filter { $0.hasPrefix("item ") }
            #expect(firstRun.count < count)
            consumer = try LineProcess(peerPath, ["durable-consume", schema, "worker"])
            #expect(await consumer.wait(for: "ready"))
            await sender.transport.flush()
            let secondComplete = await consumer.wait(timeout: .seconds(180)) { lines in
                Set(firstRun + lines.filter { $0.hasPrefix("item ") }).count >= count
            }
            #expect(secondComplete)
            let all = (firstRun + consumer.lines.filter { $0.hasPrefix("item ") }).compactMap(parseItem)
            // Per run, in order; across runs the restart repeats at most one page.
            let result = checkCompleteAndOrdered(all, expected: ["S": [0: count]])
            #expect(result.missing == 0)
            let pageSize = sender.transport.configuration.pageSize
            #expect(result.duplicates <= pageSize, "duplicates \(result.duplicates)")
            let secondRun = consumer.lines.filter { $0.hasPrefix("item ") }.compactMap(parseItem).map(\.index)
            #expect(secondRun == secondRun.sorted())
            #expect(all.prefix(firstRun.count).map(\.index) == Array(0..<firstRun.count))
            print("durable kill test: first run \(firstRun.count), duplicates \(result.duplicates)")
        }

        @Test func aServerRestartMidStreamLosesNothing() async throws {
            let schema = freshSchema("restart")
            let count = 4_000
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            let sender = try DurableLocal(schema: schema, consumer: "sender")
            defer { sender.stop() }
            await receiver.transport.flush()
            await sender.transport.flush()
            for index in 0..<(count / 2) { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
            #expect(await receiver.wait { $0.items.count >= count / 8 })
            try TestServer.server("stop")
            for index in (count / 2)..<count { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
            try TestServer.server("start")
            #expect(await receiver.wait(timeout: .seconds(180)) { Set($0.items.map(\.index)).count >= count })
            await sender.transport.flush()
            let result = checkCompleteAndOrdered(
                receiver.items.map { ($0.publisher, $0.stream, $0.index) }, expected: ["S": [0: count]])
            #expect(result.missing == 0)
            #expect(result.outOfOrder == 0)
            #expect(result.duplicates == 0)  // the same process: the relay drops re-inserted copies
            #expect(receiver.events.contains { $0.kind == .reconnected })
        }

        @Test func twoPublisherProcessesWithOutOfOrderCommitsLoseNothing() async throws {
            let schema = freshSchema("writers")
            let perPublisher = 5_000
            let receiver = try DurableLocal(schema: schema, consumer: "receiver")
            defer { receiver.stop() }
            await receiver.transport.flush()
            var publishers: [LineProcess] = []
            defer { publishers.forEach { $0.kill() } }
            for name in ["P", "Q"] {
                publishers.append(try LineProcess(peerPath, ["durable-publish", schema, name, "\(perPublisher)"]))
            }
            for publisher in publishers {
                #expect(
                    await publisher.wait(timeout: .seconds(240), until: { $0.contains("published \(perPublisher)") }),
                    "\(publisher.lines.suffix(5))")
            }
            #expect(await receiver.wait(timeout: .seconds(120)) { $0.items.count >= 2 * perPublisher })
            await receiver.transport.flush()
            // Expected per stream: streams 0-1 through the relay, 2-5 transactional (see the peer).
            var streams: [Int: Int] = [:]
            let relayed = perPublisher / 2
            for stream in 0..<2 { streams[stream] = relayed / 2 + (stream < relayed % 2 ? 1 : 0) }
            let transactional = perPublisher - relayed
            for thread in 0..<4 { streams[2 + thread] = transactional / 4 + (thread < transactional % 4 ? 1 : 0) }
            let result = checkCompleteAndOrdered(
                receiver.items.map { ($0.publisher, $0.stream, $0.index) }, expected: ["P": streams, "Q": streams])
            #expect(result.missing == 0)
            #expect(result.outOfOrder == 0)
            #expect(result.duplicates == 0)
            #expect(receiver.items.count == 2 * perPublisher)
        }

        @Test func aConsumerFarBehindCatchesUpInPagesThenFollowsLivePosts() async throws {
            let schema = freshSchema("behind")
            let behind = 100_000
            var consumer = try DurableLocal(schema: schema, consumer: "late") { $0.pageSize = 1_000 }
            await consumer.transport.flush()  // its position is stored
            consumer.stop()
            // 100,000 valid relay messages from one sender, written straight into the outbox.
            try sql(
                """
                INSERT INTO \(schema).outbox (channel, message)
                SELECT 'NotificatablePostgres.DurableItem',
                  '{"sequence":' || i || ',"version":1,"name":"NotificatablePostgres.DurableItem","sender":"bulk",'
                  || '"payload":{"publisher":"bulk","stream":0,"index":' || (i - 1) || '}}'
                FROM generate_series(1, \(behind)) AS i
                """)
            consumer = try DurableLocal(schema: schema, consumer: "late") { $0.pageSize = 1_000 }
            defer { consumer.stop() }
            #expect(await consumer.wait(timeout: .seconds(240)) { $0.items.count >= behind })
            consumer.post(DurableItem(publisher: "live", stream: 0, index: 0))  // its own post, seen locally
            let other = try DurableLocal(schema: schema, consumer: "other")
            defer { other.stop() }
            other.post(DurableItem(publisher: "live", stream: 1, index: 0))
            #expect(await consumer.wait { $0.items.contains { $0.publisher == "live" && $0.stream == 1 } })
            let bulk = consumer.items.filter { $0.publisher == "bulk" }.map(\.index)
            #expect(bulk == Array(0..<behind))
            #expect(consumer.failures.isEmpty)
        }

        @Test func retentionDeletesWhatEveryConsumerPassedAndTellsAConsumerItLeftBehind() async throws {
            let schema = freshSchema("retention")
            var fast = try DurableLocal(schema: schema, consumer: "fast")
            let slow = try DurableLocal(schema: schema, consumer: "slow")
            await fast.transport.flush()
            await slow.transport.flush()
            for index in 0..<10 { fast.post(DurableItem(publisher: "F", stream: 0, index: index)) }
            #expect(await slow.wait { $0.items.count >= 10 })
            await fast.transport.flush()
            // Both consumers have passed the ten rows (the sender's own relay reads them too).
            #expect(await fast.wait { _ in (try? sql("SELECT count(*) FROM \(schema).consumers WHERE id = 0")) == "0" })
            let deleted = try await fast.transport.enforceRetention()
            #expect(deleted == 10)
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "0")

            // "slow" stops; ten more rows, then they age past the retention.
            slow.stop()
            for index in 10..<20 { fast.post(DurableItem(publisher: "F", stream: 0, index: index)) }
            await fast.transport.flush()
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "10")
            try sql("UPDATE \(schema).outbox SET created_at = now() - interval '2 hours'")
            fast.stop()
            fast = try DurableLocal(schema: schema, consumer: "fast") { $0.retentionAge = .seconds(3_600) }
            defer { fast.stop() }
            #expect(try await fast.transport.enforceRetention() == 10)
            #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "0")
            let restarted = try DurableLocal(schema: schema, consumer: "slow")
            defer { restarted.stop() }
            #expect(
                await restarted.wait { local in
                    local.events.contains { ($0.error as? PostgresTransportError)?.kind == .behindRetention }
                })
            let event = restarted.events.first { ($0.error as? PostgresTransportError)?.kind == .behindRetention }
            #expect(event?.kind == .messagesMissed)
            #expect(event?.channel == DurableHandles.item.name.rawValue)
            #expect(restarted.items.isEmpty)
        }
    }
}

/// Reads `item PUBLISHER STREAM INDEX`.
func parseItem(_ line: String) -> (publisher: String, stream: Int, index: Int)? {
    let words = line.split(separator: " ")
    guard words.count == 4, let stream = Int(words[2]), let index = Int(words[3]) else { return nil }
    return (String(words[1]), stream, index)
}
