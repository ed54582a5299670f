import Foundation
import NotificatablePostgresFixtures
import PostgresNIO
import Testing

@testable import NotificatablePostgres

/// Whether `local` has reported a ``PostgresTransportError`` of `kind`.
private func reported(_ kind: PostgresTransportError.Kind, _ local: DurableLocal) -> Bool {
    local.events.contains { ($0.error as? PostgresTransportError)?.kind == kind }
}

extension PostgresIntegrationTests.Durable {
    /// Two processes under one consumer name (a rolling deploy, a second replica started by mistake): the second
    /// waits as a standby and receives nothing, then takes over from the stored position when the first stops.
    /// Before, both read from the same position: every message reached both.
    @Test func aSecondProcessOfAConsumerNameWaitsAsAStandbyAndTakesOverWhereTheFirstStopped() async throws {
        let schema = freshSchema("standby")
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        let first = try DurableLocal(schema: schema, consumer: "worker")
        defer { first.stop() }
        await first.transport.flush()
        let second = try DurableLocal(schema: schema, consumer: "worker")
        defer { second.stop() }
        #expect(await second.wait(timeout: .seconds(30)) { reported(.consumerInUse, $0) })
        await second.transport.flush()  // a standby's flush does not wait for the reader
        for index in 0..<50 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await first.wait(timeout: .seconds(30)) { $0.items.count >= 50 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(second.items.isEmpty)
        await first.transport.flush()  // its position is saved
        first.stop()
        #expect(await second.wait(timeout: .seconds(30)) { reported(.consumerTakenOver, $0) })
        for index in 50..<100 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await second.wait(timeout: .seconds(30)) { $0.items.count >= 50 })
        await second.transport.flush()
        #expect(first.items.map(\.index) == Array(0..<50))
        #expect(second.items.map(\.index) == Array(50..<100))
    }

    /// The reader's connection is lost on the client's side only (a network failure the server has not noticed):
    /// its server session still holds the consumer name. The transport ends that session of its own, instead of
    /// waiting as a standby behind itself, and delivery goes on.
    @Test func aReaderSessionLeftBehindByALostConnectionIsEndedAndDeliveryGoesOn() async throws {
        let schema = freshSchema("ghost")
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        let worker = try DurableLocal(schema: schema, consumer: "worker")
        defer { worker.stop() }
        await worker.transport.flush()
        sender.post(DurableItem(publisher: "sender", stream: 0, index: 0))
        #expect(await worker.wait(timeout: .seconds(30)) { $0.items.count >= 1 })
        let ghost = try #require(worker.transport.lock.withLock { worker.transport.state.readerSession })
        worker.transport.abandonReaderConnection()
        for index in 1..<20 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await worker.wait(timeout: .seconds(30)) { $0.items.count >= 20 })
        #expect(worker.items.map(\.index) == Array(0..<20))
        #expect(!reported(.consumerInUse, worker))
        #expect(try sql("SELECT count(*) FROM pg_stat_activity WHERE pid = \(ghost.pid)") == "0")
    }

    /// A process loses its consumer name to a standby of another process, which delivers and saves further
    /// positions, then gets the name back: it goes on from the stored position, not from the one in its memory
    /// (which would deliver again what the other process delivered).
    @Test func aProcessThatGetsItsConsumerNameBackGoesOnFromWhereTheOtherLeftOff() async throws {
        let schema = freshSchema("handback")
        let sender = try DurableLocal(schema: schema, consumer: "sender")
        defer { sender.stop() }
        let first = try DurableLocal(schema: schema, consumer: "worker")
        defer { first.stop() }
        await first.transport.flush()
        let second = try DurableLocal(schema: schema, consumer: "worker")
        defer { second.stop() }
        #expect(await second.wait(timeout: .seconds(30)) { reported(.consumerInUse, $0) })
        for index in 0..<10 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await first.wait(timeout: .seconds(30)) { $0.items.count >= 10 })
        await first.transport.flush()
        // The first one's connection fails; when it ends its old session, the waiting standby gets the name.
        first.transport.abandonReaderConnection()
        #expect(await second.wait(timeout: .seconds(30)) { reported(.consumerTakenOver, $0) })
        #expect(await first.wait(timeout: .seconds(30)) { reported(.consumerInUse, $0) })
        for index in 10..<20 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await second.wait(timeout: .seconds(30)) { $0.items.count >= 10 })
        await second.transport.flush()
        second.stop()
        #expect(await first.wait(timeout: .seconds(30)) { reported(.consumerTakenOver, $0) })
        for index in 20..<30 { sender.post(DurableItem(publisher: "sender", stream: 0, index: index)) }
        #expect(await first.wait(timeout: .seconds(30)) { $0.items.count >= 20 })
        await first.transport.flush()
        #expect(second.items.map(\.index) == Array(10..<20))
        #expect(first.items.map(\.index) == Array(0..<10) + Array(20..<30))
    }
}
