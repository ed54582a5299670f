// What the consumer-group tests, the peer and the benchmark share: one handler call of a peer's `keyed` or
// `unkeyed` processing, as the line it prints.
import Foundation

/// One handler call of a `durable-process … keyed|unkeyed` peer: the item, the attempt, the process, and when the
/// handler started and returned on the machine's monotonic clock (``monotonicNanoseconds()``, the same in every
/// process), so that calls of several processes can be put in one order.
public struct GroupCall: Sendable, Equatable {
    /// The item's stream (its partition key in `keyed` mode).
    public var stream: Int
    /// The item's index: 0, 1, 2, … in the order it was posted.
    public var index: Int
    /// The delivery's attempt, from 1.
    public var attempt: Int
    /// The process that handled it.
    public var pid: Int
    /// When the handler started, in nanoseconds of the monotonic clock.
    public var start: UInt64
    /// When the handler was about to return (after its work), in nanoseconds of the monotonic clock.
    public var end: UInt64

    /// Creates a call.
    public init(stream: Int, index: Int, attempt: Int, pid: Int, start: UInt64, end: UInt64) {
        self.stream = stream
        self.index = index
        self.attempt = attempt
        self.pid = pid
        self.start = start
        self.end = end
    }

    /// Parses a line `processed STREAM INDEX ATTEMPT PID START_NS END_NS`; nil for any other line.
    public init?(line: String) {
        let words = line.split(separator: " ")
        guard words.count == 7, words[0] == "processed", let stream = Int(words[1]), let index = Int(words[2]),
            let attempt = Int(words[3]), let pid = Int(words[4]), let start = UInt64(words[5]),
            let end = UInt64(words[6])
        else { return nil }
        self.init(stream: stream, index: index, attempt: attempt, pid: pid, start: start, end: end)
    }

    /// The call as the line the peer prints: `processed STREAM INDEX ATTEMPT PID START_NS END_NS`.
    public var line: String { "processed \(stream) \(index) \(attempt) \(pid) \(start) \(end)" }

    /// The calls among `lines`, in the order printed.
    public static func calls(in lines: [String]) -> [GroupCall] { lines.compactMap(GroupCall.init(line:)) }
}
