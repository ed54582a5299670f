import ArgumentParser
import Foundation
import NotificatablePostgres

/// `notificatable-pg dead-letters list|show|redrive|purge`.
struct DeadLetters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letters", abstract: "List, show, re-drive or purge parked messages.",
        subcommands: [List.self, Show.self, Redrive.self, Purge.self])

    /// The filters the four commands share.
    struct Filter: ParsableArguments {
        @Option(help: "Only this consumer's.") var consumer: String?
        @Option(help: "Only this channel's (the notification name).") var channel: String?
        @Option(help: "Only those whose error contains this text (ignoring case).") var error: String?
        @Option(help: ArgumentHelp("Only those parked longer ago than this (90s, 15m, 1h, 2d, 1w).", valueName: "age"))
        var olderThan: Age?

        func filter(id: DurableDeliveryID? = nil) -> PostgresNotificationAdministration.DeadLetterFilter {
            .init(consumer: consumer, channel: channel, errorContains: error, olderThan: olderThan?.duration, id: id)
        }
    }

    /// What the commands print with `--json`.
    struct Output: Encodable {
        /// `list`, `show`, `redrive` or `purge`.
        var command: String
        /// For `redrive` and `purge`: whether it was done (`--yes`) or only shown.
        var applied: Bool?
        /// How many dead letters.
        var count: Int
        /// The dead letters.
        var deadLetters: [DurableDeadLetter]
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters, oldest first.")
        @OptionGroup var options: ConnectionOptions
        @OptionGroup var filter: Filter
        @Option(help: "The most listed.") var limit: Int = 100

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            let selection = filter.filter()
            let limit = limit
            let letters = try await options.withAdministration {
                try await $0.deadLetters(matching: selection, limit: limit)
            }
            if options.json {
                return try printJSON(Output(command: "list", count: letters.count, deadLetters: letters))
            }
            printList(letters)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show dead letters whole (message and error) by their id TXID:ID.")
        @OptionGroup var options: ConnectionOptions
        @OptionGroup var filter: Filter
        @Argument(help: ArgumentHelp("The outbox id, as `list` prints it.", valueName: "TXID:ID")) var id: String

        func run() async throws {
            let parts = id.split(separator: ":")
            guard parts.count == 2, let txid = Int64(parts[0]), let row = Int64(parts[1]) else {
                throw ValidationError("the id must be TXID:ID, such as 1234:56 (as `dead-letters list` prints it)")
            }
            let selection = filter.filter(id: DurableDeliveryID(transactionID: txid, rowID: row))
            let letters = try await options.withAdministration { try await $0.deadLetters(matching: selection) }
            guard !letters.isEmpty else { throw OperatorError(message: "no dead letter \(id) matches") }
            if options.json {
                return try printJSON(Output(command: "show", count: letters.count, deadLetters: letters))
            }
            for letter in letters {
                print("consumer:  \(letter.consumer)")
                print("channel:   \(letter.channel)")
                print("id:        \(letter.id)")
                print("parked:    \(format(letter.parkedAt)) after \(letter.attempts) attempt(s)")
                print("redrive:   \(letter.redriveRequested ? "asked, not yet done" : "no")")
                print("error:     \(letter.error)")
                print("message:   \(letter.message)")
                print()
            }
        }
    }

    struct Redrive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask the consumers to process the matching dead letters again (needs --yes; without it, "
                + "prints what it would re-drive).")
        @OptionGroup var options: ConnectionOptions
        @OptionGroup var filter: Filter
        @Flag(help: "Do it; without, only print what would be re-driven.") var yes = false

        func run() async throws {
            try await change(command: "redrive", options: options, filter: filter.filter(), yes: yes) {
                try await $0.redriveDeadLetters(matching: $1)
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the matching dead letters: never processed (needs --yes; without it, prints what it "
                + "would delete).")
        @OptionGroup var options: ConnectionOptions
        @OptionGroup var filter: Filter
        @Flag(help: "Do it; without, only print what would be deleted.") var yes = false

        func run() async throws {
            try await change(command: "purge", options: options, filter: filter.filter(), yes: yes) {
                try await $0.purgeDeadLetters(matching: $1)
            }
        }
    }
}

/// Re-drives or purges with `--yes`; without, lists what it would touch.
private func change(
    command: String, options: ConnectionOptions, filter: PostgresNotificationAdministration.DeadLetterFilter,
    yes: Bool,
    _ apply:
        @escaping @Sendable (
            PostgresNotificationAdministration, PostgresNotificationAdministration.DeadLetterFilter
        ) async throws -> [DurableDeadLetter]
) async throws {
    let letters = try await options.withAdministration { administration in
        if yes { return try await apply(administration, filter) }
        return try await administration.deadLetters(matching: filter)
    }
    if options.json {
        return try printJSON(
            DeadLetters.Output(command: command, applied: yes, count: letters.count, deadLetters: letters))
    }
    let verb = command == "purge" ? "purged" : "re-drive asked for"
    if yes {
        print("\(verb): \(letters.count) dead letter(s)")
    } else {
        print("would \(command) \(letters.count) dead letter(s) (add --yes to do it):")
    }
    printList(letters)
}

/// The dead letters as a table, the error cut to one short line.
func printList(_ letters: [DurableDeadLetter]) {
    guard !letters.isEmpty else {
        print("no dead letters")
        return
    }
    var rows = [["ID", "CONSUMER", "CHANNEL", "ATTEMPTS", "PARKED", "REDRIVE", "ERROR"]]
    for letter in letters {
        let error = letter.error.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        rows.append([
            letter.id.description, letter.consumer, letter.channel, String(letter.attempts), format(letter.parkedAt),
            letter.redriveRequested ? "asked" : "-", error.count > 80 ? String(error.prefix(79)) + "…" : error,
        ])
    }
    printTable(rows)
}
