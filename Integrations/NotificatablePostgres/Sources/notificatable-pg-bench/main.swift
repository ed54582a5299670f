// The benchmark: a typed post in this process (A) to its typed delivery in another (B, notificatable-pg-peer),
// through NotificationRelay over PostgresNotificationTransport, against raw PostgresNIO with a hand-written
// JSONEncoder/JSONDecoder of the same struct, on the same server, in the same run, the two interleaved.
//
//   notificatable-pg-bench [--messages N] [--latency-messages M] [--rounds R] [--smoke]
//
// Each round runs, for the raw path and for the relay in turn (the order alternates between rounds):
// - throughput: A sends N messages as fast as it can; B counts them. Messages per second = N / (the last
//   delivery in B − the first send in A), on the machine's monotonic clock, which both processes share;
// - latency: A sends M messages one every millisecond; each one's latency is its delivery in B − its send in A.
// The raw sender awaits each `SELECT pg_notify($1, $2)`, as a hand-written sender would; the relay's transport
// queues posts and sends what has queued up in one statement. Run it through `scripts/postgres.sh bench`.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

struct Options {
    var messages = 10_000
    var latencyMessages = 1_000
    var rounds = 3
    var smoke = false

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--messages": messages = iterator.next().flatMap(Int.init) ?? messages
            case "--latency-messages": latencyMessages = iterator.next().flatMap(Int.init) ?? latencyMessages
            case "--rounds": rounds = iterator.next().flatMap(Int.init) ?? rounds
            case "--smoke":
                smoke = true
                messages = 200
                latencyMessages = 20
                rounds = 1
            default: print("ignoring unknown argument \(argument)")
            }
        }
    }
}

struct Result {
    var count: Int
    var duplicates: Int
    var outOfOrder: Int
    var seconds: Double
    var latencies: [UInt64]

    var throughput: Double { Double(count) / seconds }

    func percentile(_ fraction: Double) -> Double {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))
        return Double(sorted[index]) / 1_000  // µs
    }

    init(line: String) throws {
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 5 else { throw FixtureError("bad result line: \(line.prefix(200))") }
        count = Int(fields[0])
        duplicates = Int(fields[1])
        outOfOrder = Int(fields[2])
        seconds = Double(fields[4] &- fields[3]) / 1e9
        latencies = Array(fields.dropFirst(5))
    }
}

enum Mode: String {
    case raw, relay
}

let peerPath =
    TestServer.path("NOTIFICATABLE_PG_PEER")
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("notificatable-pg-peer").path

/// Starts B, waits until it listens, runs `send`, and returns what B measured.
func measure(_ mode: Mode, count: Int, send: () async throws -> Void) async throws -> Result {
    let peer = try LineProcess(peerPath, ["bench-receive", mode.rawValue, String(count)])
    defer { peer.kill() }
    guard await peer.wait(timeout: .seconds(60), until: { $0.contains("ready") }) else {
        throw FixtureError("the receiver did not get ready: \(peer.lines.joined(separator: "\n"))")
    }
    try await send()
    guard
        await peer.wait(
            timeout: .seconds(300), until: { $0.contains { $0.hasPrefix("result ") || $0.hasPrefix("error") } }),
        let line = peer.lines.first(where: { $0.hasPrefix("result ") })
    else {
        throw FixtureError("the receiver did not finish: \(peer.lines.suffix(5).joined(separator: "\n"))")
    }
    return try Result(line: line)
}

/// Sends `count` messages through the relay, either all at once or one every millisecond.
func relaySender(count: Int, paced: Bool, configuration: PostgresNotificationTransport.Configuration) async throws
    -> Result
{
    let center = NotificationCenter()
    let transport = PostgresNotificationTransport(configuration: configuration)
    let relay = NotificationRelay(
        transport: transport, center: center, onEvent: { print("relay event: \($0)") },
        onFailure: { print("relay failure: \($0)") })
    relay.forward(PeerHandles.bench)
    await transport.flush()  // connected
    defer { relay.stop() }
    return try await measure(.relay, count: count) {
        for index in 0..<count {
            PeerHandles.bench.post(BenchPayload(index: index, sentAt: monotonicNanoseconds()), center: center)
            if paced { try await Task.sleep(for: .milliseconds(1)) }
        }
        await transport.flush()
    }
}

/// Sends `count` messages with PostgresNIO alone: JSONEncoder, then an awaited `SELECT pg_notify($1, $2)` each.
func rawSender(count: Int, paced: Bool, configuration: PostgresNotificationTransport.Configuration) async throws
    -> Result
{
    var logger = Logger(label: "bench")
    logger.logLevel = .warning
    let connection = try await PostgresConnection.connect(
        configuration: configuration.connection, id: 1, logger: logger)
    let channel = PeerHandles.bench.name.rawValue
    let encoder = JSONEncoder()
    let result = try await measure(.raw, count: count) {
        for index in 0..<count {
            let payload = BenchPayload(index: index, sentAt: monotonicNanoseconds())
            let json = String(decoding: try encoder.encode(payload), as: UTF8.self)
            _ = try await connection.query("SELECT pg_notify(\(channel), \(json))", logger: logger).collect()
            if paced { try await Task.sleep(for: .milliseconds(1)) }
        }
    }
    try await connection.close()
    return result
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func format(_ value: Double, _ digits: Int = 0) -> String {
    String(format: "%.\(digits)f", value)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard let configuration = TestServer.configuration else {
    print("NOTIFICATABLE_PG_PORT is not set: run through scripts/postgres.sh bench")
    exit(2)
}
print(
    "PostgreSQL relay benchmark: \(options.messages) messages for throughput, \(options.latencyMessages) paced "
        + "messages for latency, \(options.rounds) round(s), raw and relay interleaved")
var throughput: [Mode: [Double]] = [:]
var p50: [Mode: [Double]] = [:]
var p99: [Mode: [Double]] = [:]
var problems: [String] = []
do {
    for round in 1...options.rounds {
        let order: [Mode] = round.isMultiple(of: 2) ? [.relay, .raw] : [.raw, .relay]
        for mode in order {
            let burst: Result
            let paced: Result
            switch mode {
            case .raw:
                burst = try await rawSender(count: options.messages, paced: false, configuration: configuration)
                paced = try await rawSender(count: options.latencyMessages, paced: true, configuration: configuration)
            case .relay:
                burst = try await relaySender(count: options.messages, paced: false, configuration: configuration)
                paced = try await relaySender(
                    count: options.latencyMessages, paced: true, configuration: configuration)
            }
            for (phase, result) in [("burst", burst), ("paced", paced)]
            where result.duplicates > 0 || result.outOfOrder > 0 {
                problems.append(
                    "\(mode) \(phase): \(result.duplicates) duplicates, \(result.outOfOrder) out of order")
            }
            throughput[mode, default: []].append(burst.throughput)
            p50[mode, default: []].append(paced.percentile(0.5))
            p99[mode, default: []].append(paced.percentile(0.99))
            print(
                "round \(round) \(mode.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) "
                    + "throughput \(format(burst.throughput)) msg/s   latency p50 \(format(paced.percentile(0.5))) µs"
                    + "   p99 \(format(paced.percentile(0.99))) µs")
        }
    }
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
let rawThroughput = median(throughput[.raw] ?? [])
let relayThroughput = median(throughput[.relay] ?? [])
let rawP50 = median(p50[.raw] ?? [])
let relayP50 = median(p50[.relay] ?? [])
print("")
print("medians over \(options.rounds) round(s):")
print("  raw    \(format(rawThroughput)) msg/s   p50 \(format(rawP50)) µs   p99 \(format(median(p99[.raw] ?? []))) µs")
print(
    "  relay  \(format(relayThroughput)) msg/s   p50 \(format(relayP50)) µs   p99 \(format(median(p99[.relay] ?? []))) µs"
)
print(
    "  relay/raw: throughput \(format(relayThroughput / rawThroughput, 2))× (target ≥ 0.9×), "
        + "p50 \(format(relayP50 / rawP50, 2))× (target ≤ 1.1×)")
if !problems.isEmpty {
    print("problems: " + problems.joined(separator: "; "))
    exit(1)
}
if options.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
