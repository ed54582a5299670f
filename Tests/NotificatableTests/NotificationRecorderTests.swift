import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// A payload for the recorder tests: which thread posted it, and its place in that thread's sequence.
private struct RecorderTick: Codable, Equatable, Sendable {
    var thread: Int
    var index: Int
}

/// A sender whose identity the recorder tests check.
private final class RecorderSender: @unchecked Sendable {}

@Suite("NotificationRecorder")
struct RecorderBehaviourTests {
    @Test("It records payloads and objects of a handle in posting order")
    func recordsPayloadsAndObjects() throws {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks)
        let first = RecorderSender()
        let second = RecorderSender()

        ticks.post(RecorderTick(thread: 0, index: 0), object: first, center: center)
        ticks.post(RecorderTick(thread: 0, index: 1), center: center)
        ticks.post(RecorderTick(thread: 0, index: 2), object: second, center: center)

        #expect(
            recorder.payloads(of: ticks) == [
                RecorderTick(thread: 0, index: 0), RecorderTick(thread: 0, index: 1), RecorderTick(thread: 0, index: 2),
            ])
        #expect(recorder.count(of: ticks) == 3)
        let objects = recorder.objects(of: ticks)
        try #require(objects.count == 3)
        #expect(objects[0] as AnyObject? === first)
        #expect(objects[1] == nil)
        #expect(objects[2] as AnyObject? === second)
        let notes = recorder.notifications(of: ticks)
        #expect(notes.map(\.userInfo.index) == [0, 1, 2])
        #expect(notes.allSatisfy { $0.name == ticks.name })
        #expect(recorder.events.count == 3)
        #expect(recorder.failures.isEmpty)
    }

    @Test("It records Never handles, and tells two handles of one name apart by payload type")
    func recordsNeverHandlesSeparately() {
        let center = NotificationCenter()
        let name = uniqueName()
        let typed = Notificatable<RecorderTick>.name(name)
        let untyped = Notificatable.withoutPayload(name)  // Notificatable<Never>
        let recorder = NotificationRecorder(center: center, recording: typed, untyped)
        let sender = RecorderSender()

        untyped.post(object: sender, center: center)
        typed.post(RecorderTick(thread: 1, index: 7), center: center)

        // The Never handle sees every post of the name; the typed handle sees its payload and reports the bare post.
        #expect(recorder.count(of: untyped) == 2)
        #expect(recorder.objects(of: untyped).first.flatMap { $0 as AnyObject? } === sender)
        #expect(recorder.payloads(of: typed) == [RecorderTick(thread: 1, index: 7)])
        #expect(recorder.count(of: typed) == 1)
        #expect(recorder.failures(of: untyped).isEmpty)
        #expect(recorder.failures(of: typed).map(\.kind) == [.decodingFailed])
        #expect(recorder.events.count == 4)
    }

    @Test("It records decoding failures with kind and coding path, and does not count them as deliveries")
    func recordsFailures() throws {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks)
        let sender = RecorderSender()

        center.post(name: ticks.name, object: sender, userInfo: ["thread": NSNumber(value: 1), "index": "first"])
        center.post(
            name: ticks.name, object: nil, userInfo: ["thread": NSNumber(value: 1), "index": NSNumber(value: 0)])

        #expect(recorder.count(of: ticks) == 1)
        #expect(recorder.payloads(of: ticks) == [RecorderTick(thread: 1, index: 0)])
        let failure = try #require(recorder.failures(of: ticks).first)
        #expect(recorder.failures.count == 1)
        #expect(failure.kind == .decodingFailed)
        #expect(failure.codingPath.map(\.stringValue) == ["index"])
        guard case .typeMismatch? = failure.error as? DecodingError else {
            Issue.record("expected typeMismatch, got \(failure.error)")
            return
        }
        #expect(failure.object as AnyObject? === sender)
        let events = recorder.events
        #expect(events.map(\.isFailure) == [true, false])
        #expect(events[0].payload == nil)
        #expect(events[0].description.contains("failure"))
    }

    @Test("Recording a handle twice records each post once")
    func recordingTwiceIsIdempotent() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center)
        recorder.record(ticks)
        recorder.record(ticks)
        ticks.post(RecorderTick(thread: 0, index: 0), center: center)
        #expect(recorder.count(of: ticks) == 1)
    }

    @Test("It sees only its own center")
    func onlyItsCenter() {
        let center = NotificationCenter()
        let other = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks)
        ticks.post(RecorderTick(thread: 0, index: 0), center: other)
        #expect(recorder.count(of: ticks) == 0)
        ticks.post(RecorderTick(thread: 0, index: 1), center: center)
        #expect(recorder.payloads(of: ticks) == [RecorderTick(thread: 0, index: 1)])
        #expect(recorder.center === center)
    }

    @Test("stop() ends recording and keeps the events; recording after stop does nothing")
    func stopEndsRecording() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let later = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks)
        ticks.post(RecorderTick(thread: 0, index: 0), center: center)
        #expect(recorder.isRecording)

        recorder.stop()
        recorder.stop()
        ticks.post(RecorderTick(thread: 0, index: 1), center: center)
        recorder.record(later)
        later.post(RecorderTick(thread: 0, index: 2), center: center)

        #expect(!recorder.isRecording)
        #expect(recorder.payloads(of: ticks) == [RecorderTick(thread: 0, index: 0)])
        #expect(recorder.count(of: later) == 0)
    }

    @Test("removeAll() forgets events and keeps recording")
    func removeAllKeepsRecording() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks)
        ticks.post(RecorderTick(thread: 0, index: 0), center: center)
        center.post(name: ticks.name, object: nil, userInfo: nil)
        recorder.removeAll()
        #expect(recorder.events.isEmpty)
        #expect(recorder.failures.isEmpty)
        ticks.post(RecorderTick(thread: 0, index: 1), center: center)
        #expect(recorder.payloads(of: ticks) == [RecorderTick(thread: 0, index: 1)])
    }

    @Test("A dropped recorder is released and stops observing; later posts still reach other subscribers")
    func deinitEndsObservation() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        weak var weakRecorder: NotificationRecorder?
        do {
            let recorder = NotificationRecorder(center: center, recording: ticks)
            weakRecorder = recorder
            ticks.post(RecorderTick(thread: 0, index: 0), center: center)
            #expect(recorder.count(of: ticks) == 1)
        }
        #expect(weakRecorder == nil)

        let received = ValueRecorder<Int>()
        let subscription = ticks.subscribe(center: center) { note in received.append(note.userInfo.index) }
        defer { subscription.dispose() }
        ticks.post(RecorderTick(thread: 0, index: 1), center: center)
        #expect(received.values == [1])
    }

    @Test("wait(forCount:of:timeout:) returns once posts from another thread arrive, and false on timeout")
    func waitsForAsynchronousPosts() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let other = Notificatable<RecorderTick>.name(uniqueName())
        let recorder = NotificationRecorder(center: center, recording: ticks, other)

        // A thread of its own, so the posts do not wait for a Dispatch worker that other tests keep busy.
        Thread {
            Thread.sleep(forTimeInterval: 0.05)
            for index in 0..<3 { ticks.post(RecorderTick(thread: 1, index: index), center: center) }
        }.start()
        #expect(recorder.wait(forCount: 3, of: ticks, timeout: 10))
        #expect(recorder.payloads(of: ticks).map(\.index) == [0, 1, 2])
        #expect(recorder.wait(forEventCount: 3, timeout: 0))

        let start = Date()
        #expect(!recorder.wait(forCount: 1, of: other, timeout: 0.1))
        #expect(Date().timeIntervalSince(start) >= 0.09)
        #expect(!recorder.wait(forEventCount: 4, timeout: 0.01))
    }

    @Test("Under posts from 8 threads, every post is recorded once and each thread's order is kept")
    func concurrentPosting() {
        let center = NotificationCenter()
        let ticks = Notificatable<RecorderTick>.name(uniqueName())
        let done = Notificatable.withoutPayload(uniqueName())  // Never handle, posted once per thread
        let recorder = NotificationRecorder(center: center, recording: ticks, done)
        let threads = 8
        let postsPerThread = 500

        // A reader polls while the threads post, so reads race with writes. It runs on a thread of its own and
        // pauses between reads: a busy loop on a Dispatch worker would starve the other tests' queued work on a
        // two-core machine.
        let reading = DispatchSemaphore(value: 0)
        let stopReading = ValueRecorder<Bool>()
        let decreases = ValueRecorder<(Int, Int)>()
        let reads = Counter()
        let readerStarted = DispatchSemaphore(value: 0)
        let reader = Thread {
            var last = 0
            repeat {
                let count = recorder.count(of: ticks)
                if count < last { decreases.append((last, count)) }
                last = count
                if reads.count == 0 { readerStarted.signal() }
                reads.increment()
                Thread.sleep(forTimeInterval: 0.0005)
            } while stopReading.count == 0
            reading.signal()
        }
        reader.start()
        readerStarted.wait()

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<postsPerThread {
                if index % 100 == 99 {
                    // A malformed legacy post: recorded as a failure, not as a delivery.
                    center.post(name: ticks.name, object: nil, userInfo: ["thread": NSNumber(value: thread)])
                }
                ticks.post(RecorderTick(thread: thread, index: index), center: center)
            }
            done.post(center: center)
        }
        stopReading.append(true)
        reading.wait()
        #expect(decreases.count == 0)

        #expect(recorder.count(of: ticks) == threads * postsPerThread)
        #expect(recorder.count(of: done) == threads)
        #expect(recorder.failures(of: ticks).count == threads * (postsPerThread / 100))
        #expect(
            recorder.failures(of: ticks).allSatisfy { failure in
                guard case .keyNotFound(let key, let context)? = failure.error as? DecodingError else { return false }
                return key.stringValue == "index" && context.codingPath.isEmpty && failure.kind == .decodingFailed
            })
        #expect(recorder.events.count == threads * postsPerThread + threads + threads * (postsPerThread / 100))

        let payloads = recorder.payloads(of: ticks)
        for thread in 0..<threads {
            let indices = payloads.filter { $0.thread == thread }.map(\.index)
            #expect(indices == Array(0..<postsPerThread), "thread \(thread)")
        }
        #expect(recorder.wait(forCount: threads * postsPerThread, of: ticks, timeout: 0))
    }
}
