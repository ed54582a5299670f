import Foundation
import NotificatableRelay
import Testing

@testable import Notificatable

// Issue 33 item 1: during a migration, typed posts and legacy observers live side by side. A handle that posts plain
// keys, with an encoder set up for legacy observers, must give every observer the value in the form the legacy code
// posted it, so that the observer's old casts still work. The observers here use `as?` + `#require` where the old
// code used `as!`, so a wrong form fails the test instead of trapping.

private struct Item: Codable, Equatable, Sendable {
    var sku: String
    var quantity: Int
}

private struct Address: Codable, Equatable, Sendable {
    var city: String
    var zip: String
}

/// One property for every shape a legacy `userInfo` held.
private struct OrderPlaced: Codable, Equatable, Sendable {
    var name: String
    var userID: Int
    var price: Decimal
    var placedAt: Date
    var receipt: URL
    var signature: Data
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var ratio: Double
    var scale: Float
    var isGift: Bool
    var tags: [String]
    var scores: [Int]
    var items: [Item]
    var address: Address
    var byCity: [String: Int]
    var note: String?
    var coupon: String?
    var slots: [Int?]
}

private let order = OrderPlaced(
    name: "Ada", userID: 42, price: Decimal(string: "19.99")!,
    placedAt: Date(timeIntervalSinceReferenceDate: 785_000_000.125), receipt: URL(string: "https://shop.example/r/1")!,
    signature: Data([1, 2, 3]), int8: -8, int16: -16, int32: -32, int64: -64, uint: 1, uint8: 8, uint16: 16,
    uint32: 32, uint64: UInt64.max, ratio: 0.1, scale: 2.5, isGift: true, tags: ["a", "b"], scores: [1, 2],
    items: [Item(sku: "A", quantity: 1), Item(sku: "B", quantity: 3)], address: Address(city: "Paris", zip: "75001"),
    byCity: ["Paris": 2], note: "leave at door", coupon: nil, slots: [1, nil, 3]
)

/// The encoder the Bridging article recommends while legacy observers remain.
private func legacyEncoder(decimals: UserInfoEncoder.DecimalEncodingStrategy = .decimalNumber) -> UserInfoEncoder {
    let encoder = UserInfoEncoder()
    encoder.decimalEncodingStrategy = decimals
    encoder.urlEncodingStrategy = .url
    return encoder
}

/// Posts `order` through a plain-keys handle with `encoder`, and returns what a legacy block observer received.
private func postedUserInfo(encoder: UserInfoEncoder) throws -> [AnyHashable: Any] {
    let center = NotificationCenter()
    let handle = Notificatable<OrderPlaced>.name(uniqueName()).postingPlainKeys(encoder: encoder)
    let received = ValueRecorder<Notification>()
    let token = center.addObserver(forName: handle.name, object: nil, queue: nil) { received.append($0) }
    defer { center.removeObserver(token) }
    handle.post(order, center: center)
    let note = try #require(received.values.first)
    return try #require(note.userInfo)
}

@Suite("Legacy observers read typed posts")
struct LegacyObserverTests {
    @Test func everyShapeReadsWithTheLegacyCasts() throws {
        let userInfo = try postedUserInfo(encoder: legacyEncoder())

        #expect(try #require(userInfo["name"] as? String) == "Ada")
        #expect(try #require(userInfo["userID"] as? Int) == 42)
        // Legacy code posted `NSNumber(value: 19.99)` and read `as! NSNumber`.
        let price = try #require(userInfo["price"] as? NSNumber)
        #expect(price.decimalValue == Decimal(string: "19.99"))
        #expect(try #require(userInfo["price"] as? NSDecimalNumber).decimalValue == Decimal(string: "19.99"))
        #expect(try #require(userInfo["placedAt"] as? Date) == order.placedAt)
        #expect(try #require(userInfo["receipt"] as? URL) == order.receipt)
        #expect(try #require(userInfo["signature"] as? Data) == Data([1, 2, 3]))

        #expect(try #require(userInfo["int8"] as? Int8) == -8)
        #expect(try #require(userInfo["int16"] as? Int16) == -16)
        #expect(try #require(userInfo["int32"] as? Int32) == -32)
        #expect(try #require(userInfo["int64"] as? Int64) == -64)
        #expect(try #require(userInfo["uint"] as? UInt) == 1)
        #expect(try #require(userInfo["uint8"] as? UInt8) == 8)
        #expect(try #require(userInfo["uint16"] as? UInt16) == 16)
        #expect(try #require(userInfo["uint32"] as? UInt32) == 32)
        #expect(try #require(userInfo["uint64"] as? UInt64) == UInt64.max)
        // Code that boxed its numbers in NSNumber read them back through it.
        #expect(try #require(userInfo["int8"] as? NSNumber).int8Value == -8)
        #expect(try #require(userInfo["uint64"] as? NSNumber).uint64Value == UInt64.max)
        #expect(try #require(userInfo["ratio"] as? Double) == 0.1)
        #expect(try #require(userInfo["scale"] as? Float) == 2.5)
        #expect(try #require(userInfo["isGift"] as? Bool) == true)
        #expect(try #require(userInfo["isGift"] as? NSNumber).boolValue == true)

        #expect(try #require(userInfo["tags"] as? [String]) == ["a", "b"])
        #expect(try #require(userInfo["scores"] as? [Int]) == [1, 2])
        let items = try #require(userInfo["items"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(try #require(items[1]["sku"] as? String) == "B")
        #expect(try #require(items[1]["quantity"] as? Int) == 3)
        let address = try #require(userInfo["address"] as? [String: Any])
        #expect(try #require(address["city"] as? String) == "Paris")
        #expect(try #require(userInfo["byCity"] as? [String: Int]) == ["Paris": 2])

        // An optional that holds a value is the value itself; a `nil` one is absent, as legacy code left it out.
        #expect(try #require(userInfo["note"] as? String) == "leave at door")
        #expect(userInfo["coupon"] == nil)
        // A `nil` inside an array is `NSNull`, the only way an array holds "nothing".
        let slots = try #require(userInfo["slots"] as? [Any])
        #expect(slots.count == 3)
        #expect(try #require(slots[0] as? Int) == 1)
        #expect(slots[1] is NSNull)

        // And the same userInfo, without the typed payload, decodes back to the payload.
        var plain = userInfo
        plain[NotificatableUserInfoKey] = nil
        #expect(try UserInfoDecoder().decode(OrderPlaced.self, from: plain) == order)
        #expect(try #require(userInfo[NotificatableUserInfoKey] as? OrderPlaced) == order)
    }

    @Test func aDecimalCanBeWrittenAsTheDoubleLegacyCodePosted() throws {
        let userInfo = try postedUserInfo(encoder: legacyEncoder(decimals: .double))
        // `NSNumber(value: 19.99)` is what the legacy code posted: `as! Double` and `.doubleValue` read 19.99 exactly.
        #expect(try #require(userInfo["price"] as? Double) == 19.99)
        #expect(try #require(userInfo["price"] as? NSNumber).doubleValue == 19.99)
        var plain = userInfo
        plain[NotificatableUserInfoKey] = nil
        #expect(try UserInfoDecoder().decode(OrderPlaced.self, from: plain).price == Decimal(string: "19.99"))
    }

    @Test func theDefaultsStayPropertyListValues() throws {
        let userInfo = try postedUserInfo(encoder: UserInfoEncoder())
        #expect(try #require(userInfo["price"] as? String) == "19.99")
        #expect(try #require(userInfo["receipt"] as? String) == "https://shop.example/r/1")
    }

    @Test func aRelayWritesPropertyListValuesWhateverTheHandlesLegacySettings() throws {
        let encoder = legacyEncoder()
        encoder.encodesGeometryAsNSValue = true
        let handle = Notificatable<OrderPlaced>.name(uniqueName()).postingPlainKeys(encoder: encoder)
        let bytes = try NotificationRelayMessage.encoded(order, for: handle, sender: "s", sequence: 1)
        let text = try #require(String(data: bytes, encoding: .utf8))
        #expect(text.contains(#""price":"19.99""#))
        #expect(
            text.contains(#""receipt":"https:\/\/shop.example\/r\/1""#)
                || text.contains(#""receipt":"https://shop.example/r/1""#))
    }
}
