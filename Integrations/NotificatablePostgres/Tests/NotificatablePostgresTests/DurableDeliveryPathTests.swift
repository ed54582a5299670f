import Foundation
import NotificatablePostgresFixtures
import PostgresNIO
import Testing

@testable import NotificatablePostgres

extension PostgresIntegrationTests.Durable {
    /// A process that sends does not read back what it sends: its relay ignores its own messages, so the `NOTIFY`
    /// of its own insert (carrying its wake token) does not wake its reader. Before, every commit woke the reader of
    /// the sending process too, which doubled the reads on the server and cost the receiver latency.
    @Test func aSendersOwnInsertsDoNotWakeItsReader() async throws {
        let schema = freshSchema("own")
        let sender = try DurableLocal(schema: schema, consumer: "sender") { $0.pollInterval = .seconds(60) }
        defer { sender.stop() }
        let receiver = try DurableLocal(schema: schema, consumer: "receiver") { $0.pollInterval = .seconds(60) }
        defer { receiver.stop() }
        await sender.transport.flush()
        await receiver.transport.flush()
        let roundsBefore = sender.transport.readRounds
        let count = 100
        for index in 0..<count {
            sender.post(DurableItem(publisher: "sender", stream: 0, index: index))
            try await Task.sleep(for: .milliseconds(3))  // one insert (one commit, one NOTIFY) per message
        }
        #expect(await receiver.wait(timeout: .seconds(60)) { $0.items.count >= count })
        #expect(receiver.items.map(\.index) == Array(0..<count))
        let commits = Int(try sql("SELECT count(DISTINCT txid) FROM \(schema).outbox")) ?? 0
        // Enough separate commits that the old transport's one round per commit would show (on a loaded machine the
        // writer batches more of them: 29 transactions for the 100 messages was seen at load 10).
        #expect(commits >= 10, "the messages went in \(commits) transactions")
        // The receiver was woken by the sender's commits; the sender's reader was not (nothing but the sender
        // writes here; a little slack for rounds started by a listen or flush signal arriving late). The old
        // transport ran one round per commit here: 100.
        let senderRounds = sender.transport.readRounds - roundsBefore
        #expect(senderRounds <= 3, "the sender's reader ran \(senderRounds) rounds for \(commits) commits")
        #expect(receiver.transport.readRounds >= 3)
    }

    /// The case where its own wake-up must not be ignored: while the sender's insert is in flight (its transaction
    /// has the older xid), another transaction commits a message. The sender's reader, woken by that commit, cannot
    /// read it yet (it is newer than a transaction still running); the sender's own commit is what makes it
    /// readable, so that wake-up is honoured rather than leaving the message to the poll timer (60 s here).
    @Test func anOwnInsertThatHeldBackAnotherTransactionsMessageStillWakesItsReader() async throws {
        let schema = freshSchema("hold")
        let local = try DurableLocal(schema: schema, consumer: "local") { $0.pollInterval = .seconds(60) }
        defer { local.stop() }
        await local.transport.flush()
        // Inserting a message whose publisher is "slow" takes 1.5 s, after its transaction has taken its xid.
        try sql(
            """
            CREATE FUNCTION \(schema).slow() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_sleep(1.5); RETURN NEW; END $$;
            CREATE TRIGGER slow BEFORE INSERT ON \(schema).outbox FOR EACH ROW
            WHEN (NEW.message LIKE '%"slow"%') EXECUTE FUNCTION \(schema).slow();
            """)
        local.post(DurableItem(publisher: "slow", stream: 0, index: 0))
        try await Task.sleep(for: .milliseconds(300))
        let connection = try await testConnection()
        try await connection.withTransaction(logger: Logger(label: "test")) { connection in
            try await local.transport.post(
                DurableItem(publisher: "other", stream: 0, index: 0), on: DurableHandles.item, in: connection)
        }
        try await connection.close()
        let committedAt = ContinuousClock.now
        // Held back behind the slow insert's transaction, which is still open.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!local.items.contains { $0.publisher == "other" })
        #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "1")
        #expect(await local.wait(timeout: .seconds(20)) { $0.items.contains { $0.publisher == "other" } })
        let waited = ContinuousClock.now - committedAt
        #expect(waited < .seconds(20), "received after \(waited)")
    }

    /// The insert and the read are prepared statements that name the tables without their schema; the transport's
    /// connections find them through their `search_path`. A schema name that needs quoting, next to a transport of
    /// another schema in the same process, still gets its own tables.
    @Test func aSchemaNameThatNeedsQuotingWorksWithThePreparedStatements() async throws {
        let schema = "Odd \"Name\", with spaces " + freshSchema("quoted")
        let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let plain = freshSchema("plain")
        let receiver = try DurableLocal(schema: schema, consumer: "receiver")
        defer { receiver.stop() }
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        let other = try DurableLocal(schema: plain, consumer: "other")
        defer { other.stop() }
        // Not flush(): it would wait for ever if the reads failed. The consumers' positions exist once registered.
        let registered = await poll(timeout: .seconds(30), every: .milliseconds(20)) {
            (try? sql("SELECT count(*) FROM \(quoted).consumers WHERE consumer = 'receiver'")) == "1"
                && (try? sql("SELECT count(*) FROM \(plain).consumers")) == "1"
        }
        try #require(registered, "the consumers did not register")
        for index in 0..<20 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await receiver.wait(timeout: .seconds(30)) { $0.items.count >= 20 })
        #expect(receiver.items.map(\.index) == Array(0..<20))
        #expect(try sql("SELECT count(*) FROM \(quoted).outbox") == "20")
        #expect(try sql("SELECT count(*) FROM \(plain).outbox") == "0")
        #expect(other.items.isEmpty)
        #expect(receiver.events.allSatisfy { $0.kind != .transportError })
        #expect(sender.events.allSatisfy { $0.kind != .transportError && $0.kind != .publishFailed })
    }
}
