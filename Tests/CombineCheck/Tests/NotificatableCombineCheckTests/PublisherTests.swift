import Foundation
import Notificatable
import NotificatableCombine
import OpenCombine
import Testing

/// A thread-safe list, for values that arrive from handlers.
final class CombineCheckRecorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(_ value: Value) { lock.withLock { storage.append(value) } }
    var values: [Value] { lock.withLock { storage } }
}

/// A subscriber that asks for a fixed demand at first and records everything it receives.
final class CombineCheckSubscriber<Input>: Subscriber, @unchecked Sendable {
    typealias Failure = Never

    private let lock = NSLock()
    private let initialDemand: Subscribers.Demand
    private var inputs: [Input] = []
    private var completions = 0
    private(set) var subscription: (any Subscription)?

    init(initialDemand: Subscribers.Demand) {
        self.initialDemand = initialDemand
    }

    func receive(subscription: any Subscription) {
        lock.withLock { self.subscription = subscription }
        subscription.request(initialDemand)
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        lock.withLock { inputs.append(input) }
        return .none
    }

    func receive(completion: Subscribers.Completion<Never>) {
        lock.withLock { completions += 1 }
    }

    var received: [Input] { lock.withLock { inputs } }
    var completionCount: Int { lock.withLock { completions } }
}

final class CombineCheckSender: @unchecked Sendable {}

struct CombineCheckUser: Codable, Equatable, Sendable {
    var name: String
}

func combineCheckName(_ function: String = #function) -> String {
    "CombineCheck.\(function).\(UUID().uuidString)"
}

@Suite struct NotificatablePublisherTests {
    @Test func publishesPayloadsInOrderOnThePostingThread() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(combineCheckName())
        let received = CombineCheckRecorder<Int>()
        let cancellable = handle.publisher(center: center).sink { received.append($0) }
        handle.post(1, center: center)
        handle.post(2, center: center)
        #expect(received.values == [1, 2])
        cancellable.cancel()
        handle.post(3, center: center)
        #expect(received.values == [1, 2])
    }

    @Test func failureIsReportedAndNeverCompletes() {
        let center = NotificationCenter()
        let name = combineCheckName()
        let handle = Notificatable<CombineCheckUser>.name(name)
        let failures = CombineCheckRecorder<NotificationDecodingFailure>()
        let subscriber = CombineCheckSubscriber<CombineCheckUser>(initialDemand: .unlimited)
        handle.publisher(center: center, onFailure: { failures.append($0) }).subscribe(subscriber)
        Notificatable<Int>.name(name).post(5, center: center)
        handle.post(CombineCheckUser(name: "Ada"), center: center)
        #expect(failures.values.count == 1)
        #expect(failures.values.first?.kind == .payloadTypeMismatch)
        #expect(subscriber.received == [CombineCheckUser(name: "Ada")])
        #expect(subscriber.completionCount == 0)
        subscriber.subscription?.cancel()
    }

    @Test func objectFilterIsByIdentityAndCompletesOnceTheObjectIsGone() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(combineCheckName())
        let subscriber = CombineCheckSubscriber<Int>(initialDemand: .unlimited)
        var sender: CombineCheckSender? = CombineCheckSender()
        weak let weakSender = sender
        handle.publisher(object: sender, center: center).subscribe(subscriber)
        handle.post(1, object: sender, center: center)
        handle.post(2, object: CombineCheckSender(), center: center)
        handle.post(3, center: center)
        #expect(subscriber.received == [1])
        sender = nil
        #expect(weakSender == nil)
        handle.post(4, center: center)
        #expect(subscriber.received == [1])
        #expect(subscriber.completionCount == 1)
    }

    @Test func respectsDemand() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(combineCheckName())
        let subscriber = CombineCheckSubscriber<Int>(initialDemand: .max(1))
        handle.publisher(center: center).subscribe(subscriber)
        handle.post(1, center: center)
        handle.post(2, center: center)
        #expect(subscriber.received == [1])
        subscriber.subscription?.request(.max(1))
        handle.post(3, center: center)
        #expect(subscriber.received == [1, 3])
        subscriber.subscription?.cancel()
    }

    @Test func cancelReleasesTheSubscriber() {
        let center = NotificationCenter()
        let handle = Notificatable<Int>.name(combineCheckName())
        var subscriber: CombineCheckSubscriber<Int>? = CombineCheckSubscriber(initialDemand: .unlimited)
        weak let weakSubscriber = subscriber
        handle.publisher(center: center).subscribe(subscriber!)
        handle.post(1, center: center)
        #expect(subscriber?.received == [1])
        let subscription = subscriber?.subscription
        subscriber = nil
        // The center still reaches the subscriber through the live subscription.
        #expect(weakSubscriber != nil)
        subscription?.cancel()
        #expect(weakSubscriber == nil)
    }

    @Test func neverHandlePublishesVoid() {
        let center = NotificationCenter()
        let handle = Notificatable.withoutPayload(combineCheckName())
        let sender = CombineCheckSender()
        let all = CombineCheckRecorder<Int>()
        let filtered = CombineCheckRecorder<Int>()
        let first = handle.publisher(center: center).sink { _ in all.append(1) }
        let second = handle.publisher(object: sender, center: center).sink { _ in filtered.append(1) }
        handle.post(center: center)
        handle.post(object: sender, center: center)
        #expect(all.values.count == 2)
        #expect(filtered.values.count == 1)
        first.cancel()
        second.cancel()
    }
}
