// The durable mode of the benchmark: `notificatable-pg-bench --mode durable [--messages N] [--latency-messages M]
// [--rounds R] [--smoke]` (or `scripts/postgres.sh bench --mode durable`); registered in main.swift.
//
// Each round runs raw PostgresNIO, the at-most-once relay (PostgresNotificationTransport) and the durable relay
// (DurablePostgresNotificationTransport, a fresh outbox schema per measurement) in turn, the order rotating between
// rounds: a burst of N messages for throughput and M messages paced one per millisecond for latency, measured in the
// receiving process as in the default mode. Prints each round, the medians, and durable/at-most-once ratios.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

/// `--mode durable`.
func runDurableMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    await DurableBenchmark.run(arguments, configuration: configuration)
}

enum DurableBenchmark {
    enum Path: String, CaseIterable {
        case raw, relay, durable
    }

    /// Runs the benchmark; returns the exit status.
    static func run(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
        -> Int32
    {
        let messages = arguments.int("--messages", 10_000, smoke: 200)
        let latencyMessages = arguments.int("--latency-messages", 1_000, smoke: 20)
        let rounds = arguments.int("--rounds", 3, smoke: 1)
        let smoke = arguments.smoke
        print(
            "PostgreSQL durable benchmark: \(messages) messages for throughput, \(latencyMessages) paced messages "
                + "for latency, \(rounds) round(s), raw, at-most-once relay and durable relay interleaved")
        var throughput: [Path: [Double]] = [:]
        var p50: [Path: [Double]] = [:]
        var p99: [Path: [Double]] = [:]
        var problems: [String] = []
        do {
            for round in 1...rounds {
                let paths = Path.allCases
                let order = (0..<paths.count).map { paths[($0 + round - 1) % paths.count] }
                for path in order {
                    let burst: Result
                    let paced: Result
                    switch path {
                    case .raw:
                        burst = try await rawSender(count: messages, paced: false, configuration: configuration)
                            .results[0]
                        paced = try await rawSender(count: latencyMessages, paced: true, configuration: configuration)
                            .results[0]
                    case .relay:
                        burst = try await relaySender(count: messages, paced: false, configuration: configuration)
                            .results[0]
                        paced = try await relaySender(
                            count: latencyMessages, paced: true, configuration: configuration
                        ).results[0]
                    case .durable:
                        burst = try await durableSender(count: messages, paced: false, configuration: configuration)
                        paced = try await durableSender(
                            count: latencyMessages, paced: true, configuration: configuration)
                    }
                    for (phase, result) in [("burst", burst), ("paced", paced)]
                    where result.duplicates > 0 || result.outOfOrder > 0 {
                        problems.append(
                            "\(path) \(phase): \(result.duplicates) duplicates, \(result.outOfOrder) out of order")
                    }
                    throughput[path, default: []].append(burst.throughput)
                    p50[path, default: []].append(paced.percentile(0.5))
                    p99[path, default: []].append(paced.percentile(0.99))
                    print(
                        "round \(round) \(path.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) "
                            + "throughput \(format(burst.throughput)) msg/s   latency p50 "
                            + "\(format(paced.percentile(0.5))) µs   p99 \(format(paced.percentile(0.99))) µs")
                }
            }
        } catch {
            print("benchmark failed: \(error)")
            return 1
        }
        print("")
        print("medians over \(rounds) round(s):")
        for path in Path.allCases {
            print(
                "  \(path.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) "
                    + "\(format(median(throughput[path] ?? []))) msg/s   p50 \(format(median(p50[path] ?? []))) µs   "
                    + "p99 \(format(median(p99[path] ?? []))) µs")
        }
        let ratio = { (values: [Path: [Double]], path: Path) in
            median(values[.durable] ?? []) / median(values[path] ?? [])
        }
        print(
            "  durable/at-most-once: throughput \(format(ratio(throughput, .relay), 2))× (goal ≥ 0.5×), "
                + "p50 \(format(ratio(p50, .relay), 2))× (goal ≤ 3×), p99 \(format(ratio(p99, .relay), 2))×")
        print(
            "  durable/raw: throughput \(format(ratio(throughput, .raw), 2))×, p50 \(format(ratio(p50, .raw), 2))×")
        if !problems.isEmpty {
            print("problems: " + problems.joined(separator: "; "))
            return 1
        }
        if smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
        return 0
    }

    /// Sends `count` messages through a relay over the durable transport, to a receiver of a fresh schema.
    static func durableSender(
        count: Int, paced: Bool, configuration: PostgresNotificationTransport.Configuration
    ) async throws -> Result {
        let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
        var durable = DurablePostgresNotificationTransport.Configuration(
            connection: configuration.connection, consumer: "bench-sender")
        durable.schema = schema
        durable.retentionInterval = nil
        let center = NotificationCenter()
        let transport = try DurablePostgresNotificationTransport(configuration: durable)
        let relay = NotificationRelay(
            transport: transport, center: center, onEvent: { print("relay event: \($0)") },
            onFailure: { print("relay failure: \($0)") })
        relay.forward(PeerHandles.bench)
        await transport.flush()  // the tables exist
        defer { relay.stop() }
        let peer = try LineProcess(peerPath, ["bench-receive-durable", schema, String(count)])
        defer { peer.kill() }
        guard await peer.wait(timeout: .seconds(60), until: { $0.contains("ready") }) else {
            throw FixtureError("the receiver did not get ready: \(peer.lines.joined(separator: "\n"))")
        }
        for index in 0..<count {
            PeerHandles.bench.post(BenchPayload(index: index, sentAt: monotonicNanoseconds()), center: center)
            if paced { try await Task.sleep(for: .milliseconds(1)) }
        }
        await transport.flush()
        guard
            await peer.wait(
                timeout: .seconds(300), until: { $0.contains { $0.hasPrefix("result ") || $0.hasPrefix("error") } }),
            let line = peer.lines.first(where: { $0.hasPrefix("result ") })
        else {
            throw FixtureError("the receiver did not finish: \(peer.lines.suffix(5).joined(separator: "\n"))")
        }
        return try Result(line: line)
    }
}
