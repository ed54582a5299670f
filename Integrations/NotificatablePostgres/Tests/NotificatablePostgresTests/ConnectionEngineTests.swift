import Foundation
import Testing

@testable import NotificatablePostgres

/// The connection engine's backoff, without a server: every setting gives a wait (none traps), the waits double up
/// to the maximum, and both transports refuse the settings out of range when they are created.
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

    /// Both transports refuse, when they are created, the connection settings the engine would only bring into
    /// range: negative or beyond a day, a maximum below the initial delay, a lease timeout of zero.
    @Test(arguments: [
        ("initialReconnectDelay", Duration.seconds(-1), Duration.seconds(5), Duration.seconds(10)),
        ("maximumReconnectDelay", .seconds(1), .seconds(86_401), .seconds(10)),
        ("maximumReconnectDelay", .seconds(5), .seconds(1), .seconds(10)),
        ("leaseTimeout", .seconds(1), .seconds(5), .zero),
    ])
    func bothTransportsRefuseConnectionSettingsOutOfRange(
        setting: String, initial: Duration, maximum: Duration, leaseTimeout: Duration
    ) throws {
        var durable = DurablePostgresNotificationTransport.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, consumer: "check")
        durable.initialReconnectDelay = initial
        durable.maximumReconnectDelay = maximum
        durable.leaseTimeout = leaseTimeout
        let durableError = #expect(throws: PostgresTransportError.self) {
            _ = try DurablePostgresNotificationTransport(configuration: durable)
        }
        #expect(durableError?.kind == .invalidConfiguration)
        #expect(durableError?.setting == setting)

        var atMostOnce = PostgresNotificationTransport.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil)
        atMostOnce.initialReconnectDelay = initial
        atMostOnce.maximumReconnectDelay = maximum
        atMostOnce.leaseTimeout = leaseTimeout
        let atMostOnceError = #expect(throws: PostgresTransportError.self) {
            _ = try PostgresNotificationTransport(configuration: atMostOnce)
        }
        #expect(atMostOnceError?.kind == .invalidConfiguration)
        #expect(atMostOnceError?.setting == setting)
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
