import Foundation

// MARK: - Issue 3: delivery through NotificationCenter

/// The one-entry payload of the delivery rows. A typed handle carries it under `NotificatableUserInfoKey`; the raw
/// baseline carries it under ``rawPayloadKey`` and its observer reads it back with `as?`.
struct BenchPayload: Codable, Equatable, Sendable {
    var value: Int
}

/// The raw baseline's userInfo key, standing in for `NotificatableUserInfoKey`.
let rawPayloadKey = "NotificatableBenchPayload"

/// Counts deliveries, so each batch can check that every post reached its observer exactly once.
final class DeliveryCounter: @unchecked Sendable {
    /// Written only on the posting thread (delivery is synchronous with `queue: nil`).
    var count = 0
    var digest: UInt64 = 0

    func record(_ x: Int) {
        count += 1
        digest = digest &+ UInt64(truncatingIfNeeded: x)
    }
}

/// Posts `n` times with `post` and checks that `counter` saw exactly `n` deliveries.
@inline(__always)
func postAndCount(_ n: Int, _ counter: DeliveryCounter, _ post: () throws -> Void) throws -> UInt64 {
    let before = counter.count
    for _ in 0..<n {
        try post()
    }
    let delivered = counter.count - before
    guard delivered == n else { throw BenchError("\(delivered) deliveries for \(n) posts") }
    return counter.digest
}

/// The three delivery workloads of issue 3, in one flavour (raw Foundation, or typed handles). Each factory builds
/// a private `NotificationCenter()` and its subscribers outside the timed region; each returned batch posts `n`
/// times, synchronously (`queue: nil`), and must deliver exactly once per post.
struct DeliveryWorkloads {
    /// Labels the flavour in the table, e.g. "raw" or "typed".
    var flavour: String
    /// Posts `BenchPayload(value:)` to one subscriber that reads the value.
    var payloadPost: BatchFactory
    /// Posts the 7-key keyboard userInfo in NSValue form (built once, outside the loop, as the system would)
    /// to one subscriber that gets a `KeyboardInfo`.
    var keyboardPost: BatchFactory
    /// ``payloadPost`` on a center that also has `crowd` subscribers on other names.
    var payloadPostWithCrowd: (_ crowd: Int) -> BatchFactory
}

/// The Foundation baselines: raw `post(name:object:userInfo:)` and block observers with hand-written casts.
enum RawDelivery {
    static let payloadName = Notification.Name("NotificatableBench.payload")
    static let keyboardName = Notification.Name("UIKeyboardWillChangeFrameNotification")

    static func payloadPost(crowd: Int) -> BatchFactory {
        {
            let center = NotificationCenter()
            let counter = DeliveryCounter()
            var tokens: [any NSObjectProtocol] = []
            for i in 0..<crowd {
                let other = Notification.Name("NotificatableBench.other.\(i)")
                tokens.append(center.addObserver(forName: other, object: nil, queue: nil) { _ in counter.record(-1) })
            }
            tokens.append(
                center.addObserver(forName: payloadName, object: nil, queue: nil) { note in
                    if let payload = note.userInfo?[rawPayloadKey] as? BenchPayload {
                        counter.record(payload.value)
                    }
                })
            let payload = BenchPayload(value: 42)
            return { n in
                try withExtendedLifetime(tokens) {
                    try postAndCount(n, counter) {
                        center.post(name: payloadName, object: nil, userInfo: [rawPayloadKey: payload])
                    }
                }
            }
        }
    }

    static var keyboardPost: BatchFactory {
        {
            let center = NotificationCenter()
            let counter = DeliveryCounter()
            let reader = HandWrittenKeyboardReader()
            let token = center.addObserver(forName: keyboardName, object: nil, queue: nil) { note in
                if let userInfo = note.userInfo, let info = reader.readNSValueForm(userInfo) {
                    counter.record(Int(truncatingIfNeeded: info.digest))
                }
            }
            let userInfo = KeyboardFixture.nsValueForm()
            return { n in
                try withExtendedLifetime(token) {
                    try postAndCount(n, counter) { center.post(name: keyboardName, object: nil, userInfo: userInfo) }
                }
            }
        }
    }

    static var workloads: DeliveryWorkloads {
        DeliveryWorkloads(
            flavour: "raw",
            payloadPost: payloadPost(crowd: 0),
            keyboardPost: keyboardPost,
            payloadPostWithCrowd: { payloadPost(crowd: $0) }
        )
    }
}

/// Issue 3's rows. `typed` comes from `typedDeliveryWorkloads()` (TypedDeliveryRows.swift). With `typed == nil` the raw baselines are measured on their own (and the 10,000-observer row
/// compares raw against raw); once `typed` is given, each typed row is measured against its raw baseline.
func deliveryComparisons(raw: DeliveryWorkloads, typed: DeliveryWorkloads?) -> [Comparison] {
    let group =
        typed == nil
        ? "deliver via NotificationCenter (raw baselines; typed rows: TODO)" : "deliver via NotificationCenter"
    let crowd = 10_000
    let rawPayload = Workload(label: "raw post, as? observer", make: raw.payloadPost)
    let rawKeyboard = Workload(label: "raw post, hand-written casts", make: raw.keyboardPost)
    var rows: [Comparison] = []
    if let typed {
        rows += [
            Comparison(
                id: "typed-post", row: "\(typed.flavour) post → 1 subscriber", group: group,
                candidate: Workload(label: typed.flavour, make: typed.payloadPost), baseline: rawPayload,
                target: .atMost(1.10)
            ),
            Comparison(
                id: "keyboard-post", row: "keyboard post → \(typed.flavour) decoded", group: group,
                candidate: Workload(label: typed.flavour, make: typed.keyboardPost), baseline: rawKeyboard,
                target: .atMost(1.3)
            ),
            Comparison(
                id: "typed-post-crowd", row: "\(typed.flavour) post, 10k other subscribers", group: group,
                candidate: Workload(label: typed.flavour, make: typed.payloadPostWithCrowd(crowd)),
                baseline: Workload(label: "\(typed.flavour) post, none", make: typed.payloadPostWithCrowd(0)),
                target: .atMost(1.05)
            ),
        ]
    } else {
        rows += [
            Comparison(id: "raw-post", row: "raw post → 1 as? observer", group: group, candidate: rawPayload),
            Comparison(
                id: "raw-keyboard-post", row: "raw keyboard post → hand-written", group: group, candidate: rawKeyboard),
        ]
    }
    rows.append(
        Comparison(
            id: "raw-post-crowd", row: "raw post, 10k other observers", group: group,
            candidate: Workload(label: "raw", make: raw.payloadPostWithCrowd(crowd)),
            baseline: Workload(label: "raw post, none", make: raw.payloadPostWithCrowd(0))
        )
    )
    return rows
}
