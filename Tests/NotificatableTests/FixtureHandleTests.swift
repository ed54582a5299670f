import Foundation
import Notificatable
import NotificatableTesting
import Testing

// Issue 33 item 2: a fixture verified through the app's handle is decoded with the handle's own decoder and
// conversion chain, not with settings repeated in the file; error fixtures are checked by kind and coding path; and a
// fixture whose own `decoder` field disagrees with the handle is reported.

private struct Shipment: Codable, Equatable, Sendable {
    var orderNumber: String
    var shippedAt: Date
    var parcels: Int
}

/// The app's handle: ISO 8601 dates and snake-case keys, set once, here.
private let orderShipped: Notificatable<Shipment> = {
    let decoder = UserInfoDecoder()
    decoder.dateDecodingStrategy = .iso8601
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return Notificatable<Shipment>.name("OrderShipped", decoder: decoder)
}()

private let shippedUserInfo = """
    <dict>
        <key>order_number</key><string>A-17</string>
        <key>shipped_at</key><string>2026-11-26T12:32:08Z</string>
        <key>parcels</key><integer>2</integer>
    </dict>
    """

private let shippedValue = """
    <key>expect</key><dict><key>value</key><dict>
        <key>orderNumber</key><string>A-17</string>
        <key>shippedAt</key><date>2026-11-26T12:32:08Z</date>
        <key>parcels</key><integer>2</integer>
    </dict></dict>
    """

@Suite("Fixtures verified through a handle")
struct FixtureHandleTests {
    /// Issue 41: a typo in a fixture's `type` passed `verify(through:)`, which decoded the payload type of the handle.
    @Test func aFixtureWhoseTypeDoesNotNameTheHandlesTypeFails() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let typo = try UserInfoFixture(
            contentsOf: folder.write(
                "typo.plist",
                dictionaryBody: "<key>type</key><string>Shipmnet</string><key>userInfo</key>\(shippedUserInfo)"
                    + shippedValue))
        let error = #expect(throws: UserInfoFixtureError.self) { try typo.verify(through: orderShipped) }
        #expect(error?.code == .unknownType)
        #expect(error?.location == "type")
        #expect(
            error?.description.contains(
                "the fixture's type is \"Shipmnet\", but the handle \"OrderShipped\" decodes Shipment") == true,
            "\(String(describing: error))")
        #expect(typo.check(through: orderShipped)?.contains("\"Shipmnet\"") == true)
        // The qualified name is the same type.
        let qualified = try UserInfoFixture(
            contentsOf: folder.write(
                "qualified.plist",
                dictionaryBody: "<key>type</key><string>NotificatableTests.Shipment</string><key>userInfo</key>"
                    + "\(shippedUserInfo)\(shippedValue)"))
        #expect(qualified.check(through: orderShipped) == nil)
        // A registry that knows the handle under another name still verifies through it.
        var registry = UserInfoFixtureRegistry()
        registry.register(orderShipped, named: "Shipmnet")
        try registry.verify(typo)
    }

    @Test func aFixtureIsDecodedWithTheHandlesDecoder() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try UserInfoFixture(
            contentsOf: folder.write(
                "shipped.plist",
                dictionaryBody: "<key>type</key><string>Shipment</string><key>userInfo</key>\(shippedUserInfo)"
                    + shippedValue))

        try fixture.verify(through: orderShipped)
        #expect(fixture.check(through: orderShipped) == nil)
        // The fixture's own (default) settings cannot read it: the gap the handle closes.
        #expect(fixture.check(Shipment.self) != nil)

        var registry = UserInfoFixtureRegistry()
        registry.register(orderShipped)
        #expect(registry.typeNames == ["Shipment"])
        try registry.verify(fixture)
    }

    @Test func aFixtureWhoseDecoderFieldDisagreesWithTheHandleIsReported() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try UserInfoFixture(
            contentsOf: folder.write(
                "shipped-seconds.plist",
                dictionaryBody: """
                    <key>type</key><string>Shipment</string>
                    <key>decoder</key><dict>
                        <key>key</key><string>convertFromSnakeCase</string>
                        <key>date</key><string>secondsSince1970</string>
                    </dict>
                    <key>userInfo</key>\(shippedUserInfo)
                    """ + shippedValue))

        let mismatch = try #require(throws: UserInfoFixtureMismatch.self) { try fixture.verify(through: orderShipped) }
        #expect(
            mismatch.message
                == "shipped-seconds.plist: the fixture's decoder field disagrees with the decoder of the handle "
                + "\"OrderShipped\", which is what decodes it: date: the fixture says secondsSince1970, the handle "
                + "uses iso8601. Remove the field, or make it say what the handle does.")

        // A field that says what the handle does is fine.
        let agreeing = try UserInfoFixture(
            contentsOf: folder.write(
                "shipped-agreeing.plist",
                dictionaryBody: """
                    <key>type</key><string>Shipment</string>
                    <key>decoder</key><dict>
                        <key>key</key><string>convertFromSnakeCase</string>
                        <key>date</key><string>iso8601</string>
                    </dict>
                    <key>userInfo</key>\(shippedUserInfo)
                    """ + shippedValue))
        try agreeing.verify(through: orderShipped)
    }

    @Test func anErrorFixtureIsCheckedByKindAndPathThroughTheHandle() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        func errorFixture(_ name: String, kind: String, path: String) throws -> UserInfoFixture {
            try UserInfoFixture(
                contentsOf: folder.write(
                    name,
                    dictionaryBody: """
                        <key>type</key><string>Shipment</string>
                        <key>userInfo</key><dict>
                            <key>order_number</key><string>A-17</string>
                            <key>shipped_at</key><string>yesterday</string>
                            <key>parcels</key><integer>2</integer>
                        </dict>
                        <key>expect</key><dict><key>error</key><dict>
                            <key>kind</key><string>\(kind)</string>
                            <key>codingPath</key><array>\(path)</array>
                        </dict></dict>
                        """))
        }
        // The handle's ISO 8601 strategy finds "yesterday" unreadable: dataCorrupted at shippedAt.
        try errorFixture("bad-date.plist", kind: "dataCorrupted", path: "<string>shippedAt</string>")
            .verify(through: orderShipped)

        let wrongPath = try errorFixture("bad-date-wrong-path.plist", kind: "dataCorrupted", path: "")
        let mismatch = try #require(throws: UserInfoFixtureMismatch.self) {
            try wrongPath.verify(through: orderShipped)
        }
        #expect(
            mismatch.message.hasPrefix(
                "bad-date-wrong-path.plist: expected dataCorrupted, but decoding threw "
                    + "dataCorrupted at shippedAt ("))

        let wrongKind = try errorFixture(
            "bad-date-wrong-kind.plist", kind: "typeMismatch", path: "<string>shippedAt</string>")
        #expect(wrongKind.check(through: orderShipped)?.contains("expected typeMismatch at shippedAt") == true)
    }

    @Test func theHandlesConvertersRunToo() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let legacy = orderShipped.addingConverter { userInfo in
            guard let id = userInfo?["legacyOrder"] as? String else { return nil }
            return Shipment(orderNumber: id, shippedAt: Date(timeIntervalSince1970: 0), parcels: 1)
        }
        let fixture = try UserInfoFixture(
            contentsOf: folder.write(
                "legacy.plist",
                dictionaryBody: """
                    <key>type</key><string>Shipment</string>
                    <key>userInfo</key><dict><key>legacyOrder</key><string>B-2</string></dict>
                    <key>expect</key><dict><key>value</key><dict>
                        <key>orderNumber</key><string>B-2</string>
                        <key>shippedAt</key><date>1970-01-01T00:00:00Z</date>
                        <key>parcels</key><integer>1</integer>
                    </dict></dict>
                    """))
        try fixture.verify(through: legacy)
        #expect(fixture.check(through: orderShipped) != nil)
    }
}
