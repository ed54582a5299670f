import ArgumentParser
import Foundation
import NotificatablePostgres

/// Prints `value` as one JSON document: keys sorted, dates ISO 8601, so that scripts can rely on the shape.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// Prints rows as columns padded to their widest cell, the first row a header.
func printTable(_ rows: [[String]]) {
    guard let first = rows.first else { return }
    var widths = [Int](repeating: 0, count: first.count)
    for row in rows {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }
    for row in rows {
        let cells = row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }
        print(cells.joined(separator: "  "))
    }
}

/// A date as ISO 8601, UTC.
func format(_ date: Date?) -> String {
    guard let date else { return "-" }
    return ISO8601DateFormatter().string(from: date)
}

/// Seconds as `12s`, `3m20s`, `2h5m`, `3d4h`.
func format(seconds: Double) -> String {
    let total = Int(seconds.rounded())
    switch total {
    case ..<60: return "\(max(0, total))s"
    case ..<3_600: return "\(total / 60)m\(total % 60)s"
    case ..<86_400: return "\(total / 3_600)h\(total % 3_600 / 60)m"
    default: return "\(total / 86_400)d\(total % 86_400 / 3_600)h"
    }
}

/// An age such as `90s`, `15m`, `1h`, `2d`, `1w` (a number, possibly with decimals, and a unit).
struct Age: ExpressibleByArgument, Sendable {
    /// The age.
    var duration: Duration
    /// As given.
    var text: String

    init?(argument: String) {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
        guard let unit = argument.last, let factor = units[unit], let number = Double(argument.dropLast()),
            number >= 0, number.isFinite, number * factor <= 100 * 365 * 86_400
        else { return nil }
        duration = .milliseconds(Int64((number * factor * 1_000).rounded()))
        text = argument
    }

    /// An age of `seconds` seconds.
    init(seconds: Int) {
        duration = .seconds(seconds)
        text = "\(seconds)s"
    }

    var defaultValueDescription: String { text }
}
