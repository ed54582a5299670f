// The consumer-group modes of `durable-process`, for the tests and the benchmark that run several processes under
// one consumer name (issue 39):
//
//   notificatable-pg-peer durable-process SCHEMA CONSUMER CONCURRENCY keyed|unkeyed [STEP_µs]
//       processes DurableHandles.item from the oldest stored message (startsAtOldestStored), at CONCURRENCY, with
//       `partitionKey: { String($0.stream) }` (keyed) or no key (unkeyed). Each handler awaits exactly STEP_µs
//       (5,000 by default; 0: no wait), then prints its call, before returning (so before its acknowledgement):
//       output: ready | processed STREAM INDEX ATTEMPT PID START_NS END_NS (GroupCall) | event KIND DESCRIPTION
//               | error DESCRIPTION
//       START_NS and END_NS are the handler's start and return on the machine's monotonic clock, shared by every
//       process, so that the calls of several processes can be merged into one order per key.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay

/// Runs the `keyed` or `unkeyed` mode of `durable-process` until the process is ended.
///
/// - Parameters:
///   - schema: The schema of the outbox tables.
///   - consumer: The consumer name the processes share.
///   - concurrency: `maximumConcurrency`.
///   - keyed: Whether the items' stream is the partition key.
///   - step: What each handler awaits.
func runGroupProcessor(schema: String, consumer: String, concurrency: Int, keyed: Bool, step: Duration) async {
    guard let configuration = TestServer.durableConfiguration(consumer: consumer, schema: schema),
        let transport = try? DurablePostgresNotificationTransport(configuration: configuration)
    else { exit(2) }
    var options = DurableProcessingOptions(maximumAttempts: 5, maximumConcurrency: concurrency)
    options.startsAtOldestStored = true
    let pid = Int(ProcessInfo.processInfo.processIdentifier)
    var partitionKey: (@Sendable (DurableItem) -> String)?
    if keyed { partitionKey = { item in String(item.stream) } }
    emit("ready")
    do {
        try await transport.process(
            DurableHandles.item, options: options, partitionKey: partitionKey,
            onEvent: { emit("event \($0.kind) \($0)") }
        ) { delivery in
            let start = monotonicNanoseconds()
            if step > .zero { try await Task.sleep(for: step) }
            let item = delivery.payload
            let call = GroupCall(
                stream: item.stream, index: item.index, attempt: delivery.attempt, pid: pid, start: start,
                end: monotonicNanoseconds())
            emit(call.line)
        }
    } catch {
        emit("error \(error)")
    }
}
