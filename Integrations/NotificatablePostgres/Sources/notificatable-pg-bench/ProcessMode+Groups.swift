// The consumer-group rows of the processing benchmark (ProcessMode.swift), issue 39: several processes running the
// same `process` call under one consumer name share a stored backlog.
//   - group-1, group-2, group-4: `--group-messages` items (20,000 by default; 300 with --smoke) spread over
//     `--group-streams` partition keys (256), stored through a relay and left at rest (CHECKPOINT, VACUUM
//     (ANALYZE)); then 1, 2 or 4 peer processes (`durable-process SCHEMA group 4 keyed STEP`: concurrency 4, the
//     item's stream as the partition key, each handler awaiting `--group-step-us` µs, 5,000 by default) started at
//     once under one consumer name. The rate is from just before the first process is started to the instant the
//     last distinct item had been handled (each item's first handler return, on the monotonic clock the processes
//     share), start-up included. The medians give 2 / 1 and 4 / 1 against the goals 1.8× and 3.2×.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay

extension ProcessBenchmark.Case {
    /// How many processes share the backlog in a consumer-group row; nil for the other rows.
    var groupProcesses: Int? {
        switch self {
        case .group1: 1
        case .group2: 2
        case .group4: 4
        default: nil
        }
    }
}

extension ProcessBenchmark {
    /// What the consumer-group rows read from the command line.
    struct GroupSettings {
        /// The items of the backlog.
        var messages: Int
        /// The partition keys they are spread over (the item's index modulo this).
        var streams: Int
        /// What each handler awaits, in microseconds.
        var stepMicroseconds: Int

        /// Reads `--group-messages`, `--group-streams` and `--group-step-us`.
        init(_ arguments: BenchArguments) {
            messages = arguments.int("--group-messages", 20_000, smoke: 300)
            streams = arguments.int("--group-streams", 256, smoke: 256)
            stepMicroseconds = arguments.int("--group-step-us", 5_000, smoke: 5_000)
        }

        /// The benchmark's header line for these rows.
        var description: String {
            "consumer groups: \(messages) stored items over \(streams) keys, \(stepMicroseconds) µs of work per item, "
                + "concurrency 4 and a partition key, 1, 2 and 4 processes under one name"
        }
    }

    /// The first return of each item's handler, read from the peers' output as it comes (each line parsed once).
    final class GroupProgress {
        private let peers: [LineProcess]
        private var consumed: [Int]
        /// The earliest handler return of each item handled so far, by index.
        private(set) var firstEnds: [Int: UInt64] = [:]
        /// Every handler call so far, repeats included.
        private(set) var calls = 0
        /// The handler calls of each peer so far.
        private(set) var perPeer: [Int]

        /// Follows `peers`.
        init(_ peers: [LineProcess]) {
            self.peers = peers
            consumed = Array(repeating: 0, count: peers.count)
            perPeer = Array(repeating: 0, count: peers.count)
        }

        /// Reads the lines printed since the last call; returns how many distinct items have been handled.
        func update() -> Int {
            for (position, peer) in peers.enumerated() {
                let lines = peer.lines
                guard lines.count > consumed[position] else { continue }
                for line in lines[consumed[position]...] {
                    guard let call = GroupCall(line: line) else { continue }
                    calls += 1
                    perPeer[position] += 1
                    firstEnds[call.index] = min(firstEnds[call.index] ?? .max, call.end)
                }
                consumed[position] = lines.count
            }
            return firstEnds.count
        }
    }

    /// Stores the backlog, starts `processes` keyed peers under one consumer name, and waits until they have handled
    /// every item; returns the rate (messages per second, from just before the first start to the last item's
    /// first handler return) and a detail line (each process's share, the repeats).
    static func measureGroup(
        processes: Int, settings: GroupSettings, configuration: PostgresNotificationTransport.Configuration
    ) async throws -> (Double, String) {
        let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
        let streams = max(1, settings.streams)
        try await storeAtRest(
            DurableHandles.item, count: settings.messages, schema: schema, configuration: configuration
        ) { DurableItem(publisher: "bench", stream: $0 % streams, index: $0) }
        let arguments = ["durable-process", schema, "group", "4", "keyed", String(settings.stepMicroseconds)]
        let started = monotonicNanoseconds()
        var peers: [LineProcess] = []
        defer { peers.forEach { $0.kill() } }
        for _ in 0..<processes { peers.append(try LineProcess(peerPath, arguments)) }
        let progress = GroupProgress(peers)
        let finished = await poll(timeout: .seconds(900), every: .milliseconds(50)) {
            progress.update() >= settings.messages
        }
        peers.forEach { $0.kill() }
        _ = progress.update()
        _ = try TestServer.psql(["-tA", "-c", "DROP SCHEMA \"\(schema)\" CASCADE"])
        guard finished, let last = progress.firstEnds.values.max() else {
            let tails = peers.map { $0.lines.suffix(3).joined(separator: " | ") }.joined(separator: "\n")
            throw FixtureError("group of \(processes): \(progress.firstEnds.count) of \(settings.messages)\n\(tails)")
        }
        let seconds = Double(last - started) / 1e9
        let detail =
            "   calls per process \(progress.perPeer.map(String.init).joined(separator: "/")), "
            + "\(progress.calls - settings.messages) repeats"
        return (Double(settings.messages) / seconds, detail)
    }

    /// The medians' lines of the consumer-group rows at one `fsync` setting: 2 / 1 and 4 / 1 against their goals.
    static func printGroupRatios(chosen: [Case], rates: [String: [Double]], fsync: String) {
        let rate = { (which: Case) in median(rates["\(which.rawValue), fsync \(fsync)"] ?? []) }
        guard chosen.contains(.group1) else { return }
        for (which, goal) in [(Case.group2, 1.8), (Case.group4, 3.2)] where chosen.contains(which) {
            let ratio = rate(which) / rate(.group1)
            print(
                "  fsync \(fsync): consumer group, \(which.groupProcesses ?? 0) processes / 1 = "
                    + "\(format(ratio, 2))× (goal ≥ \(format(goal, 1))×\(ratio >= goal ? ", met" : ", not met"))")
        }
    }
}
