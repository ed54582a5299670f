// What the integration tests, the peer process and the benchmark share: the handles and payloads they exchange,
// the server settings that scripts/postgres.sh exports, and a driver for a child process that speaks in lines.
import Foundation
import Notificatable
import NotificatablePostgres
import NotificatableRelay

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A typed payload with a few fields.
public struct Greeting: Codable, Sendable, Equatable {
    /// Free text.
    public var text: String
    /// A number.
    public var number: Int
    /// Who sent it.
    public var from: String

    /// Creates a greeting.
    public init(text: String, number: Int, from: String) {
        self.text = text
        self.number = number
        self.from = from
    }
}

/// One message of a burst: who sent it and its index in the sender's burst.
public struct BurstItem: Codable, Sendable, Equatable {
    /// The sender's name.
    public var sender: String
    /// 0, 1, 2, … in the order the sender posted.
    public var index: Int

    /// Creates an item.
    public init(sender: String, index: Int) {
        self.sender = sender
        self.index = index
    }
}

/// The benchmark's payload: a small order-like struct and the send time.
public struct BenchPayload: Codable, Sendable {
    /// 0, 1, 2, … in the order the sender posted.
    public var index: Int
    /// `monotonicNanoseconds()` when the sender posted it.
    public var sentAt: UInt64
    /// An order id.
    public var orderID: String
    /// A weight.
    public var weight: Double
    /// A short note.
    public var note: String

    /// Creates a payload.
    public init(index: Int, sentAt: UInt64) {
        self.index = index
        self.sentAt = sentAt
        self.orderID = "A-\(100_000 + index)"
        self.weight = 2.5
        self.note = "shipped by the benchmark"
    }
}

/// The handles the test relays exchange.
public enum PeerHandles {
    /// A typed handle.
    public static let greeting = Notificatable<Greeting>.name("NotificatablePostgres.Greeting")
    /// A handle without payload.
    public static let ping = Notificatable<Never>.name("NotificatablePostgres.Ping")
    /// The burst.
    public static let burst = Notificatable<BurstItem>.name("NotificatablePostgres.Burst")
    /// A name with double quotes and a semicolon: PostgresNIO would splice it into `LISTEN "…"` as it is.
    public static let quoted = Notificatable<Greeting>.name(#"Order "A"; DROP TABLE canary; --"#)
    /// A name with a single quote and a semicolon, used as the channel as it is.
    public static let semicolon = Notificatable<Greeting>.name("it's; DROP TABLE canary; --")
    /// The benchmark's handle.
    public static let bench = Notificatable<BenchPayload>.name("NotificatablePostgres.Bench")
}

/// The settings that scripts/postgres.sh exports.
public enum TestServer {
    /// The transport configuration, or nil when NOTIFICATABLE_PG_PORT is not set.
    public static var configuration: PostgresNotificationTransport.Configuration? {
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["NOTIFICATABLE_PG_PORT"].flatMap(Int.init) else { return nil }
        var configuration = PostgresNotificationTransport.Configuration(
            host: environment["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1",
            port: port,
            username: environment["NOTIFICATABLE_PG_USER"] ?? "notificatable",
            password: nil,
            database: environment["NOTIFICATABLE_PG_DATABASE"] ?? "postgres"
        )
        // Reconnect quickly in tests: the server comes back within a second or two.
        configuration.initialReconnectDelay = .milliseconds(50)
        configuration.maximumReconnectDelay = .milliseconds(500)
        return configuration
    }

    /// A path from the environment.
    public static func path(_ variable: String) -> String? {
        ProcessInfo.processInfo.environment[variable]
    }

    /// Runs `NOTIFICATABLE_PG_PSQL` with `arguments`; returns its standard output and exit status.
    @discardableResult
    public static func psql(_ arguments: [String]) throws -> (output: String, status: Int32) {
        guard let psql = path("NOTIFICATABLE_PG_PSQL") else { throw FixtureError("NOTIFICATABLE_PG_PSQL is not set") }
        return try run(psql, arguments)
    }

    /// Runs `NOTIFICATABLE_PG_SERVER start` or `stop`.
    public static func server(_ command: String) throws {
        guard let server = path("NOTIFICATABLE_PG_SERVER") else {
            throw FixtureError("NOTIFICATABLE_PG_SERVER is not set")
        }
        // Not through a pipe: the server started here outlives the command, and reading a pipe to its end would
        // wait for it. The script writes its output to server-control.log beside the data directory.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments = [command]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError(
                "server \(command) failed with status \(process.terminationStatus); see server-control.log")
        }
    }

    /// Runs a program to completion.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }
}

/// An error of the fixtures, with a message.
public struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// The system's monotonic clock, in nanoseconds; the same clock in every process of the machine.
public func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Checks `condition` every `interval` until it holds or `deadline` passes; returns whether it holds. The one polling
/// loop of the tests, the benchmark and the peer.
@discardableResult
public func poll(
    deadline: ContinuousClock.Instant, every interval: Duration = .milliseconds(5), until condition: () -> Bool
) async -> Bool {
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// Checks `condition` every `interval` until it holds or `timeout` passes; returns whether it holds.
@discardableResult
public func poll(
    timeout: Duration, every interval: Duration = .milliseconds(5), until condition: () -> Bool
) async -> Bool {
    await poll(deadline: ContinuousClock.now + timeout, every: interval, until: condition)
}

/// A child process that reads commands as lines on its standard input and answers in lines on its standard output.
public final class LineProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()
    private var received: [String] = []
    private var partial = Data()
    private var ended = false

    /// Starts `executable` with `arguments`.
    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let handle = output.fileHandleForReading
        let reader = Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                self.append(data)
            }
            lock.withLock { ended = true }
        }
        reader.start()
    }

    private func append(_ data: Data) {
        lock.withLock {
            partial.append(data)
            while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                received.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                partial.removeSubrange(partial.startIndex...newline)
            }
        }
    }

    /// Every line received so far.
    public var lines: [String] { lock.withLock { received } }

    /// Sends one command line.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits until `condition` holds for the lines received so far, or the process ends, or `timeout` passes.
    /// Returns whether it holds.
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(60), until condition: ([String]) -> Bool
    ) async -> Bool {
        var holds = false
        await poll(timeout: timeout) {
            let (lines, ended) = lock.withLock { (received, self.ended) }
            holds = condition(lines)
            return holds || ended
        }
        return holds
    }

    /// Waits for a line equal to `line`.
    @discardableResult
    public func wait(for line: String, timeout: Duration = .seconds(60)) async -> Bool {
        await wait(timeout: timeout) { $0.contains(line) }
    }

    /// Closes the standard input (the peer's cue to stop) and waits for the process to exit.
    public func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The child's process id, to send it a signal.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Ends the process at once.
    public func kill() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
