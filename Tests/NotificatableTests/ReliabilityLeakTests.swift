import Dispatch
import Foundation
import Testing

@testable import Notificatable

/// Every kind of subscription, for the release checks below.
enum ReliabilitySubscriptionKind: String, CaseIterable, Sendable {
    case payloadFiltered, payloadFilteredOperationQueue, payloadFilteredDispatchQueue
    case notification, notificationOperationQueue, notificationDispatchQueue
    case never, neverDispatchQueue, neverFiltered, neverFilteredOperationQueue

    var isFiltered: Bool {
        switch self {
        case .payloadFiltered, .payloadFilteredOperationQueue, .payloadFilteredDispatchQueue, .neverFiltered,
            .neverFilteredOperationQueue:
            true
        default: false
        }
    }

    /// Subscribes a handler (and a failure handler, where the kind has one) that capture `probe` and `failureProbe`.
    func subscribe(
        name: String, center: NotificationCenter, object: AnyObject, probe: Probe, failureProbe: Probe,
        operationQueue: OperationQueue, dispatchQueue: DispatchQueue
    ) -> Disposable {
        let payload = Notificatable<Int>.name(name)
        let never = Notificatable.withoutPayload(name)
        let onFailure: NotificationDecodingFailure.Handler = { _ in withExtendedLifetime(failureProbe) {} }
        switch self {
        case .payloadFiltered:
            return payload.subscribe(object: object, center: center, onFailure: onFailure) { _ in
                withExtendedLifetime(probe) {}
            }
        case .payloadFilteredOperationQueue:
            return payload.subscribe(object: object, center: center, queue: operationQueue, onFailure: onFailure) { _ in
                withExtendedLifetime(probe) {}
            }
        case .payloadFilteredDispatchQueue:
            return payload.subscribe(object: object, center: center, queue: dispatchQueue, onFailure: onFailure) { _ in
                withExtendedLifetime(probe) {}
            }
        case .notification:
            return payload.subscribe(center: center, onFailure: onFailure) { _ in withExtendedLifetime(probe) {} }
        case .notificationOperationQueue:
            return payload.subscribe(center: center, queue: operationQueue, onFailure: onFailure) { _ in
                withExtendedLifetime(probe) {}
            }
        case .notificationDispatchQueue:
            return payload.subscribe(center: center, queue: dispatchQueue, onFailure: onFailure) { _ in
                withExtendedLifetime(probe) {}
            }
        case .never:
            return never.subscribe(center: center) { _ in withExtendedLifetime(probe) {} }
        case .neverDispatchQueue:
            return never.subscribe(center: center, queue: dispatchQueue) { _ in withExtendedLifetime(probe) {} }
        case .neverFiltered:
            return never.subscribe(object: object, center: center) { withExtendedLifetime(probe) {} }
        case .neverFilteredOperationQueue:
            return never.subscribe(object: object, center: center, queue: operationQueue) {
                withExtendedLifetime(probe) {}
            }
        }
    }

    /// Whether the failure handler is part of the subscription (the `Never` forms have none).
    var hasFailureHandler: Bool {
        switch self {
        case .never, .neverDispatchQueue, .neverFiltered, .neverFilteredOperationQueue: false
        default: true
        }
    }
}

/// How a subscription ends.
enum ReliabilitySubscriptionEnd: String, CaseIterable, Sendable {
    case dispose, bagDeinit, targetDeath
}

@Suite("Reliability: subscriptions release what they hold")
struct ReliabilityLeakTests {
    static let cases: [(ReliabilitySubscriptionKind, ReliabilitySubscriptionEnd)] =
        ReliabilitySubscriptionKind.allCases.flatMap { kind in
            ReliabilitySubscriptionEnd.allCases.filter { $0 != .targetDeath || kind.isFiltered }.map { (kind, $0) }
        }

    /// The handler, the failure handler, everything they capture, and the filter object are released when the
    /// subscription ends: by `dispose()`, by its bag's deinit, or (for filtered kinds) by the filter object's
    /// death, noticed at the next post of the name. Before that, the probes are alive, so the checks can fail.
    @Test(arguments: cases)
    func everythingIsReleasedWhenTheSubscriptionEnds(kind: ReliabilitySubscriptionKind, end: ReliabilitySubscriptionEnd)
    {
        let center = NotificationCenter()
        let name = uniqueName()
        let operationQueue = OperationQueue()
        let dispatchQueue = DispatchQueue(label: "reliability.leaks")
        weak var weakProbe: Probe?
        weak var weakFailureProbe: Probe?
        weak var weakTarget: Sender?
        var target: Sender? = Sender()
        var bag: DisposeBag? = DisposeBag()
        var subscription: Disposable?
        do {
            let probe = Probe()
            let failureProbe = Probe()
            weakProbe = probe
            weakFailureProbe = failureProbe
            weakTarget = target
            let made = kind.subscribe(
                name: name, center: center, object: target ?? Sender(), probe: probe, failureProbe: failureProbe,
                operationQueue: operationQueue, dispatchQueue: dispatchQueue
            )
            if end == .bagDeinit, let bag { made.store(in: bag) }
            subscription = made
        }
        // A delivery, and a failure for the kinds that report them, while the subscription is live.
        Notificatable<Int>.name(name).post(1, object: target, center: center)
        center.post(name: Notification.Name(name), object: target, userInfo: [NotificatableUserInfoKey: "wrong"])
        operationQueue.waitUntilAllOperationsAreFinished()
        dispatchQueue.sync {}
        #expect(weakProbe != nil)
        #expect(weakFailureProbe != nil || !kind.hasFailureHandler)
        #expect(subscription?.isActive == true)

        switch end {
        case .dispose:
            subscription?.dispose()
        case .bagDeinit:
            bag = nil
        case .targetDeath:
            target = nil
            #expect(weakTarget == nil, "the subscription must not keep its filter object alive")
            Notificatable<Int>.name(name).post(2, center: center)
        }
        operationQueue.waitUntilAllOperationsAreFinished()
        dispatchQueue.sync {}
        #expect(subscription?.isDisposed == true)
        #expect(weakProbe == nil, "the handler's captures outlive the subscription")
        #expect(weakFailureProbe == nil, "the failure handler's captures outlive the subscription")
        #expect(HubRegistry.shared.hub(for: Notification.Name(name), center: center) == nil)
        target = nil
        #expect(weakTarget == nil)
        withExtendedLifetime(bag) {}
    }
}
