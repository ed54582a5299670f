import Foundation
import NotificatablePostgres
import NotificatablePostgresFixtures
import Testing

extension PostgresIntegrationTests {
    /// Consumer groups inside one test process: two transports under one consumer name share a channel, and a
    /// consumer whose layout changes (channel order, partitions) takes its positions over. The multi-process cases
    /// (kills, joins) are `ConsumerGroupTests`.
    @Suite(.serialized) struct ConsumerGroupLayouts {
        func rows(_ schema: String) throws -> [String] {
            try sql(
                "SELECT string_agg(consumer, ',' ORDER BY consumer) FROM \(schema).consumers WHERE consumer LIKE 'worker/%'"
            )
            .split(separator: ",").map(String.init)
        }

        @Test func twoTransportsUnderOneNameShareTheKeysAndKeepEachKeysOrder() async throws {
            let schema = freshSchema("group_two")
            try await publishItems(schema, count: 600, streams: 30)
            let (first, second) = (try processingTransport(schema), try processingTransport(schema))
            let record = Recorded<(transport: Int, stream: Int, index: Int)>()
            var tasks: [Task<Void, any Error>] = []
            for (number, transport) in [first, second].enumerated() {
                tasks.append(
                    Task {
                        try await transport.process(
                            DurableHandles.item, options: quickOptions(concurrency: 4),
                            partitionKey: { String($0.stream) }
                        ) { delivery in
                            try await Task.sleep(for: .milliseconds(5))
                            record.append((number, delivery.payload.stream, delivery.payload.index))
                        }
                    })
            }
            defer { for task in tasks { task.cancel() } }
            let done = await poll(timeout: .seconds(120)) { Set(record.all.map(\.index)).count == 600 }
            #expect(done, "\(Set(record.all.map(\.index)).count) of 600 processed")
            let calls = record.all
            // Both worked: the second took a share once the first gave back the partitions above its share.
            let shares = [0, 1].map { number in calls.filter { $0.transport == number }.count }
            #expect(shares.allSatisfy { $0 >= 60 }, "shares \(shares)")
            // Each key in order, over both transports (a partition moves only after its running messages ended).
            for stream in 0..<30 {
                let indexes = calls.filter { $0.stream == stream }.map(\.index)
                #expect(indexes == indexes.sorted(), "stream \(stream) out of order: \(indexes)")
            }
            #expect(calls.count == 600, "\(calls.count - 600) processed twice")
            // Sixteen partition rows, each status listing the partitions its transport holds.
            #expect(try rows(schema).count == 16)
            let held = [first, second].flatMap { $0.processingStatus().flatMap(\.partitions) }
            #expect(held.sorted() == Array(0..<16))
            #expect(first.processingStatus().first?.partitionCount == 16)
        }

        @Test func aConsumerChangingItsLayoutTakesItsPositionsOverAndLosesNothing() async throws {
            let schema = freshSchema("group_layout")
            try await publishItems(schema, count: 300, streams: 10)
            let record = Recorded<Int>()
            /// Runs `process` with `options` and `key` until `target` distinct items in all were processed.
            func run(_ options: DurableProcessingOptions, key: Bool, until target: Int) async throws {
                let transport = try processingTransport(schema)
                var partitionKey: (@Sendable (DurableItem) -> String)?
                if key { partitionKey = { String($0.stream) } }
                let task = Task { [partitionKey] in
                    try await transport.process(DurableHandles.item, options: options, partitionKey: partitionKey) {
                        delivery in
                        try await Task.sleep(for: .milliseconds(2))
                        record.append(delivery.payload.index)
                    }
                }
                #expect(await poll(timeout: .seconds(120)) { Set(record.all).count >= target })
                task.cancel()
                _ = await task.result
            }
            try await run(quickOptions(concurrency: 4), key: true, until: 100)
            #expect(try rows(schema).count == 16)
            // Channel order adopts the group's positions (at the lowest) and deletes their rows.
            try await run(quickOptions(), key: false, until: 200)
            #expect(try rows(schema) == ["worker/processing"])
            // And back: every partition starts at the channel-order position.
            try await run(quickOptions(concurrency: 2), key: true, until: 300)
            #expect(try rows(schema).count == 16)
            #expect(Set(record.all) == Set(0..<300))
            // Repeats only where the layout changed mid-stream: within a page of read-ahead per change.
            #expect(record.all.count - 300 <= 2 * 500, "\(record.all.count - 300) repeats")
        }

        @Test func aGroupAndAChannelOrderProcessNeverRunSideBySide() async throws {
            let schema = freshSchema("group_mixed")
            try await publishItems(schema, count: 200, streams: 10)
            let events = Recorded<String>()
            let running = Recorded<Int>()
            let group = try processingTransport(schema)
            let groupTask = Task {
                try await group.process(
                    DurableHandles.item, options: quickOptions(concurrency: 4), partitionKey: { String($0.stream) }
                ) { delivery in
                    try await Task.sleep(for: .milliseconds(20))
                    running.append(0)
                }
            }
            defer { groupTask.cancel() }
            #expect(await poll(timeout: .seconds(60)) { running.count > 0 })
            let ordered = try processingTransport(schema)
            let orderedTask = Task {
                try await ordered.process(
                    DurableHandles.item, options: quickOptions(), onEvent: { events.append("\($0.kind)") }
                ) { _ in running.append(1) }
            }
            defer { orderedTask.cancel() }
            // The channel-order process stands by while the group works.
            #expect(await poll(timeout: .seconds(30)) { events.all.contains("consumerStandby") })
            try await Task.sleep(for: .seconds(1))
            #expect(!running.all.contains(1))
            #expect(ordered.processingStatus().first?.state == .standingBy)
            // The group stops: the channel-order process takes over from the group's positions.
            groupTask.cancel()
            _ = await groupTask.result
            #expect(await poll(timeout: .seconds(60)) { events.all.contains("consumerTakenOver") })
            #expect(await poll(timeout: .seconds(60)) { running.count >= 200 })
            #expect(try rows(schema) == ["worker/processing"])
        }
    }
}
