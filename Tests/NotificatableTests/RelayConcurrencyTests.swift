import Dispatch
import Foundation
import Notificatable
import NotificatableRelay
import Testing

// Several threads post through one relay at once. `scripts/tsan.sh` runs this suite under ThreadSanitizer (it selects
// the suites whose names contain "ConcurrencyTests"); the outcomes checked here are what a race would break, so it is
// a test without TSan too.

/// What each post carries: which thread made it, and its number among that thread's posts of the name.
struct RelayStamp: Codable, Equatable, Sendable {
    var thread: Int
    var index: Int
}

/// Runs `body(thread)` on `threads` threads at once, started together, and waits for them (two minutes at most, so
/// that a deadlock fails the test instead of hanging it).
private func runTogether(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for thread in 0..<threads {
        group.enter()
        Thread {
            start.wait()
            body(thread)
            group.leave()
        }.start()
    }
    for _ in 0..<threads { start.signal() }
    return group.wait(timeout: .now() + 120) == .success
}

@Suite("Relay: several threads posting through one relay")
struct RelayConcurrencyTests {
    /// Four threads post two names through one relay, and two more through a second relay (a second sender), all at
    /// once, over one loopback bus. Every post arrives exactly once; each thread's posts of a name arrive in the order
    /// it made them; each sender's sequence numbers of a name arrive as 1, 2, 3… with no gap, so no gap is reported.
    @Test func postsFromManyThreadsArriveOnceInOrderWithoutGaps() throws {
        let bus = LoopbackNotificationBus()
        let events = ValueRecorder<NotificationTransportEvent>()
        let failures = ValueRecorder<NotificationDecodingFailure>()
        func relay(_ center: NotificationCenter) -> NotificationRelay {
            NotificationRelay(
                transport: LoopbackNotificationTransport(bus: bus), center: center, onEvent: { events.append($0) },
                onFailure: { failures.append($0) })
        }
        let senderCenters = [NotificationCenter(), NotificationCenter()]
        let receiverCenter = NotificationCenter()
        let senders = senderCenters.map(relay)
        let receiver = relay(receiverCenter)
        let handles = [
            Notificatable<RelayStamp>.name(uniqueName() + ".first"),
            Notificatable<RelayStamp>.name(uniqueName() + ".second"),
        ]
        // What the receiving process hears, in order, per name; and what travels on each channel.
        let heard = handles.map { _ in ValueRecorder<RelayStamp>() }
        let wire = handles.map { _ in ValueRecorder<Data>() }
        let spy = LoopbackNotificationTransport(bus: bus)
        spy.start(
            handler: NotificationTransportHandler(
                receive: { data, channel in
                    if let index = handles.firstIndex(where: { $0.name.rawValue == channel }) {
                        wire[index].append(data)
                    }
                },
                report: { _ in }))
        let bag = DisposeBag()
        defer { bag.dispose() }
        for (index, handle) in handles.enumerated() {
            for relay in senders + [receiver] { relay.forward(handle) }
            spy.listen(to: handle.name.rawValue)
            let recorder = heard[index]
            handle.subscribe(center: receiverCenter) { recorder.append($0.userInfo) }.store(in: bag)
        }

        let threads = 6
        let postsPerName = 200
        let finished = runTogether(threads) { thread in
            // Threads 0…3 post through the first relay, threads 4 and 5 through the second.
            let center = senderCenters[thread < 4 ? 0 : 1]
            for index in 0..<postsPerName {
                for handle in handles {
                    handle.post(RelayStamp(thread: thread, index: index), center: center)
                }
            }
        }
        #expect(finished)

        for (name, handle) in handles.enumerated() {
            // Exactly once, and each thread's posts in the order that thread made them.
            let stamps = heard[name].values
            #expect(stamps.count == threads * postsPerName, "\(handle.name.rawValue)")
            for thread in 0..<threads {
                let indices = stamps.filter { $0.thread == thread }.map(\.index)
                #expect(indices == Array(0..<postsPerName), "thread \(thread), \(handle.name.rawValue)")
            }
            // Per sender, the numbers on the wire run 1, 2, 3… in the order they travel.
            let messages = try wire[name].values.map { try NotificationRelayMessage(decoding: $0) }
            #expect(messages.count == threads * postsPerName)
            for sender in senders {
                let sequences = messages.filter { $0.sender == sender.id }.map(\.sequence)
                let expected = (sender === senders[0] ? 4 : 2) * postsPerName
                #expect(sequences == Array(1...expected), "sender \(sender.id), \(handle.name.rawValue)")
            }
        }
        #expect(events.values.isEmpty, "\(events.values)")
        #expect(failures.values.isEmpty, "\(failures.values)")
        for relay in senders + [receiver] { relay.stop() }
        spy.stop()
    }
}
