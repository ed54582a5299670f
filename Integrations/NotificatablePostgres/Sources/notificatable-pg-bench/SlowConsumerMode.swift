// A slow consumer: a listener whose subscriber blocks while messages arrive.
//
//   notificatable-pg-bench --mode slow [--messages 50000] [--block-ms 5000] [--variants thread,queue,raw]
//
// A peer listens; its subscriber blocks for `--block-ms` at the first message: on the transport's delivery thread
// (`thread`), on an OperationQueue of its own (`queue`), or, as a baseline, raw PostgresNIO blocking in its listener
// callback on the connection's event loop (`raw`: what this transport did before it had a delivery queue). This
// process sends `--messages` messages at once through a transport (wire format for the relay, plain JSON for raw)
// and reads `pg_notification_queue_usage()` every 10 ms meanwhile (its peak, and its peak over the last 40 % of
// the block, when a reader that keeps reading has caught up and a stalled one still holds the queue's tail). Reported: messages received, dropped and out of
// order; the listener's resident memory before and at its peak; the most messages waiting in the listener at once;
// the server queue's peak usage.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

func runSlowConsumerMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration)
    async -> Int32
{
    let messages = arguments.int("--messages", 50_000, smoke: 200)
    let block = arguments.int("--block-ms", 5_000, smoke: 50)
    let variants = (arguments.string("--variants") ?? "thread,queue,raw").split(separator: ",").map(String.init)
    print("slow consumer: \(messages) messages while the subscriber blocks \(block) ms; variants \(variants)")
    print(
        "| subscriber | received | dropped | out of order | listener memory before → peak, MiB | most waiting "
            + "in the listener | server queue: peak usage | still held late in the block | seconds to deliver all |")
    print("|---|---|---|---|---|---|---|---|---|")
    var problems: [String] = []
    for variant in variants {
        do {
            let peer = try await startPeer(["slow-receive", variant, String(messages), String(block)])
            defer { peer.kill() }
            let monitor = try await PostgresConnection.connect(
                configuration: configuration.connection, id: 2, logger: quietLogger)
            let transport = try PostgresNotificationTransport(configuration: configuration)
            transport.start(
                handler: NotificationTransportHandler(receive: { _, _ in }, report: { print("event: \($0)") }))
            await transport.flush()
            let started = monotonicNanoseconds()
            let encoder = JSONEncoder()
            for index in 0..<messages {
                let data: Data
                if variant == "raw" {
                    data = try encoder.encode(BenchPayload(index: index, sentAt: monotonicNanoseconds()))
                } else {
                    let payload = BenchPayload(index: index, sentAt: monotonicNanoseconds())
                    data = try NotificationRelayMessage(
                        name: PeerHandles.bench.name, sender: "slow-sender", sequence: index + 1,
                        payload: [
                            "index": payload.index, "sentAt": Int(payload.sentAt), "orderID": payload.orderID,
                            "weight": payload.weight, "note": payload.note,
                        ]
                    ).encoded()
                }
                transport.publish(data, on: PeerHandles.bench.name.rawValue)
            }
            var peakUsage = 0.0
            // What the server's queue still holds late in the block (its last 40 %): what the socket could not
            // take while the listener was not reading. A lag that the reader catches up on is over by then.
            var heldLate = 0.0
            while !peer.lines.contains(where: { $0.hasPrefix("result ") || $0.hasPrefix("error") }) {
                let rows = try await monitor.query("SELECT pg_notification_queue_usage()", logger: quietLogger)
                let elapsed = Double(monotonicNanoseconds() - started) / 1e6
                for try await usage in rows.decode(Double.self) {
                    peakUsage = max(peakUsage, usage)
                    if elapsed >= Double(block) * 0.6 && elapsed < Double(block) { heldLate = max(heldLate, usage) }
                }
                try await Task.sleep(for: .milliseconds(10))
                if Double(monotonicNanoseconds() - started) / 1e9 > Double(block) / 1000 + 300 { break }
            }
            let seconds = Double(monotonicNanoseconds() - started) / 1e9
            transport.stop()
            try await monitor.close()
            guard let line = peer.lines.first(where: { $0.hasPrefix("result ") }) else {
                problems.append("\(variant): \(peer.lines.suffix(3).joined(separator: " / "))")
                continue
            }
            let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
            guard fields.count == 6 else {
                problems.append("\(variant): bad line \(line)")
                continue
            }
            if fields[0] != messages || fields[2] != 0 {
                problems.append("\(variant): \(fields[0]) of \(messages) received, \(fields[2]) out of order")
            }
            let mib = { (bytes: Int) in format(Double(bytes) / 1_048_576, 1) }
            print(
                "| \(variant) | \(fields[0]) | \(fields[1]) | \(fields[2]) | \(mib(fields[3])) → \(mib(fields[4])) | "
                    + "\(fields[5]) | \(String(format: "%.3g", peakUsage)) (\(format(peakUsage * 8 * 1024, 1)) MiB "
                    + "of 8 GiB) | \(format(heldLate * 8 * 1024, 1)) MiB | \(format(seconds, 1)) |")
        } catch {
            problems.append("\(variant): \(error)")
        }
    }
    if !problems.isEmpty {
        print("problems: " + problems.joined(separator: "; "))
        return 1
    }
    if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
    return 0
}
