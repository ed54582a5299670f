// Fan-in: 4 sender processes, one listener (this process), through the relay.
//
//   notificatable-pg-bench --mode fanin [--senders 4] [--messages N per sender] [--rounds R]
//
// Each sender is a peer running a relay (`notificatable-pg-peer relay NAME`) that posts N BurstItems as fast as it
// can. Throughput = 4N / (the last delivery here − the moment the senders were told to start); each sender's order
// is checked. A relay that forwards a name also listens to it, so each sender's session receives every sender's
// messages too: 4 senders and this listener make 5 listening sessions on the server. No raw variant: a raw sender
// is the pair mode's raw sender, four times.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay

/// Collects BurstItems by sender.
final class FanInTally: @unchecked Sendable {
    private let lock = NSLock()
    private var indices: [String: [Int]] = [:]
    private var total = 0
    private var lastReceived: UInt64 = 0

    func record(_ item: BurstItem) {
        let now = monotonicNanoseconds()
        lock.withLock {
            indices[item.sender, default: []].append(item.index)
            total += 1
            lastReceived = now
        }
    }

    var snapshot: (total: Int, last: UInt64, indices: [String: [Int]]) {
        lock.withLock { (total, lastReceived, indices) }
    }
}

func runFanInMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    let senders = arguments.int("--senders", 4, smoke: 2)
    let messages = arguments.int("--messages", 5_000, smoke: 50)
    let rounds = arguments.int("--rounds", 3, smoke: 1)
    print("fan-in: \(senders) sender processes × \(messages) messages to one listener, \(rounds) round(s)")
    var rates: [Double] = []
    var cpu: [Double] = []
    var problems: [String] = []
    for round in 1...rounds {
        let tally = FanInTally()
        let center = NotificationCenter()
        let transport = atMostOnceTransport(configuration)
        let relay = NotificationRelay(
            transport: transport, center: center, onEvent: { print("relay event: \($0)") },
            onFailure: { print("relay failure: \($0)") })
        relay.forward(PeerHandles.burst)
        let subscription = PeerHandles.burst.subscribe(center: center) { note in tally.record(note.userInfo) }
        await transport.flush()
        var peers: [LineProcess] = []
        defer {
            peers.forEach { $0.kill() }
            relay.stop()
            subscription.dispose()
        }
        do {
            for index in 0..<senders { peers.append(try await startPeer(["relay", "S\(index)"])) }
        } catch {
            print("benchmark failed: \(error)")
            return 1
        }
        let cpuBefore = ServerCPU.seconds()
        let start = monotonicNanoseconds()
        for peer in peers { peer.send("burst \(messages)") }
        await poll(timeout: .seconds(300), every: .milliseconds(2)) { tally.snapshot.total >= senders * messages }
        let cpuAfter = ServerCPU.seconds()
        let (total, last, indices) = tally.snapshot
        let rate = Double(total) / (Double(last &- start) / 1e9)
        let perMessage = cpuBefore.flatMap { before in cpuAfter.map { ($0 - before) * 1e6 / Double(total) } } ?? .nan
        for index in 0..<senders where indices["S\(index)"] != Array(0..<messages) {
            let got = indices["S\(index)"] ?? []
            problems.append(
                "round \(round) sender S\(index): \(got.count) received, in order: \(got == got.sorted())")
        }
        rates.append(rate)
        cpu.append(perMessage)
        print(
            "round \(round): \(total) of \(senders * messages) received, \(format(rate)) msg/s, every sender's order "
                + "kept: \(problems.isEmpty), server CPU \(format(perMessage, 1)) µs per message (all sessions)")
    }
    print("")
    print(
        "medians over \(rounds) round(s): \(format(median(rates))) msg/s into one listener from \(senders) senders; "
            + "server CPU \(format(median(cpu), 1)) µs per message (\(senders + 1) listening sessions)")
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
