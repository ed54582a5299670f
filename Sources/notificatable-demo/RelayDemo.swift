import Foundation
import Notificatable
import NotificatableRelay

/// An order that one "process" ships and the other hears about.
struct OrderShipped: Codable, Equatable, Sendable {
    var orderID: String
    var items: Int
    var shippedAt: Date
}

/// Two notification centers, standing in for two processes, joined by relays over the in-process loopback
/// transport. With a real engine only the transport changes: PostgreSQL's LISTEN/NOTIFY (Integrations/
/// NotificatablePostgres), `DistributedNotificationCenter` on macOS, or a transport you write for another engine.
func runRelayDemo() {
    heading("8. Across processes: two centers joined by a relay")
    let bus = LoopbackNotificationBus()
    let warehouse = NotificationCenter()
    let storefront = NotificationCenter()
    let onEvent: @Sendable (NotificationTransportEvent) -> Void = { event in print("  relay event: \(event)") }
    let warehouseRelay = NotificationRelay(
        transport: LoopbackNotificationTransport(
            bus: bus,
            limits: NotificationTransportLimits(maximumMessageSize: 7_999, maximumChannelLength: 63)
        ),
        center: warehouse,
        onEvent: onEvent
    )
    let storefrontRelay = NotificationRelay(
        transport: LoopbackNotificationTransport(bus: bus),
        center: storefront,
        onEvent: onEvent
    )

    let orderShipped = Notificatable<OrderShipped>.name("com.example.OrderShipped")
    let cacheInvalidated = Notificatable.withoutPayload("com.example.CacheInvalidated")
    for relay in [warehouseRelay, storefrontRelay] {
        relay.forward(orderShipped)
        relay.forward(cacheInvalidated)
    }

    let bag = DisposeBag()
    let log = Log()
    orderShipped.subscribe(center: storefront) { note in
        log.add("  storefront, typed subscriber: order \(note.userInfo.orderID), \(note.userInfo.items) items")
    }.store(in: bag)
    let legacy = storefront.addObserver(forName: orderShipped.name, object: nil, queue: nil) { note in
        log.add("  storefront, legacy observer: userInfo[\"orderID\"] = \(note.userInfo?["orderID"] ?? "nil")")
    }
    cacheInvalidated.subscribe(center: warehouse) { _ in
        log.add("  warehouse: cache invalidated (a Never handle, sent the other way)")
    }.store(in: bag)

    let shippedAt = Date(timeIntervalSince1970: 1_764_000_000)
    orderShipped.post(OrderShipped(orderID: "A-17", items: 3, shippedAt: shippedAt), center: warehouse)
    cacheInvalidated.post(center: storefront)
    log.all.sorted().forEach { print($0) }

    if let message = try? NotificationRelayMessage(
        name: orderShipped.name,
        sender: warehouseRelay.id,
        sequence: 1,
        payload: ["orderID": "A-17", "items": 3, "shippedAt": shippedAt]
    ).encoded() {
        print("  on the wire: \(String(decoding: message, as: UTF8.self))")
    }

    print("  an order too large for the warehouse transport's 7,999 bytes is refused, not truncated:")
    orderShipped.post(
        OrderShipped(orderID: String(repeating: "X", count: 9_000), items: 1, shippedAt: shippedAt),
        center: warehouse
    )

    storefront.removeObserver(legacy)
    bag.dispose()
    warehouseRelay.stop()
    storefrontRelay.stop()
}
