import Foundation
import Notificatable
import NotificatableRelay

// MARK: - Issue 32: a nested struct through the encoder, and the relay's CPU per message without a server

/// A nested payload of the common shapes: scalars, a string, a date, a nested struct and an array of structs.
struct NestedOrder: Codable, Equatable {
    struct Customer: Codable, Equatable {
        var name: String
        var vip: Bool
    }

    struct Line: Codable, Equatable {
        var sku: String
        var quantity: Int
        var price: Double
    }

    var id: Int
    var placedAt: Date
    var customer: Customer
    var lines: [Line]
    var note: String

    static let sample = NestedOrder(
        id: 4_711, placedAt: Date(timeIntervalSinceReferenceDate: 786_000_000),
        customer: Customer(name: "Ada", vip: true),
        lines: [Line(sku: "A-1", quantity: 2, price: 9.5), Line(sku: "B-22", quantity: 1, price: 120)],
        note: "leave at the door")

    /// What `UserInfoEncoder()` writes for it, as a literal.
    static func literal(_ o: NestedOrder) -> [AnyHashable: Any] {
        [
            "id": o.id,
            "placedAt": o.placedAt,
            "customer": ["name": o.customer.name, "vip": o.customer.vip] as [String: Any],
            "lines": o.lines.map { ["sku": $0.sku, "quantity": $0.quantity, "price": $0.price] as [String: Any] }
                as [Any],
            "note": o.note,
        ]
    }
}

/// The payload of the PostgreSQL benchmark (`BenchPayload` there), here without a server.
struct RelayBenchPayload: Codable, Equatable {
    var index: Int
    var sentAt: UInt64
    var orderID: String
    var weight: Double
    var note: String

    init(index: Int) {
        self.index = index
        sentAt = UInt64(index) &* 1_000
        orderID = "A-\(100_000 + index)"
        weight = 2.5
        note = "shipped by the benchmark"
    }
}

/// A transport that hands every published message straight to its peer's handler, on the publishing thread, or
/// drops it when it has no peer.
final class DirectTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    private let lock = NSLock()
    private var handler: NotificationTransportHandler?
    private let peer: DirectTransport?

    init(peer: DirectTransport?) { self.peer = peer }

    func start(handler: NotificationTransportHandler) { lock.withLock { self.handler = handler } }
    func listen(to channel: String) {}
    func unlisten(from channel: String) {}
    func publish(_ message: Data, on channel: String) {
        guard let handler = peer?.lock.withLock({ peer?.handler }) else { return }
        handler.receive(message, on: channel)
    }
    func stop() {}
}

enum RelayWorkloads {
    static let handle = Notificatable<RelayBenchPayload>.name("NotificatableBench.Relay")

    /// A typed post on a forwarding relay whose transport drops the message: the sender's CPU per message.
    static var send: Workload {
        Workload(label: "relay: typed post → transport") {
            let center = NotificationCenter()
            let relay = NotificationRelay(transport: DirectTransport(peer: nil), center: center, onEvent: { _ in })
            relay.forward(handle)
            var index = 0
            return { n in
                withExtendedLifetime(relay) {
                    repeatOps(n) {
                        index += 1
                        handle.post(RelayBenchPayload(index: index), center: center)
                        return 1
                    }
                }
            }
        }
    }

    /// A typed post in A to its typed delivery in B, two relays joined by a direct transport: the sender's and the
    /// receiver's CPU per message (the receiver's is this row minus `relay-send`).
    static var roundTrip: Workload {
        Workload(label: "relay: typed post → typed delivery") {
            let receiving = DirectTransport(peer: nil)
            let centerA = NotificationCenter()
            let centerB = NotificationCenter()
            let relayA = NotificationRelay(
                transport: DirectTransport(peer: receiving), center: centerA, onEvent: { _ in })
            let relayB = NotificationRelay(transport: receiving, center: centerB, onEvent: { _ in })
            relayA.forward(handle)
            relayB.forward(handle)
            let sink = Sink()
            let subscription = handle.subscribe(center: centerB) { note in sink.add(note.userInfo.index) }
            var index = 0
            return { n in
                withExtendedLifetime((relayA, relayB, subscription)) {
                    let before = sink.total
                    for _ in 0..<n {
                        index += 1
                        handle.post(RelayBenchPayload(index: index), center: centerA)
                    }
                    return sink.total &- before
                }
            }
        }
    }

    /// What the raw PostgreSQL path does per message besides the server: `JSONEncoder` in A, `JSONDecoder` in B.
    static var jsonRoundTrip: Workload {
        Workload(label: "JSONEncoder + JSONDecoder") {
            let encoder = JSONEncoder()
            let decoder = JSONDecoder()
            var index = 0
            return { n in
                try repeatOps(n) {
                    index += 1
                    let data = try encoder.encode(RelayBenchPayload(index: index))
                    return UInt64(try decoder.decode(RelayBenchPayload.self, from: data).index)
                }
            }
        }
    }

    final class Sink: @unchecked Sendable {
        private let lock = NSLock()
        private var sum: UInt64 = 0
        func add(_ value: Int) { lock.withLock { sum &+= UInt64(value) } }
        var total: UInt64 { lock.withLock { sum } }
    }

    static var encodeNested: Workload {
        Workload(label: "UserInfoEncoder()") {
            let encoder = UserInfoEncoder()
            let order = NestedOrder.sample
            return { n in try repeatOps(n) { UInt64(try encoder.encode(order).count) } }
        }
    }

    static var literalNested: Workload {
        Workload(label: "hand-written literal") {
            let order = NestedOrder.sample
            return { n in repeatOps(n) { UInt64(NestedOrder.literal(order).count) } }
        }
    }
}

enum RelayChecks {
    static func nested() throws -> String? {
        let order = NestedOrder.sample
        let encoded = try UserInfoEncoder().encode(order)
        let literal = NestedOrder.literal(order)
        guard NSDictionary(dictionary: encoded).isEqual(NSDictionary(dictionary: literal)) else {
            return "encoder wrote \(encoded), literal is \(literal)"
        }
        let back = try UserInfoDecoder().decode(NestedOrder.self, from: encoded)
        return back == order ? nil : "decoded back \(back)"
    }

    static func roundTrip() throws -> String? {
        let batch = try RelayWorkloads.roundTrip.make()
        let delivered = try batch(10)
        return delivered == (1...10).reduce(0, +) ? nil : "delivered index sum \(delivered), expected 55"
    }
}

/// Issue 32's rows. Every ratio is candidate ÷ baseline.
func relayComparisons() -> [Comparison] {
    [
        Comparison(
            id: "encode-nested", row: "UserInfoEncoder(), nested struct", group: "encode a nested struct",
            candidate: RelayWorkloads.encodeNested, baseline: RelayWorkloads.literalNested,
            target: .atMost(1.5), check: RelayChecks.nested
        ),
        Comparison(
            id: "relay-send", row: "typed post → transport", group: "relay CPU per message, no server",
            candidate: RelayWorkloads.send
        ),
        Comparison(
            id: "relay-roundtrip", row: "typed post → relay → relay → typed delivery",
            group: "relay CPU per message, no server",
            candidate: RelayWorkloads.roundTrip, baseline: RelayWorkloads.jsonRoundTrip,
            check: RelayChecks.roundTrip
        ),
    ]
}
