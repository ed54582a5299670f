import Dispatch
import Foundation
import Notificatable
import NotificatableRelay
import Testing

// What `NotificationRelay.stop()` promises: when it returns, the transport has been stopped and is called no more, and
// every post that returned before `stop()` began was handed to the transport first. Called from inside a transport
// call or a transport callback (a subscriber of a received message, `onEvent`), it must not deadlock.

/// A transport that records every call, and whether a call came after the relay's `stop()` returned.
final class RecordingTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    private let lock = NSLock()
    private var handler: NotificationTransportHandler?
    private var publishedMessages: [Data] = []
    private var stopped = false
    private var relayStopReturned = false
    private var lateCalls: [String] = []
    private let publishDelay: useconds_t
    /// Signalled after each publish, so that a test can wait for the posting threads to get going.
    let published = DispatchSemaphore(value: 0)

    /// - Parameter publishDelay: How long each publish takes, in microseconds: a wider window for a racing `stop()`.
    init(publishDelay: useconds_t = 0) { self.publishDelay = publishDelay }

    private func record(_ call: String) {
        lock.withLock { if relayStopReturned { lateCalls.append(call) } }
    }

    func start(handler: NotificationTransportHandler) { lock.withLock { self.handler = handler } }
    func listen(to channel: String) { record("listen") }
    func unlisten(from channel: String) { record("unlisten") }
    func publish(_ message: Data, on channel: String) {
        if publishDelay > 0 { usleep(publishDelay) }
        record("publish")
        lock.withLock { publishedMessages.append(message) }
        published.signal()
    }
    func stop() {
        record("stop")
        lock.withLock {
            stopped = true
            handler = nil
        }
    }

    /// Marks the moment the relay's `stop()` returned; returns whether the transport had been stopped by then.
    func relayStopDidReturn() -> Bool {
        lock.withLock {
            relayStopReturned = true
            return stopped
        }
    }

    /// The calls made after the relay's `stop()` returned.
    var callsAfterStop: [String] { lock.withLock { lateCalls } }
    var messages: [Data] { lock.withLock { publishedMessages } }
    var isStopped: Bool { lock.withLock { stopped } }
}

@Suite("Relay: stop() with several threads posting (RelayStopConcurrencyTests)")
struct RelayStopConcurrencyTests {
    /// Four threads post into one relay while the test thread stops it, in many rounds. When `stop()` returns, the
    /// transport has been stopped and is called no more; every post that had returned before `stop()` began was
    /// published. (Before the fix, `stop()` returned at once while a posting thread was still draining the queue, and
    /// the transport went on publishing.)
    @Test func stopWaitsForTheThreadThatIsCallingTheTransport() throws {
        for round in 0..<20 {
            let transport = RecordingTransport(publishDelay: 20)
            let center = NotificationCenter()
            let relay = NotificationRelay(transport: transport, center: center, onEvent: { _ in })
            let handle = Notificatable<RelayStamp>.name(uniqueName() + ".\(round)")
            relay.forward(handle)
            let returned = ValueRecorder<RelayStamp>()
            let done = DispatchGroup()
            let go = DispatchSemaphore(value: 0)
            let keepPosting = LockRuleFlag()
            for thread in 0..<4 {
                done.enter()
                Thread {
                    go.wait()
                    var index = 0
                    while !keepPosting.isSet && index < 500 {
                        handle.post(RelayStamp(thread: thread, index: index), center: center)
                        returned.append(RelayStamp(thread: thread, index: index))
                        index += 1
                    }
                    done.leave()
                }.start()
            }
            for _ in 0..<4 { go.signal() }
            for _ in 0..<40 { _ = transport.published.wait(timeout: .now() + 10) }

            let returnedBeforeStop = returned.values
            relay.stop()
            let stoppedWhenStopReturned = transport.relayStopDidReturn()
            keepPosting.set()
            #expect(done.wait(timeout: .now() + 60) == .success)

            #expect(stoppedWhenStopReturned, "round \(round): stop() returned before the transport was stopped")
            let late = transport.callsAfterStop
            #expect(late.count == 0, "round \(round): late calls \(Set(late).sorted())")
            let sent = try Set(
                transport.messages.map { try NotificationRelayMessage(decoding: $0) }.map { message in
                    let payload = message.payload ?? [:]
                    return "\(payload["thread"] ?? "?")#\(payload["index"] ?? "?")"
                })
            let missing = returnedBeforeStop.filter { !sent.contains("\($0.thread)#\($0.index)") }
            #expect(missing.isEmpty, "round \(round): \(missing.count) posts made before stop() were not sent")
        }
    }
}

/// A transport whose `publish` waits for its own serial "event loop" thread, the thread on which it also delivers what
/// it receives: the shape of a client that hops to its event loop to send.
private final class EventLoopTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    let loop = DispatchQueue(label: "EventLoopTransport")
    private let lock = NSLock()
    private var handler: NotificationTransportHandler?
    private var stopped = false
    /// Signalled when a publish is about to wait for the loop.
    let publishing = DispatchSemaphore(value: 0)

    func start(handler: NotificationTransportHandler) { lock.withLock { self.handler = handler } }
    func listen(to channel: String) {}
    func unlisten(from channel: String) {}
    func publish(_ message: Data, on channel: String) {
        publishing.signal()
        loop.sync {}
    }
    func stop() {
        lock.withLock {
            stopped = true
            handler = nil
        }
    }
    /// Delivers `message` on the loop thread.
    func deliver(_ message: Data, on channel: String) {
        loop.async { [self] in lock.withLock { handler }?.receive(message, on: channel) }
    }
    var isStopped: Bool { lock.withLock { stopped } }
}

@Suite("Relay: stop() from inside a callback does not deadlock")
struct RelayReentrantStopTests {
    let order = RelayOrder(id: "A-17", count: 3, shippedAt: Date(timeIntervalSince1970: 1_764_000_000.5))

    /// A subscriber of a received message stops the relay that received it (inside the transport's callback).
    @Test func fromASubscriberOfAReceivedMessage() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let stopReturned = LockRuleFlag()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { [right = pair.right] _ in
            right.stop()
            stopReturned.set()
        }.store(in: bag)
        expectNoDeadlock("stop() in a subscriber of a received message", onProcessWideLock: false, seconds: 30) {
            shipped.post(order, center: pair.leftCenter)
        }
        #expect(stopReturned.isSet)
        #expect(pair.rightTransport.listenedChannels.isEmpty)
    }

    /// A subscriber on another center, reached synchronously from the transport's publish, stops the relay whose
    /// thread is making that publish: `stop()` runs on the thread draining the relay's queue.
    @Test func fromTheThreadThatIsCallingTheTransport() {
        let pair = RelayPair()
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        pair.forward(shipped)
        let stopReturned = LockRuleFlag()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: pair.rightCenter) { [left = pair.left] _ in
            left.stop()
            stopReturned.set()
        }.store(in: bag)
        expectNoDeadlock("stop() on the thread that is publishing", onProcessWideLock: false, seconds: 30) {
            shipped.post(order, center: pair.leftCenter)
        }
        #expect(stopReturned.isSet)
        // By the time the post returned, the publishing thread had stopped the transport.
        #expect(pair.leftTransport.listenedChannels.isEmpty)
        shipped.post(order, center: pair.leftCenter)
        #expect(pair.events.values.isEmpty)
    }

    /// `onEvent` stops the relay: for an event the transport reports from inside a publish (on the draining thread),
    /// and for one it reports from elsewhere.
    @Test func fromOnEvent() {
        let bus = LoopbackNotificationBus()
        let transport = LoopbackNotificationTransport(bus: bus)
        let center = NotificationCenter()
        let relayBox = ValueRecorder<NotificationRelay>()
        let stops = Counter()
        let relay = NotificationRelay(
            transport: transport, center: center,
            onEvent: { _ in
                relayBox.values.first?.stop()
                stops.increment()
            })
        relayBox.append(relay)
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        relay.forward(shipped)
        transport.disconnect()  // reports connectionLost: onEvent stops the relay, outside any publish
        #expect(stops.count == 1)
        #expect(transport.listenedChannels.isEmpty)

        let second = LoopbackNotificationTransport(bus: bus)
        let secondBox = ValueRecorder<NotificationRelay>()
        let secondRelay = NotificationRelay(
            transport: second, center: center,
            onEvent: { event in
                if event.kind == .publishFailed { secondBox.values.first?.stop() }
                stops.increment()
            })
        secondBox.append(secondRelay)
        secondRelay.forward(shipped)
        second.disconnect()
        expectNoDeadlock("stop() in onEvent for a failed publish", onProcessWideLock: false, seconds: 30) {
            shipped.post(order, center: center)  // publish reports publishFailed on the draining thread
        }
        #expect(stops.count == 3)
        #expect(second.listenedChannels.isEmpty)
        relayBox.values.forEach { $0.stop() }
    }

    /// A subscriber on the transport's event-loop thread stops the relay while another thread is inside `publish`,
    /// waiting for that event-loop thread. Waiting for the publishing thread there would deadlock; `stop()` returns,
    /// and the publishing thread stops the transport when its call returns.
    @Test func fromTheTransportsThreadWhileAPublishWaitsForIt() {
        let transport = EventLoopTransport()
        let center = NotificationCenter()
        let relay = NotificationRelay(transport: transport, center: center, onEvent: { _ in })
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        relay.forward(shipped)
        let inSubscriber = DispatchSemaphore(value: 0)
        let stopReturned = LockRuleFlag()
        var remote = order
        remote.id = "remote"
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: center) { note in
            guard note.userInfo.id == "remote" else { return }
            inSubscriber.signal()
            _ = transport.publishing.wait(timeout: .now() + 30)  // the posting thread is now in publish
            relay.stop()
            stopReturned.set()
        }.store(in: bag)
        let message = try? NotificationRelayMessage(
            name: shipped.name, sender: "other", sequence: 1,
            payload: ["id": "remote", "count": 1, "shippedAt": order.shippedAt]
        ).encoded()
        transport.deliver(message ?? Data(), on: shipped.name.rawValue)
        _ = inSubscriber.wait(timeout: .now() + 30)
        expectNoDeadlock("stop() on the event loop while a publish waits for it", onProcessWideLock: false, seconds: 30)
        {
            shipped.post(order, center: center)
        }
        #expect(stopReturned.isSet)
        #expect(transport.isStopped)
    }

    /// A relay released while nothing else holds it stops its transport in deinit, and nothing is called after.
    @Test func deinitStopsTheTransport() {
        let transport = RecordingTransport()
        do {
            let relay = NotificationRelay(transport: transport, center: NotificationCenter(), onEvent: { _ in })
            relay.forward(Notificatable<RelayOrder>.name(uniqueName()))
        }
        #expect(transport.relayStopDidReturn())
        #expect(transport.callsAfterStop.isEmpty)
    }
}
