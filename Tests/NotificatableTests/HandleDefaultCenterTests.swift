import Foundation
import Testing

@testable import Notificatable

/// Everything that touches global state: `NotificationCenter.default` and the global failure handler.
@Suite(.serialized) struct HandleDefaultCenterTests {
    @Test func defaultCenterIsTheDefault() {
        let handle = Notificatable<Int>.name(uniqueName())
        let never = Notificatable.withoutPayload(uniqueName())
        let received = ValueRecorder<Int>()
        let bag = DisposeBag()
        handle.subscribe { note in received.append(note.userInfo) }.store(in: bag)
        never.subscribe { _ in received.append(-1) }.store(in: bag)
        handle.post(1)
        never.post()
        handle.post(2, center: NotificationCenter())
        #expect(received.values == [1, -1])
    }

    @Test func globalHandlerReceivesFailuresWithoutOnFailure() throws {
        let recorded = FailureRecorder()
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = recorded.handler
        defer { NotificationDecodingFailure.handler = previous }

        let center = NotificationCenter()
        let name = uniqueName()
        let perSubscription = FailureRecorder()
        let bag = DisposeBag()
        Notificatable<User>.name(name).subscribe(center: center) { _ in }.store(in: bag)
        Notificatable<User>.name(name).subscribe(center: center, onFailure: perSubscription.handler) { _ in }
            .store(in: bag)
        Notificatable<Int>.name(name).post(5, center: center)

        #expect(recorded.count == 1)
        #expect(perSubscription.count == 1)
        let failure = try #require(recorded.values.first)
        #expect(failure.kind == .payloadTypeMismatch)
        #expect(paths(failure) == [NotificatableUserInfoKey])
    }

    @Test func plainKeysEncodingFailureIsReportedAndTheTypedPayloadStillPosted() throws {
        let recorded = FailureRecorder()
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = recorded.handler
        defer { NotificationDecodingFailure.handler = previous }

        let center = NotificationCenter()
        // An Int does not encode as a keyed container, so it has no plain keys.
        let handle = Notificatable<Int>.name(uniqueName()).postingPlainKeys()
        let received = ValueRecorder<Int>()
        let d = handle.subscribe(center: center) { note in received.append(note.userInfo) }
        defer { d.dispose() }
        handle.post(7, center: center)
        #expect(received.values == [7])
        let failure = try #require(recorded.values.first)
        #expect(failure.kind == .plainKeysEncodingFailed)
        #expect(failure.error is EncodingError)
    }

    @Test func plainKeysOnlyEncodingFailureIsReportedAndTheTypedPayloadStillPosted() throws {
        let recorded = FailureRecorder()
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = recorded.handler
        defer { NotificationDecodingFailure.handler = previous }

        let center = NotificationCenter()
        // An Int does not encode as a keyed container, so it has no plain keys: without them, a plain-keys-only
        // post carries the typed payload after all, rather than nothing.
        let handle = Notificatable<Int>.name(uniqueName()).postingPlainKeysOnly()
        let received = ValueRecorder<Int>()
        let d = handle.subscribe(center: center) { note in received.append(note.userInfo) }
        defer { d.dispose() }
        handle.post(7, center: center)
        #expect(received.values == [7])
        let failure = try #require(recorded.values.first)
        #expect(failure.kind == .plainKeysEncodingFailed)
        #expect(failure.error is EncodingError)
        #expect(handle.makeNotification(8).userInfo?[NotificatableUserInfoKey] as? Int == 8)
    }

    @Test func defaultHandlerIsRestorable() {
        let previous = NotificationDecodingFailure.handler
        NotificationDecodingFailure.handler = { _ in }
        NotificationDecodingFailure.handler = NotificationDecodingFailure.defaultHandler
        NotificationDecodingFailure.handler = previous
    }

    /// `queue: .main` must be `OperationQueue.main`, as in Foundation, for both kinds of handle. A blocking
    /// operation holds the serial main operation queue (whether or not its thread is serviced), so the deliveries
    /// wait in it and show in its operation count. Had `.main` resolved to `DispatchQueue.main`, the count would stay
    /// unchanged.
    @Test func mainMeansOperationQueueMain() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let never = Notificatable.withoutPayload(handle.name.rawValue)
        let main = OperationQueue.main
        let release = DispatchSemaphore(value: 0)
        main.addOperation { _ = release.wait(timeout: .now() + 10) }
        defer { release.signal() }
        let before = main.operationCount
        let bag = DisposeBag()
        handle.subscribe(center: center, queue: .main) { _ in }.store(in: bag)
        never.subscribe(center: center, queue: .main) { _ in }.store(in: bag)
        handle.post(1, center: center)
        #expect(main.operationCount == before + 2)
        bag.dispose()
    }
}
