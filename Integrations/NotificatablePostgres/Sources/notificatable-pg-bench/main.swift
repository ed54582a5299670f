// The benchmark of the PostgreSQL transport, one mode per file; this file only picks the mode.
//
//   notificatable-pg-bench [--mode MODE] [--smoke] [options of the mode]
//
//   pair      one sender, one listener, raw PostgresNIO and the relay interleaved (the default; PairMode.swift)
//   fanout    one sender, 1, 2, 4, 8 listener processes (FanOutMode.swift)
//   fanin     4 sender processes, one listener (FanInMode.swift)
//   names     one relay forwarding 10 to 10,000 names (NamesMode.swift)
//   senders   one relay hearing from 1 to 10,000 remote senders (SendersMode.swift)
//   slow      a listener whose subscriber blocks while messages arrive (SlowConsumerMode.swift)
//   durable   raw, the at-most-once relay and the durable relay interleaved (DurableMode.swift)
//   process   acknowledged processing: 1 ms handlers at concurrency 1 and 16, a backlog's catch-up (ProcessMode.swift)
//             and a keyed backlog shared by 1, 2, 4 processes under one consumer name (ProcessMode+Groups.swift)
//
// Run it through `scripts/postgres.sh bench --mode MODE`, which starts a throwaway server.
import Foundation
import NotificatablePostgresFixtures

let arguments = Array(CommandLine.arguments.dropFirst())
let modeName = arguments.firstIndex(of: "--mode").flatMap {
    arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
}
guard let configuration = TestServer.configuration else {
    print("NOTIFICATABLE_PG_PORT is not set: run through scripts/postgres.sh bench")
    exit(2)
}
let modes: [String: (BenchArguments) async -> Int32] = [
    "fanout": { await runFanOutMode($0, configuration: configuration) },
    "fanin": { await runFanInMode($0, configuration: configuration) },
    "names": { await runNamesMode($0, configuration: configuration) },
    "senders": { await runSendersMode($0, configuration: configuration) },
    "slow": { await runSlowConsumerMode($0, configuration: configuration) },
    "durable": { await runDurableMode($0, configuration: configuration) },
    "process": { await runProcessMode($0, configuration: configuration) },
    "transactional": { await runTransactionalMode($0, configuration: configuration) },
]
switch modeName ?? "pair" {
case "pair":
    exit(await runPairMode(arguments, configuration: configuration))
case let name:
    guard let run = modes[name] else {
        print("unknown mode \(name): pair, " + modes.keys.sorted().joined(separator: ", "))
        exit(2)
    }
    exit(await run(BenchArguments(arguments)))
}
