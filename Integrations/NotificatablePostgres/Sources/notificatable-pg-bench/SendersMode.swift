// Many remote senders: the memory of one relay as 1, 100 and 10,000 senders come and go.
//
//   notificatable-pg-bench --mode senders [--senders 1,100,10000] [--tracked 1024]
//
// One relay in this process forwards the bench name. A peer that only publishes (in the relay's wire format) sends
// one message from each of S new senders (sender ids never seen before: senders that come and go, as processes
// restart); after each step this process's resident memory is read. The relay remembers the last sequence number
// of at most `maximumTrackedSenders` senders (`--tracked`, 1,024 by default), so the memory should stop growing
// there. Sizes are cumulative: the steps run one after the other on the same relay.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay

func runSendersMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    let steps = arguments.ints("--senders", [1, 100, 10_000, 10_000], smoke: [1, 100])
    let tracked = arguments.int("--tracked", NotificationRelay.defaultMaximumTrackedSenders, smoke: 16)
    print("many senders: steps of \(steps) new senders, one message each, maximumTrackedSenders \(tracked)")
    let sender: LineProcess
    do {
        sender = try await startPeer(["wire-send"])
    } catch {
        print("benchmark failed: \(error)")
        return 1
    }
    defer { sender.kill() }
    let tally = CountingTally()
    let center = NotificationCenter()
    let transport = atMostOnceTransport(configuration)
    let relay = NotificationRelay(
        transport: transport, center: center, maximumTrackedSenders: tracked,
        onEvent: { print("relay event: \($0)") }, onFailure: { print("relay failure: \($0)") })
    relay.forward(PeerHandles.bench)
    let subscription = PeerHandles.bench.subscribe(center: center) { _ in tally.record() }
    defer {
        relay.stop()
        subscription.dispose()
    }
    await transport.flush()
    // One message first, so that the first reading does not count what any first message allocates.
    sender.send("senders -1 1")
    _ = await sender.wait(timeout: .seconds(120)) { $0.contains { $0.hasPrefix("sent") } }
    let warmUpDeadline = ContinuousClock.now + .seconds(60)
    while tally.snapshot.count < 1 && ContinuousClock.now < warmUpDeadline {
        try? await Task.sleep(for: .milliseconds(2))
    }
    let baseline = residentBytes()
    print("| step | new senders | senders heard so far | resident memory growth, KiB | bytes per sender heard |")
    print("|---|---|---|---|---|")
    var first = 0
    var problems: [String] = []
    for (step, count) in steps.enumerated() {
        let expected = tally.snapshot.count + count
        let sent = sender.lines.filter { $0.hasPrefix("sent") }.count
        sender.send("senders \(first) \(count)")
        _ = await sender.wait(timeout: .seconds(120)) { $0.filter { $0.hasPrefix("sent") }.count > sent }
        await poll(timeout: .seconds(120), every: .milliseconds(2)) { tally.snapshot.count >= expected }
        if tally.snapshot.count != expected {
            problems.append("step \(step + 1): \(tally.snapshot.count) of \(expected) received")
        }
        first += count
        for line in sender.lines where line.hasPrefix("event") { problems.append("sender: \(line)") }
        let growth = residentBytes() - baseline
        print(
            "| \(step + 1) | \(count) | \(first) | \(format(Double(growth) / 1024)) | "
                + "\(format(Double(growth) / Double(first))) |")
    }
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
