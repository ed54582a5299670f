import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import Notificatable
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO
import Testing
import Tracing

@testable import NotificatablePostgres

/// A processing transport whose metrics go to `metrics` (a local factory: no global bootstrap).
func observedTransport(_ schema: String, metrics: TestMetrics, consumer: String = "worker") throws
    -> DurablePostgresNotificationTransport
{
    guard let configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema) else {
        throw FixtureError("no server configured")
    }
    return try DurablePostgresNotificationTransport(configuration: configuration, metricsFactory: metrics)
}

/// Counts calls per item index, so that a handler can fail the first attempts of some items.
final class CallCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int: Int] = [:]

    /// Records a call for `index`; returns how many there were, this one included.
    func call(_ index: Int) -> Int {
        lock.withLock {
            counts[index, default: 0] += 1
            return counts[index, default: 0]
        }
    }
}

/// An in-memory tracer whose ids start with `prefix`, so that two tracers never make the same id: a trace id seen
/// on both sides was carried by the message.
func prefixedTracer(_ prefix: String) -> InMemoryTracer {
    InMemoryTracer(
        idGenerator: .init(
            nextTraceID: { "\(prefix)-trace-\(UUID().uuidString)" },
            nextSpanID: { "\(prefix)-span-\(UUID().uuidString)" }))
}

/// A span attribute as a `SpanAttribute`, to compare.
func attribute(_ span: FinishedInMemorySpan, _ key: String) -> SpanAttribute? {
    span.attributes[key]?.toSpanAttribute()
}

/// What handlers saw: item index → the trace id of `ServiceContext.current` in the handler.
final class TraceRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var traces: [Int: String] = [:]
    func record(_ index: Int) {
        let trace = ServiceContext.current?.inMemorySpanContext?.traceID ?? "none"
        lock.withLock { traces[index] = trace }
    }
    var all: [Int: String] { lock.withLock { traces } }
}

/// A switch a test flips once.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension PostgresIntegrationTests {
    /// Processing metrics, status and stall, against the real server, with local metrics factories.
    @Suite(.serialized) struct ProcessingObservability {
        /// Ten messages: item 3 fails twice and then succeeds, item 7 fails every one of its 3 attempts and is
        /// parked, then re-driven and succeeds. Every processing metric has its exact value, and the lag comes back
        /// to 0.
        @Test func everyProcessingMetricHasItsExactValueOnAScriptedRun() async throws {
            let schema = freshSchema("observe_metrics")
            try await publishItems(schema, count: 10)
            let metrics = TestMetrics()
            let transport = try observedTransport(schema, metrics: metrics)
            defer { transport.stop() }
            let counts = CallCounts()
            let healed = Flag()
            var options = quickOptions(attempts: 3)
            options.handlerStallThreshold = nil
            let task = Task {
                try await transport.process(DurableHandles.item, options: options) { delivery in
                    let calls = counts.call(delivery.payload.index)
                    if delivery.payload.index == 3 && calls <= 2 { throw FixtureError("item 3 fails twice") }
                    if delivery.payload.index == 7 && !healed.isSet { throw FixtureError("item 7 fails") }
                }
            }
            defer { task.cancel() }
            let channel = NotificationChannelName.channel(
                for: DurableHandles.item.name, maximumLength: transport.limits.maximumChannelLength)
            let dimensions = [("consumer", "worker"), ("channel", channel)]
            func total(_ label: String, _ extra: [(String, String)] = []) -> Int64 {
                metrics.counterTotal(label: label, dimensions: dimensions + extra)
            }
            let succeeded = { total("notificatable_processing_attempts_total", [("outcome", "succeeded")]) }
            let failed = { total("notificatable_processing_attempts_total", [("outcome", "failed")]) }
            let parked = { total("notificatable_processing_parked_total") }
            let redriven = { total("notificatable_processing_redriven_total") }
            func gauge(_ label: String) -> Double? {
                (try? metrics.expectGauge(label, dimensions))?.lastValue
            }
            let calls = { (try? metrics.expectTimer("notificatable_processing_duration_seconds", dimensions))?.values }

            #expect(await poll(timeout: .seconds(60)) { succeeded() == 9 && parked() == 1 })
            #expect(
                await poll(timeout: .seconds(10)) {
                    gauge("notificatable_processing_lag_messages") == 0
                        && gauge("notificatable_processing_lag_seconds") == 0
                })
            #expect(succeeded() == 9)
            #expect(failed() == 5)  // item 3: 2, item 7: 3
            #expect(parked() == 1)
            #expect(redriven() == 0)
            #expect(calls()?.count == 14)
            #expect(gauge("notificatable_processing_in_flight") == 0)

            healed.set()
            let letters = try await transport.deadLetters()
            #expect(letters.count == 1)
            for letter in letters { #expect(try await transport.redrive(letter)) }
            #expect(await poll(timeout: .seconds(30)) { succeeded() == 10 })
            var lettersLeft = -1
            for _ in 0..<100 {
                lettersLeft = try await transport.deadLetters().count
                if lettersLeft == 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(lettersLeft == 0)
            // Nothing else moves afterwards.
            try await Task.sleep(for: .milliseconds(600))
            #expect(succeeded() == 10)
            #expect(failed() == 5)
            #expect(parked() == 1)
            #expect(redriven() == 1)
            #expect(calls()?.count == 15)
            #expect(calls()?.allSatisfy { $0 >= 0 } == true)
            #expect(gauge("notificatable_processing_in_flight") == 0)
            #expect(gauge("notificatable_processing_lag_messages") == 0)
            #expect(gauge("notificatable_processing_lag_seconds") == 0)
            // The in-flight gauge went up while handlers ran.
            let inFlight = try metrics.expectGauge("notificatable_processing_in_flight", dimensions)
            #expect(inFlight.values.contains(1))
        }

        /// A handler that hangs turns the status `stalled` after the stall threshold, with the lag; it turns back
        /// to `processing` once the handler returns. A second transport of the same consumer name stands by.
        @Test func theStatusTurnsStalledWhileAHandlerHangsAndStandingByForASecondProcess() async throws {
            let schema = freshSchema("observe_stall")
            try await publishItems(schema, count: 3)
            let metrics = TestMetrics()
            let transport = try observedTransport(schema, metrics: metrics)
            defer { transport.stop() }
            #expect(transport.processingStatus().isEmpty)
            let release = Flag()
            var options = quickOptions()
            options.handlerStallThreshold = .milliseconds(800)
            let task = Task {
                try await transport.process(DurableHandles.item, options: options) { delivery in
                    while delivery.payload.index == 1 && !release.isSet {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
            }
            defer { task.cancel() }
            let state = { transport.processingStatus().first?.state }
            #expect(await poll(timeout: .seconds(30)) { state() == .processing })
            // Item 1 hangs: in flight, then stalled after the threshold, with the lag measured.
            #expect(await poll(timeout: .seconds(30)) { transport.processingStatus().first?.inFlight == 1 })
            #expect(await poll(timeout: .seconds(30)) { state() == .stalled })
            let stalled = try #require(transport.processingStatus().first)
            #expect(!stalled.isHealthy)
            #expect(stalled.consumer == "worker")
            #expect(stalled.lagMessages == 2)  // items 1 and 2 are after the position
            #expect(stalled.secondsWithoutProgress >= 0.8)
            #expect(stalled.state.description == "stalled")

            // A second process under the same name stands by, healthy.
            let second = try observedTransport(schema, metrics: TestMetrics())
            defer { second.stop() }
            let standby = Task { try await second.process(DurableHandles.item, options: options) { _ in } }
            defer { standby.cancel() }
            #expect(await poll(timeout: .seconds(30)) { second.processingStatus().first?.state == .standingBy })
            #expect(second.processingStatus().first?.isHealthy == true)

            release.set()
            #expect(await poll(timeout: .seconds(30)) { state() == .processing })
            #expect(await poll(timeout: .seconds(10)) { transport.processingStatus().first?.lagMessages == 0 })
            #expect(transport.processingStatus().first?.isHealthy == true)
            #expect(transport.processingStatus().first?.secondsWithoutProgress == 0)
            task.cancel()
            _ = await task.result
            #expect(transport.processingStatus().isEmpty)
        }

        /// The service's status gathers its processors': healthy while processing, not once a handler hangs past
        /// the threshold.
        @Test func theServiceStatusIsUnhealthyWhileAHandlerHangs() async throws {
            let schema = freshSchema("observe_service")
            guard let configuration = TestServer.durableConfiguration(consumer: "worker", schema: schema) else {
                throw FixtureError("no server configured")
            }
            let service = try PostgresNotificationService(
                configuration: configuration, center: NotificationCenter(), metricsFactory: TestMetrics(),
                onEvent: { _ in })
            let release = Flag()
            var options = quickOptions()
            options.handlerStallThreshold = .milliseconds(500)
            service.process(DurableHandles.item, options: options) { item, _ in
                while item.index == 0 && !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
            }
            let run = Task { try await service.run() }
            defer { run.cancel() }
            #expect(await poll(timeout: .seconds(30)) { service.status().processing.first?.state == .processing })
            #expect(service.status().isHealthy)
            try await publishItems(schema, count: 1)
            #expect(await poll(timeout: .seconds(30)) { service.status().processing.first?.state == .stalled })
            #expect(!service.status().isHealthy)
            #expect(service.status().isRunning)
            release.set()
            #expect(await poll(timeout: .seconds(30)) { service.status().isHealthy })
        }

        /// A post by a relay, a transactional post and a publisher's post, each inside a span of the sending side's
        /// tracer, reach a handler of another transport with its own tracer: each handler runs in a `process`
        /// consumer span of the same trace, whose parent is the post's `publish` producer span. A message without
        /// headers (an older sender) is processed in a new trace.
        @Test func aTraceGoesFromEachKindOfPostToItsHandlerInAnotherTransport() async throws {
            let schema = freshSchema("observe_trace")
            guard let sendConfiguration = TestServer.durableConfiguration(consumer: "sender", schema: schema),
                let workConfiguration = TestServer.durableConfiguration(consumer: "worker", schema: schema)
            else { throw FixtureError("no server configured") }
            let senderTracer = prefixedTracer("sender")
            let workerTracer = prefixedTracer("worker")
            // An older sender: no tracer, no headers.
            try await publishItems(schema, count: 1)
            let sender = try DurablePostgresNotificationTransport(
                configuration: sendConfiguration, tracer: senderTracer)
            let center = NotificationCenter()
            let relay = NotificationRelay(transport: sender, center: center, onEvent: { _ in })
            defer { relay.stop() }
            relay.forward(DurableHandles.item)
            var traces: [Int: String] = [:]
            traces[1] = await senderTracer.withSpan("request 1") { span in
                await Task.yield()
                DurableHandles.item.post(DurableItem(publisher: "relay", stream: 0, index: 1), center: center)
                return span.context.inMemorySpanContext?.traceID
            }
            await sender.flush()
            let connection = try await testConnection()
            traces[2] = try await senderTracer.withSpan("request 2") { span in
                try await connection.withTransaction(logger: Logger(label: "test")) { connection in
                    try await sender.post(
                        DurableItem(publisher: "transaction", stream: 0, index: 2), on: DurableHandles.item,
                        in: connection)
                }
                return span.context.inMemorySpanContext?.traceID
            }
            try await connection.close()
            let client = try testClient(applicationName: freshApplicationName("trace"))
            let clientRunning = RunningGroup([client])
            var publisherConfiguration = DurableNotificationPublisher.Configuration(schema: schema)
            publisherConfiguration.tracer = senderTracer
            let publisher = DurableNotificationPublisher(client: client, configuration: publisherConfiguration)
            traces[3] = try await senderTracer.withSpan("request 3") { span in
                try await publisher.post(
                    DurableItem(publisher: "publisher", stream: 0, index: 3), on: DurableHandles.item)
                return span.context.inMemorySpanContext?.traceID
            }
            try await clientRunning.shutDown()

            let worker = try DurablePostgresNotificationTransport(
                configuration: workConfiguration, tracer: workerTracer)
            defer { worker.stop() }
            let seen = TraceRecord()
            let task = Task {
                try await worker.process(DurableHandles.item, options: quickOptions()) { delivery in
                    seen.record(delivery.payload.index)
                }
            }
            defer { task.cancel() }
            let channel = NotificationChannelName.channel(
                for: DurableHandles.item.name, maximumLength: worker.limits.maximumChannelLength)
            let processSpans = { workerTracer.finishedSpans.filter { $0.operationName == "process \(channel)" } }
            #expect(await poll(timeout: .seconds(60)) { processSpans().count == 4 })
            let published = senderTracer.finishedSpans.filter { $0.operationName == "publish \(channel)" }
            #expect(published.count == 3)
            for index in 1...3 {
                let trace = try #require(traces[index])
                #expect(trace.hasPrefix("sender-trace-"))
                let publish = try #require(published.first { $0.traceID == trace }, "no publish span for post \(index)")
                #expect(publish.kind == .producer)
                #expect(attribute(publish, "messaging.system") == .string("postgresql"))
                #expect(attribute(publish, "messaging.destination.name") == .string(channel))
                let process = try #require(processSpans().first { $0.traceID == trace }, "post \(index) lost its trace")
                #expect(process.kind == .consumer)
                #expect(process.parentSpanID == publish.spanID)
                #expect(attribute(process, "messaging.system") == .string("postgresql"))
                #expect(attribute(process, "messaging.destination.name") == .string(channel))
                #expect(attribute(process, "messaging.consumer.group.name") == .string("worker"))
                if case .string(let id)? = attribute(process, "messaging.message.id") {
                    #expect(id.contains(":"))
                } else {
                    Issue.record("no messaging.message.id on post \(index)'s span")
                }
                // The handler runs inside the span: its ServiceContext is the span's.
                #expect(seen.all[index] == trace)
            }
            // The older sender's message: processed, in a new trace of the worker's.
            let untraced = try #require(processSpans().first { !$0.traceID.hasPrefix("sender-") })
            #expect(untraced.traceID.hasPrefix("worker-trace-"))
            #expect(seen.all[0]?.hasPrefix("worker-trace-") == true)
        }
    }
}
