import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import Testing

/// Whether scripts/postgres.sh started a server for these tests.
let serverIsConfigured = TestServer.configuration != nil

/// The peer executable: NOTIFICATABLE_PG_PEER, or beside the test bundle.
var peerPath: String {
    if let path = TestServer.path("NOTIFICATABLE_PG_PEER") { return path }
    return Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("notificatable-pg-peer").path
        ?? "notificatable-pg-peer"
}

/// Starts a peer process running a relay named `name` (with `options` such as `--key ID:BASE64`), and waits until
/// it listens.
func startPeer(_ name: String, _ options: [String] = []) async throws -> LineProcess {
    let peer = try LineProcess(peerPath, ["relay", name] + options)
    guard await peer.wait(for: "ready") else {
        peer.kill()
        throw FixtureError("peer \(name) did not get ready: \(peer.lines)")
    }
    return peer
}

/// The relay of the test process: a fresh center, a PostgreSQL transport, the peer handles forwarded, and a record
/// of what arrived and what was reported.
final class LocalRelay: @unchecked Sendable {
    let name: String
    let center = NotificationCenter()
    let transport: PostgresNotificationTransport
    private(set) var relay: NotificationRelay?
    private let lock = NSLock()
    private var greetingsStorage: [Greeting] = []
    private var quotedStorage: [Greeting] = []
    private var pingsStorage = 0
    private var burstStorage: [BurstItem] = []
    private var eventsStorage: [NotificationTransportEvent] = []
    private var failuresStorage: [NotificationDecodingFailure] = []
    private var subscriptions: [Disposable] = []

    init(
        _ name: String, authenticator: (any NotificationMessageAuthenticator)? = nil,
        configure: (inout PostgresNotificationTransport.Configuration) -> Void = { _ in }
    ) throws {
        guard var configuration = TestServer.configuration else { throw FixtureError("no server configured") }
        configure(&configuration)
        self.name = name
        transport = try PostgresNotificationTransport(configuration: configuration)
        let relay = NotificationRelay(
            transport: transport, center: center, authenticator: authenticator,
            onEvent: { [weak self] event in self?.lock.withLock { self?.eventsStorage.append(event) } },
            onFailure: { [weak self] failure in self?.lock.withLock { self?.failuresStorage.append(failure) } }
        )
        self.relay = relay
        for handle in [PeerHandles.greeting, PeerHandles.quoted, PeerHandles.semicolon] {
            relay.forward(handle)
        }
        relay.forward(PeerHandles.ping)
        relay.forward(PeerHandles.burst)
        subscriptions = [
            PeerHandles.greeting.subscribe(center: center) { [weak self] note in
                self?.lock.withLock { self?.greetingsStorage.append(note.userInfo) }
            },
            PeerHandles.quoted.subscribe(center: center) { [weak self] note in
                self?.lock.withLock { self?.quotedStorage.append(note.userInfo) }
            },
            PeerHandles.semicolon.subscribe(center: center) { [weak self] note in
                self?.lock.withLock { self?.quotedStorage.append(note.userInfo) }
            },
            PeerHandles.ping.subscribe(center: center) { [weak self] _ in
                self?.lock.withLock { self?.pingsStorage += 1 }
            },
            PeerHandles.burst.subscribe(center: center) { [weak self] note in
                self?.lock.withLock { self?.burstStorage.append(note.userInfo) }
            },
        ]
    }

    var greetings: [Greeting] { lock.withLock { greetingsStorage } }
    var quoted: [Greeting] { lock.withLock { quotedStorage } }
    var pings: Int { lock.withLock { pingsStorage } }
    var burst: [BurstItem] { lock.withLock { burstStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }
    var failures: [NotificationDecodingFailure] { lock.withLock { failuresStorage } }

    func greet(_ number: Int, _ text: String = "hello") {
        PeerHandles.greeting.post(Greeting(text: text, number: number, from: name), center: center)
    }

    /// Waits until `condition` holds, for at most `timeout`; returns whether it holds.
    @discardableResult
    func wait(timeout: Duration = .seconds(60), until condition: (LocalRelay) -> Bool) async -> Bool {
        await poll(timeout: timeout) { condition(self) }
    }

    func stop() {
        relay?.stop()
        relay = nil
        lock.withLock { subscriptions }.forEach { $0.dispose() }
    }
}

/// The peer's output lines that start with `prefix`.
func lines(_ peer: LineProcess, _ prefix: String) -> [String] {
    peer.lines.filter { $0.hasPrefix(prefix) }
}
