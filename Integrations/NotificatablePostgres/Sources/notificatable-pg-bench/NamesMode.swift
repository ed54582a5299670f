// Many names: one relay forwarding 10, 100, 1,000 and 10,000 names.
//
//   notificatable-pg-bench --mode names [--names 10,100,1000,10000] [--messages N] [--rounds R]
//
// For each count K and round, in this process: a fresh relay, once connected, forwards K names (bench.names.0 …),
// then `flush()` waits until every LISTEN is in effect. Reported: that start-up time, the server's CPU time meanwhile, this
// process's resident memory growth / K (memory per forwarded name: relay, transport, PostgresNIO listener, observer),
// and the throughput when a sender (a peer that only publishes, in the relay's wire format) spreads N posts
// round-robin over all K names.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay

/// Counts deliveries and remembers the last one's time.
final class CountingTally: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var lastReceived: UInt64 = 0

    func record() {
        let now = monotonicNanoseconds()
        lock.withLock {
            count += 1
            lastReceived = now
        }
    }

    var snapshot: (count: Int, last: UInt64) { lock.withLock { (count, lastReceived) } }
}

func runNamesMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    let nameCounts = arguments.ints("--names", [10, 100, 1_000, 10_000], smoke: [10, 100])
    let messages = arguments.int("--messages", 10_000, smoke: 100)
    let rounds = arguments.int("--rounds", 3, smoke: 1)
    print("many names: \(nameCounts) names, \(messages) messages spread over them, \(rounds) round(s)")
    struct Figures {
        var startup: [Double] = []
        var startupCPU: [Double] = []
        var bytesPerName: [Double] = []
        var throughput: [Double] = []
        var cpuPerMessage: [Double] = []
    }
    var figures: [Int: Figures] = [:]
    var problems: [String] = []
    let sender: LineProcess
    do {
        sender = try await startPeer(["wire-send"])
    } catch {
        print("benchmark failed: \(error)")
        return 1
    }
    defer { sender.kill() }
    for count in nameCounts {
        let handles = (0..<count).map { Notificatable<BenchPayload>.name("bench.names.\($0)") }
        for round in 1...rounds {
            let tally = CountingTally()
            let center = NotificationCenter()
            let transport = atMostOnceTransport(configuration)
            let relay = NotificationRelay(
                transport: transport, center: center, onEvent: { print("relay event: \($0)") },
                onFailure: { print("relay failure: \($0)") })
            // Connected, with one name, before the clock and the memory reading start.
            let warmUp = relay.forward(Notificatable<BenchPayload>.name("bench.names.warm-up"))
            await transport.flush()
            let residentBefore = residentBytes()
            let cpuBefore = ServerCPU.seconds()
            let started = monotonicNanoseconds()
            var forwardings: [Disposable] = []
            forwardings.reserveCapacity(count)
            for handle in handles { forwardings.append(relay.forward(handle)) }
            await transport.flush()
            let startup = Double(monotonicNanoseconds() - started) / 1e9
            let startupCPU = ServerCPU.seconds().flatMap { after in cpuBefore.map { after - $0 } } ?? .nan
            let perName = Double(residentBytes() - residentBefore) / Double(count)
            let subscriptions = handles.map { $0.subscribe(center: center) { _ in tally.record() } }

            let cpuSend = ServerCPU.seconds()
            let sent = sender.lines.filter { $0.hasPrefix("sent") }.count
            let start = monotonicNanoseconds()
            sender.send("names \(count) \(messages)")
            await poll(timeout: .seconds(300), every: .milliseconds(2)) { tally.snapshot.count >= messages }
            let (received, last) = tally.snapshot
            let cpuPerMessage =
                ServerCPU.seconds().flatMap { after in cpuSend.map { (after - $0) * 1e6 / Double(messages) } } ?? .nan
            _ = await sender.wait(timeout: .seconds(60)) { $0.filter { $0.hasPrefix("sent") }.count > sent }
            let rate = Double(received) / (Double(last &- start) / 1e9)
            if received != messages { problems.append("\(count) names, round \(round): \(received) of \(messages)") }
            for line in sender.lines where line.hasPrefix("event") { problems.append("sender: \(line)") }

            relay.stop()
            subscriptions.forEach { $0.dispose() }
            forwardings.forEach { $0.dispose() }
            warmUp.dispose()
            figures[count, default: Figures()].startup.append(startup)
            figures[count, default: Figures()].startupCPU.append(startupCPU)
            figures[count, default: Figures()].bytesPerName.append(perName)
            figures[count, default: Figures()].throughput.append(rate)
            figures[count, default: Figures()].cpuPerMessage.append(cpuPerMessage)
            print(
                "\(count) names, round \(round): start-up \(format(startup * 1000, 1)) ms (server CPU "
                    + "\(format(startupCPU * 1000, 0)) ms), \(format(perName)) bytes per name, \(received) received, "
                    + "\(format(rate)) msg/s, server CPU \(format(cpuPerMessage, 1)) µs per message")
        }
    }
    print("")
    print("medians over \(rounds) round(s):")
    print(
        "| names | start-up ms | server CPU at start-up ms | resident bytes per name | msg/s over all names | "
            + "server CPU µs / msg |")
    print("|---|---|---|---|---|---|")
    for count in nameCounts {
        guard let f = figures[count] else { continue }
        print(
            "| \(count) | \(format(median(f.startup) * 1000, 1)) | \(format(median(f.startupCPU) * 1000)) | "
                + "\(format(median(f.bytesPerName))) | \(format(median(f.throughput))) | "
                + "\(format(median(f.cpuPerMessage), 1)) |")
    }
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
