import Dispatch
import Foundation
import Testing

@testable import Notificatable

protocol ExtrasGreeter: AnyObject {
    func greet(_ greeting: String)
}

final class ExtrasGreeterImpl: ExtrasGreeter, @unchecked Sendable {
    let id: Int
    let log: ValueRecorder<String>
    init(_ id: Int, log: ValueRecorder<String>) {
        self.id = id
        self.log = log
    }
    func greet(_ greeting: String) { log.append("\(id):\(greeting)") }
}

@Suite struct ExtrasObserverRegistryTests {
    @Test func notifiesInRegistrationOrderAndRegisteringIsIdempotent() {
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<any ExtrasGreeter>()
        let greeters = (0..<5).map { ExtrasGreeterImpl($0, log: log) }
        for greeter in greeters {
            #expect(registry.register(greeter))
        }
        #expect(!registry.register(greeters[1]))  // already there: keeps its place
        #expect(registry.count == 5)
        registry.notify { $0.greet("hi") }
        #expect(log.values == (0..<5).map { "\($0):hi" })
        #expect(registry.unregister(greeters[2]))
        #expect(!registry.unregister(greeters[2]))
        #expect(!registry.contains(greeters[2]))
        #expect(registry.contains(greeters[3]))
        #expect(registry.register(greeters[2]))  // back, at the end
        #expect(registry.observers.map { ($0 as? ExtrasGreeterImpl)?.id } == [0, 1, 3, 4, 2])
    }

    @Test func holdsObserversWeaklyAndDropsDeadOnes() {
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<any ExtrasGreeter>()
        let kept = ExtrasGreeterImpl(1, log: log)
        var transient: ExtrasGreeterImpl? = ExtrasGreeterImpl(2, log: log)
        weak let weakTransient = transient
        registry.register(kept)
        registry.register(transient ?? kept)
        transient = nil
        #expect(weakTransient == nil)  // the registry did not keep it alive
        registry.notify { $0.greet("x") }
        #expect(log.values == ["1:x"])
        #expect(registry.count == 1)
        // A new object, possibly at the dead one's address, is not taken for it.
        let newcomer = ExtrasGreeterImpl(3, log: log)
        #expect(registry.register(newcomer))
        #expect(registry.count == 2)
    }

    @Test func notifyRunsOutsideTheLock() {
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<any ExtrasGreeter>()
        let first = ExtrasGreeterImpl(1, log: log)
        let second = ExtrasGreeterImpl(2, log: log)
        let late = ExtrasGreeterImpl(3, log: log)
        registry.register(first)
        registry.register(second)
        var nested = 0
        registry.notify { observer in
            // Each of these takes the lock; with the lock held by notify, they would deadlock.
            registry.unregister(second)
            registry.register(late)
            _ = registry.count
            if nested == 0 {
                nested += 1
                registry.notify { $0.greet("nested") }
            }
            observer.greet("outer")
        }
        // The snapshot was taken before the changes: `second` still got the outer call, `late` did not.
        #expect(log.values == ["1:nested", "3:nested", "1:outer", "2:outer"])
        #expect(registry.observers.map { ($0 as? ExtrasGreeterImpl)?.id } == [1, 3])
    }

    @Test func notifyRethrowsAndStops() {
        struct Stop: Error {}
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<ExtrasGreeterImpl>()
        let greeters = (0..<3).map { ExtrasGreeterImpl($0, log: log) }
        greeters.forEach { registry.register($0) }
        #expect(throws: Stop.self) {
            try registry.notify { greeter in
                if greeter.id == 1 { throw Stop() }
                greeter.greet("a")
            }
        }
        #expect(log.values == ["0:a"])
    }

    @Test func concurrentRegisterUnregisterAndNotify() {
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<any ExtrasGreeter>()
        let stable = (0..<8).map { ExtrasGreeterImpl(1000 + $0, log: log) }
        stable.forEach { registry.register($0) }
        let notified = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<500 {
                let transient = ExtrasGreeterImpl(thread * 1000 + round, log: log)
                registry.register(transient)
                registry.register(transient)
                registry.notify { _ in notified.increment() }
                #expect(registry.unregister(transient))
            }
        }
        #expect(registry.count == 8)
        #expect(registry.observers.map { ($0 as? ExtrasGreeterImpl)?.id } == (0..<8).map { 1000 + $0 })
        // Every notify saw at least the 8 stable observers and the caller's own transient one.
        #expect(notified.count >= 8 * 500 * 9)
    }
}

protocol ExtrasAnyGreeter {
    func greet(_ greeting: String)
}

struct ExtrasValueGreeter: ExtrasAnyGreeter {
    func greet(_ greeting: String) {}
}

final class ExtrasClassGreeter: ExtrasAnyGreeter {
    let log: ValueRecorder<String>
    init(log: ValueRecorder<String>) { self.log = log }
    func greet(_ greeting: String) { log.append(greeting) }
}

@Suite struct ExtrasObserverRegistryValueTests {
    /// A value has no identity to hold weakly: it is refused, rather than boxed and lost at once.
    @Test func valuesAreRefusedAndClassesOfANonClassBoundProtocolWork() {
        let log = ValueRecorder<String>()
        let registry = ObserverRegistry<any ExtrasAnyGreeter>()
        #expect(!registry.register(ExtrasValueGreeter()))
        #expect(!registry.contains(ExtrasValueGreeter()))
        #expect(!registry.unregister(ExtrasValueGreeter()))
        let greeter = ExtrasClassGreeter(log: log)
        #expect(registry.register(greeter))
        #expect(!registry.register(greeter))
        #expect(registry.contains(greeter))
        registry.notify { $0.greet("hello") }
        #expect(log.values == ["hello"])
        #expect(registry.count == 1)
    }
}
