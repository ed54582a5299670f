// Fan-out: one sender, 1, 2, 4 and 8 listener processes, raw PostgresNIO and the relay interleaved.
//
//   notificatable-pg-bench --mode fanout [--listeners 1,2,4,8] [--messages N] [--latency-messages M] [--rounds R]
//
// For each listener count and round, for raw and the relay in turn (the order alternates between rounds):
// - throughput: the sender sends N messages as fast as it can; each listener's rate is N / (its last delivery − the
//   first send); the table shows the median listener (and the slowest);
// - latency: M messages, one every millisecond; p50 and p99 over every listener's deliveries;
// - server CPU: the PostgreSQL processes' CPU time during the burst / (N × listeners).
// The relay's sender forwards the name, so it listens too: its session is one more listener on the server.
// Then, with `--bystanders 8` (the default; 0 skips it): raw and the relay with one listener while 8 more sessions
// listen on other channels of the same database, to see whether a session pays for notifications it does not
// listen to.
import Foundation
import NotificatablePostgres
import NotificatablePostgresFixtures

func runFanOutMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    let listenerCounts = arguments.ints("--listeners", [1, 2, 4, 8], smoke: [1, 2])
    let messages = arguments.int("--messages", 10_000, smoke: 100)
    let latencyMessages = arguments.int("--latency-messages", 500, smoke: 10)
    let rounds = arguments.int("--rounds", 3, smoke: 1)
    print(
        "fan-out: listeners \(listenerCounts), \(messages) messages for throughput, \(latencyMessages) paced, "
            + "\(rounds) round(s), raw and relay interleaved; \(ProcessInfo.processInfo.activeProcessorCount) cores")
    struct Figures {
        var medianListener: [Double] = []
        var slowestListener: [Double] = []
        var p50: [Double] = []
        var p99: [Double] = []
        var cpuMicroseconds: [Double] = []
    }
    var figures: [String: Figures] = [:]
    var problems: [String] = []
    do {
        for listeners in listenerCounts {
            for round in 1...rounds {
                let order: [Mode] = round.isMultiple(of: 2) ? [.relay, .raw] : [.raw, .relay]
                for mode in order {
                    let send = { (count: Int, paced: Bool) async throws -> Measured in
                        mode == .raw
                            ? try await rawSender(
                                count: count, paced: paced, listeners: listeners, configuration: configuration)
                            : try await relaySender(
                                count: count, paced: paced, listeners: listeners, configuration: configuration)
                    }
                    let burst = try await send(messages, false)
                    let paced = try await send(latencyMessages, true)
                    for result in burst.results + paced.results where result.duplicates > 0 || result.outOfOrder > 0 {
                        problems.append(
                            "\(mode) ×\(listeners): \(result.duplicates) duplicates, \(result.outOfOrder) out of order")
                    }
                    let rates = burst.results.map(\.throughput)
                    let latencies = paced.results.flatMap(\.latencies)
                    let cpu = (burst.serverCPUSeconds ?? .nan) * 1e6 / Double(messages * listeners)
                    let key = "\(mode.rawValue) \(listeners)"
                    figures[key, default: Figures()].medianListener.append(median(rates))
                    figures[key, default: Figures()].slowestListener.append(rates.min() ?? .nan)
                    figures[key, default: Figures()].p50.append(Result.percentile(latencies, 0.5))
                    figures[key, default: Figures()].p99.append(Result.percentile(latencies, 0.99))
                    figures[key, default: Figures()].cpuMicroseconds.append(cpu)
                    print(
                        "round \(round) \(mode.rawValue) ×\(listeners): per listener \(format(median(rates))) msg/s "
                            + "(slowest \(format(rates.min() ?? .nan))), p50 "
                            + "\(format(Result.percentile(latencies, 0.5))) µs, p99 "
                            + "\(format(Result.percentile(latencies, 0.99))) µs, server CPU \(format(cpu, 1)) µs "
                            + "per message per listener")
                }
            }
        }
    } catch {
        print("benchmark failed: \(error)")
        return 1
    }
    print("")
    print("medians over \(rounds) round(s):")
    print("| listeners | path | msg/s per listener (slowest) | p50 µs | p99 µs | server CPU µs / msg / listener |")
    print("|---|---|---|---|---|---|")
    for listeners in listenerCounts {
        for mode in [Mode.raw, .relay] {
            guard let f = figures["\(mode.rawValue) \(listeners)"] else { continue }
            print(
                "| \(listeners) | \(mode.rawValue) | \(format(median(f.medianListener))) "
                    + "(\(format(median(f.slowestListener)))) | \(format(median(f.p50))) | \(format(median(f.p99))) | "
                    + "\(format(median(f.cpuMicroseconds), 1)) |")
        }
    }
    let bystanders = arguments.int("--bystanders", 8, smoke: 1)
    for mode in bystanders > 0 ? [Mode.raw, .relay] : [] {
        let send = { () async throws -> Measured in
            mode == .raw
                ? try await rawSender(count: messages, paced: false, listeners: 1, configuration: configuration)
                : try await relaySender(count: messages, paced: false, listeners: 1, configuration: configuration)
        }
        var alone: [Double] = []
        var withBystanders: [Double] = []
        var rateAlone: [Double] = []
        var rateWithBystanders: [Double] = []
        do {
            for _ in 1...rounds {
                let quiet = try await send()
                alone.append((quiet.serverCPUSeconds ?? .nan) * 1e6 / Double(messages))
                rateAlone.append(quiet.results[0].throughput)
                var peers: [LineProcess] = []
                defer { peers.forEach { $0.kill() } }
                for index in 0..<bystanders { peers.append(try await startPeer(["relay", "bystander\(index)"])) }
                let crowded = try await send()
                withBystanders.append((crowded.serverCPUSeconds ?? .nan) * 1e6 / Double(messages))
                rateWithBystanders.append(crowded.results[0].throughput)
            }
        } catch {
            print("benchmark failed: \(error)")
            return 1
        }
        print(
            "\(mode.rawValue), 1 listener: server CPU \(format(median(alone), 1)) µs per message, "
                + "\(format(median(rateAlone))) msg/s; with \(bystanders) sessions listening on other channels: "
                + "\(format(median(withBystanders), 1)) µs per message, \(format(median(rateWithBystanders))) msg/s")
    }
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
