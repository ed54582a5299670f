import Foundation
import InMemoryLogging
import Logging
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle
import Testing

@testable import NotificatablePostgres

/// A billing service that processes ``DurableHandles/item`` and records what it processed, on connections of its own
/// or leased from an application's `PostgresClient` (the connection engine's two sources).
final class OutageBilling: Sendable {
    let label: String
    let processed = Recorded<Int>()
    let events = Recorded<NotificationTransportEvent>()
    let running: RunningGroup

    /// Starts it: `[client, service]` in one group for the client mode, the service alone otherwise.
    init(schema: String, viaClient: Bool) throws {
        label = viaClient ? "client" : "own connections"
        var configuration: DurablePostgresNotificationTransport.Configuration
        var services: [any Service] = []
        if viaClient {
            let client = try testClient(applicationName: freshApplicationName("outage"))
            configuration = DurablePostgresNotificationTransport.Configuration(client: client, consumer: "billing")
            configuration.schema = schema
            configuration.initialReconnectDelay = .milliseconds(50)
            configuration.maximumReconnectDelay = .milliseconds(500)
            configuration.pollInterval = .milliseconds(200)
            configuration.retentionInterval = nil
            // Shorter than the default 10 s, so that a 3-second wait is reported (connectionWaiting) within the test.
            configuration.leaseTimeout = .seconds(1)
            services.append(client)
        } else {
            guard let own = TestServer.durableConfiguration(consumer: "billing", schema: schema) else {
                throw FixtureError("no server configured")
            }
            configuration = own
        }
        let events = self.events
        let service = try PostgresNotificationService(
            configuration: configuration, center: NotificationCenter(), onEvent: { events.append($0) })
        var options = DurableProcessingOptions()
        options.startsAtOldestStored = true
        let processed = self.processed
        service.process(DurableHandles.item, options: options) { item, _ in processed.append(item.index) }
        services.append(service)
        running = RunningGroup(services)
    }

    /// Expects every index in `range` processed within `limit` of `start` (waiting up to 45 s from now).
    func expectCaughtUp(with range: Range<Int>, within limit: Duration, of start: ContinuousClock.Instant) async {
        let caughtUp = await poll(timeout: .seconds(45)) { self.hasProcessed(range) }
        let took = ContinuousClock.now - start
        #expect(caughtUp, "\(label): \(Set(processed.all).count) processed")
        #expect(took < limit, "\(label): caught up \(took) after the server's return")
    }

    /// Whether every index in `range` was processed.
    func hasProcessed(_ range: Range<Int>) -> Bool {
        Set(processed.all).isSuperset(of: range)
    }
}

/// Posts `range` as items on `schema` through a transport of its own, and waits until they are stored.
func postItems(_ range: Range<Int>, schema: String) async throws {
    let poster = try DurableLocal(schema: schema, consumer: "orders")
    defer { poster.stop() }
    for index in range { poster.post(DurableItem(publisher: "orders", stream: 0, index: index)) }
    let flushed = await poster.transport.flush()
    #expect(flushed.isComplete)
}

extension PostgresIntegrationTests {
    /// Database outages under running processors, in both connection modes at once (each on a schema of its own):
    /// every message posted after the server's return is processed within 30 s of it. Before the shared connection
    /// engine bounded its leases, the client mode was stranded for good by a 3-second outage (0 of 200 processed)
    /// and never started when started while the server was down: PostgresNIO's pool left one of the three leases
    /// the service holds (writer, reader, processor) waiting with no timeout.
    @Suite(.serialized) struct Outages {
        /// Starts billing in both modes, waits until they process, then stops the server for `seconds`.
        @Test(arguments: [3, 30])
        func processorsComeBackAfterAnOutage(seconds: Int) async throws {
            let schemas = (freshSchema("outage_client"), freshSchema("outage_own"))
            let billings = [
                try OutageBilling(schema: schemas.0, viaClient: true),
                try OutageBilling(schema: schemas.1, viaClient: false),
            ]
            // The at-most-once transport too: one relay on the app's client, one on a connection of its own.
            let client = try testClient(applicationName: freshApplicationName("outage-relay"))
            let clientRunning = RunningGroup([client])
            let onClient = try LocalRelay("A") { configuration in
                configuration.client = client
                configuration.initialReconnectDelay = .milliseconds(50)
                configuration.maximumReconnectDelay = .milliseconds(500)
            }
            defer { onClient.stop() }
            let ownConnection = try LocalRelay("B") { configuration in
                configuration.initialReconnectDelay = .milliseconds(50)
                configuration.maximumReconnectDelay = .milliseconds(500)
            }
            defer { ownConnection.stop() }
            await onClient.transport.flush()
            await ownConnection.transport.flush()
            try await postItems(0..<20, schema: schemas.0)
            try await postItems(0..<20, schema: schemas.1)
            for billing in billings {
                #expect(await poll(timeout: .seconds(60)) { billing.hasProcessed(0..<20) }, "\(billing.label)")
            }

            try TestServer.server("stop")
            try await Task.sleep(for: .seconds(seconds))
            try TestServer.server("start")
            let back = ContinuousClock.now
            try await postItems(1_000..<1_200, schema: schemas.0)
            try await postItems(1_000..<1_200, schema: schemas.1)
            for billing in billings {
                await billing.expectCaughtUp(with: 1_000..<1_200, within: .seconds(30), of: back)
                #expect(billing.events.all.contains { $0.kind == .connectionLost }, "\(billing.label)")
            }
            // Both relays listen again: what each posts now reaches the other.
            for relay in [onClient, ownConnection] {
                #expect(await relay.wait(timeout: .seconds(30)) { $0.events.contains { $0.kind == .reconnected } })
                await relay.transport.flush()
            }
            onClient.greet(1, "after")
            ownConnection.greet(2, "after")
            #expect(await ownConnection.wait(timeout: .seconds(30)) { $0.greetings.contains { $0.from == "A" } })
            #expect(await onClient.wait(timeout: .seconds(30)) { $0.greetings.contains { $0.from == "B" } })
            for billing in billings { try await billing.running.shutDown() }
            onClient.stop()
            try await clientRunning.shutDown()
        }

        /// Starts billing in both modes while the server is down; it processes once the server is up.
        @Test func processorsStartedWhileTheServerIsDownStartOnceItIsUp() async throws {
            let schemas = (freshSchema("down_client"), freshSchema("down_own"))
            try TestServer.server("stop")
            var billings: [OutageBilling] = []
            do {
                billings = [
                    try OutageBilling(schema: schemas.0, viaClient: true),
                    try OutageBilling(schema: schemas.1, viaClient: false),
                ]
                try await Task.sleep(for: .seconds(3))
            } catch {
                try TestServer.server("start")
                throw error
            }
            try TestServer.server("start")
            let back = ContinuousClock.now
            try await postItems(0..<200, schema: schemas.0)
            try await postItems(0..<200, schema: schemas.1)
            for billing in billings {
                await billing.expectCaughtUp(with: 0..<200, within: .seconds(30), of: back)
                // The outage was reported, not silent: a failed connection, or a lease waited for.
                #expect(
                    billing.events.all.contains {
                        guard let error = $0.error as? PostgresTransportError else { return false }
                        return error.kind == .connectFailed || error.kind == .connectionWaiting
                    }, "\(billing.label)")
            }
            for billing in billings { try await billing.running.shutDown() }
        }

        /// `[client, service]` and `[service, client]` in one `ServiceGroup` both stop within seconds of a graceful
        /// shutdown. The second order stops the client first: the service then cannot reach the server again, says
        /// so (`clientStopped`, an error) and ends, instead of reconnecting for good (it did not exit within 30 s).
        @Test(arguments: [true, false])
        func bothShutdownOrdersEndWithinSeconds(clientFirst: Bool) async throws {
            let schema = freshSchema("order")
            let client = try testClient(applicationName: freshApplicationName("order"))
            var configuration = DurablePostgresNotificationTransport.Configuration(client: client, consumer: "billing")
            configuration.schema = schema
            configuration.pollInterval = .milliseconds(200)
            configuration.retentionInterval = nil
            let events = Recorded<NotificationTransportEvent>()
            let service = try PostgresNotificationService(
                configuration: configuration, center: NotificationCenter(), onEvent: { events.append($0) })
            var options = DurableProcessingOptions()
            options.startsAtOldestStored = true
            let processed = Recorded<Int>()
            service.process(DurableHandles.item, options: options) { item, _ in processed.append(item.index) }
            let running = RunningGroup(clientFirst ? [client, service] : [service, client])
            try await postItems(0..<50, schema: schema)
            #expect(await poll(timeout: .seconds(60)) { Set(processed.all).isSuperset(of: 0..<50) })

            let began = ContinuousClock.now
            let done = Recorded<Bool>()
            let stopping = Task {
                defer { done.append(true) }
                try await running.shutDown()
            }
            let ended = await poll(timeout: .seconds(20)) { done.count > 0 }
            let took = ContinuousClock.now - began
            let kinds = events.all.map {
                "\($0.kind)/\(($0.error as? PostgresTransportError)?.kind.description ?? "-")"
            }
            #expect(ended && took < .seconds(10), "stopping took \(took); events: \(kinds)")
            if !ended { running.task.cancel() }
            _ = try? await stopping.value
            let stopped = events.all.contains { ($0.error as? PostgresTransportError)?.kind == .clientStopped }
            #expect(stopped == !clientFirst)
        }

        /// The PostgresNIO behaviour the engine works around, stand-alone: a `PostgresClient` started while the server
        /// is down, with three leases requested and held. Raw `withConnection` requests are counted and printed for
        /// the record (PostgresNIO 1.33.2 served 2 of 3 in POSTGRES.md's measurement); the same three through the
        /// engine's bounded lease (2 s here) are all served within 30 s of the server's return.
        @Test func threeHeldLeasesAfterAStartWhileDownAreAllServedThroughTheBoundedLease() async throws {
            try TestServer.server("stop")
            let raw = try testClient(applicationName: freshApplicationName("raw-leases"))
            let bounded = try testClient(applicationName: freshApplicationName("bounded-leases"))
            let running = RunningGroup([raw, bounded])
            let rawServed = Recorded<Int>()
            let boundedServed = Recorded<Int>()
            let release = Recorded<Bool>()
            var holders: [Task<Void, Never>] = []
            for index in 0..<3 {
                holders.append(
                    Task {
                        try? await raw.withConnection { _ in
                            rawServed.append(index)
                            while release.count == 0 { try? await Task.sleep(for: .milliseconds(50)) }
                        }
                    })
                holders.append(
                    Task {
                        while boundedServed.all.contains(index) == false && release.count == 0 {
                            try? await PostgresLease.withConnection(from: bounded, timeout: .seconds(2)) { _ in
                                boundedServed.append(index)
                                while release.count == 0 { try? await Task.sleep(for: .milliseconds(50)) }
                            }
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                    })
            }
            try await Task.sleep(for: .seconds(3))
            try TestServer.server("start")
            let allBounded = await poll(timeout: .seconds(30)) { Set(boundedServed.all).count == 3 }
            try await Task.sleep(for: .seconds(2))
            print(
                "outage facts: raw PostgresClient leases served \(Set(rawServed.all).count) of 3, bounded \(Set(boundedServed.all).count) of 3"
            )
            #expect(allBounded, "bounded leases served: \(Set(boundedServed.all).count) of 3")
            release.append(true)
            for holder in holders { holder.cancel() }
            for holder in holders { await holder.value }
            try await running.shutDown()
        }

        /// What an operator reads of a normal run on the app's client: no PostgresNIO warning at the start (the
        /// service leased before the client's `run()` had begun: "`PostgresClient.run()` hasn't been called yet",
        /// once per lease), and one `info` line at a graceful stop.
        @Test func aNormalStartLogsNoPostgresNIOWarningAndAGracefulStopLogsOneInfoLine() async throws {
            let schema = freshSchema("stoplog")
            let logs = InMemoryLogHandler()
            let logger = Logger(label: "test", factory: { _ in logs })
            let environment = ProcessInfo.processInfo.environment
            guard let port = environment["NOTIFICATABLE_PG_PORT"].flatMap(Int.init) else {
                throw FixtureError("no server configured")
            }
            let client = PostgresClient(
                configuration: .init(
                    host: environment["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1", port: port,
                    username: environment["NOTIFICATABLE_PG_USER"] ?? "notificatable", password: nil,
                    database: environment["NOTIFICATABLE_PG_DATABASE"] ?? "postgres", tls: .disable),
                backgroundLogger: logger)
            var configuration = DurablePostgresNotificationTransport.Configuration(client: client, consumer: "billing")
            configuration.schema = schema
            configuration.pollInterval = .milliseconds(200)
            configuration.retentionInterval = nil
            let service = try PostgresNotificationService(
                configuration: configuration, center: NotificationCenter(), logger: logger)
            let processed = Recorded<Int>()
            service.process(DurableHandles.item) { item, _ in processed.append(item.index) }
            let running = RunningGroup([client, service])
            try await postItems(0..<10, schema: schema)
            #expect(await poll(timeout: .seconds(60)) { Set(processed.all).isSuperset(of: 0..<10) })
            try await running.shutDown()

            let entries = logs.entries
            #expect(!entries.contains { "\($0.message)".contains("hasn't been called yet") })
            let stops = entries.filter { $0.metadata["notificatable.event"] == "stopped" }
            #expect(stops.count == 1)
            #expect(stops.first?.level == .info)
            #expect(stops.first?.metadata["notificatable.handlers"] == "1")
        }
    }
}
