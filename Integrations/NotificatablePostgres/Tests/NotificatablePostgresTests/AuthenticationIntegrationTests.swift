import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import Testing

/// Authenticated relays against the real server of scripts/postgres.sh: processes that share a key talk, and
/// everything else that reaches the server (a process with another key, one with none, `NOTIFY` typed into psql) is
/// refused and reported by them.
///
/// Part of the serialized PostgresIntegrationTests suite: its other tests send on the same channels, and one of them
/// stops the server, so nothing else may run meanwhile.
extension PostgresIntegrationTests {
    @Test func processesSharingAKeyTalkAndEverythingElseIsRefusedAndReported() async throws {
        let k1 = PeerKeys.TestKey(id: "k1", seed: 1)
        let k2 = PeerKeys.TestKey(id: "k2", seed: 2)
        // The id of k1 with another secret: an impostor who guessed the id.
        let wrongK1 = PeerKeys.TestKey(id: "k1", seed: 99)
        // A signs with k1, B with k2 (a rotation in progress): each accepts both.
        let local = try LocalRelay("A", authenticator: try PeerKeys.authenticator([k1, k2]))
        defer { local.stop() }
        let peer = try await startPeer("B", PeerKeys.arguments([k2, k1]))
        defer { peer.kill() }
        let impostor = try await startPeer("C", PeerKeys.arguments([wrongK1]))
        defer { impostor.kill() }
        let plain = try await startPeer("D")
        defer { plain.kill() }
        await local.transport.flush()
        let channel = PostgresNotificationTransport.serverChannel(for: PeerHandles.greeting.name.rawValue)
        let refusedByPeer = "event unauthenticatedMessage"

        // The two that share the keys talk, typed, both ways.
        local.greet(1, "from A")
        #expect(await peer.wait(for: "greeting A 1 from A"))
        peer.send("greet 2 from B")
        #expect(await local.wait { $0.greetings.contains(Greeting(text: "from B", number: 2, from: "B")) })
        // The impostor cannot open A's message; the relay without a key reads it as malformed. Neither posts it.
        #expect(await impostor.wait { $0.contains { $0.hasPrefix(refusedByPeer) } })
        #expect(await plain.wait(for: "failure malformedMessage \(PeerHandles.greeting.name.rawValue) -"))

        // A process with the right key id and the wrong secret posts: refused by both, as an invalid tag.
        impostor.send("greet 3 from C")
        #expect(await local.wait { $0.refusals.count >= 1 })
        #expect(local.refusals.last?.kind == .invalidTag)
        #expect(local.refusals.last?.keyID == "k1")
        // A process without a key posts plain messages: refused by both, as unsigned.
        plain.send("greet 4 from D")
        #expect(await local.wait { $0.refusals.count >= 2 })
        #expect(local.refusals.last?.kind == .missingTag)

        // Anyone who can connect: a well-formed but unsigned message, and one with a made-up tag.
        let message =
            #"{"version":1,"name":"\#(PeerHandles.greeting.name.rawValue)","sender":"psql","sequence":1,"#
            + #""payload":{"text":"forged","number":5,"from":"psql"}}"#
        let unsigned = try TestServer.psql(["-c", "SELECT pg_notify($$\(channel)$$, $$\(message)$$)"])
        #expect(unsigned.status == 0, "\(unsigned.output)")
        #expect(await local.wait { $0.refusals.count >= 3 })
        #expect(local.refusals.last?.kind == .missingTag)
        let madeUpTag = "hmac-sha256:k1:" + String(repeating: "A", count: 43) + "="
        let forged = try TestServer.psql([
            "-c", "SELECT pg_notify($$\(channel)$$, $$\(madeUpTag)$$ || chr(10) || $$\(message)$$)",
        ])
        #expect(forged.status == 0, "\(forged.output)")
        #expect(await local.wait { $0.refusals.count >= 4 })
        #expect(local.refusals.last?.kind == .invalidTag)

        // A message signed inside PostgreSQL with pgcrypto, from the documented framing alone, is accepted by both.
        try TestServer.psql(["-c", "CREATE EXTENSION IF NOT EXISTS pgcrypto"])
        let signedMessage = message.replacingOccurrences(of: "forged", with: "signed in SQL")
            .replacingOccurrences(of: "psql", with: "sql")
        let secret = k1.secret.map { String(format: "%02x", $0) }.joined()
        let signed = try TestServer.psql([
            "-c",
            """
            SELECT pg_notify($$\(channel)$$, 'hmac-sha256:k1:'
                || encode(hmac(convert_to(m, 'UTF8'), decode('\(secret)', 'hex'), 'sha256'), 'base64')
                || chr(10) || m)
            FROM (SELECT $$\(signedMessage)$$ AS m) AS message
            """,
        ])
        #expect(signed.status == 0, "\(signed.output)")
        #expect(await local.wait { $0.greetings.contains(Greeting(text: "signed in SQL", number: 5, from: "sql")) })
        #expect(await peer.wait(for: "greeting sql 5 signed in SQL"))

        // B refused the same four, and nothing unauthenticated was posted anywhere.
        #expect(await peer.wait { $0.filter { $0.hasPrefix(refusedByPeer) }.count >= 4 })
        peer.send("flush")
        #expect(await peer.wait(for: "flushed"))
        await local.transport.flush()
        #expect(Set(local.greetings.map(\.from)) == ["A", "B", "sql"])
        #expect(lines(peer, "greeting").allSatisfy { ["A", "B", "sql"].contains($0.split(separator: " ")[1]) })
        #expect(lines(peer, refusedByPeer).count == 4)
        #expect(lines(impostor, "greeting A").isEmpty && lines(plain, "greeting A").isEmpty)
        #expect(local.refusals.count == 4)
        #expect(local.failures.isEmpty)
        #expect(lines(peer, "failure").isEmpty)
        #expect(
            local.events.allSatisfy { $0.kind == .unauthenticatedMessage && $0.name == nil && $0.channel == channel })
    }
}

extension LocalRelay {
    /// The authenticator's errors of the messages this relay refused, in order.
    var refusals: [MessageAuthenticationError] {
        events.filter { $0.kind == .unauthenticatedMessage }.compactMap { $0.error as? MessageAuthenticationError }
    }
}
