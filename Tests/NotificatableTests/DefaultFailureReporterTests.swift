import Foundation
import Testing

@testable import Notificatable

/// What the default failure handler writes, through its injectable output: every failure in debug builds; in release
/// builds the first of each (name, kind), with a cap on the lines in all.
@Suite struct DefaultFailureReporterTests {
    private func failure(_ name: String, _ kind: NotificationDecodingFailure.Kind) -> NotificationDecodingFailure {
        NotificationDecodingFailure(
            kind: kind, name: Notification.Name(name), payloadType: Int.self,
            error: DecodingError.typeMismatch(Int.self, .init(codingPath: [], debugDescription: "test")), object: nil)
    }

    @Test func debugBehaviourWritesEveryFailure() {
        let lines = ValueRecorder<String>()
        let reporter = DefaultFailureReporter(printsEveryFailure: true, limit: 2) { lines.append($0) }
        for _ in 0..<5 { reporter.report(failure("A", .decodingFailed)) }
        #expect(lines.count == 5)
        #expect(lines.values.allSatisfy { $0.hasPrefix("Notificatable: A: cannot produce Swift.Int (decodingFailed") })
    }

    @Test func releaseBehaviourWritesTheFirstFailureOfEachNameAndKind() {
        let lines = ValueRecorder<String>()
        let reporter = DefaultFailureReporter(printsEveryFailure: false, limit: 10) { lines.append($0) }
        for _ in 0..<5 {
            reporter.report(failure("A", .decodingFailed))
            reporter.report(failure("A", .payloadTypeMismatch))
            reporter.report(failure("B", .decodingFailed))
        }
        #expect(lines.count == 3)
        let values = lines.values
        #expect(values[0].hasPrefix("Notificatable: A: cannot produce Swift.Int (decodingFailed"))
        #expect(values[0].contains("release builds print the first failure of each name and kind only"))
        #expect(values[1].hasPrefix("Notificatable: A: cannot produce Swift.Int (payloadTypeMismatch"))
        #expect(values[2].hasPrefix("Notificatable: B: cannot produce Swift.Int (decodingFailed"))
    }

    @Test func releaseBehaviourStopsAtTheLimitAndSaysSo() {
        let lines = ValueRecorder<String>()
        let reporter = DefaultFailureReporter(printsEveryFailure: false, limit: 3) { lines.append($0) }
        for index in 0..<100 { reporter.report(failure("Flood\(index)", .decodingFailed)) }
        #expect(lines.count == 3)
        #expect(lines.values.last?.contains("3 failures printed; no more are printed in this process") == true)
        #expect(lines.values.prefix(2).allSatisfy { !$0.contains("no more are printed") })
    }

    @Test func theDefaultHandlerFollowsTheBuildConfiguration() {
        #if DEBUG
        #expect(DefaultFailureReporter.shared.printsEveryFailure)
        #else
        #expect(!DefaultFailureReporter.shared.printsEveryFailure)
        #endif
        #expect(DefaultFailureReporter.shared.limit == 20)
    }
}
