import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Ends every client session of the test database but psql's own; returns how many.
func endClientSessions() throws -> Int {
    Int(
        try sql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                + "AND datname = current_database() AND backend_type = 'client backend'")) ?? 0
}

extension PostgresIntegrationTests {
    /// The at-most-once transport under the same treatment: its session ended over and over (each reconnection adds
    /// its listeners again, on connections the server may end at once), it survives and relays again afterwards.
    @Test func aServerEndingAnAtMostOnceRelaysSessionOverAndOverNeverCrashesIt() async throws {
        let peer = try await startPeer("B")
        defer { peer.kill() }
        var terminated = 0
        for _ in 0..<150 {
            terminated += try endClientSessions()  // only the peer's is left
            try await Task.sleep(for: .milliseconds(Int.random(in: 1...20)))
        }
        #expect(terminated >= 10)
        let local = try LocalRelay("A")
        defer { local.stop() }
        await local.transport.flush()
        // The peer reconnects with backoff: ping until one arrives.
        let arrived = await poll(timeout: .seconds(60), every: .milliseconds(200)) {
            PeerHandles.ping.post(center: local.center)
            return peer.lines.contains("ping")
        }
        #expect(arrived, "\(peer.lines.suffix(5))")
        #expect(peer.finish() == 0)  // a trap ends the peer by SIGILL (status 4) or SIGTRAP (5)
        print("server-close test (at most once): \(terminated) sessions ended")
    }
}

extension PostgresIntegrationTests.Durable {
    /// The server ends a consumer's sessions over and over while it reads a backlog page by page. PostgresNIO traps
    /// (a precondition in its row stream) when the server closes a connection while a multi-row result waits for its
    /// consumer's demand; the reader must never leave a page in that state. The consumer runs in a peer process, so a
    /// trap shows as its exit by signal, not as the end of this test run.
    @Test func aServerEndingTheReadersSessionsMidPageNeverCrashesTheConsumer() async throws {
        let schema = freshSchema("closing")
        let count = 60_000
        // Register the consumer's position first, so that everything posted afterwards is its backlog.
        let first = try LineProcess(peerPath, ["durable-consume", schema, "worker"])
        #expect(await first.wait(for: "ready"))
        #expect(first.finish() == 0)
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        await sender.transport.flush()
        for index in 0..<count { sender.post(DurableItem(publisher: "S", stream: 0, index: index)) }
        await sender.transport.flush()
        sender.stop()

        // Pages of 10,000 rows (about 2 MB): more than the socket buffers hold, so the server is still sending a
        // page when its session ends.
        let consumer = try LineProcess(peerPath, ["durable-consume", schema, "worker", "10000"])
        defer { consumer.kill() }
        func received() -> Int { Set(consumer.lines.filter { $0.hasPrefix("item ") }).count }
        // End the consumer's sessions from its start until it has half of the backlog (or 200 times).
        var terminated = 0
        for _ in 0..<200 where received() < count / 2 {
            terminated += try endClientSessions()  // only the consumer's are left
            try await Task.sleep(for: .milliseconds(Int.random(in: 1...20)))
        }
        let complete = await consumer.wait(timeout: .seconds(180)) { lines in
            Set(lines.filter { $0.hasPrefix("item ") }).count >= count
        }
        #expect(complete, "received \(received()) of \(count) after \(terminated) sessions ended")
        #expect(terminated >= 10)
        #expect(consumer.lines.contains { $0.hasPrefix("event reconnected") })
        #expect(consumer.finish() == 0)  // a trap ends the peer by SIGILL (status 4) or SIGTRAP (5)
        print("server-close test: \(terminated) sessions ended, \(received()) of \(count) items")
    }

    /// The page read passes the channel names as escape string literals (an SQL `EXECUTE` takes no bind parameters):
    /// names with quotes, backslashes and `$` are read back exactly, and one never matches another.
    @Test func channelNamesWithQuotesAndBackslashesAreReadBackExactly() async throws {
        let schema = freshSchema("quoted")
        let names = [#"it's"#, #"back\slash"#, #"\'; DROP TABLE outbox; --"#, "$1 $$ \u{00e9}\u{1F600}", "plain"]
        let receiver = try RawDurable(schema: schema, consumer: "receiver")
        defer { receiver.transport.stop() }
        for name in names.dropLast() { receiver.transport.listen(to: name) }
        await receiver.transport.flush()
        let sender = try RawDurable(schema: schema, consumer: "sender")
        defer { sender.transport.stop() }
        for (index, name) in names.enumerated() { sender.transport.publish(Data("{\"n\":\(index)}".utf8), on: name) }
        await sender.transport.flush()
        #expect(await poll(timeout: .seconds(30)) { receiver.messages.count >= names.count - 1 })
        try await Task.sleep(for: .milliseconds(300))  // "plain", not listened to, must not arrive
        let received = receiver.messages.map { "\($0.channel)=\(String(decoding: $0.message, as: UTF8.self))" }
        let expected = names.dropLast().enumerated().map { "\($1)={\"n\":\($0)}" }
        #expect(received == Array(expected))
        #expect(try sql("SELECT count(*) FROM \(schema).outbox") == "\(names.count)")
    }
}
