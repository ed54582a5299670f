import Foundation
import Testing

@testable import NotificatablePostgres

/// The connection engine's backoff, without a server: every setting gives a wait (none traps), the waits double up
/// to the maximum, and the settings a configuration must refuse are named.
@Suite struct ConnectionEngineTests {
    @Test func theWaitDoublesFromTheInitialDelayUpToTheMaximum() {
        let backoff = PostgresReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect(backoff.delay(afterFailures: 0) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 1) == .milliseconds(200))
        #expect(backoff.delay(afterFailures: 3) == .milliseconds(800))
        #expect(backoff.delay(afterFailures: 4) == .seconds(1))
        #expect(backoff.delay(afterFailures: 1_000_000) == .seconds(1))
        #expect(backoff.delay(afterFailures: -5) == .milliseconds(100))
    }

    /// Both transports trapped in `backoff(attempt:)` on a negative initial delay (`UInt64` of a negative number) and
    /// on a huge one, and a zero one retried in a tight loop; the engine brings any value into range.
    @Test(arguments: [
        (Duration.seconds(-1), Duration.seconds(5), Duration.milliseconds(1), Duration.seconds(5)),
        (.seconds(Int64.max), .seconds(Int64.max), .seconds(86_400), .seconds(86_400)),
        (.seconds(10), .seconds(1), .seconds(10), .seconds(10)),
        (.zero, .zero, .milliseconds(1), .milliseconds(1)),
    ])
    func anySettingGivesAWaitInRange(initial: Duration, maximum: Duration, first: Duration, longest: Duration) {
        let backoff = PostgresReconnectBackoff(initial: initial, maximum: maximum)
        #expect(backoff.delay(afterFailures: 0) == first)
        #expect(backoff.delay(afterFailures: 64) == longest)
    }

    @Test func theSettingsToRefuseAreNamed() {
        let names = (initial: "initialReconnectDelay", maximum: "maximumReconnectDelay")
        #expect(
            PostgresReconnectBackoff.problems(initial: .milliseconds(100), maximum: .seconds(5), names: names).isEmpty)
        let negative = PostgresReconnectBackoff.problems(initial: .seconds(-1), maximum: .seconds(5), names: names)
        #expect(negative.count == 1)
        #expect(negative.first?.hasPrefix("initialReconnectDelay is") == true)
        let huge = PostgresReconnectBackoff.problems(initial: .seconds(1), maximum: .seconds(86_401), names: names)
        #expect(huge.count == 1)
        #expect(huge.first?.contains("beyond one day") == true)
        let inverted = PostgresReconnectBackoff.problems(initial: .seconds(5), maximum: .seconds(1), names: names)
        #expect(inverted.count == 1)
        #expect(inverted.first?.hasPrefix("maximumReconnectDelay") == true)
    }

    @Test func aWaitEndsEarlyWhenTheTaskIsCancelled() async {
        let backoff = PostgresReconnectBackoff(initial: .seconds(60), maximum: .seconds(60))
        let waiting = Task {
            var failures = 0
            return await backoff.wait(failures: &failures, isStopped: { false })
        }
        waiting.cancel()
        #expect(await waiting.value == false)
    }
}
