import Foundation
import Testing

@testable import NotificatablePostgres

/// The parts that need no server: channel names, the statements, the outgoing queue.
@Suite struct ChannelNameAndQueueTests {
    @Test func plainNamesAreTheirOwnChannel() {
        #expect(PostgresNotificationTransport.serverChannel(for: "OrderShipped") == "OrderShipped")
        // Quotes other than ", semicolons, spaces and backslashes are literal inside "…": kept.
        #expect(PostgresNotificationTransport.serverChannel(for: "it's; DROP TABLE x; --") == "it's; DROP TABLE x; --")
        let longest = String(repeating: "é", count: 31) + "a"  // 63 bytes
        #expect(PostgresNotificationTransport.serverChannel(for: longest) == longest)
    }

    @Test func namesPostgresNIOCannotQuoteAreReplacedByAPrefixAndTheirHash() {
        let quoted = #"Order "A"; DROP TABLE canary; --"#
        let channel = PostgresNotificationTransport.serverChannel(for: quoted)
        let hash = PostgresChannelName.hexadecimal(PostgresChannelName.fnv1a64(quoted.utf8))
        #expect(channel == "Order A; DROP TABLE canary; --#" + hash)
        let long = String(repeating: "x", count: 64)
        #expect(PostgresNotificationTransport.serverChannel(for: long).utf8.count == 63)
        for name in ["", "a\u{0}b", long, String(repeating: "\"é", count: 40)] {
            let channel = PostgresNotificationTransport.serverChannel(for: name)
            #expect(channel.utf8.count <= 63, "\(name.debugDescription)")
            #expect(!channel.contains("\"") && !channel.utf8.contains(0), "\(name.debugDescription)")
            #expect(channel.hasSuffix("#" + PostgresChannelName.hexadecimal(PostgresChannelName.fnv1a64(name.utf8))))
        }
        #expect(PostgresNotificationTransport.serverChannel(for: "") == "#cbf29ce484222325")
        // Distinct names, distinct channels; the same name, the same channel in every process.
        #expect(
            PostgresNotificationTransport.serverChannel(for: #"a"b"#)
                != PostgresNotificationTransport.serverChannel(for: #"a""b"#))
    }

    @Test func fnv1aMatchesItsReferenceValues() {
        // The published test vectors of FNV-1a 64, so that a service in another language can check its own.
        #expect(PostgresChannelName.fnv1a64("".utf8) == 0xcbf2_9ce4_8422_2325)
        #expect(PostgresChannelName.fnv1a64("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(PostgresChannelName.fnv1a64("foobar".utf8) == 0x8594_4171_f739_67e8)
        #expect(PostgresChannelName.hexadecimal(0xab) == "00000000000000ab")
    }

    @Test func identifiersAreQuotedByDoublingQuotes() {
        #expect(PostgresChannelName.quotedIdentifier(#"a"b"#) == #""a""b""#)
        #expect(PostgresChannelName.quotedIdentifier("x; y") == #""x; y""#)
    }

    @Test func messagesAreBoundParametersNeverSQLText() {
        let one = PostgresNotificationTransport.notifyQuery([("chan", "'; DROP TABLE x; --")])
        #expect(one.sql == "SELECT pg_notify($1, $2)")
        #expect(one.binds.count == 2)
        #expect(!one.sql.contains("DROP"))
        let many = PostgresNotificationTransport.notifyQuery([("a", "1"), ("b", "2"), ("a", "3")])
        #expect(many.binds.count == 2)
        #expect(many.sql.contains("pg_notify(c, p)") && many.sql.contains("unnest($1::text[], $2::text[])"))
    }

    @Test func batchesStopAtBarriersAndRepeatedMessages() throws {
        var queue = OutgoingQueue()
        for payload in ["1", "2", "1", "3"] { queue.append(.message(serverChannel: "c", payload: payload)) }
        queue.append(.message(serverChannel: "d", payload: "3"))
        #expect(queue.messageCount == 5)
        // "1" again on "c" would be collapsed by PostgreSQL within one transaction: the batch ends before it.
        guard case .messages(let first)? = queue.takeBatch(maximumCount: 10) else {
            Issue.record("expected messages")
            return
        }
        #expect(first.map(\.payload) == ["1", "2"])
        guard case .messages(let second)? = queue.takeBatch(maximumCount: 2) else {
            Issue.record("expected messages")
            return
        }
        #expect(second.map(\.payload) == ["1", "3"])
        #expect(queue.messageCount == 1)
        guard case .messages(let third)? = queue.takeBatch(maximumCount: 10) else {
            Issue.record("expected messages")
            return
        }
        #expect(third.map(\.serverChannel) == ["d"])
        #expect(queue.isEmpty && queue.takeBatch(maximumCount: 10) == nil)
    }
}
