// The benchmark: a typed post in this process (A) to its typed delivery in another (B, notificatable-pg-peer),
// through NotificationRelay over PostgresNotificationTransport, against raw PostgresNIO with a hand-written
// JSONEncoder/JSONDecoder of the same struct, on the same server, in the same run, the two interleaved.
//
//   notificatable-pg-bench [--mode pair] [--messages N] [--latency-messages M] [--rounds R] [--smoke]
//
// Each round runs, for the raw path, the relay, and the relay whose receiving transport delivers on the event loop
// (`Configuration.deliversOnEventLoop`), in turn (the order reverses between rounds):
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

struct PairOptions {
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
            default: break
            }
        }
    }
}

/// The pair mode: one sender, one listener, raw and relay interleaved. Returns the exit status.
func runPairMode(_ arguments: [String], configuration: PostgresNotificationTransport.Configuration) async -> Int32 {
    let options = PairOptions(arguments)
    print(
        "PostgreSQL relay benchmark: \(options.messages) messages for throughput, \(options.latencyMessages) paced "
            + "messages for latency, \(options.rounds) round(s), raw and relay interleaved")
    var throughput: [Mode: [Double]] = [:]
    var p50: [Mode: [Double]] = [:]
    var p99: [Mode: [Double]] = [:]
    var problems: [String] = []
    do {
        for round in 1...options.rounds {
            let paths: [Mode] = [.raw, .relay, .relayInline]
            let order = round.isMultiple(of: 2) ? paths.reversed() : paths
            for mode in order {
                let burst: Result
                let paced: Result
                switch mode {
                case .raw:
                    burst = try await rawSender(count: options.messages, paced: false, configuration: configuration)
                        .results[0]
                    paced = try await rawSender(
                        count: options.latencyMessages, paced: true, configuration: configuration
                    ).results[0]
                case .relay, .relayInline:
                    burst = try await relaySender(
                        count: options.messages, paced: false, configuration: configuration, receiver: mode
                    ).results[0]
                    paced = try await relaySender(
                        count: options.latencyMessages, paced: true, configuration: configuration, receiver: mode
                    ).results[0]
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
                    "round \(round) \(mode.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) "
                        + "throughput \(format(burst.throughput)) msg/s   latency p50 "
                        + "\(format(paced.percentile(0.5))) µs   p99 \(format(paced.percentile(0.99))) µs")
            }
        }
    } catch {
        print("benchmark failed: \(error)")
        return 1
    }
    let rawThroughput = median(throughput[.raw] ?? [])
    let relayThroughput = median(throughput[.relay] ?? [])
    let rawP50 = median(p50[.raw] ?? [])
    let relayP50 = median(p50[.relay] ?? [])
    print("")
    print("medians over \(options.rounds) round(s):")
    print(
        "  raw    \(format(rawThroughput)) msg/s   p50 \(format(rawP50)) µs   p99 \(format(median(p99[.raw] ?? []))) µs"
    )
    print(
        "  relay  \(format(relayThroughput)) msg/s   p50 \(format(relayP50)) µs   p99 "
            + "\(format(median(p99[.relay] ?? []))) µs")
    print(
        "  relay, delivering on the event loop (deliversOnEventLoop)  \(format(median(throughput[.relayInline] ?? []))) "
            + "msg/s   p50 \(format(median(p50[.relayInline] ?? []))) µs   p99 "
            + "\(format(median(p99[.relayInline] ?? []))) µs")
    print(
        "  relay/raw: throughput \(format(relayThroughput / rawThroughput, 2))× (target ≥ 0.9×), "
            + "p50 \(format(relayP50 / rawP50, 2))× (target ≤ 1.1×)")
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if options.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
