import Foundation

/// The waits between attempts to connect again, shared by every connection of both transports and of every
/// processor: the initial delay, doubled after each failed attempt up to the maximum, with up to 25 % of jitter so
/// that many processes do not retry in step.
///
/// Any pair of `Duration`s makes a backoff that works (an initial delay below a millisecond counts as one, a delay
/// beyond ``longestDelay`` as that), so that the connection engine never traps on a setting; the transports refuse a
/// setting out of range when they are created (`PostgresConfigurationCheck.connection`).
struct PostgresReconnectBackoff: Sendable, Equatable {
    /// The longest wait a setting may ask for: one day.
    static let longestDelay: Duration = .seconds(86_400)

    /// The shortest first wait: a zero initial delay would retry in a tight loop for as long as an outage lasts.
    static let shortestDelay: Duration = .milliseconds(1)

    /// The first wait, in seconds, within `shortestDelay...longestDelay`.
    let initialSeconds: Double
    /// The longest wait, in seconds, within `initialSeconds...longestDelay`.
    let maximumSeconds: Double

    /// A backoff from the two settings, brought into range.
    init(initial: Duration, maximum: Duration) {
        let longest = Self.seconds(Self.longestDelay)
        initialSeconds = min(max(Self.seconds(Self.shortestDelay), Self.seconds(initial)), longest)
        maximumSeconds = min(max(initialSeconds, Self.seconds(maximum)), longest)
    }

    /// The wait after `failures` failed attempts in a row (0: before the second attempt), without jitter.
    func delay(afterFailures failures: Int) -> Duration {
        let doubled = initialSeconds * Double(1 << min(max(failures, 0), 30))
        return .nanoseconds(Int64(min(doubled, maximumSeconds) * 1e9))
    }

    /// Sleeps before the next attempt (``delay(afterFailures:)`` of `failures`, plus up to 25 %) and counts the
    /// attempt; false if the task was cancelled or `isStopped` holds afterwards.
    func wait(failures: inout Int, isStopped: () -> Bool) async -> Bool {
        let delay = delay(afterFailures: failures)
        failures += 1
        do {
            try await Task.sleep(for: delay * Double.random(in: 1...1.25))
        } catch {
            return false
        }
        return !isStopped()
    }

    /// A duration in seconds, as a `Double`.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
