// The peer's side of the scale benchmark (issue 23): a sender that writes the relay's wire format straight through
// a transport, and a listener whose subscriber blocks.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

/// Waits until standard input ends.
func endOfInput() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            while readLine() != nil {}
            continuation.resume()
        }.start()
    }
}

/// A BenchPayload as the relay's wire format carries it.
func benchPayload(index: Int) -> [String: Any] {
    let payload = BenchPayload(index: index, sentAt: monotonicNanoseconds())
    return [
        "index": payload.index, "sentAt": Int(payload.sentAt), "orderID": payload.orderID, "weight": payload.weight,
        "note": payload.note,
    ]
}

/// `wire-send`: a transport that only publishes, in the relay's wire format; it listens to nothing, so its session
/// costs the server nothing per notification. Commands:
///   names K COUNT        COUNT BenchPayload messages, round-robin over the names bench.names.0 … bench.names.K-1,
///                        from one sender, each name in sequence
///   senders FIRST COUNT  COUNT messages on the bench name, each from a sender of its own (sender-FIRST, …), each
///                        that sender's first
/// and answers `sent COUNT` once they reached the server.
func runWireSender(configuration: PostgresNotificationTransport.Configuration) async {
    guard let transport = try? PostgresNotificationTransport(configuration: configuration) else { exit(2) }
    transport.start(
        handler: NotificationTransportHandler(receive: { _, _ in }, report: { emit("event \($0.kind) \($0)") }))
    await transport.flush()
    emit("ready")
    let sender = "wire-\(ProcessInfo.processInfo.processIdentifier)"
    var sequences: [String: Int] = [:]  // the relay numbers each name of a sender on its own
    for await line in commandLines() {
        let words = line.split(separator: " ").map(String.init)
        guard words.count == 3, let first = Int(words[1]), let count = Int(words[2]) else {
            emit("unknown \(line)")
            continue
        }
        for index in 0..<count {
            let message: NotificationRelayMessage
            switch words[0] {
            case "names":
                let name = "bench.names.\(index % max(1, first))"
                let sequence = sequences[name, default: 0] + 1
                sequences[name] = sequence
                message = NotificationRelayMessage(
                    name: Notification.Name(name), sender: sender, sequence: sequence,
                    payload: benchPayload(index: index))
            default:
                message = NotificationRelayMessage(
                    name: PeerHandles.bench.name, sender: "sender-\(first + index)", sequence: 1,
                    payload: benchPayload(index: index))
            }
            guard let data = try? message.encoded() else {
                emit("error cannot encode")
                continue
            }
            transport.publish(data, on: message.name.rawValue)
        }
        await transport.flush()
        emit("sent \(count)")
    }
    transport.stop()
}

/// What the slow receiver saw, and the peaks a sampler thread recorded.
final class SlowTally: @unchecked Sendable {
    private let lock = NSLock()
    private let expected: Int
    private let blockMilliseconds: Int
    private var received = 0
    private var outOfOrder = 0
    private var lastIndex = -1
    private var peakBuffered = 0

    init(expected: Int, blockMilliseconds: Int) {
        self.expected = expected
        self.blockMilliseconds = blockMilliseconds
    }

    /// Records a delivery; the first one blocks the calling thread for the configured time.
    func record(_ index: Int) {
        let first = lock.withLock {
            received += 1
            if index < lastIndex { outOfOrder += 1 }
            lastIndex = index
            return received == 1
        }
        if first { Thread.sleep(forTimeInterval: Double(blockMilliseconds) / 1_000) }
    }

    func sample(buffered: Int) {
        lock.withLock { peakBuffered = max(peakBuffered, buffered) }
    }

    var isComplete: Bool { lock.withLock { received >= expected } }

    func summary(dropped: Int, residentBefore: Int) -> String {
        lock.withLock {
            "result \(received) \(dropped) \(outOfOrder) \(residentBefore) \(memoryStatus("VmHWM:")) \(peakBuffered)"
        }
    }
}

/// A field of /proc/self/status, in bytes (VmRSS:, VmHWM:).
func memoryStatus(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes * 1024
}

/// `slow-receive thread|queue|raw COUNT BLOCK_MS`: receives COUNT bench messages; the subscriber blocks for BLOCK_MS
/// at the first one: on the transport's delivery thread (`thread`), on an OperationQueue of its own (`queue`), or,
/// with raw PostgresNIO, in the listener callback on the connection's event loop (`raw`, which is what the transport
/// did before it had a delivery queue). Prints
///   result RECEIVED DROPPED OUT_OF_ORDER RSS_BEFORE RSS_PEAK PEAK_WAITING
/// where PEAK_WAITING is the most messages the transport (or the OperationQueue) held at once.
func runSlowReceiver(
    mode: String, count: Int, blockMilliseconds: Int, configuration: PostgresNotificationTransport.Configuration
) async {
    let tally = SlowTally(expected: count, blockMilliseconds: blockMilliseconds)
    let deadline = ContinuousClock.now + .milliseconds(blockMilliseconds) + .seconds(300)
    let wait = { _ = await poll(deadline: deadline) { tally.isComplete } }
    if mode == "raw" {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: configuration.connection, id: 1, logger: quietPeerLogger)
            let decoder = JSONDecoder()
            let listener = connection.addListener(channel: PeerHandles.bench.name.rawValue) { _, notification in
                guard let payload = try? decoder.decode(BenchPayload.self, from: Data(notification.payload.utf8))
                else { return }
                tally.record(payload.index)
            }
            _ = try await connection.query(#"LISTEN "NotificatablePostgres.Bench""#, logger: quietPeerLogger)
                .collect()
            let residentBefore = memoryStatus("VmRSS:")
            emit("ready")
            await wait()
            emit(tally.summary(dropped: 0, residentBefore: residentBefore))
            listener.stop()
            try await connection.close()
        } catch {
            emit("error \(String(reflecting: error))")
        }
        return
    }
    let center = NotificationCenter()
    guard let transport = try? PostgresNotificationTransport(configuration: configuration) else { exit(2) }
    let relay = NotificationRelay(
        transport: transport, center: center, onEvent: { emit("event \($0.kind) \($0)") },
        onFailure: { emit("failure \($0)") })
    relay.forward(PeerHandles.bench)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let subscription =
        mode == "queue"
        ? PeerHandles.bench.subscribe(center: center, queue: queue) { note in tally.record(note.userInfo.index) }
        : PeerHandles.bench.subscribe(center: center) { note in tally.record(note.userInfo.index) }
    await transport.flush()
    let sampling = Task {
        while !Task.isCancelled {
            let waiting = transport.receiveStatistics.buffered + (mode == "queue" ? queue.operationCount : 0)
            tally.sample(buffered: waiting)
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
    let residentBefore = memoryStatus("VmRSS:")
    emit("ready")
    await wait()
    sampling.cancel()
    emit(tally.summary(dropped: transport.receiveStatistics.dropped, residentBefore: residentBefore))
    relay.stop()
    subscription.dispose()
}

let quietPeerLogger: Logger = {
    var logger = Logger(label: "peer")
    logger.logLevel = .warning
    return logger
}()
