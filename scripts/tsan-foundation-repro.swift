// Shows the ThreadSanitizer false report that scripts/tsan.supp suppresses, with Foundation alone:
//   swiftc -sanitize=thread -g scripts/tsan-foundation-repro.swift -o /tmp/repro && /tmp/repro
// reports a data race between Box.init on the subscribing thread and the read in the observer block on the posting
// thread, although NotificationCenter orders them with its own lock.
import Foundation
final class Box: @unchecked Sendable { var value = 0; init(_ v: Int) { value = v } }
let center = NotificationCenter()
let name = Notification.Name("x")
let group = DispatchGroup()
let sink = NSLock()
nonisolated(unsafe) var total = 0
for t in 0..<2 {
    group.enter()
    Thread {
        for i in 0..<2000 {
            if t == 0 {
                let box = Box(i)   // written on this thread...
                let token = center.addObserver(forName: name, object: nil, queue: nil) { _ in
                    let v = box.value   // ...read on the posting thread, ordered only by the center's own lock
                    sink.lock(); total &+= v; sink.unlock()
                }
                center.removeObserver(token)
            } else {
                center.post(name: name, object: nil)
            }
        }
        group.leave()
    }.start()
}
group.wait()
print("done", total)
