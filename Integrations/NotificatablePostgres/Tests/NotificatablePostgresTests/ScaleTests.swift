import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import Testing

/// A gate that a subscriber waits at until the test opens it.
final class Gate: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var waitersStorage = 0

    /// How many callers have reached the gate.
    var waiters: Int { lock.withLock { waitersStorage } }

    /// Blocks until ``open()``.
    func pass() {
        lock.withLock { waitersStorage += 1 }
        semaphore.wait()
        semaphore.signal()
    }

    func open() { semaphore.signal() }
}

/// A relay whose burst subscriber blocks, on the transport's delivery thread, at the first message until the test
/// opens the gate.
final class BlockedRelay: @unchecked Sendable {
    let center = NotificationCenter()
    let transport: PostgresNotificationTransport
    let gate = Gate()
    private var relay: NotificationRelay?
    private var subscription: Disposable?
    private let lock = NSLock()
    private var indicesStorage: [Int] = []
    private var eventsStorage: [NotificationTransportEvent] = []

    init(configure: (inout PostgresNotificationTransport.Configuration) -> Void = { _ in }) throws {
        guard var configuration = TestServer.configuration else { throw FixtureError("no server configured") }
        configure(&configuration)
        transport = try PostgresNotificationTransport(configuration: configuration)
        let relay = NotificationRelay(
            transport: transport, center: center,
            onEvent: { [weak self] event in self?.lock.withLock { self?.eventsStorage.append(event) } })
        relay.forward(PeerHandles.burst)
        subscription = PeerHandles.burst.subscribe(center: center) { [weak self] note in
            guard let self else { return }
            let first = lock.withLock {
                indicesStorage.append(note.userInfo.index)
                return indicesStorage.count == 1
            }
            if first { gate.pass() }
        }
        self.relay = relay
    }

    var indices: [Int] { lock.withLock { indicesStorage } }
    var events: [NotificationTransportEvent] { lock.withLock { eventsStorage } }

    func transportErrors(_ kind: PostgresTransportError.Kind) -> [PostgresTransportError] {
        events.compactMap { $0.error as? PostgresTransportError }.filter { $0.kind == kind }
    }

    /// Waits until `condition` holds, for at most `timeout`.
    func wait(timeout: Duration = .seconds(120), until condition: (BlockedRelay) -> Bool) async -> Bool {
        await poll(timeout: timeout, every: .milliseconds(10)) { condition(self) }
    }

    func stop() {
        gate.open()
        relay?.stop()
        relay = nil
        subscription?.dispose()
    }
}

/// Issue 23: a slow subscriber, and a listener elsewhere that stops reading. In the serialized suite, since one of its
/// tests stops the server.
extension PostgresIntegrationTests {
    @Test func aSubscriberBlockingTheDeliveryThreadDoesNotStopTheReaderAndNothingIsLost() async throws {
        let count = 5_000
        let local = try BlockedRelay()
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        peer.send("burst \(count)")
        // The subscriber is blocked at the first message; the transport still reads every other one off the socket.
        let readWhileBlocked = await local.wait { $0.transport.receiveStatistics.received >= count }
        #expect(readWhileBlocked, "read \(local.transport.receiveStatistics.received) of \(count) while blocked")
        #expect(local.gate.waiters == 1)
        let whileBlocked = local.transport.receiveStatistics
        #expect(whileBlocked.delivered <= 1)
        #expect(whileBlocked.buffered >= count - 1)
        #expect(whileBlocked.bufferedBytes > 0)

        local.gate.open()
        #expect(await local.wait { $0.indices.count >= count })
        #expect(local.indices == Array(0..<count))
        let after = local.transport.receiveStatistics
        #expect(after.received == count && after.delivered == count)
        #expect(after.dropped == 0 && after.buffered == 0 && after.bufferedBytes == 0)
        #expect(local.transportErrors(.receiveBufferFull).isEmpty)
        #expect(local.events.filter { $0.kind == .messagesMissed }.isEmpty)
    }

    @Test func aFullReceiveBufferDropsCountsAndReportsOnceThenTheRestIsDelivered() async throws {
        let count = 1_000
        let limit = 4_000  // bytes: some 25 relay messages of a BurstItem
        let local = try BlockedRelay { $0.maximumReceiveBufferBytes = limit }
        defer { local.stop() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        peer.send("burst \(count)")
        #expect(await local.wait { $0.transport.receiveStatistics.received >= count })
        let whileBlocked = local.transport.receiveStatistics
        #expect(whileBlocked.bufferedBytes <= limit)
        #expect(whileBlocked.dropped == count - whileBlocked.buffered)
        // Reported once, when the bound was first hit, not per dropped message.
        let full = local.transportErrors(.receiveBufferFull)
        #expect(full.count == 1)
        #expect(full.first?.limit == limit)
        #expect(local.transportErrors(.messagesDropped).isEmpty)

        local.gate.open()
        #expect(await local.wait { $0.transport.receiveStatistics.buffered == 0 })
        let after = local.transport.receiveStatistics
        #expect(after.delivered + after.dropped == count)
        #expect(after.dropped == whileBlocked.dropped)
        #expect(local.indices.count == after.delivered)
        #expect(local.indices == local.indices.sorted() && Set(local.indices).count == local.indices.count)
        // When the relay has caught up: how many were dropped.
        #expect(await local.wait { $0.transportErrors(.messagesDropped).count == 1 })
        #expect(local.transportErrors(.messagesDropped).first?.count == after.dropped)
        #expect(local.transportErrors(.receiveBufferFull).count == 1)
    }

    @Test func aListenerThatStopsReadingIsReportedOnceAndAgainWhenTheQueueDrains() async throws {
        guard let psqlPath = TestServer.path("NOTIFICATABLE_PG_PSQL") else { throw FixtureError("no psql") }
        let local = try LocalRelay("A") {
            $0.notificationQueueCheckInterval = .milliseconds(50)
            // One page of the 8 GB queue is about 1e-6 of it; PostgreSQL 15 cannot make the queue smaller.
            $0.notificationQueueUsageThreshold = 0.000_001
        }
        defer { local.stop() }
        await local.transport.flush()
        let queueEvents = { (kind: PostgresTransportError.Kind) in
            local.events.filter { $0.kind == .transportError }.compactMap { $0.error as? PostgresTransportError }
                .filter { $0.kind == kind }
        }

        // A session that listens, then sits in an open transaction: it reads no notification until it commits, so
        // it holds the queue's tail where it was.
        let stuck = try LineProcess(psqlPath, ["-q"])
        defer { stuck.kill() }
        stuck.send("LISTEN scale_stuck;")
        stuck.send("BEGIN;")
        stuck.send("SELECT 1;")
        let idleInTransaction = { () throws -> Bool in
            let result = try TestServer.psql([
                "-tA", "-c", "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'",
            ])
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        #expect(await local.wait { _ in (try? idleInTransaction()) ?? false })
        #expect(queueEvents(.notificationQueueFilling).isEmpty)

        // Some 60 kB of notifications (on any channel: the queue is shared) fill a few of its pages.
        let fill = try TestServer.psql([
            "-tA", "-c", "SELECT count(pg_notify('scale_fill', repeat('x', 100) || i)) FROM generate_series(1, 500) i",
        ])
        #expect(fill.status == 0)
        #expect(await local.wait { _ in !queueEvents(.notificationQueueFilling).isEmpty })
        let filling = queueEvents(.notificationQueueFilling)
        #expect(filling.count == 1)
        #expect((filling.first?.queueUsage ?? 0) >= 0.000_001)
        #expect(filling.first?.queueUsageThreshold == 0.000_001)

        // The session commits and leaves: its backend reads and unregisters, the tail moves, the usage falls to 0.
        stuck.send("COMMIT;")
        #expect(stuck.finish() == 0)
        #expect(await local.wait { _ in !queueEvents(.notificationQueueBelowThreshold).isEmpty })
        // A few more checks: nothing new is reported while the usage stays where it is.
        try await Task.sleep(for: .milliseconds(300))
        #expect(queueEvents(.notificationQueueFilling).count == 1)
        let below = queueEvents(.notificationQueueBelowThreshold)
        #expect(below.count == 1)
        #expect((below.first?.queueUsage ?? 1) < 0.000_001)
        #expect(local.events.allSatisfy { $0.kind == .transportError })
    }
}

extension PostgresIntegrationTests {
    /// Where subscribers without a queue run: the transport's delivery queue by default, the connection's event loop
    /// with `deliversOnEventLoop`.
    @Test(arguments: [false, true])
    func receivedMessagesAreHandedOverOnTheDeliveryQueueOrTheEventLoop(onEventLoop: Bool) async throws {
        let local = try LocalRelay("A") { $0.deliversOnEventLoop = onEventLoop }
        defer { local.stop() }
        let threadNames = ThreadNames()
        let subscription = PeerHandles.greeting.subscribe(center: local.center) { _ in
            threadNames.append(Thread.current.name ?? "")
        }
        defer { subscription.dispose() }
        let peer = try await startPeer("B")
        defer { peer.kill() }
        await local.transport.flush()

        for number in 1...3 { peer.send("greet \(number) hi") }
        #expect(await local.wait { $0.greetings.count >= 3 })
        #expect(local.greetings.map(\.number) == [1, 2, 3])
        // The center calls its observers in no fixed order on Linux, and the delivery is counted once all returned:
        // wait for this test's subscriber and the count, not only for the relay's recorder.
        #expect(
            await poll(timeout: .seconds(10)) {
                let statistics = local.transport.receiveStatistics
                return threadNames.names.count >= 3 && statistics.delivered >= 3
            })
        let names = threadNames.names
        #expect(names.count == 3)
        // SwiftNIO names its event loop threads "NIO-…"; the delivery queue's threads are Dispatch's.
        #expect(names.allSatisfy { $0.hasPrefix("NIO-") } == onEventLoop, "threads: \(names)")
        let statistics = local.transport.receiveStatistics
        #expect(statistics.received == statistics.delivered && statistics.dropped == 0)
    }
}

/// The names of the threads a subscriber ran on.
final class ThreadNames: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []

    func append(_ name: String) { lock.withLock { storage.append(name) } }
    var names: [String] { lock.withLock { storage } }
}
