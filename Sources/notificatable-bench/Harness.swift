import Foundation

// MARK: - Harness
//
// A small, dependency-free A/B harness. Every comparison runs interleaved rounds: in each round the candidate and
// the baseline are measured side by side, batch by batch in alternating order, so that slow phases of a noisy
// machine (other builds, frequency changes) hit both sides alike. A side's measurement in a round is its median
// ns/op over the round's batches; a round's ratio is candidate ÷ baseline; a row reports the median ratio over all
// rounds and its min–max range. Nothing here asserts timing.

/// Runs `n` operations and returns a value derived from their results. The harness folds it into ``BlackHole`` so
/// the optimiser cannot drop the work.
typealias Batch = (_ n: Int) throws -> UInt64

/// Builds a ``Batch``. Setup (fixtures, observers, centers) happens here, outside the timed region, and only for
/// rows that the `--filter` selects.
typealias BatchFactory = () throws -> Batch

/// A global sink that defeats dead-code elimination. It is printed at the end of the run.
enum BlackHole {
    /// Accumulated results of every batch and observer. Single-threaded use only.
    nonisolated(unsafe) static var value: UInt64 = 0

    /// Folds `x` into the sink.
    @inline(__always)
    static func consume(_ x: UInt64) {
        value = value &* 0x100_0000_01B3 &+ x
    }
}

/// The monotonic clock, in nanoseconds.
@inline(__always)
func nowNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// The median of `values`; 0 for an empty array.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// What a row's ratio should achieve. Timing never fails the process; the table only marks ✓ or ✗.
enum Target {
    /// No target: the row is informational.
    case none
    /// The ratio must be at most this (the candidate may be this much slower than the baseline).
    case atMost(Double)
    /// The ratio must be at least this (the candidate must be this much slower than the baseline, for rows that
    /// show how much faster our code is than a competitor).
    case atLeast(Double)

    var label: String {
        switch self {
        case .none: return ""
        case .atMost(let x): return "≤" + formatRatio(x)
        case .atLeast(let x): return "≥" + formatRatio(x)
        }
    }

    func isMet(by ratio: Double) -> Bool? {
        switch self {
        case .none: return nil
        case .atMost(let x): return ratio <= x
        case .atLeast(let x): return ratio >= x
        }
    }
}

/// One side of a comparison.
struct Workload {
    var label: String
    /// Divides `--iterations` for workloads much slower than the rest (JSON, plists), so that the two sides of a
    /// comparison run batches of similar duration and each row takes a similar share of the run.
    var opsDivisor: Int = 1
    var make: BatchFactory

    /// Operations per batch for this workload.
    func ops(_ settings: MeasureSettings) -> Int {
        max(1, settings.iterations / max(1, opsDivisor))
    }
}

/// One table row: a candidate, optionally measured against a baseline.
struct Comparison {
    /// A short, unique name for `--row` (instruction counts under callgrind, scripts/callgrind-bench.sh).
    var id: String
    /// The row's name in the table; `--filter` matches it (and the group).
    var row: String
    /// The table section this row belongs to.
    var group: String
    var candidate: Workload
    /// `nil` for a single measurement with no ratio.
    var baseline: Workload?
    var target: Target = .none
    /// Runs once before timing: returns a description of a wrong result, or `nil` if the outputs are right.
    var check: (() throws -> String?)? = nil
}

/// Run-wide measurement settings.
struct MeasureSettings {
    /// Operations per batch, before a workload's ``Workload/opsDivisor``.
    var iterations: Int
    /// Interleaved A/B rounds per row.
    var rounds: Int
    /// Batches per measurement; the measurement is their median ns/op.
    var batches: Int
    /// Untimed batches per side before the first round.
    var warmupBatches: Int
}

/// The outcome of one row.
struct RowResult {
    var comparison: Comparison
    var candidateNs: Double?
    var baselineNs: Double?
    var ratios: [Double] = []
    /// An error thrown during setup, check or timing; the row prints it instead of figures.
    var error: String?
    /// A wrong result reported by the row's check.
    var mismatch: String?
}

/// The ns/op of one batch of `ops` operations.
func timeBatch(_ batch: Batch, ops: Int) throws -> Double {
    let start = nowNanoseconds()
    let result = try batch(ops)
    let end = nowNanoseconds()
    BlackHole.consume(result)
    return Double(end &- start) / Double(ops)
}

/// Measures one comparison: check, warm-up, then interleaved rounds.
///
/// Within a round the two sides alternate batch by batch (candidate first in even rounds, baseline first in odd
/// ones, and the order flips on every batch), so both sides see the same machine state. Each side's measurement
/// for the round is its median ns/op over the round's batches; the round's ratio is candidate ÷ baseline.
func run(_ comparison: Comparison, settings: MeasureSettings) -> RowResult {
    var result = RowResult(comparison: comparison)
    let cOps = comparison.candidate.ops(settings)
    let bOps = comparison.baseline?.ops(settings) ?? 1
    do {
        if let check = comparison.check {
            result.mismatch = try check()
        }
        let candidate = try comparison.candidate.make()
        let baseline = try comparison.baseline?.make()
        for _ in 0..<settings.warmupBatches {
            BlackHole.consume(try candidate(cOps))
            if let baseline { BlackHole.consume(try baseline(bOps)) }
        }
        var candidateRounds: [Double] = []
        var baselineRounds: [Double] = []
        for round in 0..<settings.rounds {
            var c: [Double] = []
            var b: [Double] = []
            for batch in 0..<settings.batches {
                guard let baseline else {
                    c.append(try timeBatch(candidate, ops: cOps))
                    continue
                }
                if (round + batch) % 2 == 0 {
                    c.append(try timeBatch(candidate, ops: cOps))
                    b.append(try timeBatch(baseline, ops: bOps))
                } else {
                    b.append(try timeBatch(baseline, ops: bOps))
                    c.append(try timeBatch(candidate, ops: cOps))
                }
            }
            candidateRounds.append(median(c))
            if !b.isEmpty {
                let baselineNs = median(b)
                baselineRounds.append(baselineNs)
                result.ratios.append(baselineNs > 0 ? median(c) / baselineNs : .infinity)
            }
        }
        result.candidateNs = median(candidateRounds)
        result.baselineNs = baselineRounds.isEmpty ? nil : median(baselineRounds)
    } catch {
        result.error = "error: \(error)"
    }
    return result
}

// MARK: - Formatting

func truncated(_ text: String, to limit: Int) -> String {
    text.count <= limit ? text : String(text.prefix(limit)) + "…"
}

func formatRatio(_ x: Double) -> String {
    if !x.isFinite { return "∞" }
    if x >= 100 { return String(format: "%.0f×", x) }
    if x >= 10 { return String(format: "%.1f×", x) }
    return String(format: "%.2f×", x)
}

func formatNs(_ x: Double?) -> String {
    guard let x else { return "—" }
    if x >= 1000 { return String(format: "%.0f", x) }
    if x >= 10 { return String(format: "%.1f", x) }
    return String(format: "%.2f", x)
}

/// Prints the results as one aligned table, grouped by section.
func printTable(_ results: [RowResult]) {
    let header = ["row", "median ns/op", "baseline", "baseline ns/op", "ratio (median)", "range", "target", "met"]
    var lines: [[String]] = []
    var notes: [String] = []
    var currentGroup: String?
    for r in results {
        if r.comparison.group != currentGroup {
            currentGroup = r.comparison.group
            lines.append(["**" + r.comparison.group + "**"] + Array(repeating: "", count: header.count - 1))
        }
        let c = r.comparison
        var cells = [c.row, formatNs(r.candidateNs), c.baseline?.label ?? "—", formatNs(r.baselineNs)]
        if let error = r.error {
            notes.append("[\(notes.count + 1)] \(c.group) / \(c.row): \(truncated(error, to: 300))")
            cells += ["error [\(notes.count)]", "", c.target.label, "✗"]
        } else if r.ratios.isEmpty {
            cells += ["—", "", c.target.label, ""]
        } else {
            let ratio = median(r.ratios)
            let lo = r.ratios.min() ?? ratio
            let hi = r.ratios.max() ?? ratio
            let mark: String
            switch c.target.isMet(by: ratio) {
            case .some(true): mark = "✓"
            case .some(false): mark = "✗"
            case .none: mark = ""
            }
            cells += [formatRatio(ratio), formatRatio(lo) + "–" + formatRatio(hi), c.target.label, mark]
        }
        if let mismatch = r.mismatch {
            notes.append("[\(notes.count + 1)] \(c.group) / \(c.row): MISMATCH: \(truncated(mismatch, to: 600))")
            cells[cells.count - 1] += " MISMATCH [\(notes.count)]"
        }
        lines.append(cells)
    }
    var widths = header.map(\.count)
    for line in lines {
        for (i, cell) in line.enumerated() where i < widths.count - 1 {
            widths[i] = max(widths[i], cell.count)
        }
    }
    func render(_ cells: [String]) -> String {
        var out = ""
        for (i, cell) in cells.enumerated() {
            let isNumeric = i == 1 || i == 3 || i == 4 || i == 5
            let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
            let padded = i == cells.count - 1 ? cell : (isNumeric ? pad + cell : cell + pad)
            out += (i == 0 ? "| " : " | ") + padded
        }
        return out
    }
    print(render(header))
    print(render(widths.map { String(repeating: "-", count: $0) }))
    for line in lines {
        print(render(line))
    }
    for note in notes {
        print(note)
    }
}
