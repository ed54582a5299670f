import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// Compile-time pins: every new call form resolves, and the existing forms still resolve as before.
@Suite struct ExtrasCallFormTests {
    @MainActor @Test func newFormsResolveAndOldFormsKeepTheirMeaning() async {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(uniqueName())
        let never = Notificatable.withoutPayload(uniqueName())
        let target = ExtrasTarget()
        let sender = Sender()
        let bag = DisposeBag()
        let seen = ValueRecorder<String>()

        // Existing forms: a one-parameter closure is still the TypedNotification / object form.
        handle.subscribe(center: center) { note in seen.append("note \(note.userInfo)") }.store(in: bag)
        never.subscribe(center: center) { object in seen.append("object \(object == nil)") }.store(in: bag)
        never.subscribe(center: center) { _ in }.store(in: bag)

        // Weak targets.
        handle.subscribe(target, center: center) { t, value in t.received.append(value) }.store(in: bag)
        handle.subscribe(target, center: center) { $0.received.append($1) }.store(in: bag)
        handle.subscribe(target, object: sender, center: center, queue: nil) { _, _ in }.store(in: bag)
        handle.subscribe(target, center: center, queue: .main) { _, _ in }.store(in: bag)
        handle.subscribe(target, center: center, queue: DispatchQueue.main) { _, _ in }.store(in: bag)
        never.subscribe(target, center: center) { t in t.received.append(-1) }.store(in: bag)
        never.subscribe(target, center: center) { $0.received.append(-2) }.store(in: bag)
        never.subscribe(target, center: center, queue: .main) { _ in }.store(in: bag)
        never.subscribe(target, object: sender, center: center, queue: DispatchQueue.main) { _ in }.store(in: bag)

        // Main actor.
        handle.subscribeOnMainActor(center: center) { value in seen.append("main \(value)") }.store(in: bag)
        handle.subscribeOnMainActor(object: sender, center: center) { _ in }.store(in: bag)
        handle.subscribeOnMainActor(center: center, onFailure: { _ in }) { _ in }.store(in: bag)
        never.subscribeOnMainActor(center: center) { seen.append("main never") }.store(in: bag)

        // Sequences, posting.
        _ = handle.payloads()
        _ = handle.payloads(object: sender, center: center, bufferingPolicy: .bufferingNewest(1), onFailure: { _ in })
        _ = never.notifications(center: center, bufferingPolicy: .bufferingOldest(4))
        let elsewhere = NotificationCenter()  // asynchronous posts must not race with the expectations below
        handle.postAsync(1, center: elsewhere)
        never.postAsync(object: sender, center: elsewhere, priority: .background)

        handle.post(5, center: center)
        never.post(center: center)
        #expect(seen.values == ["note 5", "main 5", "object true", "main never"])
        #expect(target.received.values == [5, 5, -1, -2])
    }
}
