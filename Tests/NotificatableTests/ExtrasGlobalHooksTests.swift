import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// Records tracer events about the given names only: other suites post concurrently while a tracer is installed.
final class ExtrasTraceRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private let names: Set<Notification.Name>
    private var events: [NotificationTraceEvent] = []

    init(_ names: String...) {
        self.names = Set(names.map { Notification.Name($0) })
    }

    var tracer: NotificationTracing.Tracer {
        { [self] event in
            let name: Notification.Name
            switch event {
            case .posted(let postedName, _, _): name = postedName
            case .decodingFailed(let failure): name = failure.name
            }
            if names.contains(name) {
                lock.withLock { events.append(event) }
            }
        }
    }

    var recorded: [NotificationTraceEvent] { lock.withLock { events } }
}

/// Everything of the extras that installs process-wide state (the tracer), in one serialized suite.
@Suite("Global hooks (serialized)", .serialized) struct ExtrasGlobalHooksTests {
    @Test func tracerSeesEveryTypedPostAndEveryFailure() throws {
        let center = NotificationCenter()
        let name = uniqueName()
        let neverName = uniqueName()
        let recorder = ExtrasTraceRecorder(name, neverName)
        let previous = NotificationTracing.tracer
        NotificationTracing.tracer = recorder.tracer
        defer { NotificationTracing.tracer = previous }

        let handle = Notificatable<User>.name(name)
        let never = Notificatable.withoutPayload(neverName)
        let sender = Sender()
        let failures = FailureRecorder()
        let received = Counter()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in received.increment() }
        defer { d.dispose() }

        handle.post(User(name: "Ada", age: 36), object: sender, center: center)
        never.post(center: center)
        Notificatable<Int>.name(name).post(3, center: center)  // a failure for the User subscriber
        // A legacy post is not traced as a post; the User subscriber cannot decode its empty userInfo, and that
        // failure is traced.
        center.post(name: Notification.Name(name), object: nil, userInfo: nil)

        let events = recorder.recorded
        #expect(events.count == 5)
        guard events.count == 5 else { return }
        guard case .posted(let first, let firstType, let firstObject) = events[0] else {
            Issue.record("expected a post, got \(events[0])")
            return
        }
        #expect(first.rawValue == name)
        #expect(ObjectIdentifier(firstType) == ObjectIdentifier(User.self))
        #expect((firstObject as AnyObject?) === sender)
        guard case .posted(let second, let secondType, let secondObject) = events[1] else {
            Issue.record("expected a post, got \(events[1])")
            return
        }
        #expect(second.rawValue == neverName)
        #expect(ObjectIdentifier(secondType) == ObjectIdentifier(Never.self))
        #expect(secondObject == nil)
        guard case .posted(_, let thirdType, _) = events[2] else {
            Issue.record("expected a post, got \(events[2])")
            return
        }
        #expect(ObjectIdentifier(thirdType) == ObjectIdentifier(Int.self))
        // The post is traced before the center delivers it, so its failure comes after it.
        guard case .decodingFailed(let failure) = events[3] else {
            Issue.record("expected a failure, got \(events[3])")
            return
        }
        #expect(failure.kind == .payloadTypeMismatch)
        guard case .decodingFailed(let legacyFailure) = events[4] else {
            Issue.record("expected a failure, got \(events[4])")
            return
        }
        #expect(legacyFailure.kind == .decodingFailed)
        #expect(failures.count == 2)
        #expect(received.count == 1)
        #expect(events[0].description.hasPrefix("posted \(name) ("))
        #expect(events[3].description.hasPrefix("failed \(name): "))
    }

    @Test func tracerSeesAsynchronousPostsAndStopsWhenRemoved() {
        let center = NotificationCenter()
        let name = uniqueName()
        let recorder = ExtrasTraceRecorder(name)
        let previous = NotificationTracing.tracer
        NotificationTracing.tracer = recorder.tracer
        defer { NotificationTracing.tracer = previous }

        let handle = Notificatable<Int>.name(name)
        let delivered = DispatchSemaphore(value: 0)
        let d = handle.subscribe(center: center) { _ in delivered.signal() }
        defer { d.dispose() }
        handle.postAsync(1, center: center, priority: .utility)
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        #expect(recorder.recorded.count == 1)

        NotificationTracing.tracer = nil
        #expect(NotificationTracing.tracer == nil)
        handle.post(2, center: center)
        #expect(recorder.recorded.count == 1)
    }

    /// The tracer hooks our own paths: installing it adds no observer to any center, so it can never become the
    /// `forName: nil` observer that crashes on Linux when a Foundation typed message is posted.
    @Test func tracingInstallsNoObserver() {
        let center = NotificationCenter()
        let name = uniqueName()
        let recorder = ExtrasTraceRecorder(name)
        let previous = NotificationTracing.tracer
        NotificationTracing.tracer = recorder.tracer
        defer { NotificationTracing.tracer = previous }

        Notificatable<Int>.name(name).post(1, center: center)
        #expect(recorder.recorded.count == 1)
        #expect(!extrasHubExists(name, center))
    }
}
