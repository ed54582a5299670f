// The publishing rows and the held-out catch-up of the processing benchmark (ProcessMode.swift), issue 43:
//   - enqueue: N messages (`--enqueue`, 20,000 by default) through a DurableNotificationPublisher on a
//     PostgresClient, 100 per transaction (`--batch`) as one `post(contentsOf:on:in:)`, against the same
//     transactions made of 100 single posts with the statement the publisher ran before issue 43 (its SQL, below,
//     run the way it ran: bound, unnamed, `RETURNING` a row per post, one `pg_notify` each); and N / 4 single posts,
//     each in a transaction of its own, today's against that statement. From the first `BEGIN` to the last commit,
//     encoding and sealing included; a fresh schema per measurement. Two more ways of writing the batch, for
//     comparison: the batch statement unprepared (`enqueue-batch-unprepared`, as the publisher ran it before it
//     prepared its statements) and `COPY … FROM STDIN` with a `pg_notify` statement (`enqueue-batch-copy`); both
//     print the time spent encoding, per message.
//   - with `--peers SCRIPT` (scripts/jobqueue-peers.py; `--pgqueuer SCRIPT` is another name for it), the job
//     queues on the same server, interleaved with ours: pgqueuer's, procrastinate's and Oban's enqueue of the same N
//     jobs in batches of 100 per transaction (`pgqueuer`, `procrastinate`, `oban`, beside `enqueue-batch`), and
//     their drain of a stored backlog by their own worker with a handler that sleeps 1 ms, at concurrency 1 and 16
//     (`pgqueuer-one`, `pgqueuer-sixteen`, …, beside `one` and `sixteen`, with as many jobs: `--messages` and 4
//     times that). The script installs each queue in its own virtual environment, and truncates the queue's tables
//     after each run.
//   - catch-up in a new process: a backlog of `--held-out` messages (50,000 by default) stored through a relay and
//     left at rest (CHECKPOINT, VACUUM (ANALYZE)), then a consumer process started behind it (the peer's
//     `durable-catch-up`); the rate is from just before the process is started to its last handler call. With
//     `--baseline-peer PATH` the same backlog is also caught up by another build's peer (a build of the commit before
//     a change), in the same round, the order alternating.
import Foundation
import Logging
import Notificatable
import NotificatablePostgres
import NotificatablePostgresFixtures
import NotificatableRelay
import PostgresNIO

extension ProcessBenchmark.Case {
    /// A job queue's row: the queue for scripts/jobqueue-peers.py and the drain's concurrency (nil for its enqueue);
    /// nil for our rows.
    var peer: (queue: String, concurrency: Int?)? {
        switch self {
        case .pgqueuer: ("pgqueuer", nil)
        case .procrastinate: ("procrastinate", nil)
        case .oban: ("oban", nil)
        case .pgqueuerOne: ("pgqueuer", 1)
        case .pgqueuerSixteen: ("pgqueuer", 16)
        case .procrastinateOne: ("procrastinate", 1)
        case .procrastinateSixteen: ("procrastinate", 16)
        case .obanOne: ("oban", 1)
        case .obanSixteen: ("oban", 16)
        default: nil
        }
    }

    /// The row of ours that a job queue's row is compared with.
    var ours: Self? {
        peer.map { $0.concurrency == nil ? .enqueueBatch : $0.concurrency == 1 ? .one : .sixteen }
    }
}

extension ProcessBenchmark {
    /// The transactional post's statement before issue 43: one per post, with a row back and a `pg_notify` each.
    static func previousInsert(schema: String) -> String {
        """
        WITH inserted AS (
            INSERT INTO "\(schema)".outbox (channel, message) VALUES ($1, $2) RETURNING 1
        ) SELECT pg_notify($3, '') FROM inserted
        """
    }

    /// The batch statement of `post(contentsOf:on:in:)` (`DurableOutboxSchema.insertPosts`), which the publisher ran
    /// unprepared (bound, unnamed, parsed and planned for every batch) before it prepared it per connection.
    static func unpreparedBatch(schema: String) -> String {
        """
        WITH woken AS (SELECT pg_notify($3, ''))
        INSERT INTO "\(schema)".outbox (channel, message)
        SELECT $1, m FROM unnest($2::text[]) WITH ORDINALITY AS b(m, i), woken ORDER BY i
        """
    }

    /// A batch as `COPY outbox (channel, message) FROM STDIN` (text format, in order) and the readers' wake-up as a
    /// statement of its own: a `COPY` cannot call `pg_notify`. PostgresNIO quotes the table name it is given as one
    /// identifier, so the schema goes in as `schema"."outbox` (the bench's schema names need no escaping).
    static func copyBatch(
        _ texts: [String], channel: String, wakeChannel: String, schema: String, on connection: PostgresConnection
    ) async throws {
        let logger = Logger(label: "bench")
        var data = ByteBuffer()
        let escapedChannel = copyTextField(channel)
        for text in texts {
            data.writeString(escapedChannel)
            data.writeInteger(UInt8(ascii: "\t"))
            data.writeString(copyTextField(text))
            data.writeInteger(UInt8(ascii: "\n"))
        }
        try await connection.copyFrom(
            table: schema + "\".\"outbox", columns: ["channel", "message"], logger: logger
        ) { writer in
            try await writer.write(data)
        }
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(wakeChannel)
        _ = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT pg_notify($1, '')", binds: bindings), logger: logger
        ).get()
    }

    /// `text` as a field of `COPY`'s text format: backslash, tab, newline and carriage return escaped.
    static func copyTextField(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Stores `count` messages through a publisher as `which` says; returns messages per second.
    static func measureEnqueue(
        _ which: Case, count: Int, batch: Int, configuration: PostgresNotificationTransport.Configuration
    ) async throws -> Double {
        let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
        let environment = ProcessInfo.processInfo.environment
        var clientConfiguration = PostgresClient.Configuration(
            host: environment["NOTIFICATABLE_PG_HOST"] ?? "127.0.0.1",
            port: environment["NOTIFICATABLE_PG_PORT"].flatMap(Int.init) ?? 5432,
            username: environment["NOTIFICATABLE_PG_USER"] ?? "notificatable", password: nil,
            database: environment["NOTIFICATABLE_PG_DATABASE"] ?? "postgres", tls: .disable)
        clientConfiguration.options.maximumConnections = 2
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: Logger(label: "bench"))
        let running = Task { await client.run() }
        defer { running.cancel() }
        let publisher = DurableNotificationPublisher(client: client, configuration: .init(schema: schema))
        try await publisher.ready()
        let logger = Logger(label: "bench")
        let handle = PeerHandles.bench
        let channel = NotificationChannelName.channel(for: handle.name, maximumLength: nil)
        // The readers' wake channel, as the transport names a schema's (short enough to be its own server channel).
        let wakeChannel = "notificatable.outbox." + schema
        let previous = previousInsert(schema: schema)
        let perTransaction = which == .enqueueSingle || which == .enqueueSingleBefore ? 1 : batch
        let started = monotonicNanoseconds()
        var stored = 0
        var encoding: UInt64 = 0
        while stored < count {
            let range = stored..<min(count, stored + perTransaction)
            let payloads = range.map { BenchPayload(index: $0, sentAt: 0) }
            try await client.withTransaction(logger: logger) { connection in
                switch which {
                case .enqueueBatch:
                    try await publisher.post(contentsOf: payloads, on: handle, in: connection)
                case .enqueueSingle:
                    for payload in payloads { try await publisher.post(payload, on: handle, in: connection) }
                case .enqueueBatchUnprepared, .enqueueBatchCopy:
                    let encodingStarted = monotonicNanoseconds()
                    let texts = try payloads.map { payload in
                        String(
                            decoding: try NotificationRelayMessage.encoded(
                                payload, for: handle, sender: NotificationRelayMessage.randomSender(), sequence: 1),
                            as: UTF8.self)
                    }
                    encoding += monotonicNanoseconds() - encodingStarted
                    if which == .enqueueBatchCopy {
                        try await copyBatch(
                            texts, channel: channel, wakeChannel: wakeChannel, schema: schema, on: connection)
                    } else {
                        var bindings = PostgresBindings(capacity: 3)
                        bindings.append(channel)
                        bindings.append(texts)
                        bindings.append(wakeChannel)
                        _ = try await connection.query(
                            PostgresQuery(unsafeSQL: unpreparedBatch(schema: schema), binds: bindings), logger: logger
                        ).get()
                    }
                default:
                    for payload in payloads {
                        let message = try NotificationRelayMessage.encoded(
                            payload, for: handle, sender: NotificationRelayMessage.randomSender(), sequence: 1)
                        var bindings = PostgresBindings(capacity: 3)
                        bindings.append(channel)
                        bindings.append(String(decoding: message, as: UTF8.self))
                        bindings.append(wakeChannel)
                        _ = try await connection.query(
                            PostgresQuery(unsafeSQL: previous, binds: bindings), logger: logger
                        )
                        .get()
                    }
                }
            }
            stored = range.upperBound
        }
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        if encoding > 0 {
            print("  \(which.option): encoding \(format(Double(encoding) / 1e3 / Double(count), 2)) µs per message")
        }
        let rows = try await client.withConnection { connection in
            try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT count(*)::int8 FROM \"\(schema)\".outbox"), logger: logger
            ).get().rows
        }
        let rowCount = try rows.first?.decode(Int64.self) ?? -1
        guard rowCount == Int64(count) else {
            throw FixtureError("\(which.rawValue): stored \(rowCount) of \(count)")
        }
        _ = try TestServer.psql(["-tA", "-c", "DROP SCHEMA \"\(schema)\" CASCADE"])
        return Double(count) / seconds
    }

    /// A job queue's enqueue of `count` jobs in batches of `batch` per transaction, or (with a `concurrency`) its
    /// drain of `count` stored jobs with a 1 ms handler (scripts/jobqueue-peers.py). The script truncates the queue's
    /// tables when done, so that no dead rows of its are left to autovacuum while the next case runs.
    static func measurePeer(script: String, queue: String, concurrency: Int?, count: Int, batch: Int) throws -> Double {
        let workload =
            concurrency.map { ["drain", String(count), String($0)] } ?? ["enqueue", String(count), String(batch)]
        let (output, status) = try TestServer.run(script, [queue] + workload)
        guard status == 0,
            let line = output.split(separator: "\n").last(where: { $0.hasPrefix("rate ") }),
            let rate = Double(line.dropFirst(5))
        else { throw FixtureError("\(queue) \(workload[0]): \(output.suffix(2_000))") }
        return rate
    }

    /// A backlog of `count` stored at rest, then caught up by a consumer process of `peer`; returns the rate from
    /// just before the process starts to its last handler call, and the start-up (to its first handler call).
    static func measureCatchUpProcess(
        count: Int, peer: String, configuration: PostgresNotificationTransport.Configuration
    ) async throws -> (Double, Double) {
        let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
        try await storeAtRest(PeerHandles.bench, count: count, schema: schema, configuration: configuration) {
            BenchPayload(index: $0, sentAt: 0)
        }
        let commitsBefore = try serverCommits()
        let started = monotonicNanoseconds()
        let process = try LineProcess(peer, ["durable-catch-up", schema, String(count)])
        let finished = await process.wait(timeout: .seconds(600)) { lines in lines.contains { $0.hasPrefix("done ") } }
        let lines = process.lines
        process.kill()
        // The server's committed transactions over the catch-up, per message (what a profile of the consumer
        // cannot show: its round trips). The statistics reach pg_stat_database within a second of the commits.
        try await Task.sleep(for: .milliseconds(1_100))
        let commits = try serverCommits() - commitsBefore
        print("  catch-up process: \(format(Double(commits) / Double(count), 2)) server commits per message")
        _ = try TestServer.psql(["-tA", "-c", "DROP SCHEMA \"\(schema)\" CASCADE"])
        guard finished, let done = lines.first(where: { $0.hasPrefix("done ") }) else {
            throw FixtureError("catch-up process: \(lines.suffix(5).joined(separator: "\n"))")
        }
        let times = done.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard times.count == 2 else { throw FixtureError("catch-up process: \(done)") }
        return (Double(count) / (Double(times[1] - started) / 1e9), Double(times[0] - started) / 1e9)
    }

    /// The database's committed transactions so far (`pg_stat_database.xact_commit`).
    static func serverCommits() throws -> Int {
        let (output, status) = try TestServer.psql([
            "-tA", "-c", "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
        ])
        guard status == 0, let commits = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError("psql: \(output)")
        }
        return commits
    }

    /// Stores `count` payloads of `handle` (`payload(i)` for the i-th) in `schema` through a relay, then leaves them
    /// at rest (CHECKPOINT, VACUUM (ANALYZE) of the outbox): a backlog that built up while its consumer was away.
    static func storeAtRest<Info: Codable & Sendable>(
        _ handle: Notificatable<Info>, count: Int, schema: String,
        configuration: PostgresNotificationTransport.Configuration, payload: (Int) -> Info
    ) async throws {
        var durable = DurablePostgresNotificationTransport.Configuration(
            connection: configuration.connection, consumer: "bench-sender")
        durable.schema = schema
        durable.retentionInterval = nil
        let center = NotificationCenter()
        let sender = try DurablePostgresNotificationTransport(configuration: durable)
        let relay = NotificationRelay(
            transport: sender, center: center, onEvent: { print("relay event: \($0)") },
            onFailure: { print("relay failure: \($0)") })
        relay.forward(handle)
        await sender.flush()
        for index in 0..<count { handle.post(payload(index), center: center) }
        await sender.flush()
        relay.stop()
        let (output, status) = try TestServer.psql([
            "-tA", "-c", "CHECKPOINT", "-c", "VACUUM (ANALYZE) \"\(schema)\".outbox",
        ])
        guard status == 0 else { throw FixtureError("psql: \(output)") }
    }
}
