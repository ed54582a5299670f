import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The handler calls that `peers` printed so far (`durable-process … keyed|unkeyed`), in each peer's order.
private func groupCalls(_ peers: [LineProcess]) -> [GroupCall] {
    peers.flatMap { GroupCall.calls(in: $0.lines) }
}

/// The items `peer` has handled so far, each once.
private func handled(_ peer: LineProcess) -> Set<Int> {
    Set(GroupCall.calls(in: peer.lines).map(\.index))
}

/// The items `peers` have handled so far, each once.
private func handled(_ peers: [LineProcess]) -> Set<Int> {
    Set(groupCalls(peers).map(\.index))
}

/// What breaks the order of `calls` per key (merged over every process by the shared monotonic clock): a call that
/// started before an earlier call of its key returned (two at once, within a process or across processes), or an
/// item handled for the first time after a later item of its key. A repeat (an item handled again, after a kill) may
/// go back; only first calls must come in order.
private func orderViolations(_ calls: [GroupCall], key: (GroupCall) -> Int) -> [String] {
    var problems: [String] = []
    for (key, calls) in Dictionary(grouping: calls, by: key) {
        var latestEnd: (end: UInt64, call: GroupCall)?
        var firstCalls = Set<Int>()
        var highest: Int?
        for call in calls.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            if let latestEnd, call.start < latestEnd.end {
                problems.append(
                    "key \(key): item \(call.index) (pid \(call.pid)) started before item \(latestEnd.call.index) "
                        + "(pid \(latestEnd.call.pid)) returned")
            }
            if latestEnd.map({ call.end > $0.end }) ?? true { latestEnd = (call.end, call) }
            if firstCalls.insert(call.index).inserted {
                if let highest, call.index < highest {
                    problems.append("key \(key): item \(call.index) first handled after item \(highest)")
                }
                highest = max(highest ?? call.index, call.index)
            }
        }
    }
    return problems
}

extension PostgresIntegrationTests {
    /// Issue 39: several processes running the same `process(handle, …)` call under one consumer name share the
    /// work as far as the order allows, with no option to opt in: different partition keys spread over the processes
    /// (each key in order, on one process at a time); strict channel order (concurrency 1, no key) keeps one process
    /// working and the others standing by. Each peer is `notificatable-pg-peer durable-process … keyed|unkeyed`,
    /// printing every handler call with its process and its start and return on the shared monotonic clock.
    @Suite(.serialized) struct ConsumerGroupTests {
        /// Three processes under one name with a partition key share a stored backlog (each handles a share); a
        /// fourth joins while they work and takes a share without stopping them; then one of the three is
        /// SIGKILLed: the others finish with nothing lost, and per key every item is first handled in order
        /// and never two at once, over every process.
        @Test func threeKeyedProcessesShareABacklogAFourthJoinsAndOneIsKilled() async throws {
            let schema = freshSchema("group_keyed")
            let count = 4_000
            try await publishItems(schema, count: count, streams: 50)
            // 40 ms per item at concurrency 4: one process alone needs about 40 s, three about 14 s, so that the
            // group has time to spread, and the fourth to join, before the backlog is done.
            let arguments = ["durable-process", schema, "group", "4", "keyed", "40000"]
            var peers = try (0..<3).map { _ in try LineProcess(peerPath, arguments) }
            defer { peers.forEach { $0.kill() } }
            for peer in peers { #expect(await peer.wait(for: "ready")) }

            // Once every peer has handled an item (the group has spread; or, when it does not, a quarter of the
            // backlog is done), the shares of the next fifth of the backlog: what each process handles once the
            // group has settled.
            let started = await poll(timeout: .seconds(120), every: .milliseconds(20)) {
                peers.allSatisfy { !handled($0).isEmpty } || handled(peers).count >= count / 4
            }
            #expect(started, "every peer handles an item within 120 s: \(peers.map { handled($0).count })")
            let before = peers.map { handled($0).count }
            let windowEnd = min(count * 9 / 10, handled(peers).count + count / 5)
            _ = await poll(timeout: .seconds(120), every: .milliseconds(20)) { handled(peers).count >= windowEnd }
            let shares = zip(peers, before).map { peer, before in handled(peer).count - before }
            let window = shares.reduce(0, +)
            #expect(
                window > 0 && shares.allSatisfy { $0 * 10 >= window },
                "each of the three handles at least a tenth of a fifth of the backlog: \(shares) of \(window)")

            // A fourth joins while the three work, and takes a share without any of them stopping.
            let fourth = try LineProcess(peerPath, arguments)
            peers.append(fourth)
            #expect(await fourth.wait(for: "ready"))
            let joined = await poll(timeout: .seconds(60), every: .milliseconds(20)) {
                !handled(fourth).isEmpty || handled(peers).count >= count * 9 / 10
            }
            #expect(joined && !handled(fourth).isEmpty, "the fourth takes a share: \(peers.map { handled($0).count })")
            let sharesAtJoin = peers.map { handled($0).count }

            // SIGKILL the one of the first three that handled the most.
            let victimIndex = (0..<3).max { sharesAtJoin[$0] < sharesAtJoin[$1] } ?? 0
            let victim = peers[victimIndex]
            kill(victim.processIdentifier, SIGKILL)
            _ = victim.finish()
            let finished = await poll(timeout: .seconds(180), every: .milliseconds(50)) {
                handled(peers).count >= count
            }
            for peer in peers { peer.kill() }

            let calls = groupCalls(peers)
            let items = Set(calls.map(\.index))
            #expect(finished, "nothing lost: \(count - items.count) of \(count) never handled")
            #expect(items == Set(0..<count))
            let finalShares = peers.map { handled($0).count }
            for index in 0..<3 where index != victimIndex {
                #expect(finalShares[index] * 10 >= count, "a survivor's share: \(finalShares) of \(count)")
            }
            // Repeats: what moved when the fourth joined (the three handing keys over) and what the killed process
            // had started and not yet acknowledged: at most the unacknowledged window each time.
            let repeats = calls.count - items.count
            #expect(repeats <= 4 * DurableProcessingOptions().maximumUnacknowledged, "repeats: \(repeats)")
            let problems = orderViolations(calls, key: \.stream)
            #expect(problems.isEmpty, "per-key order (\(problems.count)): \(problems.prefix(5))")
            for peer in peers {
                #expect(
                    !peer.lines.contains { $0.hasPrefix("error") }, "\(peer.lines.filter { $0.hasPrefix("error") })")
            }
            print(
                "consumer group test: shares \(shares) of the three, \(sharesAtJoin) once the fourth (last) handled "
                    + "one, peer \(victimIndex) killed, \(finalShares) in the end, \(calls.count) calls for \(count) "
                    + "items, \(repeats) repeats")
        }

        /// Strict channel order (concurrency 1, no key) under one name in three processes: one works, the two others
        /// stand by (`consumerStandby`); SIGKILLed, it is followed by exactly one of them (`consumerTakenOver`). Over
        /// every process, never two calls at once, and every item first handled in the channel's order.
        @Test func strictOrderProcessesUnderOneNameRunOneAtATime() async throws {
            let schema = freshSchema("group_strict")
            let count = 600
            try await publishItems(schema, count: count)
            let arguments = ["durable-process", schema, "group", "1", "unkeyed", "5000"]
            let peers = try (0..<3).map { _ in try LineProcess(peerPath, arguments) }
            defer { peers.forEach { $0.kill() } }
            for peer in peers { #expect(await peer.wait(for: "ready")) }

            let third = await poll(timeout: .seconds(120), every: .milliseconds(20)) {
                handled(peers).count >= count / 3
            }
            #expect(third, "a third of the backlog was not handled in 120 s")
            let standingBy = { (peer: LineProcess) in peer.lines.contains { $0.hasPrefix("event consumerStandby") } }
            #expect(await poll(timeout: .seconds(30)) { peers.filter(standingBy).count >= 2 })
            let working = peers.filter { !handled($0).isEmpty }
            #expect(working.count == 1, "peers that handled items: \(peers.map { handled($0).count })")
            #expect(peers.filter(standingBy).count == 2)
            guard let active = working.first else { return }

            kill(active.processIdentifier, SIGKILL)
            _ = active.finish()
            let finished = await poll(timeout: .seconds(120), every: .milliseconds(50)) {
                handled(peers).count >= count
            }
            for peer in peers { peer.kill() }

            let calls = groupCalls(peers)
            let items = Set(calls.map(\.index))
            #expect(finished, "nothing lost: \(count - items.count) of \(count) never handled")
            let successors = peers.filter { $0 !== active && !handled($0).isEmpty }
            #expect(successors.count == 1, "after the kill: \(peers.map { handled($0).count })")
            #expect(successors.allSatisfy { $0.lines.contains { $0.hasPrefix("event consumerTakenOver") } })
            let repeats = calls.count - items.count
            #expect(repeats <= DurableProcessingOptions().maximumUnacknowledged, "repeats: \(repeats)")
            let problems = orderViolations(calls, key: { _ in 0 })
            #expect(problems.isEmpty, "channel order (\(problems.count)): \(problems.prefix(5))")
            print("strict consumer group test: \(peers.map { handled($0).count }), \(repeats) repeats")
        }
    }
}
