import Dispatch
import Foundation
import Notificatable

// A small workload for `scripts/leaks.sh`, which runs it under Valgrind's leak checker: every kind of subscription
// is made, delivered to, made to fail, and ended in every way (dispose, bag deinit, filter object's death), and the
// coder encodes, decodes and rejects values. Whatever our code allocates must be freed by the end.
//
// It avoids `NSValue(rect:)` and friends in error messages: Foundation on Linux leaks a C string per call of their
// `objCType`, which the decoder no longer calls, but the workload stays clear of it all the same.

struct Account: Codable, Sendable, Equatable {
    var name: String
    var balance: Int
    var tags: [String]
    var limits: [String: Double]
}

final class Sender: @unchecked Sendable {}

let accountDidChange = Notificatable<Account>.name("LeakCheck.AccountDidChange")
let didLogout = Notificatable.withoutPayload("LeakCheck.DidLogout")
let operationQueue = OperationQueue()
let dispatchQueue = DispatchQueue(label: "leakcheck")
let sample = Account(name: "a", balance: 1, tags: ["x"], limits: ["day": 2.5])

final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

let deliveries = Tally()
let failures = Tally()
let onFailure: NotificationDecodingFailure.Handler = { _ in failures.add() }

func drain() {
    operationQueue.waitUntilAllOperationsAreFinished()
    dispatchQueue.sync {}
}

func postAll(object: AnyObject?, center: NotificationCenter) {
    accountDidChange.post(sample, object: object, center: center)
    // A legacy post with a wrong payload: a failure for the payload handles.
    center.post(name: accountDidChange.name, object: object, userInfo: [NotificatableUserInfoKey: 42])
    // A legacy post with plain keys: decoded by the handle's default decoder.
    center.post(
        name: accountDidChange.name, object: object,
        userInfo: ["name": "b", "balance": 2, "tags": ["y"], "limits": ["week": 1.0]]
    )
    didLogout.post(object: object, center: center)
    didLogout.post(center: center)
}

/// Makes one subscription of every kind, for `object`.
func subscribeEverything(object: AnyObject, center: NotificationCenter) -> [Disposable] {
    let count: @Sendable (Any) -> Void = { _ in deliveries.add() }
    return [
        accountDidChange.subscribe(center: center, onFailure: onFailure) { count($0) },
        accountDidChange.subscribe(object: object, center: center, onFailure: onFailure) { count($0) },
        accountDidChange.subscribe(center: center, queue: operationQueue, onFailure: onFailure) { count($0) },
        accountDidChange.subscribe(center: center, queue: dispatchQueue, onFailure: onFailure) { count($0) },
        accountDidChange.subscribe(object: object, center: center, queue: operationQueue, onFailure: onFailure) {
            count($0)
        },
        accountDidChange.subscribe(object: object, center: center, queue: dispatchQueue, onFailure: onFailure) {
            count($0)
        },
        accountDidChange.subscribe(center: center) { count($0) },  // failures go to the global handler
        didLogout.subscribe(center: center) { count($0 as Any) },
        didLogout.subscribe(center: center, queue: operationQueue) { count($0 as Any) },
        didLogout.subscribe(center: center, queue: dispatchQueue) { count($0 as Any) },
        didLogout.subscribe(object: object, center: center) { count(()) },
        didLogout.subscribe(object: object, center: center, queue: dispatchQueue) { count(()) },
    ]
}

NotificationDecodingFailure.handler = { _ in failures.add() }

/// The center is local, so that it, and the weak-reference side table that the subscriptions' weak references give
/// it, are freed before the leak check runs.
func runWorkload(round: Int) throws {
    let center = NotificationCenter()
    // Ended by dispose().
    do {
        let sender = Sender()
        let subscriptions = subscribeEverything(object: sender, center: center)
        postAll(object: sender, center: center)
        drain()
        subscriptions.forEach { $0.dispose() }
    }
    // Ended by the bag's deinit.
    do {
        let sender = Sender()
        let bag = DisposeBag()
        subscribeEverything(object: sender, center: center).forEach { $0.store(in: bag) }
        postAll(object: sender, center: center)
        drain()
    }
    // Filtered subscriptions ended by the filter object's death (noticed at the next post); the rest by a bag.
    do {
        let bag = DisposeBag()
        do {
            let sender = Sender()
            subscribeEverything(object: sender, center: center).forEach { $0.store(in: bag) }
            postAll(object: sender, center: center)
        }
        postAll(object: nil, center: center)
        drain()
    }
    // The coder: round trips and rejected input.
    do {
        let encoder = UserInfoEncoder()
        let decoder = UserInfoDecoder()
        if round.isMultiple(of: 2) {
            encoder.keyEncodingStrategy = .affixed(prefix: "LC", suffix: "Key")
            decoder.keyDecodingStrategy = .affixed(prefix: "LC", suffix: "Key")
        }
        let userInfo = try encoder.encode(sample)
        guard try decoder.decode(Account.self, from: userInfo) == sample else {
            FileHandle.standardError.write(Data("leakcheck: round trip changed the value\n".utf8))
            exit(1)
        }
        for bad: [AnyHashable: Any] in [[:], ["name": 1], ["name": "n", "balance": Double.nan], ["tags": NSNull()]] {
            do {
                _ = try UserInfoDecoder().decode(Account.self, from: bad)
            } catch {
                _ = "\(error)"
            }
        }
        let cycle = NSMutableDictionary()
        cycle["next"] = cycle
        _ = try? UserInfoDecoder().decode([String: [String: Int]].self, fromValue: cycle)
        cycle.removeAllObjects()
    }
}

for round in 0..<20 {
    try runWorkload(round: round)
}
drain()
NotificationDecodingFailure.handler = NotificationDecodingFailure.defaultHandler
print("leakcheck: \(deliveries.count) deliveries, \(failures.count) failures reported")
guard deliveries.count > 0, failures.count > 0 else {
    FileHandle.standardError.write(Data("leakcheck: the workload did not run\n".utf8))
    exit(1)
}
