import Dispatch
import Foundation
import NotificatableTesting
import Testing

@testable import Notificatable

// The lock rule: no user code runs, and no user object is released, while one of Notificatable's locks is held.
// Each test below releases a user object from inside one of our locked regions (as the code stood before the rule),
// and that object's deinit calls back into the same lock. Under the old code the thread deadlocks. Each scenario
// therefore runs on a thread of its own, watched with a timeout, so that a regression fails the test instead of
// hanging the run.

/// Runs `body` on a thread of its own and fails the test if it has not returned after `seconds`; returns whether it
/// returned. After a deadlock the lock stays held, so the caller must not touch the deadlocked object again.
///
/// A deadlock on a process-wide lock (the hub registry, the tracer, the failure handler) would hang every later test
/// that touches it, so for those the run stops at once, with the reason on standard error, instead of hanging until
/// CI's time limit.
@discardableResult
func expectNoDeadlock(
    _ scenario: String,
    onProcessWideLock: Bool,
    seconds: Double = 60,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        finished.signal()
    }
    thread.start()
    guard finished.wait(timeout: .now() + seconds) == .timedOut else { return true }
    Issue.record("deadlock: \(scenario) did not finish within \(seconds) s", sourceLocation: sourceLocation)
    if onProcessWideLock {
        FileHandle.standardError.write(
            Data(
                "LockRuleTests: deadlock: \(scenario) holds a process-wide lock forever; stopping the run\n".utf8))
        // `_exit`, not `exit`: exit handlers may wait for the deadlocked thread.
        _exit(1)
    }
    return false
}

/// A flag set from any thread.
final class LockRuleFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Runs an action from its deinit: stands for any user object whose deinit calls back into Notificatable.
final class DeinitAction: @unchecked Sendable {
    private let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}

/// An owner with a bag, the common shape: its deinit disposes the subscriptions in its bag.
final class BagOwner: @unchecked Sendable {
    let bag = DisposeBag()
    private let released: LockRuleFlag
    init(released: LockRuleFlag) { self.released = released }
    deinit { released.set() }
}

/// A delivery queue that runs deliveries at once and holds an object, released with the subscription.
struct HoldingQueue: NotificationDeliveryQueue {
    let held: DeinitAction
    func enqueueNotificationDelivery(_ delivery: @escaping @Sendable () -> Void) { delivery() }
}

@Suite("Lock rule: nothing is released and no user code runs under our locks")
struct LockRuleTests {
    /// A subscription on `center`, made below the public API so that the test can choose the registry key.
    private func subscription(holding owner: BagOwner) -> Subscription {
        let slot = HandlerSlot<Int>(handler: { [owner] _ in _ = owner }, onFailure: nil)
        return Subscription(object: nil, slot: slot, deliver: { _ in })
    }

    /// Shape (a): a center dies with a live subscription whose `Disposable` was dropped, and a new center at the
    /// same address subscribes. The registry replaces the dead entry; releasing the dead hub releases the handler,
    /// the owner, and the owner's bag, which disposes another subscription and so asks the registry's lock again.
    /// The address reuse is simulated by passing the dead center's identity, which is what the registry keys on.
    @Test func replacingADeadCentersEntryReleasesItsHubOutsideTheRegistryLock() {
        let identity = Probe()  // kept alive, so no real center gets this identity meanwhile
        let centerID = ObjectIdentifier(identity)
        let name = Notification.Name(uniqueName())
        let live = NotificationCenter()
        let released = LockRuleFlag()
        expectNoDeadlock("replacing a dead center's hub entry", onProcessWideLock: true) { [self] in
            do {
                let doomed = NotificationCenter()
                let owner = BagOwner(released: released)
                Notificatable<Int>.name(uniqueName()).subscribe(center: live) { _ in }.store(in: owner.bag)
                _ = HubRegistry.shared.attach(
                    subscription(holding: owner), name: name, center: doomed, centerID: centerID)
            }
            #expect(!released.isSet)  // the dead center's hub still holds the owner
            let next = subscription(holding: BagOwner(released: LockRuleFlag()))
            _ = HubRegistry.shared.attach(next, name: name, center: live, centerID: centerID)
            next.dispose()
        }
        #expect(released.isSet)
        withExtendedLifetime(identity) {}
    }

    /// Shape (b): the same owner, but the dead entry is dropped by the sweep that runs as the table grows, here
    /// by subscribing to new names on a live center until the sweep has run.
    @Test func sweepingDeadEntriesReleasesTheirHubsOutsideTheRegistryLock() {
        let live = NotificationCenter()
        let released = LockRuleFlag()
        let subscribed = ValueRecorder<Disposable>()
        expectNoDeadlock("sweeping dead hub entries", onProcessWideLock: true) {
            do {
                let doomed = NotificationCenter()
                let owner = BagOwner(released: released)
                Notificatable<Int>.name(uniqueName()).subscribe(center: live) { _ in }.store(in: owner.bag)
                _ = Notificatable<Int>.name(uniqueName()).subscribe(center: doomed) { [owner] _ in _ = owner }
            }
            // The sweep runs once the table has doubled since the last one, so a bounded number of new entries
            // always reaches it, whatever other tests hold.
            var count = 0
            while !released.isSet && count < 50_000 {
                subscribed.append(Notificatable<Int>.name(uniqueName()).subscribe(center: live) { _ in })
                count += 1
            }
        }
        for disposable in subscribed.values { disposable.dispose() }
        #expect(released.isSet)
    }

    /// Replacing a `.custom` strategy (or `userInfo`) releases the old one; its captures may read the decoder.
    @Test func replacingDecoderOptionsReleasesTheOldValueOutsideTheLock() {
        // Each scenario gets a fresh decoder: after a deadlock, the decoder's lock stays held.
        let scenarios:
            [(String, @Sendable (UserInfoDecoder, DeinitAction) -> Void, @Sendable (UserInfoDecoder) -> Void)] = [
                (
                    "keyDecodingStrategy",
                    { decoder, held in
                        decoder.keyDecodingStrategy = .custom { [held] path in
                            _ = held
                            return path[path.count - 1]
                        }
                    },
                    { decoder in decoder.keyDecodingStrategy = .useDefaultKeys }
                ),
                (
                    "dateDecodingStrategy",
                    { decoder, held in
                        decoder.dateDecodingStrategy = .custom { [held] _ in
                            _ = held
                            return Date()
                        }
                    },
                    { decoder in decoder.dateDecodingStrategy = .deferredToDate }
                ),
                (
                    "dataDecodingStrategy",
                    { decoder, held in
                        decoder.dataDecodingStrategy = .custom { [held] _ in
                            _ = held
                            return Data()
                        }
                    },
                    { decoder in decoder.dataDecodingStrategy = .deferredToData }
                ),
                (
                    "userInfo",
                    { decoder, held in decoder.userInfo = [CodingUserInfoKey(rawValue: "held")!: held] },
                    { decoder in decoder.userInfo = [:] }
                ),
            ]
        for (property, install, replace) in scenarios {
            let decoder = UserInfoDecoder()
            let released = LockRuleFlag()
            expectNoDeadlock("UserInfoDecoder.\(property) setter", onProcessWideLock: false) {
                install(
                    decoder,
                    DeinitAction {
                        _ = decoder.keyDecodingStrategy
                        _ = decoder.dateDecodingStrategy
                        _ = decoder.dataDecodingStrategy
                        _ = decoder.userInfo
                        released.set()
                    })
                replace(decoder)
            }
            #expect(released.isSet, "\(property)")
        }
    }

    /// The same for the encoder's options.
    @Test func replacingEncoderOptionsReleasesTheOldValueOutsideTheLock() {
        let scenarios:
            [(String, @Sendable (UserInfoEncoder, DeinitAction) -> Void, @Sendable (UserInfoEncoder) -> Void)] = [
                (
                    "keyEncodingStrategy",
                    { encoder, held in
                        encoder.keyEncodingStrategy = .custom { [held] path in
                            _ = held
                            return path[path.count - 1]
                        }
                    },
                    { encoder in encoder.keyEncodingStrategy = .useDefaultKeys }
                ),
                (
                    "dateEncodingStrategy",
                    { encoder, held in encoder.dateEncodingStrategy = .custom { [held] _, _ in _ = held } },
                    { encoder in encoder.dateEncodingStrategy = .deferredToDate }
                ),
                (
                    "dataEncodingStrategy",
                    { encoder, held in encoder.dataEncodingStrategy = .custom { [held] _, _ in _ = held } },
                    { encoder in encoder.dataEncodingStrategy = .deferredToData }
                ),
                (
                    "userInfo",
                    { encoder, held in encoder.userInfo = [CodingUserInfoKey(rawValue: "held")!: held] },
                    { encoder in encoder.userInfo = [:] }
                ),
            ]
        for (property, install, replace) in scenarios {
            let encoder = UserInfoEncoder()
            let released = LockRuleFlag()
            expectNoDeadlock("UserInfoEncoder.\(property) setter", onProcessWideLock: false) {
                install(
                    encoder,
                    DeinitAction {
                        _ = encoder.keyEncodingStrategy
                        _ = encoder.dateEncodingStrategy
                        _ = encoder.dataEncodingStrategy
                        _ = encoder.encodesGeometryAsNSValue
                        _ = encoder.userInfo
                        released.set()
                    })
                replace(encoder)
            }
            #expect(released.isSet, "\(property)")
        }
    }

    /// A bag drops its disposed members as it grows; the last reference to a disposed subscription releases what
    /// the subscription still holds, such as its delivery queue, whose deinit may use the bag.
    @Test func bagPruningReleasesDisposedMembersOutsideItsLock() {
        let center = NotificationCenter()
        let bag = DisposeBag()
        let released = LockRuleFlag()
        let finished = expectNoDeadlock("DisposeBag.insert pruning disposed members", onProcessWideLock: false) {
            do {
                let queue = HoldingQueue(
                    held: DeinitAction {
                        _ = bag.isDisposed
                        released.set()
                    })
                let doomed = Notificatable<Int>.name(uniqueName()).subscribe(center: center, queue: queue) { _ in }
                doomed.store(in: bag)
                doomed.dispose()
            }
            // The bag prunes when it holds a multiple of 64 members.
            for _ in 0..<64 {
                Notificatable<Int>.name(uniqueName()).subscribe(center: center) { _ in }.store(in: bag)
            }
        }
        #expect(released.isSet)
        if finished { bag.dispose() }
    }

    /// `removeAll()` forgets the recorded events, and with them the objects they hold.
    @Test func recorderRemoveAllReleasesEventsOutsideItsLock() {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center)
        let handle = Notificatable<Int>.name(uniqueName())
        recorder.record(handle)
        let released = LockRuleFlag()
        let finished = expectNoDeadlock("NotificationRecorder.removeAll", onProcessWideLock: false) {
            handle.post(
                1,
                object: DeinitAction {
                    _ = recorder.events
                    released.set()
                }, center: center)
            recorder.removeAll()
        }
        #expect(released.isSet)
        if finished { recorder.stop() }
    }
}

// MARK: - Global setters, in the serialized suites that own them

private func tracer(holding held: DeinitAction) -> NotificationTracing.Tracer {
    { [held] _ in _ = held }
}

private func failureHandler(holding held: DeinitAction) -> NotificationDecodingFailure.Handler {
    { [held] _ in _ = held }
}

extension ExtrasGlobalHooksTests {
    /// Replacing the tracer releases the old one; what it captured may read the tracer from its deinit.
    @Test func replacingTheTracerReleasesTheOldOneOutsideTheLock() {
        let previous = NotificationTracing.tracer
        let released = LockRuleFlag()
        expectNoDeadlock("NotificationTracing.tracer setter", onProcessWideLock: true) {
            // The closure holds the only reference to the object.
            NotificationTracing.tracer = tracer(
                holding: DeinitAction {
                    _ = NotificationTracing.tracer
                    released.set()
                })
            NotificationTracing.tracer = previous
        }
        #expect(released.isSet)
    }
}

extension HandleDefaultCenterTests {
    /// Replacing the failure handler releases the old one; what it captured may read the handler from its deinit.
    @Test func replacingTheFailureHandlerReleasesTheOldOneOutsideTheLock() {
        let previous = NotificationDecodingFailure.handler
        let released = LockRuleFlag()
        expectNoDeadlock("NotificationDecodingFailure.handler setter", onProcessWideLock: true) {
            // The closure holds the only reference to the object.
            NotificationDecodingFailure.handler = failureHandler(
                holding: DeinitAction {
                    _ = NotificationDecodingFailure.handler
                    released.set()
                })
            NotificationDecodingFailure.handler = previous
        }
        #expect(released.isSet)
    }
}
