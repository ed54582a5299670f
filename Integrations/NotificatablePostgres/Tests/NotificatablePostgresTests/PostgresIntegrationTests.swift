import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import Testing

/// Two relays in two OS processes (this one and notificatable-pg-peer) against the real server that
/// scripts/postgres.sh starts. Serialized: one test stops and starts the server. Each test (the nested suites' too)
/// is cancelled and fails after five minutes, so that a test waiting for good names itself instead of using up CI's
/// time (scripts/postgres.sh stops a run whose threads are blocked for good).
@Suite(
    .serialized, .enabled(if: serverIsConfigured, "needs the server of scripts/postgres.sh"), .timeLimit(.minutes(5)))
struct PostgresIntegrationTests {
    @Test func typedPayloadsCrossBothWaysNeverHandleIncluded() async throws {
        let local = try LocalRelay("A")
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        local.greet(1, "hello from A")
        PeerHandles.ping.post(center: local.center)
        #expect(await peer.wait(for: "greeting A 1 hello from A"))
        #expect(await peer.wait(for: "ping"))

        peer.send("greet 2 hello from B")
        peer.send("ping")
        #expect(await local.wait { $0.greetings.contains(Greeting(text: "hello from B", number: 2, from: "B")) })
        #expect(await local.wait { $0.pings >= 2 })

        // The local subscriber saw A's own post once: the relay did not deliver A's message back to A.
        peer.send("flush")
        #expect(await peer.wait(for: "flushed"))
        await local.transport.flush()
        #expect(local.greetings.filter { $0.from == "A" }.count == 1)
        #expect(local.pings == 2)  // A's own post, B's ping
        #expect(lines(peer, "greeting A").count == 1)  // B received A's greeting once
        #expect(lines(peer, "greeting B").count == 1)  // and saw its own post once, locally, not back from A
        #expect(lines(peer, "ping").count == 2)  // B received A's ping and its own local post
        #expect(local.failures.isEmpty)
        #expect(lines(peer, "failure").isEmpty)
    }

    @Test func tenThousandMessagesFromEachOfTwoSendersArriveCompleteOnceAndInOrder() async throws {
        let count = 10_000
        let local = try LocalRelay("A")
        defer { local.stop() }
        let senders = ["B", "C"]
        var peers: [LineProcess] = []
        defer { peers.forEach { $0.kill() } }
        for name in senders { peers.append(try await startPeer(name)) }
        await local.transport.flush()

        for peer in peers { peer.send("burst \(count)") }
        let complete = await local.wait(timeout: .seconds(300)) { $0.burst.count >= count * senders.count }
        // Let anything extra (a duplicate) arrive before counting.
        for peer in peers {
            peer.send("flush")
            #expect(await peer.wait(for: "flushed"))
        }
        await local.transport.flush()
        #expect(complete)

        let received = local.burst
        #expect(received.count == count * senders.count)
        for sender in senders {
            let indices = received.filter { $0.sender == sender }.map(\.index)
            // Compared as a whole, reported in short: the arrays are too long to print.
            let complete = indices == Array(0..<count)
            let firstOutOfPlace = indices.enumerated().first { $0.offset != $0.element }
            let place = firstOutOfPlace.map { "#\($0.offset) is \($0.element)" } ?? "none"
            #expect(
                complete,
                "sender \(sender): \(indices.count) received, \(Set(indices).count) distinct, first out of place: \(place)"
            )
        }
        #expect(local.events.filter { $0.kind == .messagesMissed || $0.kind == .publishFailed }.isEmpty)
    }

    @Test func anOversizedPayloadIsRefusedClearlyAndTheNextMessageGoesThrough() async throws {
        let local = try LocalRelay("A")
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        local.greet(99, String(repeating: "x", count: 9_000))
        let refusals = local.events.filter { $0.kind == .messageTooLarge }
        #expect(refusals.count == 1)
        let error = try #require(refusals.first?.error as? NotificationRelayError)
        #expect((error.messageSize ?? 0) > 9_000)
        #expect(error.description.contains("7999"))
        #expect(refusals.first?.name?.rawValue == PeerHandles.greeting.name.rawValue)

        local.greet(3, "after the big one")
        #expect(await peer.wait(for: "greeting A 3 after the big one"))
        #expect(lines(peer, "greeting A 99").isEmpty)
    }

    @Test func theTransportRefusesOversizedMessagesItselfAndReportsWhatTheServerRefuses() async throws {
        let recorder = TransportRecorder()
        // A limit above the server's, so that the 9,000-byte message reaches PostgreSQL and is refused there.
        guard var configuration = TestServer.configuration else { throw FixtureError("no server") }
        configuration.maximumPayloadSize = 100_000
        let loose = try PostgresNotificationTransport(configuration: configuration)
        loose.start(handler: recorder.handler)
        defer { loose.stop() }
        loose.listen(to: "oversize-check")
        await loose.flush()
        let big = Data(String(repeating: "é", count: 4_500).utf8)  // 9,000 bytes
        // Three at once: they go as one statement, which the server refuses whole; the transport then sends each
        // alone, so only the big one is lost.
        loose.publish(Data("before".utf8), on: "oversize-check")
        loose.publish(big, on: "oversize-check")
        loose.publish(Data("after".utf8), on: "oversize-check")
        await loose.flush()
        #expect(await recorder.wait { $0.received.count >= 2 })
        #expect(recorder.received == ["before", "after"])
        let refused = try #require(recorder.events.first { $0.kind == .publishFailed })
        let error = try #require(refused.error as? PostgresTransportError)
        #expect(error.kind == .serverRefused)
        #expect(error.serverMessage?.contains("payload string too long") == true)
        #expect(refused.channel == "oversize-check")

        // With the default limit the transport refuses before sending, and says so.
        let strictRecorder = TransportRecorder()
        let strict = try PostgresNotificationTransport(configuration: try #require(TestServer.configuration))
        strict.start(handler: strictRecorder.handler)
        defer { strict.stop() }
        strict.publish(big, on: "oversize-check")
        let tooLarge = try #require(strictRecorder.events.first?.error as? PostgresTransportError)
        #expect(tooLarge.kind == .payloadTooLarge)
        #expect(tooLarge.size == 9_000 && tooLarge.limit == 7_999)
        #expect(tooLarge.description.contains("not sent"))
    }

    @Test func aMalformedMessageFromPsqlIsReportedAndTheRelayGoesOn() async throws {
        let local = try LocalRelay("A")
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()
        let channel = PostgresNotificationTransport.serverChannel(for: PeerHandles.greeting.name.rawValue)

        let notJSON = try TestServer.psql(["-c", #"NOTIFY "\#(channel)", 'this is not a relay message'"#])
        #expect(notJSON.status == 0, "\(notJSON.output)")
        #expect(await local.wait { $0.failures.count >= 1 })

        // A well-formed message whose payload does not decode: "number" is a string.
        let message =
            #"{"version":1,"name":"\#(PeerHandles.greeting.name.rawValue)","sender":"psql","sequence":1,"#
            + #""payload":{"text":"x","number":"seven","from":"psql"}}"#
        let badPayload = try TestServer.psql(["-c", #"NOTIFY "\#(channel)", '\#(message)'"#])
        #expect(badPayload.status == 0, "\(badPayload.output)")
        #expect(await local.wait { $0.failures.count >= 2 })
        let failures = local.failures
        #expect(failures[0].name.rawValue == PeerHandles.greeting.name.rawValue)
        #expect(failures[1].name.rawValue == PeerHandles.greeting.name.rawValue)
        #expect(failures[1].codingPath.map(\.stringValue) == ["number"])
        #expect(failures[1].error is DecodingError)

        peer.send("greet 4 still going")
        #expect(await local.wait { $0.greetings.contains(Greeting(text: "still going", number: 4, from: "B")) })
        #expect(local.greetings.allSatisfy { $0.from != "psql" })
    }

    @Test func theRelayReconnectsAfterTheServerRestartsReportsTheGapAndLaterMessagesArrive() async throws {
        let local = try LocalRelay("A")
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()
        local.greet(1, "before")
        #expect(await peer.wait(for: "greeting A 1 before"))

        // Keep posting while the server goes away and comes back.
        let poster = Task {
            var number = 100
            while !Task.isCancelled {
                local.greet(number, "stream")
                number += 1
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { poster.cancel() }
        try TestServer.server("stop")
        #expect(await local.wait(timeout: .seconds(30)) { $0.events.contains { $0.kind == .connectionLost } })
        #expect(await peer.wait(timeout: .seconds(30)) { $0.contains { $0.hasPrefix("event connectionLost") } })
        try TestServer.server("start")
        #expect(await local.wait(timeout: .seconds(60)) { $0.events.contains { $0.kind == .reconnected } })
        #expect(await peer.wait(timeout: .seconds(60)) { $0.contains { $0.hasPrefix("event reconnected") } })
        poster.cancel()

        // Both listen again: messages posted from now on arrive, both ways.
        await local.transport.flush()
        peer.send("flush")
        #expect(await peer.wait(for: "flushed"))
        local.greet(2, "after")
        #expect(await peer.wait(for: "greeting A 2 after"))
        peer.send("greet 3 back")
        #expect(await local.wait { $0.greetings.contains(Greeting(text: "back", number: 3, from: "B")) })
        let lost = try #require(local.events.first { $0.kind == .connectionLost })
        #expect(lost.error is PostgresTransportError)
    }

    @Test func namesWithQuotesAndSemicolonsRoundTripAndRunNoSQL() async throws {
        try TestServer.psql(["-c", "CREATE TABLE IF NOT EXISTS canary (id int)"])
        let local = try LocalRelay("A")
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        PeerHandles.quoted.post(Greeting(text: "q", number: 7, from: "A"), center: local.center)
        PeerHandles.semicolon.post(Greeting(text: "s", number: 8, from: "A"), center: local.center)
        #expect(await peer.wait(for: "quoted A 7"))
        #expect(await peer.wait(for: "semicolon A 8"))
        peer.send("quoted 9")
        peer.send("semicolon 10")
        #expect(await local.wait { local in local.quoted.contains { $0.from == "B" && $0.number == 9 } })
        #expect(await local.wait { local in local.quoted.contains { $0.from == "B" && $0.number == 10 } })

        let canary = try TestServer.psql(["-tA", "-c", "SELECT to_regclass('canary') IS NOT NULL"])
        #expect(canary.status == 0)
        #expect(canary.output.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
        #expect(local.events.filter { $0.kind == .transportError || $0.kind == .publishFailed }.isEmpty)
        #expect(lines(peer, "event").isEmpty)
    }
}

/// A handler for a transport used without a relay.
final class TransportRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var receivedStorage: [String] = []
    private var eventsStorage: [NotificationTransportEvent] = []

    var handler: NotificationTransportHandler {
        NotificationTransportHandler(
            receive: { [self] message, _ in
                lock.withLock { receivedStorage.append(String(decoding: message, as: UTF8.self)) }
            },
            report: { [self] event in lock.withLock { eventsStorage.append(event) } }
        )
    }

    var received: [String] { lock.withLock { receivedStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }

    func wait(timeout: Duration = .seconds(60), until condition: (TransportRecorder) -> Bool) async -> Bool {
        await poll(timeout: timeout) { condition(self) }
    }
}
