// The processing mode of the benchmark: `notificatable-pg-bench --mode process [--messages N] [--backlog B]
// [--rounds R] [--smoke]` (or `scripts/postgres.sh bench --mode process`); registered in main.swift.
//
// Measures acknowledged processing (`DurablePostgresNotificationTransport.process`) in this process, a fresh outbox
// schema per measurement, stored beforehand through a relay:
//   - processed messages per second with a handler that awaits 1 ms of simulated work, at concurrency 1 and 16
//     (N and 4 N messages; from the start of `process` to the last handler call);
//   - the catch-up rate over a backlog of B messages with a handler that does nothing (from the start of `process`
//     to the last handler call), the time of its first and last tenth (from the first handler call on, so that the
//     start-up, printed apart, is in neither): over a backlog at rest (stored, then a CHECKPOINT and a VACUUM
//     (ANALYZE) of the outbox, what the checkpointer and autovacuum do to a backlog that built up while its consumer
//     was away), and right after storing it (the server still writing the backlog out while it is read);
//   - issue 43's rows, ProcessMode+Publishing.swift: the enqueue rows (`--enqueue N`, `--batch B`), the job queues'
//     enqueue and drain beside ours (`--peers SCRIPT`) and the catch-up of a consumer process started behind a
//     backlog (`--held-out N`, `--baseline-peer`);
//   - issue 39's rows, ProcessMode+Groups.swift: a stored backlog shared by 1, 2 and 4 processes under one consumer
//     name, a partition key and concurrency 4 (`--group-messages N`, `--group-streams K`, `--group-step-us µs`);
// `--cases one,sixteen,catch-up,catch-up-fresh,catch-up-process,enqueue-batch,enqueue-batch-before,
// enqueue-batch-unprepared,enqueue-batch-copy,enqueue-single,enqueue-single-before,group-1,group-2,group-4` (and
// `pgqueuer`, `procrastinate`, `oban`, `pgqueuer-one`, `pgqueuer-sixteen`, `procrastinate-one`, …, `oban-sixteen`,
// `catch-up-process-baseline` when their options are given) picks some (all by default);
// each with the server's `fsync` off (how scripts/postgres.sh starts it) and on (`ALTER SYSTEM`, reloaded), the
// order rotating between rounds. Prints each round and the medians.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

/// `--mode process`.
func runProcessMode(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
    -> Int32
{
    await ProcessBenchmark.run(arguments, configuration: configuration)
}

enum ProcessBenchmark {
    enum Case: String, CaseIterable {
        case one = "1 ms work, concurrency 1"
        case sixteen = "1 ms work, concurrency 16"
        case catchUp = "catch-up, no work"
        case catchUpFresh = "catch-up right after storing, no work"
        case catchUpProcess = "catch-up in a new process, at rest"
        case catchUpProcessBaseline = "catch-up in a new process, at rest, baseline peer"
        case enqueueBatch = "enqueue, a batch per transaction, post(contentsOf:)"
        case enqueueBatchBefore = "enqueue, a batch per transaction, one previous statement each"
        case enqueueBatchUnprepared = "enqueue, a batch per transaction, the batch statement unprepared"
        case enqueueBatchCopy = "enqueue, a batch per transaction, COPY FROM STDIN and a pg_notify"
        case enqueueSingle = "enqueue, one post per transaction"
        case enqueueSingleBefore = "enqueue, one previous statement per transaction"
        case pgqueuer = "pgqueuer enqueue, a batch per transaction"
        case procrastinate = "procrastinate enqueue, a batch per transaction"
        case oban = "Oban enqueue, a batch per transaction"
        case pgqueuerOne = "pgqueuer, 1 ms work, concurrency 1"
        case pgqueuerSixteen = "pgqueuer, 1 ms work, concurrency 16"
        case procrastinateOne = "procrastinate, 1 ms work, concurrency 1"
        case procrastinateSixteen = "procrastinate, 1 ms work, concurrency 16"
        case obanOne = "Oban, 1 ms work, concurrency 1"
        case obanSixteen = "Oban, 1 ms work, concurrency 16"
        case group1 = "consumer group, keyed backlog, 1 process"
        case group2 = "consumer group, keyed backlog, 2 processes under one name"
        case group4 = "consumer group, keyed backlog, 4 processes under one name"

        /// Its name for `--cases`.
        var option: String {
            switch self {
            case .one: "one"
            case .sixteen: "sixteen"
            case .catchUp: "catch-up"
            case .catchUpFresh: "catch-up-fresh"
            case .catchUpProcess: "catch-up-process"
            case .catchUpProcessBaseline: "catch-up-process-baseline"
            case .enqueueBatch: "enqueue-batch"
            case .enqueueBatchBefore: "enqueue-batch-before"
            case .enqueueBatchUnprepared: "enqueue-batch-unprepared"
            case .enqueueBatchCopy: "enqueue-batch-copy"
            case .enqueueSingle: "enqueue-single"
            case .enqueueSingleBefore: "enqueue-single-before"
            case .pgqueuer: "pgqueuer"
            case .procrastinate: "procrastinate"
            case .oban: "oban"
            case .pgqueuerOne: "pgqueuer-one"
            case .pgqueuerSixteen: "pgqueuer-sixteen"
            case .procrastinateOne: "procrastinate-one"
            case .procrastinateSixteen: "procrastinate-sixteen"
            case .obanOne: "oban-one"
            case .obanSixteen: "oban-sixteen"
            case .group1: "group-1"
            case .group2: "group-2"
            case .group4: "group-4"
            }
        }

        var isCatchUp: Bool { self == .catchUp || self == .catchUpFresh }
        var isEnqueue: Bool {
            [
                .enqueueBatch, .enqueueBatchBefore, .enqueueBatchUnprepared, .enqueueBatchCopy, .enqueueSingle,
                .enqueueSingleBefore,
            ].contains(self)
        }
    }

    /// The handler's calls: when each one finished, in order of finishing.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [UInt64] = []
        private var seen = Set<Int>()
        private(set) var duplicates = 0

        func record(_ index: Int) {
            let now = monotonicNanoseconds()
            lock.withLock {
                if seen.insert(index).inserted { times.append(now) } else { duplicates += 1 }
            }
        }

        var count: Int { lock.withLock { times.count } }
        var snapshot: [UInt64] { lock.withLock { times } }
    }

    static func run(_ arguments: BenchArguments, configuration: PostgresNotificationTransport.Configuration) async
        -> Int32
    {
        let messages = arguments.int("--messages", 3_000, smoke: 100)
        let backlog = arguments.int("--backlog", 100_000, smoke: 500)
        let enqueue = arguments.int("--enqueue", 20_000, smoke: 200)
        let batch = arguments.int("--batch", 100, smoke: 10)
        let heldOut = arguments.int("--held-out", 50_000, smoke: 300)
        // `--pgqueuer` is the option's name before the other job queues (scripts/pgqueuer-enqueue.py forwards).
        let peersScript = arguments.string("--peers") ?? arguments.string("--pgqueuer")
        let baselinePeer = arguments.string("--baseline-peer")
        let group = GroupSettings(arguments)
        let available = Case.allCases.filter {
            ($0.peer == nil || peersScript != nil) && ($0 != .catchUpProcessBaseline || baselinePeer != nil)
        }
        let chosen =
            arguments.string("--cases").map { names in
                available.filter { names.split(separator: ",").contains(Substring($0.option)) }
            } ?? available
        let rounds = arguments.int("--rounds", 3, smoke: 1)
        if chosen.contains(where: { $0.groupProcesses == nil }) {
            print(
                "PostgreSQL processing benchmark: \(messages) messages with 1 ms of work at concurrency 1 and 16, a "
                    + "backlog of \(backlog) without work, fsync off and on, \(rounds) round(s)")
        }
        if chosen.contains(where: { $0.groupProcesses != nil }) {
            print("PostgreSQL processing benchmark, \(group.description), fsync off and on, \(rounds) round(s)")
        }
        var rates: [String: [Double]] = [:]
        var tenths: [String: [Double]] = [:]
        do {
            for round in 1...rounds {
                for fsync in (round % 2 == 1 ? [false, true] : [true, false]) {
                    try setFsync(fsync)
                    // Reversed every other round, so that no case always follows the same one (what a case leaves
                    // to the server, dead rows or dirty pages, falls on whatever runs next).
                    let cases = round % 2 == 0 ? Array(chosen.reversed()) : chosen
                    for offset in 0..<cases.count {
                        let which = cases[(offset + round - 1) % cases.count]
                        let label = "\(which.rawValue), fsync \(fsync ? "on" : "off")"
                        if which.isEnqueue || which.peer != nil || which == .catchUpProcess
                            || which == .catchUpProcessBaseline || which.groupProcesses != nil
                        {
                            let rate: Double
                            var detail = ""
                            switch which {
                            case _ where which.peer != nil:
                                let (queue, concurrency) = which.peer ?? ("", nil)
                                rate = try measurePeer(
                                    script: peersScript ?? "", queue: queue, concurrency: concurrency,
                                    count: concurrency == nil ? enqueue : concurrency == 1 ? messages : messages * 4,
                                    batch: batch)
                            case .catchUpProcess, .catchUpProcessBaseline:
                                let peer = which == .catchUpProcess ? peerPath : baselinePeer ?? peerPath
                                let (measured, startUp) = try await measureCatchUpProcess(
                                    count: heldOut, peer: peer, configuration: configuration)
                                rate = measured
                                detail = "   start-up \(format(startUp * 1000)) ms"
                            case .group1, .group2, .group4:
                                let (measured, shares) = try await measureGroup(
                                    processes: which.groupProcesses ?? 1, settings: group,
                                    configuration: configuration)
                                rate = measured
                                detail = shares
                            default:
                                let single = which == .enqueueSingle || which == .enqueueSingleBefore
                                rate = try await measureEnqueue(
                                    which, count: single ? max(1, enqueue / 4) : enqueue, batch: batch,
                                    configuration: configuration)
                            }
                            rates[label, default: []].append(rate)
                            print("round \(round) \(label): \(format(rate)) msg/s\(detail)")
                            continue
                        }
                        let count = which.isCatchUp ? backlog : which == .sixteen ? messages * 4 : messages
                        let (rate, firstTenth, lastTenth, duplicates, startUp) = try await measure(
                            which, count: count, configuration: configuration)
                        rates[label, default: []].append(rate)
                        if which.isCatchUp { tenths[label, default: []].append(lastTenth / firstTenth) }
                        print(
                            "round \(round) \(label): \(format(rate)) msg/s"
                                + (which.isCatchUp
                                    ? "   first tenth \(format(firstTenth * 1000)) ms, last tenth "
                                        + "\(format(lastTenth * 1000)) ms, start-up \(format(startUp * 1000)) ms"
                                    : "")
                                + (duplicates > 0 ? "   \(duplicates) duplicates" : ""))
                    }
                }
            }
            try setFsync(false)
        } catch {
            print("benchmark failed: \(error)")
            try? setFsync(false)
            return 1
        }
        print("")
        print("medians over \(rounds) round(s):")
        for fsync in ["off", "on"] {
            for which in chosen {
                let label = "\(which.rawValue), fsync \(fsync)"
                var line = "  \(label): \(format(median(rates[label] ?? []))) msg/s"
                if which.isCatchUp { line += ", last/first tenth \(format(median(tenths[label] ?? []), 2))×" }
                print(line)
            }
            let label = { (which: Case) in "\(which.rawValue), fsync \(fsync)" }
            if chosen.contains(.enqueueBatch), chosen.contains(.enqueueBatchBefore) {
                let ratio = median(rates[label(.enqueueBatch)] ?? []) / median(rates[label(.enqueueBatchBefore)] ?? [])
                print("  fsync \(fsync): post(contentsOf:) / the previous statement per post = \(format(ratio, 2))×")
            }
            for peer in chosen where peer.peer != nil {
                guard let ours = peer.ours, chosen.contains(ours) else { continue }
                let ratio = median(rates[label(ours)] ?? []) / median(rates[label(peer)] ?? [])
                let name = ours == .enqueueBatch ? "post(contentsOf:)" : ours.option
                print(
                    "  fsync \(fsync): \(name) / \(peer.option) = \(format(ratio, 2))×"
                        + (peer == .pgqueuer ? " (goal ≥ 1.5×)" : ""))
            }
            for other in [Case.enqueueBatchUnprepared, .enqueueBatchCopy] where chosen.contains(.enqueueBatch) {
                guard chosen.contains(other) else { continue }
                let ratio = median(rates[label(.enqueueBatch)] ?? []) / median(rates[label(other)] ?? [])
                print("  fsync \(fsync): post(contentsOf:) / \(other.option) = \(format(ratio, 2))×")
            }
            if chosen.contains(.enqueueSingle), chosen.contains(.enqueueSingleBefore) {
                let ratio =
                    median(rates[label(.enqueueSingle)] ?? []) / median(rates[label(.enqueueSingleBefore)] ?? [])
                print(
                    "  fsync \(fsync): one post per transaction, today / the previous statement = \(format(ratio, 2))×")
            }
            if chosen.contains(.catchUpProcess), chosen.contains(.catchUpProcessBaseline) {
                let ratio =
                    median(rates[label(.catchUpProcess)] ?? [])
                    / median(rates[label(.catchUpProcessBaseline)] ?? [])
                print(
                    "  fsync \(fsync): catch-up in a new process, this build / the baseline peer = \(format(ratio, 2))×"
                )
            }
            printGroupRatios(chosen: chosen, rates: rates, fsync: fsync)
            guard chosen.contains(.one), chosen.contains(.sixteen) else { continue }
            let one = median(rates["\(Case.one.rawValue), fsync \(fsync)"] ?? [])
            let sixteen = median(rates["\(Case.sixteen.rawValue), fsync \(fsync)"] ?? [])
            print("  fsync \(fsync): concurrency 16 / 1 = \(format(sixteen / one, 1))× (goal ≥ 8×)")
        }
        if arguments.smoke { print("smoke run: figures from a debug build and few messages mean nothing") }
        return 0
    }

    /// Sets the server's `fsync` with `ALTER SYSTEM` and a reload, and waits until a new session sees it (the reload
    /// is asynchronous; and a setting on the server's command line would outrank `ALTER SYSTEM`, as `-c fsync=off`
    /// in scripts/postgres.sh did: every "fsync on" row ran with fsync off).
    static func setFsync(_ on: Bool) throws {
        let value = on ? "on" : "off"
        let (output, status) = try TestServer.psql([
            "-tA", "-c", "ALTER SYSTEM SET fsync = \(value)", "-c", "SELECT pg_reload_conf()",
        ])
        guard status == 0 else { throw FixtureError("psql: \(output)") }
        var shown = ""
        for _ in 0..<50 {
            shown = try TestServer.psql(["-tA", "-c", "SHOW fsync"]).output.trimmingCharacters(
                in: .whitespacesAndNewlines)
            if shown == value { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw FixtureError("fsync is \(shown) after ALTER SYSTEM SET fsync = \(value) and a reload")
    }

    /// Stores `count` messages, then processes them; returns the rate, the seconds of the first and last tenth,
    /// and the duplicates.
    static func measure(_ which: Case, count: Int, configuration: PostgresNotificationTransport.Configuration)
        async throws -> (Double, Double, Double, Int, Double)
    {
        let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
        var durable = DurablePostgresNotificationTransport.Configuration(
            connection: configuration.connection, consumer: "bench-processor")
        durable.schema = schema
        durable.retentionInterval = nil
        let center = NotificationCenter()
        let sender = try DurablePostgresNotificationTransport(configuration: durable)
        let relay = NotificationRelay(
            transport: sender, center: center, onEvent: { print("relay event: \($0)") },
            onFailure: { print("relay failure: \($0)") })
        relay.forward(PeerHandles.bench)
        await sender.flush()  // the tables exist
        for index in 0..<count {
            PeerHandles.bench.post(BenchPayload(index: index, sentAt: 0), center: center)
        }
        await sender.flush()
        relay.stop()
        if which != .catchUpFresh {
            let (output, status) = try TestServer.psql([
                "-tA", "-c", "CHECKPOINT", "-c", "VACUUM (ANALYZE) \(schema).outbox",
            ])
            guard status == 0 else { throw FixtureError("psql: \(output)") }
        }

        let transport = try DurablePostgresNotificationTransport(configuration: durable)
        var options = DurableProcessingOptions(maximumAttempts: 1, maximumConcurrency: which == .sixteen ? 16 : 1)
        options.startsAtOldestStored = true
        let clock = Clock()
        let work: Duration = which.isCatchUp ? .zero : .milliseconds(1)
        let started = monotonicNanoseconds()
        let task = Task {
            try await transport.process(
                PeerHandles.bench, options: options, onEvent: { print("processing event: \($0)") }
            ) { delivery in
                if work > .zero { try await Task.sleep(for: work) }
                clock.record(delivery.payload.index)
            }
        }
        let done = await poll(timeout: .seconds(600), every: .milliseconds(2)) { clock.count >= count }
        task.cancel()
        _ = await task.result
        guard done else { throw FixtureError("\(which.rawValue): processed \(clock.count) of \(count)") }
        let times = clock.snapshot
        guard let last = times.last else { throw FixtureError("nothing processed") }
        let seconds = Double(last - started) / 1e9
        // The tenths compare the processing of the first and the last tenth of the messages, from the first
        // handler call on: the start-up before it (connecting, registering, the first page) is not in either.
        let tenth = max(1, times.count / 10)
        let firstTenth = Double(times[min(tenth, times.count - 1)] - times[0]) / 1e9
        let lastTenth = Double(last - times[times.count - tenth - 1]) / 1e9
        let startUp = Double(times[0] - started) / 1e9
        return (Double(count) / seconds, firstTenth, lastTenth, clock.duplicates, startUp)
    }
}
