import Foundation
import Testing

@testable import Notificatable

/// A payload with every kind of value a legacy module posted by hand.
private struct LegacyOrder: Codable, Equatable, Sendable {
    struct Line: Codable, Equatable, Sendable {
        var sku: String
        var quantity: Int
    }

    var id: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var fraction: Double
    var float: Float
    var isGift: Bool
    var isExpress: Bool
    var total: Decimal
    var receipt: URL
    var shippedAt: Date
    var lines: [Line]
    var tags: [String]
    var attributes: [String: Int]
    var note: String?
    var coupon: String?
    var scale: CGFloat
    var frame: CGRect
}

private let order = LegacyOrder(
    id: 42, int8: -8, int16: 1_600, int32: 32, int64: 6_400_000_000, uint: 7, uint8: 200, uint16: 16, uint32: 32,
    uint64: 64, double: 5, fraction: 0.1, float: 0.5, isGift: true, isExpress: false,
    total: Decimal(string: "19.99") ?? 0,
    receipt: URL(string: "https://shop.example/r/42") ?? URL(fileURLWithPath: "/"),
    shippedAt: Date(timeIntervalSince1970: 1_700_000_000),
    lines: [.init(sku: "A-1", quantity: 2), .init(sku: "B-2", quantity: 1)], tags: ["new", "gift"],
    attributes: ["weight": 3], note: "leave at door", coupon: nil, scale: 2.5,
    frame: CGRect(x: 1, y: 2, width: 3, height: 4)
)

/// What the legacy casts give on a value, one entry per cast: the value as text, or "nil".
private func casts(_ value: Any?) -> [String] {
    func text(_ cast: Any?) -> String { cast.map { "\($0)" } ?? "nil" }
    return [
        "NSNumber " + text((value as? NSNumber).map { $0.description }),
        "Int " + text(value as? Int), "Int32 " + text(value as? Int32), "Int64 " + text(value as? Int64),
        "Double " + text(value as? Double), "Float " + text(value as? Float), "Bool " + text(value as? Bool),
    ]
}

private let orderName = "LegacyOrderDidShip"

@Suite("Legacy-compatible posts: the casts of untouched observers")
struct LegacyCompatiblePostingTests {
    /// Both posting forms, each with a fresh center, and the `userInfo` an old observer saw.
    private func observedUserInfos() throws -> [(form: String, userInfo: [AnyHashable: Any])] {
        let forms: [(String, Notificatable<LegacyOrder>)] = [
            ("postingPlainKeys()", Notificatable<LegacyOrder>.name(orderName).postingPlainKeys()),
            ("postingPlainKeysOnly()", Notificatable<LegacyOrder>.name(orderName).postingPlainKeysOnly()),
        ]
        return try forms.map { form, handle in
            let center = NotificationCenter()
            let seen = ValueRecorder<[AnyHashable: Any]>()
            let token = center.addObserver(forName: handle.name, object: nil, queue: nil) { note in
                seen.append(note.userInfo ?? [:])
            }
            defer { center.removeObserver(token) }
            handle.post(order, center: center)
            return (form, try #require(seen.values.first))
        }
    }

    @Test("every number type, Bool and CGFloat cast as on the literal NSNumber of its value")
    func numbersCastAsLiteralNSNumbers() throws {
        let literal: [String: NSNumber] = [
            "id": NSNumber(value: 42), "int8": NSNumber(value: Int8(-8)), "int16": NSNumber(value: Int16(1_600)),
            "int32": NSNumber(value: Int32(32)), "int64": NSNumber(value: Int64(6_400_000_000)),
            "uint": NSNumber(value: UInt(7)), "uint8": NSNumber(value: UInt8(200)),
            "uint16": NSNumber(value: UInt16(16)), "uint32": NSNumber(value: UInt32(32)),
            "uint64": NSNumber(value: UInt64(64)), "double": NSNumber(value: 5.0), "fraction": NSNumber(value: 0.1),
            "float": NSNumber(value: Float(0.5)), "isGift": NSNumber(value: true), "isExpress": NSNumber(value: false),
            "scale": NSNumber(value: 2.5),
        ]
        for (form, userInfo) in try observedUserInfos() {
            for (key, number) in literal {
                #expect(userInfo[key] is NSNumber, "\(form): \(key) is \(type(of: userInfo[key] as Any))")
                #expect(casts(userInfo[key]) == casts(number), "\(form): \(key)")
            }
            // The casts the issue names, spelled out: these would trap or give nil on the Swift values.
            #expect(userInfo["id"] as? Int64 == 42 && userInfo["id"] as? Int32 == 42 && userInfo["id"] as? Double == 42)
            #expect(userInfo["int64"] as? Int == 6_400_000_000)
            #expect(userInfo["double"] as? Float == 5)
            #expect(userInfo["isGift"] as? Bool == true && userInfo["isGift"] as? Int == 1)
            #expect(userInfo["fraction"] as? Float == nil, "0.1 is not exactly a Float, as on NSNumber(value: 0.1)")
        }
    }

    @Test("Decimal, URL, Date, nested arrays and dictionaries, and optionals keep their legacy forms")
    func otherValuesKeepTheirLegacyForms() throws {
        for (form, userInfo) in try observedUserInfos() {
            let total = try #require(userInfo["total"] as? NSDecimalNumber, "\(form)")
            #expect(total.decimalValue == order.total)
            #expect(userInfo["total"] as? NSNumber != nil && userInfo["total"] as? Decimal == order.total)
            #expect(userInfo["receipt"] as? URL == order.receipt, "\(form)")
            #expect(userInfo["shippedAt"] as? Date == order.shippedAt, "\(form)")
            #expect((userInfo["frame"] as? NSValue)?.rectValue == order.frame, "\(form)")
            let lines = try #require(userInfo["lines"] as? [[String: Any]], "\(form)")
            #expect(lines.count == 2 && lines[0]["sku"] as? String == "A-1")
            #expect(lines[0]["quantity"] as? NSNumber == NSNumber(value: 2) && lines[0]["quantity"] as? Int64 == 2)
            #expect(userInfo["lines"] as? NSArray != nil && userInfo["attributes"] as? NSDictionary != nil)
            #expect(userInfo["tags"] as? [String] == ["new", "gift"])
            #expect((userInfo["attributes"] as? [String: Any])?["weight"] as? Int32 == 3)
            #expect(userInfo["note"] as? String == "leave at door")
            #expect(userInfo.keys.contains("coupon") == false, "\(form): an absent optional writes no key")
        }
    }

    @Test("the plain-keys-only userInfo has no reserved key and, without URL and NSValue, is a property list")
    func plainKeysOnlyIsThePostedDictionary() throws {
        let userInfos = try observedUserInfos()
        let both = try #require(userInfos.first { $0.form == "postingPlainKeys()" }?.userInfo)
        let plainOnly = try #require(userInfos.first { $0.form == "postingPlainKeysOnly()" }?.userInfo)
        #expect(both[NotificatableUserInfoKey] is LegacyOrder)
        #expect(plainOnly[NotificatableUserInfoKey] == nil)
        #expect(Set(plainOnly.keys) == Set(both.keys).subtracting([AnyHashable(NotificatableUserInfoKey)]))
        // A URL and an NSValue are not property-list values (nor were the NSURL and NSValue legacy code posted).
        var withoutURL = plainOnly
        withoutURL["receipt"] = nil
        withoutURL["frame"] = nil
        let data = try PropertyListSerialization.data(fromPropertyList: withoutURL, format: .binary, options: 0)
        #expect(!data.isEmpty)
        #expect(throws: (any Error).self) {
            try PropertyListSerialization.data(fromPropertyList: both, format: .binary, options: 0)
        }
        // With URLs as strings, the whole plain-keys-only userInfo is a property list.
        let encoder = UserInfoEncoder.legacyCompatible
        encoder.urlEncodingStrategy = .absoluteString
        encoder.encodesGeometryAsNSValue = false
        let center = NotificationCenter()
        let handle = Notificatable<LegacyOrder>.name(orderName).postingPlainKeysOnly(encoder: encoder)
        let seen = ValueRecorder<[AnyHashable: Any]>()
        let token = center.addObserver(forName: handle.name, object: nil, queue: nil) {
            seen.append($0.userInfo ?? [:])
        }
        defer { center.removeObserver(token) }
        handle.post(order, center: center)
        let whole = try #require(seen.values.first)
        #expect(try !PropertyListSerialization.data(fromPropertyList: whole, format: .xml, options: 0).isEmpty)
    }

    @Test("typed subscribers of a plain-keys-only handle decode the plain keys back to an equal payload")
    func plainKeysOnlyRoundTrips() throws {
        let center = NotificationCenter()
        let received = ValueRecorder<LegacyOrder>()
        let failures = FailureRecorder()
        let handle = Notificatable<LegacyOrder>.name(orderName).postingPlainKeysOnly()
        let subscription = handle.subscribe(center: center, onFailure: failures.handler) {
            received.append($0.userInfo)
        }
        defer { subscription.dispose() }
        handle.post(order, center: center)
        #expect(failures.values.isEmpty)
        #expect(received.values == [order])

        // Snake-case keys and dates as seconds: the handle's decoder mirrors the encoder.
        let encoder = UserInfoEncoder.legacyCompatible
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .secondsSince1970
        let snake = Notificatable<LegacyOrder>.name("SnakeOrder").postingPlainKeysOnly(encoder: encoder)
        #expect(try snake.payload(from: snake.makeNotification(order)) == order)
        let note = snake.makeNotification(order)
        #expect(note.userInfo?["shipped_at"] as? Double == 1_700_000_000)
        #expect(note.userInfo?["is_gift"] as? Bool == true)
    }

    @Test("middleware that edits a plain key and re-posts is seen by typed subscribers of a plain-keys-only handle")
    func rePostingMiddlewareIsSeen() throws {
        struct Count: Codable, Equatable, Sendable { var count: Int }
        let center = NotificationCenter()
        let handle = Notificatable<Count>.name("CountDidChange").postingPlainKeysOnly()
        let stale = Notificatable<Count>.name("CountDidChange").postingPlainKeys()
        let edited = Notificatable<Count>.name("CountWasEdited").postingPlainKeysOnly()
        let seen = ValueRecorder<Int>()
        let subscription = edited.subscribe(center: center) { seen.append($0.userInfo.count) }
        defer { subscription.dispose() }
        for poster in [handle, stale] {
            var userInfo = poster.makeNotification(Count(count: 3)).userInfo ?? [:]
            userInfo["count"] = NSNumber(value: 5)
            center.post(name: edited.name, object: nil, userInfo: userInfo)
        }
        // The plain-keys-only copy carries 5; the copy with the typed payload still says 3 (the documented trap).
        #expect(seen.values == [5, 3])
    }

    @Test("a second handle with its own type: mismatch names the poster's type and the fix; fallback decodes")
    func secondHandleFallsBackToPlainKeys() throws {
        struct Summary: Decodable, Equatable, Sendable {
            var id: Int
            var total: Decimal
        }
        let poster = Notificatable<LegacyOrder>.name(orderName).postingPlainKeys()
        let note = poster.makeNotification(order)
        let strict = Notificatable<Summary>.name(orderName)
        let failure = try #require(throws: NotificationDecodingFailure.self) { try strict.payload(from: note) }
        #expect(failure.kind == .payloadTypeMismatch)
        guard case .typeMismatch(_, let context) = failure.error as? DecodingError else {
            Issue.record("expected typeMismatch, got \(failure.error)")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == [NotificatableUserInfoKey])
        #expect(context.debugDescription.contains("Notificatable<LegacyOrder>"))
        #expect(context.debugDescription.contains("fallingBackToPlainKeys()"))

        let lenient = strict.fallingBackToPlainKeys()
        #expect(try lenient.payload(from: note) == Summary(id: 42, total: order.total))

        // A fallback that cannot decode reports the decoder's error, with its coding path.
        struct Other: Decodable, Sendable { var missing: String }
        let other = Notificatable<Other>.name(orderName).fallingBackToPlainKeys()
        let decodeFailure = try #require(throws: NotificationDecodingFailure.self) { try other.payload(from: note) }
        #expect(decodeFailure.kind == .decodingFailed)
        guard case .keyNotFound(let key, let keyContext) = decodeFailure.error as? DecodingError else {
            Issue.record("expected keyNotFound, got \(decodeFailure.error)")
            return
        }
        #expect(key.stringValue == "missing" && keyContext.codingPath.isEmpty)
    }
}
