// The second process of the integration tests and of the benchmark. It connects to the server that
// scripts/postgres.sh started (NOTIFICATABLE_PG_* variables), reads commands on standard input, one a line, and
// answers on standard output, one line per event.
//
//   notificatable-pg-peer relay NAME [--key ID:BASE64]…
//       a NotificationRelay over PostgresNotificationTransport; with keys, an HMACMessageAuthenticator that signs
//       with the first and accepts any
//       commands: greet NUMBER TEXT | ping | quoted NUMBER | semicolon NUMBER | burst COUNT | flush
//       output:   ready | greeting FROM NUMBER TEXT | ping | quoted FROM NUMBER | semicolon FROM NUMBER
//                 | event KIND DESCRIPTION | failure KIND NAME PATH | flushed | burst-sent COUNT
//   notificatable-pg-peer bench-receive relay|relay-inline|raw COUNT [hold]
//       (relay-inline: with Configuration.deliversOnEventLoop)
//       receives COUNT BenchPayload messages, then prints
//       result COUNT DUPLICATES OUT_OF_ORDER FIRST_SENT_NS LAST_RECEIVED_NS LATENCY_NS…
//       and, with `hold`, stays connected until its standard input ends
//   notificatable-pg-peer durable-catch-up SCHEMA COUNT   the benchmark's consumer started behind a backlog, see Processing.swift
//   notificatable-pg-peer wire-send | slow-receive …   the scale benchmark's modes, see ScaleModes.swift
//   notificatable-pg-peer durable-process SCHEMA CONSUMER CONCURRENCY plain|transactional|batch [STEP_µs]   see Processing.swift
//   notificatable-pg-peer durable-process SCHEMA CONSUMER CONCURRENCY keyed|unkeyed [STEP_µs]   see Groups.swift
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

let outputLock = NSLock()

/// Writes one line to standard output at once.
func emit(_ line: String) {
    outputLock.withLock {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The lines of standard input, read on a thread of their own.
func commandLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        let reader = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        reader.start()
    }
}

func runRelay(
    name: String, authenticator: HMACMessageAuthenticator?, configuration: PostgresNotificationTransport.Configuration
) async {
    let center = NotificationCenter()
    guard let transport = try? PostgresNotificationTransport(configuration: configuration) else { exit(2) }
    let relay = NotificationRelay(
        transport: transport, center: center, authenticator: authenticator,
        onEvent: { event in emit("event \(event.kind) \(event)") },
        onFailure: { failure in
            let path = failure.codingPath.map(\.stringValue).joined(separator: ".")
            emit("failure \(failure.kind) \(failure.name.rawValue) \(path.isEmpty ? "-" : path)")
        }
    )
    relay.forward(PeerHandles.greeting)
    relay.forward(PeerHandles.ping)
    relay.forward(PeerHandles.burst)
    relay.forward(PeerHandles.quoted)
    relay.forward(PeerHandles.semicolon)
    let subscriptions = [
        PeerHandles.greeting.subscribe(center: center) { note in
            emit("greeting \(note.userInfo.from) \(note.userInfo.number) \(note.userInfo.text)")
        },
        PeerHandles.ping.subscribe(center: center) { _ in emit("ping") },
        PeerHandles.quoted.subscribe(center: center) { note in
            emit("quoted \(note.userInfo.from) \(note.userInfo.number)")
        },
        PeerHandles.semicolon.subscribe(center: center) { note in
            emit("semicolon \(note.userInfo.from) \(note.userInfo.number)")
        },
    ]
    await transport.flush()
    emit("ready")

    for await line in commandLines() {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard let command = words.first else { continue }
        let number = words.count > 1 ? Int(words[1]) ?? 0 : 0
        switch command {
        case "greet":
            let text = words.count > 2 ? words[2] : ""
            PeerHandles.greeting.post(Greeting(text: text, number: number, from: name), center: center)
        case "ping":
            PeerHandles.ping.post(center: center)
        case "quoted":
            PeerHandles.quoted.post(Greeting(text: "quoted", number: number, from: name), center: center)
        case "semicolon":
            PeerHandles.semicolon.post(Greeting(text: "semicolon", number: number, from: name), center: center)
        case "burst":
            for index in 0..<number {
                PeerHandles.burst.post(BurstItem(sender: name, index: index), center: center)
            }
            emit("burst-sent \(number)")
        case "flush":
            await transport.flush()
            emit("flushed")
        default:
            emit("unknown \(command)")
        }
    }
    await transport.flush()
    relay.stop()
    subscriptions.forEach { $0.dispose() }
}

/// Collects what the benchmark's receiver saw.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private let expected: Int
    private var latencies: [UInt64] = []
    private var seen: Set<Int> = []
    private var duplicates = 0
    private var outOfOrder = 0
    private var lastIndex = -1
    private var firstSent: UInt64 = .max
    private var lastReceived: UInt64 = 0
    private var continuation: CheckedContinuation<Void, Never>?
    private var done = false

    init(expected: Int) {
        self.expected = expected
        latencies.reserveCapacity(expected)
    }

    func record(_ payload: BenchPayload) {
        let now = monotonicNanoseconds()
        let finished: CheckedContinuation<Void, Never>? = lock.withLock {
            if !seen.insert(payload.index).inserted { duplicates += 1 }
            if payload.index < lastIndex { outOfOrder += 1 }
            lastIndex = payload.index
            latencies.append(now &- payload.sentAt)
            firstSent = min(firstSent, payload.sentAt)
            lastReceived = now
            guard !done, seen.count >= expected else { return nil }
            done = true
            defer { continuation = nil }
            return continuation
        }
        finished?.resume()
    }

    func waitUntilComplete() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock {
                if done { return true }
                self.continuation = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    var summary: String {
        lock.withLock {
            let head = "result \(seen.count) \(duplicates) \(outOfOrder) \(firstSent) \(lastReceived)"
            return ([head] + latencies.map(String.init)).joined(separator: " ")
        }
    }
}

func runBenchReceiver(
    mode: String, count: Int, hold: Bool, configuration: PostgresNotificationTransport.Configuration
)
    async
    throws
{
    let tally = Tally(expected: count)
    if mode == "relay" || mode == "relay-inline" {
        var configuration = configuration
        configuration.deliversOnEventLoop = mode == "relay-inline"
        let center = NotificationCenter()
        let transport = try PostgresNotificationTransport(configuration: configuration)
        let relay = NotificationRelay(
            transport: transport, center: center, onEvent: { emit("event \($0.kind) \($0)") },
            onFailure: { emit("failure \($0)") })
        relay.forward(PeerHandles.bench)
        let subscription = PeerHandles.bench.subscribe(center: center) { note in tally.record(note.userInfo) }
        await transport.flush()
        emit("ready")
        await tally.waitUntilComplete()
        emit(tally.summary)
        if hold { await endOfInput() }
        relay.stop()
        subscription.dispose()
    } else {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let connection = try await PostgresConnection.connect(
            configuration: configuration.connection, id: 1, logger: logger)
        let channel = PeerHandles.bench.name.rawValue
        let decoder = JSONDecoder()
        try await connection.listen(on: channel) { notifications in
            // listen(on:) returns once LISTEN is in effect; a query after it proves it.
            _ = try await connection.query("SELECT 1", logger: logger).collect()
            emit("ready")
            for try await notification in notifications {
                tally.record(try decoder.decode(BenchPayload.self, from: Data(notification.payload.utf8)))
                if tally.isComplete { break }
            }
            emit(tally.summary)
            if hold { await endOfInput() }
        }
        try await connection.close()
    }
}

extension Tally {
    var isComplete: Bool { lock.withLock { done } }
}

let arguments = CommandLine.arguments.dropFirst()
guard let configuration = TestServer.configuration else {
    emit("error NOTIFICATABLE_PG_PORT is not set: run through scripts/postgres.sh")
    exit(2)
}
switch arguments.first {
case "relay":
    let rest = Array(arguments.dropFirst())
    do {
        let authenticator = try PeerKeys.authenticator(options: Array(rest.dropFirst()))
        await runRelay(name: rest.first ?? "peer", authenticator: authenticator, configuration: configuration)
    } catch {
        emit("error \(error)")
        exit(2)
    }
case "bench-receive":
    let rest = Array(arguments.dropFirst())
    do {
        try await runBenchReceiver(
            mode: rest.first ?? "relay", count: rest.count > 1 ? Int(rest[1]) ?? 1000 : 1000,
            hold: rest.count > 2 && rest[2] == "hold", configuration: configuration)
    } catch {
        emit("error \(String(reflecting: error))")
        exit(1)
    }
case "bench-receive-durable":
    let rest = Array(arguments.dropFirst())
    await runDurableBenchReceiver(
        schema: rest.first ?? "notificatable", count: rest.count > 1 ? Int(rest[1]) ?? 1000 : 1000)
case "durable-consume", "durable-publish":
    let rest = Array(arguments.dropFirst())
    do {
        if arguments.first == "durable-consume" {
            await runDurableConsumer(
                schema: rest.first ?? "notificatable", consumer: rest.count > 1 ? rest[1] : "peer",
                pageSize: rest.count > 2 ? Int(rest[2]) : nil)
        } else {
            try await runDurablePublisher(
                schema: rest.first ?? "notificatable", name: rest.count > 1 ? rest[1] : "peer",
                count: rest.count > 2 ? Int(rest[2]) ?? 1000 : 1000)
        }
    } catch {
        emit("error \(String(reflecting: error))")
        exit(1)
    }
case "durable-process":
    let rest = Array(arguments.dropFirst())
    if rest.count > 3, rest[3] == "keyed" || rest[3] == "unkeyed" {
        await runGroupProcessor(
            schema: rest[0], consumer: rest[1], concurrency: Int(rest[2]) ?? 1, keyed: rest[3] == "keyed",
            step: .microseconds(rest.count > 4 ? Int(rest[4]) ?? 5_000 : 5_000))
        exit(0)
    }
    await runDurableProcessor(
        schema: rest.first ?? "notificatable", consumer: rest.count > 1 ? rest[1] : "worker",
        concurrency: rest.count > 2 ? Int(rest[2]) ?? 1 : 1, mode: rest.count > 3 ? rest[3] : "plain",
        maximumStep: .microseconds(rest.count > 4 ? Int(rest[4]) ?? 300 : 300),
        exitOn: rest.count > 5 && rest[5].hasPrefix("exit:") ? Int(rest[5].dropFirst(5)) : nil,
        maximumAttempts: rest.count > 6 ? Int(rest[6]) ?? 5 : 5)
case "durable-catch-up":
    let rest = Array(arguments.dropFirst())
    await runDurableCatchUp(schema: rest.first ?? "notificatable", count: rest.count > 1 ? Int(rest[1]) ?? 1 : 1)
case "wire-send":
    await runWireSender(configuration: configuration)
case "slow-receive":
    let rest = Array(arguments.dropFirst())
    await runSlowReceiver(
        mode: rest.first ?? "thread", count: rest.count > 1 ? Int(rest[1]) ?? 1000 : 1000,
        blockMilliseconds: rest.count > 2 ? Int(rest[2]) ?? 0 : 0, configuration: configuration)
default:
    emit(
        "usage: notificatable-pg-peer relay NAME [--key ID:BASE64]… | bench-receive relay|relay-inline|raw COUNT "
            + "[hold] | wire-send | slow-receive …")
    exit(2)
}
