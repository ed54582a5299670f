import Foundation
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing

@testable import NotificatablePostgres

/// A durable transport without a relay, recording the messages it hands over: what a relay would hide (it drops
/// copies of what it has seen) is visible here.
final class RawDurable: @unchecked Sendable {
    let transport: DurablePostgresNotificationTransport
    private let lock = NSLock()
    private var messagesStorage: [(channel: String, message: Data)] = []
    private var eventsStorage: [NotificationTransportEvent] = []

    init(
        schema: String, consumer: String,
        configure: (inout DurablePostgresNotificationTransport.Configuration) -> Void = { _ in }
    ) throws {
        guard var configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
            throw FixtureError("no server configured")
        }
        configure(&configuration)
        transport = try DurablePostgresNotificationTransport(configuration: configuration)
        transport.start(
            handler: NotificationTransportHandler(
                receive: { [weak self] message, channel in
                    self?.lock.withLock { self?.messagesStorage.append((channel, message)) }
                },
                report: { [weak self] event in self?.lock.withLock { self?.eventsStorage.append(event) } }))
    }

    var messages: [(channel: String, message: Data)] { lock.withLock { messagesStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }

    /// The indexes of the durable items received, in order.
    var itemIndexes: [Int] {
        messages.compactMap { try? NotificationRelayMessage(decoding: $0.message) }
            .compactMap { $0.payload?["index"] as? Int }
    }

    @discardableResult
    func wait(timeout: Duration = .seconds(60), until condition: (RawDurable) -> Bool) async -> Bool {
        await poll(timeout: timeout, every: .milliseconds(10)) { condition(self) }
    }
}

/// The channel of the durable items.
let itemChannel = DurableHandles.item.name.rawValue

extension PostgresIntegrationTests.Durable {
    // MARK: - Issue 29 item 7: forwarding again, listening again

    /// `relay.forward(handle)` a second time replaces the forwarding; before, the relay made the transport unlisten
    /// and listen again and forgot the handle's senders, and the durable transport went back to its stored
    /// position (saved lazily, so behind): messages 0–4 were posted twice, with no process stopped.
    @Test func forwardingAHandleAgainPostsNothingTwice() async throws {
        let schema = freshSchema("again")
        // No lazy save during the test: the stored position stays where the receiver registered.
        let receiver = try DurableLocal(schema: schema, consumer: "receiver") { $0.pollInterval = .seconds(60) }
        defer { receiver.stop() }
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        await receiver.transport.flush()
        await sender.transport.flush()
        for index in 0..<5 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await receiver.wait { $0.items.count >= 5 })
        receiver.relay?.forward(DurableHandles.item)
        for index in 5..<10 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await receiver.wait { $0.items.contains { $0.index == 9 } })
        await sender.transport.flush()
        await receiver.transport.flush()
        #expect(receiver.items.map(\.index) == Array(0..<10))
    }

    /// The transport alone: `unlisten` then `listen` in one process goes on from the position reached, not from
    /// the stored one (before: the five messages were handed over again).
    @Test func listeningAgainGoesOnFromThePositionReached() async throws {
        let schema = freshSchema("relisten")
        let receiver = try RawDurable(schema: schema, consumer: "receiver") { $0.pollInterval = .seconds(60) }
        defer { receiver.transport.stop() }
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        receiver.transport.listen(to: itemChannel)
        await receiver.transport.flush()
        for index in 0..<5 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await receiver.wait { $0.messages.count >= 5 })
        receiver.transport.unlisten(from: itemChannel)
        receiver.transport.listen(to: itemChannel)
        for index in 5..<10 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await receiver.wait { $0.itemIndexes.contains(9) })
        await receiver.transport.flush()
        #expect(receiver.itemIndexes == Array(0..<10))
        // The position reached was saved by the flush, though the channel was parked in between.
        let saved = try sql(
            "SELECT (c.txid, c.id) = (o.txid, o.id) FROM \(schema).consumers c, "
                + "(SELECT txid, id FROM \(schema).outbox ORDER BY txid DESC, id DESC LIMIT 1) o "
                + "WHERE c.consumer = 'receiver'")
        #expect(saved == "t")
    }

    // MARK: - Issue 29 item 8: a new consumer starts at the end

    /// A consumer new to a channel receives the messages of transactions that take their transaction id after it
    /// registered, and nothing before: not the rows committed before (before: it started at `pg_snapshot_xmin`, so
    /// while an unrelated transaction held an older xid, it received the five messages stored before it listened),
    /// and not the row of a transaction already under way when it registered, even if that commits later.
    @Test func aNewConsumerReceivesNothingStoredBeforeItRegistered() async throws {
        let schema = freshSchema("newcomer")
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        await sender.transport.flush()
        let logger = Logger(label: "test")
        let unrelated = try await testConnection()
        let inFlight = try await testConnection()
        try sql("CREATE TABLE \(schema).other (x int)")
        try await unrelated.query("BEGIN", logger: logger)
        try await unrelated.query("INSERT INTO \(unescaped: schema).other VALUES (1)", logger: logger)
        try await inFlight.query("BEGIN", logger: logger)
        try await sender.transport.post(
            DurableItem(publisher: "in flight", stream: 0, index: -1), on: DurableHandles.item, in: inFlight)
        for index in 0..<5 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await sender.transport.flush().isComplete)

        let newcomer = try DurableLocal(schema: schema, consumer: "newcomer")
        defer { newcomer.stop() }
        await newcomer.transport.flush()  // registered
        try await inFlight.query("COMMIT", logger: logger)
        try await unrelated.query("COMMIT", logger: logger)
        for index in 5..<10 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        await sender.transport.flush()
        #expect(await newcomer.wait { $0.items.contains { $0.index == 9 } })
        await newcomer.transport.flush()
        #expect(newcomer.items.map(\.index) == Array(5..<10))
        try await unrelated.close()
        try await inFlight.close()
    }

    // MARK: - Issue 29 item 9: refusals that can pass are retried

    /// Makes the outbox refuse inserts with `sqlState` while `schema.refuse` holds it, and, for `matching`, only
    /// the messages whose text contains it.
    private func installRefusal(_ schema: String) throws {
        try sql(
            """
            CREATE TABLE \(schema).refuse (sqlstate text NOT NULL, matching text NOT NULL DEFAULT '');
            CREATE FUNCTION \(schema).refuse() RETURNS trigger LANGUAGE plpgsql AS $f$
            DECLARE code text;
            BEGIN
                SELECT sqlstate INTO code FROM \(schema).refuse WHERE strpos(NEW.message, matching) > 0 LIMIT 1;
                IF code IS NOT NULL THEN
                    RAISE EXCEPTION 'refused by the test' USING ERRCODE = code;
                END IF;
                RETURN NEW;
            END $f$;
            CREATE TRIGGER refuse BEFORE INSERT ON \(schema).outbox FOR EACH ROW EXECUTE FUNCTION \(schema).refuse();
            """)
    }

    /// Read-only after a failover (25006), a lock timeout (55P03), a full disk (53100): the messages stay queued,
    /// the refusal is reported once, and once the server takes inserts again every message is stored, in order,
    /// and `flush()` says so. Before, each message was dropped with `publishFailed` and `flush()` returned as if it
    /// had been stored.
    @Test(arguments: ["25006", "55P03", "53100"])
    func aRefusalThatCanPassKeepsTheMessagesQueued(sqlState: String) async throws {
        let schema = freshSchema("transient")
        let receiver = try DurableLocal(schema: schema, consumer: "receiver")
        defer { receiver.stop() }
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        await receiver.transport.flush()
        await sender.transport.flush()
        try installRefusal(schema)
        try sql("INSERT INTO \(schema).refuse (sqlstate) VALUES ('\(sqlState)')")
        for index in 0..<20 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        let retrying: (NotificationTransportEvent) -> Bool = {
            $0.kind == .transportError && ($0.error as? PostgresTransportError)?.kind == .insertRetrying
        }
        #expect(await sender.wait { $0.events.contains(where: retrying) })
        try await Task.sleep(for: .milliseconds(300))  // a few retries, refused too
        #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "0")
        try sql("DELETE FROM \(schema).refuse")
        let flushed = await sender.transport.flush()
        #expect(flushed.isComplete)
        #expect(flushed.messagesNotStored == 0)
        #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "20")
        #expect(await receiver.wait { $0.items.count >= 20 })
        #expect(receiver.items.map(\.index) == Array(0..<20))
        #expect(!sender.events.contains { $0.kind == .publishFailed })
        let reports = sender.events.filter(retrying)
        #expect(reports.count == 1)
        #expect((reports.first?.error as? PostgresTransportError)?.serverMessage?.contains(sqlState) == true)
    }

    /// A refusal no retry can fix (a data exception, class 22) drops that message only, reported with
    /// `publishFailed`; `flush()` counts it, and a message `publish` refused (not text) as well.
    @Test func aRefusalOfTheMessageItselfDropsItAndFlushSaysSo() async throws {
        let schema = freshSchema("permanent")
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        await sender.transport.flush()
        try installRefusal(schema)
        try sql("INSERT INTO \(schema).refuse (sqlstate, matching) VALUES ('22023', '\"index\":3,')")
        for index in 0..<6 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        sender.transport.publish(Data([0x7B, 0x00, 0x7D]), on: itemChannel)  // a NUL byte: refused at once
        let flushed = await sender.transport.flush()
        #expect(!flushed.isComplete)
        #expect(!flushed.stopped)
        #expect(flushed.messagesNotStored == 2)
        #expect(flushed.lastError?.kind == .serverRefused)
        #expect(flushed.lastError?.serverMessage?.contains("22023") == true)
        #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "5")
        let failed = sender.events.filter { $0.kind == .publishFailed }
        #expect(failed.count == 2)
        #expect(failed.allSatisfy { $0.channel == itemChannel })
        // The next flush waited for nothing that was refused.
        #expect(await sender.transport.flush().isComplete)
        sender.stop()
        let afterStop = await sender.transport.flush()
        #expect(afterStop.stopped)
        #expect(!afterStop.isComplete)
    }

    // MARK: - Issue 30 item 5: the page read uses the primary key; retention per channel

    /// The page read is planned as a scan of the primary key, in order, without sorting. Before, `ORDER BY txid`
    /// named the output column `txid::text::int8`, so every page read and sorted every row after the position: a
    /// catch-up took time quadratic in the backlog.
    @Test func thePageReadScansThePrimaryKeyInOrderWithoutSorting() async throws {
        let schema = freshSchema("plan")
        let local = try DurableLocal(schema: schema, consumer: "plan")
        defer { local.stop() }
        await local.transport.flush()
        try sql(
            "INSERT INTO \(schema).outbox (channel, message) SELECT '\(itemChannel)', 'm' || i "
                + "FROM generate_series(1, 100000) AS i; ANALYZE \(schema).outbox")
        // The session's prepared read, as the reader runs it.
        let page = DurableReadPageStatement(
            channels: [itemChannel], after: .init(txid: 1, id: 50_000), limit: 500)
        let session = "SET search_path TO \(schema); \(DurableReadPageStatement.prepare.sql); "
        let plan = try sql(session + "EXPLAIN (FORMAT JSON) " + page.execute.sql)
        #expect(!plan.contains("\"Node Type\": \"Sort\""), "\(plan)")
        #expect(plan.contains("\"Index Name\": \"outbox_pkey\""), "\(plan)")
        // The statement still reads the rows after the position, in order.
        let rows = try sql(session + page.execute.sql)  // psql also prints the tags of SET and PREPARE
            .split(separator: "\n").filter { $0.contains("|") }.count
        #expect(rows == 500)
    }

    /// Retention is per channel: a consumer of a quiet channel does not hold back the rows of another channel
    /// (before, the minimum over every consumer and channel did: nothing was deleted), but still holds back its
    /// own channel's rows.
    @Test func aConsumerOfAQuietChannelHoldsBackOnlyItsOwnChannel() async throws {
        let schema = freshSchema("quiet")
        let quiet = try RawDurable(schema: schema, consumer: "quiet")
        defer { quiet.transport.stop() }
        quiet.transport.listen(to: "quiet.channel")
        await quiet.transport.flush()
        let busy = try DurableLocal(schema: schema, consumer: "busy")
        defer { busy.stop() }
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        await busy.transport.flush()
        await sender.transport.flush()
        for index in 0..<10 { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        #expect(await busy.wait { $0.items.count >= 10 })
        await busy.transport.flush()
        // Both consumers of the items' channel (the sender's relay reads them too) have saved a position past them.
        let behind =
            "SELECT count(*) FROM \(schema).consumers WHERE channel = '\(itemChannel)' AND (txid, id) < "
            + "(SELECT txid, id FROM \(schema).outbox ORDER BY txid DESC, id DESC LIMIT 1)"
        #expect(await busy.wait { _ in (try? sql(behind)) == "0" })
        quiet.transport.stop()
        sender.transport.publish(Data("{}".utf8), on: "quiet.channel")
        await sender.transport.flush()
        #expect(try await busy.transport.enforceRetention() == 10)
        #expect(try sql("SELECT string_agg(channel, ',') FROM \(schema).outbox") == "quiet.channel")
    }
}
