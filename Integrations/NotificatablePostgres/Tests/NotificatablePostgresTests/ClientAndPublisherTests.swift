import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import ServiceLifecycle
import Testing

/// A `PostgresClient` of the test server whose sessions carry `applicationName`, so that a test can count them in
/// `pg_stat_activity`.
func testClient(applicationName: String) throws -> PostgresClient {
    let environment = ProcessInfo.processInfo.environment
    guard let port = environment["NOTIFICATABLE_PG_PORT"].flatMap(Int.init) else {
        throw FixtureError("no server configured")
    }
    var configuration = PostgresClient.Configuration(
        host: environment["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1", port: port,
        username: environment["NOTIFICATABLE_PG_USER"] ?? "notificatable", password: nil,
        database: environment["NOTIFICATABLE_PG_DATABASE"] ?? "postgres", tls: .disable)
    configuration.options.additionalStartupParameters = [("application_name", applicationName)]
    return PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test-client"))
}

/// How many server sessions carry `applicationName`.
func sessions(of applicationName: String) throws -> Int {
    Int(try sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(applicationName)'")) ?? -1
}

/// How many advisory locks the sessions carrying `applicationName` hold.
func advisoryLocks(of applicationName: String) throws -> Int {
    let count = try sql(
        """
        SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE a.application_name = '\(applicationName)' AND l.locktype = 'advisory'
        """)
    return Int(count) ?? -1
}

/// A fresh application name for a test's client.
func freshApplicationName(_ label: String) -> String {
    "notificatable-\(label)-\(UUID().uuidString.prefix(8).lowercased())"
}

extension PostgresIntegrationTests.Durable {
    /// A configuration on `client` for the test's schema, polling often.
    func clientConfiguration(_ client: PostgresClient, consumer: String, schema: String)
        -> DurablePostgresNotificationTransport.Configuration
    {
        var configuration = DurablePostgresNotificationTransport.Configuration(client: client, consumer: consumer)
        configuration.schema = schema
        configuration.initialReconnectDelay = .milliseconds(50)
        configuration.maximumReconnectDelay = .milliseconds(500)
        configuration.pollInterval = .milliseconds(200)
        configuration.retentionInterval = nil
        return configuration
    }

    @Test func servicesOnTheAppsClientSendReceiveKeepPositionsAndHoldTwoSessionsEach() async throws {
        let schema = freshSchema("client")
        let name = freshApplicationName("client")
        let received = Recorded<Int>()
        do {
            let client = try testClient(applicationName: name)
            let billing = try PostgresNotificationService(
                configuration: clientConfiguration(client, consumer: "billing", schema: schema),
                center: NotificationCenter())
            billing.receive(DurableHandles.item) { item in received.append(item.index) }
            let orders = try PostgresNotificationService(
                configuration: clientConfiguration(client, consumer: "orders", schema: schema),
                center: NotificationCenter())
            orders.send(DurableHandles.item)
            let running = RunningGroup([client, billing, orders, IdleApp()])
            await billing.transport.flush()  // billing's position exists: what is posted from now on reaches it
            await orders.transport.flush()
            // What the README says: a started transport holds two of the client's connections (writer, reader).
            #expect(try sessions(of: name) == 4)
            for index in 0..<10 {
                DurableHandles.item.post(
                    DurableItem(publisher: "orders", stream: 0, index: index), center: orders.center)
            }
            await orders.transport.flush()
            #expect(await poll(timeout: .seconds(60)) { received.count >= 10 })
            try await running.shutDown()
            #expect(await poll(timeout: .seconds(30)) { (try? sessions(of: name)) == 0 })
        }
        // Posted while billing is down, on a client of another run: billing's position is kept.
        do {
            let client = try testClient(applicationName: name)
            let publisher = DurableNotificationPublisher(
                client: client, configuration: .init(schema: schema), logger: Logger(label: "test"))
            let billing = try PostgresNotificationService(
                configuration: clientConfiguration(client, consumer: "billing", schema: schema),
                center: NotificationCenter())
            let running = RunningGroup([client, IdleApp()])
            for index in 10..<20 {
                try await client.withTransaction(logger: Logger(label: "test")) { connection in
                    try await publisher.post(
                        DurableItem(publisher: "orders", stream: 0, index: index), on: DurableHandles.item,
                        in: connection)
                }
            }
            billing.receive(DurableHandles.item) { item in received.append(item.index) }
            let billingRunning = RunningGroup([billing])
            #expect(await poll(timeout: .seconds(60)) { received.count >= 20 })
            try await billingRunning.shutDown()
            // A processor on the same client, stopped while the client runs: the session it leased (its lock, its
            // LISTEN, its search_path) is closed, not handed back to the pool.
            let audit = try PostgresNotificationService(
                configuration: clientConfiguration(client, consumer: "audit", schema: schema),
                center: NotificationCenter())
            audit.process(DurableHandles.item) { _, _ in }
            let auditRunning = RunningGroup([audit])
            #expect(await poll(timeout: .seconds(60)) { (try? processing(schema)) == true })
            try await auditRunning.shutDown()
            // The client still runs: nothing the services held was handed back holding a lock.
            #expect(try advisoryLocks(of: name) == 0)
            try await running.shutDown()
        }
        #expect(received.all == Array(0..<20))
    }

    @Test func aPublisherWithOnlyAClientPostsInTransactionsAndARolledBackPostNeverArrives() async throws {
        let schema = freshSchema("publisher")
        let name = freshApplicationName("publisher")
        let client = try testClient(applicationName: name)
        let logger = Logger(label: "test")
        let publisher = DurableNotificationPublisher(
            client: client, configuration: .init(schema: schema), logger: logger)
        let clientRunning = RunningGroup([client])
        try await publisher.ready()  // creates the missing schema
        try await publisher.checkSchema()
        #expect(try sql("SELECT to_regclass('\(schema).outbox') IS NOT NULL") == "t")

        let received = Recorded<Int>()
        let billing = try service(schema, consumer: "billing")
        billing.receive(DurableHandles.item) { item in received.append(item.index) }
        let running = RunningGroup([billing])
        await billing.transport.flush()
        struct RolledBack: Error {}
        for index in 0..<20 {
            let item = DurableItem(publisher: "publisher", stream: 0, index: index)
            if index % 2 == 0 {
                try await client.withTransaction(logger: logger) { connection in
                    try await publisher.post(item, on: DurableHandles.item, in: connection)
                }
            } else {
                await #expect(throws: (any Error).self) {
                    try await client.withTransaction(logger: logger) { connection in
                        try await publisher.post(item, on: DurableHandles.item, in: connection)
                        throw RolledBack()
                    }
                }
            }
        }
        try await publisher.post(DurableItem(publisher: "publisher", stream: 0, index: 20), on: DurableHandles.item)
        #expect(await poll(timeout: .seconds(60)) { received.count >= 11 })
        try await running.shutDown()
        try await clientRunning.shutDown()
        #expect(received.all == Array(stride(from: 0, through: 20, by: 2)))
        // The publisher holds no session: only the statements' pooled connections, closed with the client.
        #expect(await poll(timeout: .seconds(30)) { (try? sessions(of: name)) == 0 })
    }

    @Test func aPublisherInCheckModeReportsAMissingSchemaClearly() async throws {
        let schema = freshSchema("check")
        let client = try testClient(applicationName: freshApplicationName("check"))
        var configuration = DurableNotificationPublisher.Configuration(schema: schema)
        configuration.createsSchema = false
        let publisher = DurableNotificationPublisher(client: client, configuration: configuration)
        let running = RunningGroup([client])
        do {
            try await publisher.ready()
            Issue.record("ready() did not throw on a missing schema")
        } catch let error as PostgresTransportError {
            #expect(error.kind == .schemaMissing)
            #expect(error.schema == "\"\(schema)\"")
            #expect(error.description.contains("\"\(schema)\".outbox does not exist"))
        }
        #expect(try sql("SELECT to_regclass('\(schema).outbox') IS NULL") == "t")  // check mode created nothing
        try await publisher.prepareSchema()
        try await publisher.ready()
        try await running.shutDown()
    }

    @Test(arguments: [false, true])
    func processUnderTheServiceFinishesRunningHandlersOnAGracefulStopAndLosesNothing(serviceLast: Bool)
        async throws
    {
        let schema = freshSchema("process")
        let count = 200
        let started = Recorded<Int>()
        let finished = Recorded<Int>()
        let consumer = try service(schema, consumer: "billing")
        consumer.process(DurableHandles.item, options: .init(maximumConcurrency: 4)) { item, delivery in
            #expect(delivery.payload == item)
            started.append(item.index)
            try await Task.sleep(for: .milliseconds(20))  // cancelled, it throws: the item would not finish
            finished.append(item.index)
        }
        let publisher = try service(schema, consumer: "orders")
        publisher.send(DurableHandles.item)
        let running = RunningGroup(serviceLast ? [IdleApp(), publisher, consumer] : [consumer, publisher, IdleApp()])
        // The processing position exists once the processor has started: wait for its lock in pg_locks.
        #expect(await poll(timeout: .seconds(60)) { (try? processing(schema)) == true })
        for index in 0..<count {
            DurableHandles.item.post(
                DurableItem(publisher: "orders", stream: 0, index: index), center: publisher.center)
        }
        await publisher.transport.flush()
        #expect(await poll(timeout: .seconds(60)) { finished.count >= 30 })
        try await running.shutDown()  // mid-stream, with handlers running
        let (startedFirst, finishedFirst) = (Set(started.all), Set(finished.all))
        #expect(
            startedFirst == finishedFirst, "handlers cut short: \(startedFirst.subtracting(finishedFirst).sorted())")
        #expect(finishedFirst.count < count, "the shutdown came too late to test anything")

        let again = try service(schema, consumer: "billing")
        // The same options: a consumer group of another layout would start at its lowest partition's position.
        again.process(DurableHandles.item, options: .init(maximumConcurrency: 4)) { item, _ in
            finished.append(item.index)
        }
        let second = RunningGroup([again])
        let complete = await poll(timeout: .seconds(60)) { Set(finished.all).count == count }
        try await second.shutDown()
        #expect(complete, "\(count - Set(finished.all).count) of \(count) never processed")
        // Positions were saved on the graceful stop: nothing that finished before it was processed again.
        #expect(finished.all.count == count, "\(finished.all.count - count) processed twice")
    }
}

/// Whether a processor holds a processing lock in `schema` (the processing position exists once it does).
private func processing(_ schema: String) throws -> Bool {
    let count = try sql(
        """
        SELECT count(*) FROM \(schema).consumers WHERE consumer LIKE '%/processing%'
        """)
    return (Int(count) ?? 0) > 0
}

extension PostgresIntegrationTests {
    @Test func theAtMostOnceTransportOnTheAppsClientSendsAndReceivesOnOneSessionEach() async throws {
        let name = freshApplicationName("notify")
        let client = try testClient(applicationName: name)
        let running = RunningGroup([client])
        let a = try LocalRelay("A") { $0.client = client }
        let b = try LocalRelay("B") { $0.client = client }
        // Each transport listens on one session of its own, leased from the client.
        #expect(await poll(timeout: .seconds(30)) { (try? sessions(of: name)) == 2 })
        try await Task.sleep(for: .milliseconds(200))  // B's LISTENs are in effect once its connection is
        a.greet(1)
        #expect(await b.wait { $0.greetings.map(\.number) == [1] })
        a.stop()
        b.stop()
        try await running.shutDown()
    }
}
