import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle
import Testing

/// A thread-safe list, for what handlers and event callbacks record.
final class Recorded<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []

    func append(_ element: Element) { lock.withLock { storage.append(element) } }
    var all: [Element] { lock.withLock { storage } }
    var count: Int { lock.withLock { storage.count } }
}

/// A service of the app that does nothing but wait for graceful shutdown, to stand beside the notification service.
struct IdleApp: Service {
    func run() async throws { try? await gracefulShutdown() }
}

/// A `ServiceGroup` running `services` in a task, shut down gracefully by ``shutDown()``.
final class RunningGroup: Sendable {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    init(_ services: [any Service]) {
        let group = ServiceGroup(services: services, logger: Logger(label: "test-group"))
        self.group = group
        self.task = Task { try await group.run() }
    }

    func shutDown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

extension PostgresIntegrationTests.Durable {
    /// A notification service of the test server under `consumer` in `schema`.
    func service(
        _ schema: String, consumer: String, authenticator: (any NotificationMessageAuthenticator)? = nil,
        events: Recorded<NotificationTransportEvent>? = nil,
        configure: (inout DurablePostgresNotificationTransport.Configuration) -> Void = { _ in }
    ) throws -> PostgresNotificationService {
        guard var configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
            throw FixtureError("no server configured")
        }
        configuration.authenticator = authenticator
        configure(&configuration)
        var onEvent: (@Sendable (NotificationTransportEvent) -> Void)?
        if let events { onEvent = { events.append($0) } }
        return try PostgresNotificationService(
            configuration: configuration, center: NotificationCenter(), onEvent: onEvent)
    }

    @Test(arguments: [false, true])
    func gracefulShutdownMidStreamLosesNothingWithTheServiceFirstOrLast(serviceLast: Bool) async throws {
        let schema = freshSchema("order")
        let count = 300
        let handled = Recorded<Int>()
        // Small pages: the reader saves (so waits for the handler) every ten messages, and most stay in the outbox.
        let first = try service(schema, consumer: "billing") { $0.pageSize = 10 }
        first.receive(DurableHandles.item) { item in
            try? await Task.sleep(for: .milliseconds(2))
            handled.append(item.index)
        }
        await first.transport.flush()
        let publisher = try service(schema, consumer: "orders")
        publisher.send(DurableHandles.item)
        let running = RunningGroup(serviceLast ? [IdleApp(), first, publisher] : [publisher, first, IdleApp()])
        for index in 0..<count {
            DurableHandles.item.post(
                DurableItem(publisher: "orders", stream: 0, index: index), center: publisher.center)
        }
        await publisher.transport.flush()
        #expect(await poll(timeout: .seconds(60)) { handled.count >= 50 })
        try await running.shutDown()  // mid-stream: most items are still in the outbox
        let firstCount = handled.count
        #expect(firstCount < count, "the shutdown came too late to test anything")

        let second = try service(schema, consumer: "billing")
        second.receive(DurableHandles.item) { item in handled.append(item.index) }
        let again = RunningGroup([second])
        let complete = await poll(timeout: .seconds(60)) { Set(handled.all).count == count }
        try await again.shutDown()
        #expect(complete, "\(count - Set(handled.all).count) of \(count) never handled (\(firstCount) before the stop)")
    }

    @Test func aReceiverWithAWrongKeyRefusesAndReportsEveryMessageAndReceivesThemOnceGivenTheRightKey() async throws {
        let schema = freshSchema("wrongkey")
        let right = try PeerKeys.authenticator([PeerKeys.TestKey(id: "2026-11", seed: 1)])
        let wrong = try PeerKeys.authenticator([PeerKeys.TestKey(id: "2026-11", seed: 2)])
        let events = Recorded<NotificationTransportEvent>()
        let received = Recorded<Int>()
        let misconfigured = try service(schema, consumer: "billing", authenticator: wrong, events: events)
        misconfigured.receive(DurableHandles.item) { item in received.append(item.index) }
        await misconfigured.transport.flush()
        let running = RunningGroup([misconfigured])

        let publisher = try service(schema, consumer: "orders", authenticator: right)
        publisher.send(DurableHandles.item)
        for index in 0..<20 {
            DurableHandles.item.post(
                DurableItem(publisher: "orders", stream: 0, index: index), center: publisher.center)
        }
        await publisher.transport.flush()
        let refused = { events.all.filter { $0.kind == .unauthenticatedMessage }.count }
        #expect(await poll(timeout: .seconds(60)) { refused() >= 20 })
        try await running.shutDown()
        #expect(refused() == 20)
        #expect(received.count == 0)
        #expect(events.all.filter { $0.kind == .unauthenticatedMessage }.allSatisfy { $0.severity == .error })

        let fixed = try service(schema, consumer: "billing", authenticator: right)
        fixed.receive(DurableHandles.item) { item in received.append(item.index) }
        let again = RunningGroup([fixed])
        #expect(await poll(timeout: .seconds(60)) { Set(received.all) == Set(0..<20) })
        try await again.shutDown()
        publisher.relay.stop()
    }

    @Test func aServiceStartedWithNothingToReceiveOrSendSaysSoOnce() async throws {
        let schema = freshSchema("idle")
        let events = Recorded<NotificationTransportEvent>()
        let idle = try service(schema, consumer: "idle", events: events)
        let running = RunningGroup([idle])
        #expect(await poll(timeout: .seconds(30)) { events.all.contains { $0.kind == .nothingForwarded } })
        try await running.shutDown()
        let reports = events.all.filter { $0.kind == .nothingForwarded }
        #expect(reports.count == 1)
        #expect(reports.first?.severity == .warning)
    }

    @Test func theDefaultEventHandlerLogsEveryEventAtItsLevelWithItsMetadata() async throws {
        let schema = freshSchema("logging")
        let logs = InMemoryLogHandler()
        guard let configuration = TestServer.durableConfiguration(consumer: "billing", schema: schema) else {
            throw FixtureError("no server configured")
        }
        let logger = Logger(label: "test", factory: { _ in logs })
        let holder = try DurablePostgresNotificationTransport(configuration: configuration, logger: logger)
        let first = NotificationRelay(transport: holder, center: NotificationCenter())  // no onEvent: the logger
        first.forward(DurableHandles.item)
        await holder.flush()
        let standby = try DurablePostgresNotificationTransport(configuration: configuration, logger: logger)
        let second = NotificationRelay(transport: standby, center: NotificationCenter())
        second.forward(DurableHandles.item)
        let big = DurableItem(publisher: "p", stream: 0, index: 0, blob: String(repeating: "x", count: 2_000_000))
        DurableHandles.item.post(big, center: first.center)
        let entries = { logs.entries }
        #expect(
            await poll(timeout: .seconds(30)) {
                entries().contains { $0.metadata["notificatable.error"] == "consumerInUse" }
            })
        first.stop()
        #expect(
            await poll(timeout: .seconds(30)) {
                entries().contains { $0.metadata["notificatable.error"] == "consumerTakenOver" }
            })
        second.stop()
        let tooLarge = entries().first { $0.metadata["notificatable.event"] == "messageTooLarge" }
        #expect(tooLarge?.level == .error)
        #expect(tooLarge?.metadata["notificatable.channel"] == .string(DurableHandles.item.name.rawValue))
        #expect(tooLarge?.metadata["notificatable.consumer"] == "billing")
        let standbyEntry = entries().first { $0.metadata["notificatable.error"] == "consumerInUse" }
        #expect(standbyEntry?.level == .notice)
        // Their own event kinds: nothing failed.
        #expect(standbyEntry?.metadata["notificatable.event"] == "consumerStandby")
        #expect(
            entries().first { $0.metadata["notificatable.error"] == "consumerTakenOver" }?
                .metadata["notificatable.event"] == "consumerTakenOver")
        #expect(standbyEntry?.metadata["notificatable.backend_pid"] != nil)
        #expect(entries().first { $0.metadata["notificatable.error"] == "consumerTakenOver" }?.level == .notice)
    }

    @Test func aGracefulStopAfterAServerRestartReportsNoLostConnection() async throws {
        let schema = freshSchema("quiet")
        let local = try DurableLocal(schema: schema, consumer: "quiet")
        defer { local.stop() }
        await local.transport.flush()
        try TestServer.server("stop")
        try TestServer.server("start")
        // Both connections (the writer's and the reader's) notice the restart and reconnect now, not at the stop.
        let reconnected = await local.wait(timeout: .seconds(20)) { local in
            local.events.filter { $0.kind == .reconnected }.count >= 2
        }
        let before = local.events.count
        await local.transport.flush()
        local.stop()
        let during = local.events.dropFirst(before)
        #expect(reconnected, "\(local.events.map(\.description))")
        #expect(
            !during.contains { $0.kind == .connectionLost || $0.kind == .reconnected }, "\(during.map(\.description))")
        // One sentence, said once: not "…was lost, reconnecting: The connection to PostgreSQL was lost, … no detail..".
        for event in local.events where event.kind == .connectionLost {
            let text = "\(event)"
            #expect(text.components(separatedBy: "was lost").count == 2 && !text.contains(".."), "\(text)")
        }
    }
}

extension PostgresIntegrationTests.Durable {
    @Test func theMetricsCountSentReceivedDeliveredRefusedDuplicatesReconnectsAndTheLag() async throws {
        let schema = freshSchema("metrics")
        let key = try PeerKeys.authenticator([PeerKeys.TestKey(id: "k", seed: 1)])
        let forger = try PeerKeys.authenticator([PeerKeys.TestKey(id: "k", seed: 9)])
        let channel = DurableHandles.item.name.rawValue
        func make(_ consumer: String, _ authenticator: HMACMessageAuthenticator, _ metrics: TestMetrics) throws
            -> PostgresNotificationService
        {
            guard var configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
                throw FixtureError("no server configured")
            }
            configuration.authenticator = authenticator
            return try PostgresNotificationService(
                configuration: configuration, center: NotificationCenter(), metricsFactory: metrics)
        }
        let consumerMetrics = TestMetrics()
        let handled = Recorded<Int>()
        let consumer = try make("billing", key, consumerMetrics)
        consumer.receive(DurableHandles.item) { item in handled.append(item.index) }
        await consumer.transport.flush()
        let running = RunningGroup([consumer])
        let publisherMetrics = TestMetrics()
        let publisher = try make("orders", key, publisherMetrics)
        publisher.send(DurableHandles.item)
        let forged = try make("forger", forger, TestMetrics())
        forged.send(DurableHandles.item)
        for index in 0..<5 {
            DurableHandles.item.post(
                DurableItem(publisher: "orders", stream: 0, index: index), center: publisher.center)
        }
        for index in 100..<102 {
            DurableHandles.item.post(DurableItem(publisher: "forger", stream: 0, index: index), center: forged.center)
        }
        await publisher.transport.flush()
        await forged.transport.flush()
        func total(_ metrics: TestMetrics, _ label: String) -> Int64 {
            metrics.counterTotal(label: label, dimensions: [("consumer", "billing"), ("channel", channel)])
        }
        #expect(
            await poll(timeout: .seconds(60)) {
                handled.count == 5 && total(consumerMetrics, "notificatable_messages_refused_total") == 2
            })
        #expect(
            publisherMetrics.counterTotal(
                label: "notificatable_messages_sent_total", dimensions: [("consumer", "orders"), ("channel", channel)])
                == 5)
        #expect(total(consumerMetrics, "notificatable_messages_received_total") == 7)
        #expect(total(consumerMetrics, "notificatable_messages_delivered_total") == 5)
        // Copies of the five delivered rows: the relay drops them as duplicates, and reports them with the next
        // new message.
        try sql(
            "INSERT INTO \(schema).outbox (channel, message) SELECT channel, message FROM \(schema).outbox WHERE message LIKE '%\"orders\"%'"
        )
        DurableHandles.item.post(DurableItem(publisher: "orders", stream: 0, index: 5), center: publisher.center)
        await publisher.transport.flush()
        #expect(
            await poll(timeout: .seconds(60)) { total(consumerMetrics, "notificatable_duplicates_dropped_total") == 5 })
        // Every session of the test's database but psql's own ends: both of the consumer's connections reconnect.
        try sql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'"
        )
        #expect(
            await poll(timeout: .seconds(60)) {
                consumerMetrics.counterTotal(
                    label: "notificatable_reconnects_total", dimensions: [("consumer", "billing")]) >= 2
            })
        // The lag: nothing left after the position once everything is read (measured every poll interval).
        #expect(
            await poll(timeout: .seconds(60)) {
                let dimensions = [("consumer", "billing"), ("channel", channel)]
                let messages = try? consumerMetrics.expectGauge("notificatable_consumer_lag_messages", dimensions)
                let seconds = try? consumerMetrics.expectGauge("notificatable_consumer_lag_seconds", dimensions)
                return messages?.lastValue == 0 && seconds?.lastValue == 0
            })
        try await running.shutDown()
        publisher.relay.stop()
        forged.relay.stop()
    }
}

extension PostgresIntegrationTests.Durable {
    @Test func aTransactionHeldOpenPastTheThresholdIsReportedWithItsPid() async throws {
        let schema = freshSchema("stall")
        let events = Recorded<NotificationTransportEvent>()
        let handled = Recorded<Int>()
        let consumer = try service(schema, consumer: "billing", events: events) {
            $0.stallThreshold = .milliseconds(300)
        }
        consumer.receive(DurableHandles.item) { item in handled.append(item.index) }
        await consumer.transport.flush()
        let running = RunningGroup([consumer])
        let publisher = try service(schema, consumer: "orders")
        publisher.send(DurableHandles.item)
        // A transaction that has written (it holds an xid) and stays open.
        let blocker = try await testConnection()
        _ = try await blocker.query("BEGIN", logger: Logger(label: "test")).collect()
        var blockerPID: Int32 = 0
        for try await pid in try await blocker.query(
            "SELECT pg_backend_pid(), pg_current_xact_id()::text", logger: Logger(label: "test")
        ).decode((Int32, String).self) { blockerPID = pid.0 }
        DurableHandles.item.post(DurableItem(publisher: "orders", stream: 0, index: 0), center: publisher.center)
        await publisher.transport.flush()
        let stalled = {
            events.all.compactMap { $0.error as? PostgresTransportError }.filter { $0.kind == .deliveryStalled }
        }
        #expect(await poll(timeout: .seconds(30)) { !stalled().isEmpty })
        #expect(handled.count == 0)
        #expect(stalled().first?.backendPID == Int(blockerPID))
        #expect((stalled().first?.seconds ?? 0) >= 0.3)
        let stallEvent = events.all.first { ($0.error as? PostgresTransportError)?.kind == .deliveryStalled }
        #expect(stallEvent?.severity == .warning)
        _ = try await blocker.query("COMMIT", logger: Logger(label: "test")).collect()
        #expect(await poll(timeout: .seconds(30)) { handled.count == 1 })
        #expect(stalled().count == 1)
        try await blocker.close()
        try await running.shutDown()
        publisher.relay.stop()
    }
}

extension PostgresIntegrationTests.Durable {
    /// The query of the *Durable Delivery and the Schema* article (it was in the package README).
    @Test func theReadmeQueryNamesTheSessionThatHoldsEachConsumerName() async throws {
        let schema = freshSchema("holders")
        let holder = try service(schema, consumer: "billing")
        holder.receive(DurableHandles.item)
        await holder.transport.flush()
        let readme = try String(
            contentsOf: QuickStartReadmeTests.packageRoot.appendingPathComponent(
                "Sources/NotificatablePostgres/Documentation.docc/DurableDeliveryAndTheSchema.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "  SELECT c.consumer, a.pid"))
        let end = try #require(readme.range(of: "ORDER BY c.consumer;", range: start.upperBound..<readme.endIndex))
        let query = String(readme[start.lowerBound..<end.upperBound])
            .replacingOccurrences(of: "notificatable.consumers", with: "\(schema).consumers")
            .replacingOccurrences(of: "'\"notificatable\" '", with: "'\"\(schema)\" '")
        let readerPID = try sql(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                + "AND objid::int8 = hashtextextended('\"\(schema)\" billing', 0) & 4294967295")
        let rows = try sql(query).split(separator: "\n")
        #expect(rows.count == 1)
        #expect(rows.first?.hasPrefix("billing|\(readerPID)|") == true, "\(rows) (reader \(readerPID))")
        holder.relay.stop()
        #expect(await poll(timeout: .seconds(30)) { (try? sql(query))?.hasPrefix("billing||") == true })
    }
}
