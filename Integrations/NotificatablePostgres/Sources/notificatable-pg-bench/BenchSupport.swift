// What the benchmark's modes share: the receiver's result line, the peer processes, the two senders (the relay and
// raw PostgresNIO), the server's CPU time and this process's memory.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// The options every mode reads: `--name value` pairs, lists as `1,2,4`, and `--smoke`.
struct BenchArguments {
    private var values: [String: String] = [:]
    /// Whether `--smoke` was given: tiny counts, one round, figures that mean nothing.
    private(set) var smoke = false

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument == "--smoke" {
                smoke = true
            } else if argument.hasPrefix("--") {
                values[argument] = iterator.next()
            }
        }
    }

    func int(_ name: String, _ normal: Int, smoke small: Int) -> Int {
        values[name].flatMap(Int.init) ?? (smoke ? small : normal)
    }

    func ints(_ name: String, _ normal: [Int], smoke small: [Int]) -> [Int] {
        values[name].map { $0.split(separator: ",").compactMap { Int($0) } } ?? (smoke ? small : normal)
    }

    func string(_ name: String) -> String? { values[name] }
}

struct Result {
    var count: Int
    var duplicates: Int
    var outOfOrder: Int
    var seconds: Double
    var latencies: [UInt64]

    var throughput: Double { Double(count) / seconds }

    func percentile(_ fraction: Double) -> Double {
        Self.percentile(latencies, fraction)
    }

    static func percentile(_ latencies: [UInt64], _ fraction: Double) -> Double {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))
        return Double(sorted[index]) / 1_000  // µs
    }

    init(line: String) throws {
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 5 else { throw FixtureError("bad result line: \(line.prefix(200))") }
        count = Int(fields[0])
        duplicates = Int(fields[1])
        outOfOrder = Int(fields[2])
        seconds = Double(fields[4] &- fields[3]) / 1e9
        latencies = Array(fields.dropFirst(5))
    }
}

enum Mode: String {
    case raw, relay
    /// The relay, its receiving transport with `Configuration.deliversOnEventLoop`.
    case relayInline = "relay-inline"
}

let peerPath =
    TestServer.path("NOTIFICATABLE_PG_PEER")
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("notificatable-pg-peer").path

/// Starts a peer with `arguments` and waits until it prints `ready`.
func startPeer(_ arguments: [String]) async throws -> LineProcess {
    let peer = try LineProcess(peerPath, arguments)
    guard await peer.wait(timeout: .seconds(120), until: { $0.contains("ready") }) else {
        peer.kill()
        throw FixtureError("the peer did not get ready: \(peer.lines.suffix(5).joined(separator: "\n"))")
    }
    return peer
}

/// What `listeners` receivers measured, and the server's CPU time from before `send` until every receiver had it all.
struct Measured {
    var results: [Result]
    var serverCPUSeconds: Double?
}

/// Starts `listeners` receivers (B), waits until they listen, runs `send`, and returns what they measured. The
/// receivers stay connected until every one has reported, so that the server CPU time counts their sessions.
func measure(_ mode: Mode, count: Int, listeners: Int = 1, send: () async throws -> Void) async throws -> Measured {
    var peers: [LineProcess] = []
    defer { peers.forEach { $0.kill() } }
    for _ in 0..<listeners {
        peers.append(try LineProcess(peerPath, ["bench-receive", mode.rawValue, String(count), "hold"]))
    }
    for peer in peers {
        guard await peer.wait(timeout: .seconds(120), until: { $0.contains("ready") }) else {
            throw FixtureError("the receiver did not get ready: \(peer.lines.joined(separator: "\n"))")
        }
    }
    let cpuBefore = ServerCPU.seconds()
    try await send()
    var results: [Result] = []
    for peer in peers {
        guard
            await peer.wait(
                timeout: .seconds(300), until: { $0.contains { $0.hasPrefix("result ") || $0.hasPrefix("error") } }),
            let line = peer.lines.first(where: { $0.hasPrefix("result ") })
        else {
            throw FixtureError("the receiver did not finish: \(peer.lines.suffix(5).joined(separator: "\n"))")
        }
        results.append(try Result(line: line))
    }
    let cpuAfter = ServerCPU.seconds()
    for peer in peers { _ = peer.finish() }
    return Measured(
        results: results, serverCPUSeconds: cpuBefore.flatMap { before in cpuAfter.map { $0 - before } })
}

/// Sends `count` messages through the relay to `listeners` receivers, either all at once or one every millisecond.
func relaySender(
    count: Int, paced: Bool, listeners: Int = 1, configuration: PostgresNotificationTransport.Configuration,
    receiver: Mode = .relay
) async throws -> Measured {
    let center = NotificationCenter()
    let transport = try PostgresNotificationTransport(configuration: configuration)
    let relay = NotificationRelay(
        transport: transport, center: center, onEvent: { print("relay event: \($0)") },
        onFailure: { print("relay failure: \($0)") })
    relay.forward(PeerHandles.bench)
    await transport.flush()  // connected
    defer { relay.stop() }
    return try await measure(receiver, count: count, listeners: listeners) {
        for index in 0..<count {
            PeerHandles.bench.post(BenchPayload(index: index, sentAt: monotonicNanoseconds()), center: center)
            if paced { try await Task.sleep(for: .milliseconds(1)) }
        }
        await transport.flush()
    }
}

/// Sends `count` messages with PostgresNIO alone: JSONEncoder, then an awaited `SELECT pg_notify($1, $2)` each.
func rawSender(
    count: Int, paced: Bool, listeners: Int = 1, configuration: PostgresNotificationTransport.Configuration
) async throws -> Measured {
    let connection = try await PostgresConnection.connect(
        configuration: configuration.connection, id: 1, logger: quietLogger)
    let channel = PeerHandles.bench.name.rawValue
    let encoder = JSONEncoder()
    let result = try await measure(.raw, count: count, listeners: listeners) {
        for index in 0..<count {
            let payload = BenchPayload(index: index, sentAt: monotonicNanoseconds())
            let json = String(decoding: try encoder.encode(payload), as: UTF8.self)
            _ = try await connection.query("SELECT pg_notify(\(channel), \(json))", logger: quietLogger).collect()
            if paced { try await Task.sleep(for: .milliseconds(1)) }
        }
    }
    try await connection.close()
    return result
}

let quietLogger: Logger = {
    var logger = Logger(label: "bench")
    logger.logLevel = .warning
    return logger
}()

/// The CPU time of the PostgreSQL server: the postmaster and every process it started (one backend per
/// connection, and its helpers), from /proc. Needs NOTIFICATABLE_PG_DATA (scripts/postgres.sh exports it); nil
/// elsewhere. Backends that exit between two readings take their time with them: read before they disconnect.
enum ServerCPU {
    static func seconds() -> Double? {
        guard let data = ProcessInfo.processInfo.environment["NOTIFICATABLE_PG_DATA"],
            let pidFile = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
            let postmaster = pidFile.split(separator: "\n").first.flatMap({ Int($0) }),
            let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc")
        else { return nil }
        var ticks = 0
        for entry in entries {
            guard let pid = Int(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let ppid = Int(fields[1]), pid == postmaster || ppid == postmaster,
                let user = Int(fields[11]), let system = Int(fields[12])
            else { continue }
            ticks += user + system
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// This process's resident memory in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func format(_ value: Double, _ digits: Int = 0) -> String {
    String(format: "%.\(digits)f", value)
}

/// The at-most-once transport for `configuration`, for modes that cannot throw: a configuration out of its range
/// ends the bench with the error.
func atMostOnceTransport(_ configuration: PostgresNotificationTransport.Configuration) -> PostgresNotificationTransport
{
    do {
        return try PostgresNotificationTransport(configuration: configuration)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(2)
    }
}
