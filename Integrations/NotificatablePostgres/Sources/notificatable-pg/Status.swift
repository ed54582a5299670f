import ArgumentParser
import Foundation
import NotificatablePostgres

/// `notificatable-pg status`.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Consumers, the session holding each name, lag per channel, dead letters, held-back delivery.")

    @OptionGroup var options: ConnectionOptions

    @Option(
        help: ArgumentHelp(
            "A running consumer with messages waiting whose position has not moved for longer "
                + "than this is stalled (30s, 5m, 1h …).", valueName: "age"))
    var stallAfter = Age(seconds: 60)

    func run() async throws {
        let stallAfter = stallAfter.duration
        let status = try await options.withAdministration { try await $0.status(stallAfter: stallAfter) }
        if options.json { return try printJSON(status) }
        print(
            "schema \(status.schema): version \(status.schemaVersion) (this release: \(status.expectedSchemaVersion))")
        print()
        if status.consumers.isEmpty {
            print("consumers: none")
        } else {
            var rows = [
                [
                    "CONSUMER", "KIND", "PARTITION", "CHANNEL", "STATE", "LAG", "OLDEST", "SAVED", "PID", "APPLICATION",
                    "CLIENT", "STANDBYS",
                ]
            ]
            for consumer in status.consumers {
                rows.append([
                    consumer.consumer, consumer.kind.rawValue, consumer.partition ?? "-", consumer.channel,
                    consumer.state.rawValue,
                    String(consumer.lagMessages), format(seconds: consumer.lagSeconds),
                    format(seconds: Date().timeIntervalSince(consumer.positionSavedAt)) + " ago",
                    consumer.session.map { String($0.pid) } ?? "-",
                    consumer.session.map { $0.applicationName.isEmpty ? "-" : $0.applicationName } ?? "-",
                    consumer.session.map { $0.clientAddress ?? "local" } ?? "-", String(consumer.waitingSessions),
                ])
            }
            printTable(rows)
        }
        print()
        if status.deadLetters.isEmpty {
            print("dead letters: none")
        } else {
            var rows = [["CONSUMER", "CHANNEL", "DEAD LETTERS", "REDRIVE ASKED", "OLDEST PARKED"]]
            for count in status.deadLetters {
                rows.append([
                    count.consumer, count.channel, String(count.count), String(count.redriveRequested),
                    format(count.oldestParkedAt),
                ])
            }
            printTable(rows)
        }
        print()
        if let holder = status.holdingTransaction {
            print(
                "delivery held back: \(status.heldBackMessages) committed message(s) wait behind the transaction of "
                    + "pid \(holder.pid) (\(holder.applicationName.isEmpty ? "no application_name" : holder.applicationName), "
                    + "\(holder.clientAddress ?? "local"), database \(holder.database ?? "?"), \(holder.state ?? "?"), "
                    + "open \(format(seconds: holder.transactionSeconds ?? 0)))")
        } else {
            print("delivery held back: no")
        }
    }
}
