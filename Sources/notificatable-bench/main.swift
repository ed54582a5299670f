import Foundation

// notificatable-bench: the benchmark table of issues 2 and 3. See Harness.swift for the method and
// `notificatable-bench --help` for the options. Timing never fails the process; a wrong result (MISMATCH) does.

let usage = """
    usage: notificatable-bench [--iterations N] [--rounds R] [--batches B] [--filter TEXT] [--smoke]
           notificatable-bench --row ID [--side candidate|baseline] [--iterations N]
           notificatable-bench --list
      --iterations N  operations per batch (default 6000; JSON/plist workloads divide it by 20/30)
      --rounds R      interleaved A/B rounds per row (default 7)
      --batches B     batches per measurement; a measurement is their median ns/op (default 5)
      --filter TEXT   only rows whose section or name contains TEXT (case-insensitive)
      --smoke         tiny counts for CI: checks every row's result, asserts no timing
      --row ID        untimed: set up one side of row ID, run N operations once and exit (for instruction counts
                      under callgrind: scripts/callgrind-bench.sh runs it twice with different N)
      --side S        the side --row runs: candidate (default) or baseline
      --list          print every row's ID, section and name
    """

/// The parsed command line.
struct CommandLineOptions {
    var settings = MeasureSettings(iterations: 6000, rounds: 7, batches: 5, warmupBatches: 1)
    var filter: String?
    var smoke = false
    var row: String?
    var side = "candidate"
    var list = false

    /// Parses the arguments; prints the usage and exits on a bad one.
    static func parse(_ all: [String]) -> CommandLineOptions {
        var options = CommandLineOptions()
        var arguments = all.dropFirst()
        var iterations: Int?
        var rounds: Int?
        var batches: Int?
        func positiveInt(_ flag: String) -> Int {
            guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
                print("\(flag) needs a positive integer\n\(usage)")
                exit(2)
            }
            return value
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--iterations": iterations = positiveInt(argument)
            case "--rounds": rounds = positiveInt(argument)
            case "--batches": batches = positiveInt(argument)
            case "--filter":
                guard let text = arguments.popFirst() else {
                    print("--filter needs a value\n\(usage)")
                    exit(2)
                }
                options.filter = text.lowercased()
            case "--smoke": options.smoke = true
            case "--row":
                guard let text = arguments.popFirst() else {
                    print("--row needs a row ID (see --list)\n\(usage)")
                    exit(2)
                }
                options.row = text
            case "--side":
                guard let text = arguments.popFirst(), text == "candidate" || text == "baseline" else {
                    print("--side needs candidate or baseline\n\(usage)")
                    exit(2)
                }
                options.side = text
            case "--list": options.list = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                print("unknown argument \(argument)\n\(usage)")
                exit(2)
            }
        }
        if options.smoke {
            options.settings = MeasureSettings(iterations: 20, rounds: 2, batches: 1, warmupBatches: 1)
        }
        options.settings.iterations = iterations ?? options.settings.iterations
        options.settings.rounds = rounds ?? options.settings.rounds
        options.settings.batches = batches ?? options.settings.batches
        return options
    }
}

let options = CommandLineOptions.parse(CommandLine.arguments)
let settings = options.settings
let smoke = options.smoke

var comparisons = coderComparisons()
comparisons += smallPayloadComparisons()
comparisons += deliveryComparisons(raw: RawDelivery.workloads, typed: typedDeliveryWorkloads())
comparisons += relayComparisons()
comparisons += encoderFloorComparisons()
comparisons += outboxMessageComparisons()

if options.list {
    for c in comparisons {
        print("\(c.id)\t\(c.group) / \(c.row)\(c.baseline == nil ? "" : " (baseline: \(c.baseline?.label ?? ""))")")
    }
    exit(0)
}

if let id = options.row {
    // The untimed mode: setup, then exactly N operations of one side, so that two runs with different N differ
    // only by the operations (setup and one-time initialisation cancel out).
    guard let comparison = comparisons.first(where: { $0.id == id }) else {
        print("no row \(id); --list prints the IDs")
        exit(2)
    }
    guard let workload = options.side == "baseline" ? comparison.baseline : comparison.candidate else {
        print("row \(id) has no baseline")
        exit(2)
    }
    do {
        let batch = try workload.make()
        BlackHole.consume(try batch(options.settings.iterations))
    } catch {
        print("error: \(error)")
        exit(1)
    }
    print("\(id) \(options.side) × \(options.settings.iterations); sink \(String(BlackHole.value, radix: 16))")
    exit(0)
}
if let filter = options.filter {
    comparisons = comparisons.filter { ($0.group + " " + $0.row).lowercased().contains(filter) }
}

#if DEBUG
print("warning: debug build; measure with `swift run -c release notificatable-bench`")
#endif
print(
    "notificatable-bench: \(settings.rounds) interleaved rounds × \(settings.batches) batches × "
        + "\(settings.iterations) ops/batch (÷ 20–30 for JSON/plist workloads)\(smoke ? ", smoke" : "")"
)

let start = nowNanoseconds()
var results: [RowResult] = []
for comparison in comparisons {
    let result = run(comparison, settings: settings)
    results.append(result)
    if !smoke {
        let status =
            result.error
            ?? (result.ratios.isEmpty
                ? formatNs(result.candidateNs) + " ns/op"
                : formatRatio(median(result.ratios)))
        print("  measured \(comparison.group) / \(comparison.row): \(status)")
    }
}
print("")
printTable(results)
print("")
print(
    """
    ratio = row ns ÷ baseline ns, per round (median and min–max over rounds); ✓/✗ marks the target, never the exit code.
    hand-written: String-key subscripts; NSValue form: as? NSValue + objCType check + rectValue/pointValue; array form:
      as? [Any] + as? NSNumber; scalars: as? NSNumber + doubleValue/intValue/boolValue.
    JSON/plist rows start from the array-form dictionary and decode a struct with explicit CodingKeys.
    delivery rows: a private NotificationCenter, queue nil, one delivery per post checked; the 1-entry payload is a
      struct under one String key, built per post; the keyboard userInfo (NSValue form) is built once.
    """
)
print(String(format: "total %.1f s; sink %016llx", Double(nowNanoseconds() - start) / 1e9, BlackHole.value))

let mismatches = results.filter { $0.mismatch != nil }
if !mismatches.isEmpty {
    print("\(mismatches.count) row(s) produced a wrong result")
    exit(1)
}
