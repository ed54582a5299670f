// The durable-delivery commands of the peer:
//
//   notificatable-pg-peer durable-consume SCHEMA CONSUMER [PAGE_SIZE]
//       a relay over DurablePostgresNotificationTransport, forwarding DurableHandles.item (pages of PAGE_SIZE rows)
//       output: ready | item PUBLISHER STREAM INDEX | event KIND DESCRIPTION | failure …
//   notificatable-pg-peer durable-publish SCHEMA NAME COUNT
//       posts COUNT items: half through a relay from two threads, half as transactional posts from four threads,
//       each in its own transaction that sleeps 0-4 ms between the insert and the commit (so commits come out of
//       id order); prints `published COUNT` once everything is committed.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

func runDurableConsumer(schema: String, consumer: String, pageSize: Int?) async {
    guard var configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else { exit(2) }
    if let pageSize { configuration.pageSize = pageSize }
    let center = NotificationCenter()
    guard let transport = try? DurablePostgresNotificationTransport(configuration: configuration) else { exit(2) }
    let relay = NotificationRelay(
        transport: transport, center: center,
        onEvent: { event in emit("event \(event.kind) \(event)") },
        onFailure: { failure in emit("failure \(failure.kind) \(failure.name.rawValue)") }
    )
    relay.forward(DurableHandles.item)
    let subscription = DurableHandles.item.subscribe(center: center) { note in emit(note.userInfo.line) }
    await transport.flush()
    emit("ready")
    for await _ in commandLines() {}
    subscription.dispose()
    relay.stop()
}

func runDurablePublisher(schema: String, name: String, count: Int) async throws {
    guard let configuration = TestServer.durableConfiguration(consumer: "publisher-" + name, schema: schema) else {
        exit(2)
    }
    let center = NotificationCenter()
    let transport = try DurablePostgresNotificationTransport(configuration: configuration)
    let relay = NotificationRelay(
        transport: transport, center: center, onEvent: { event in emit("event \(event.kind) \(event)") })
    relay.forward(DurableHandles.item)
    await transport.flush()  // the tables exist
    let relayed = count / 2
    let transactional = count - relayed
    let relayThreads = 2
    let transactionThreads = 4
    try await withThrowingTaskGroup(of: Void.self) { group in
        for stream in 0..<relayThreads {
            group.addTask {
                let share = relayed / relayThreads + (stream < relayed % relayThreads ? 1 : 0)
                for index in 0..<share {
                    DurableHandles.item.post(DurableItem(publisher: name, stream: stream, index: index), center: center)
                }
            }
        }
        for thread in 0..<transactionThreads {
            group.addTask {
                let stream = relayThreads + thread
                let share = transactional / transactionThreads + (thread < transactional % transactionThreads ? 1 : 0)
                let logger = Logger(label: "peer")
                let connection = try await PostgresConnection.connect(
                    configuration: configuration.connection, id: thread, logger: logger)
                for index in 0..<share {
                    try await connection.withTransaction(logger: logger) { connection in
                        try await transport.post(
                            DurableItem(publisher: name, stream: stream, index: index), on: DurableHandles.item,
                            in: connection)
                        try await Task.sleep(nanoseconds: UInt64.random(in: 0...4_000_000))
                    }
                }
                try await connection.close()
            }
        }
        try await group.waitForAll()
    }
    await transport.flush()
    emit("published \(count)")
    for await _ in commandLines() {}
    relay.stop()
}

/// `bench-receive-durable SCHEMA COUNT`: the benchmark's receiver over the durable transport.
func runDurableBenchReceiver(schema: String, count: Int) async {
    guard var configuration = TestServer.durableConfiguration(consumer: "bench-receiver", schema: schema) else {
        exit(2)
    }
    configuration.pollInterval = .seconds(1)
    let tally = Tally(expected: count)
    let center = NotificationCenter()
    guard let transport = try? DurablePostgresNotificationTransport(configuration: configuration) else { exit(2) }
    let relay = NotificationRelay(
        transport: transport, center: center, onEvent: { emit("event \($0.kind) \($0)") },
        onFailure: { emit("failure \($0)") })
    relay.forward(PeerHandles.bench)
    let subscription = PeerHandles.bench.subscribe(center: center) { note in tally.record(note.userInfo) }
    await transport.flush()
    emit("ready")
    await tally.waitUntilComplete()
    relay.stop()
    subscription.dispose()
    emit(tally.summary)
}
