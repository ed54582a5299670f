import Foundation
import Notificatable
import NotificatableTesting
import Testing

// Issue 33 item 4: one rule for a missing key's coding path, JSONDecoder's (the path of the dictionary that lacks the
// key, the key in the error), at run time, in fixtures, and in the articles; the runtime's line still says where.

private struct Login: Codable, Equatable, Sendable {
    struct Item: Codable, Equatable, Sendable {
        var sku: String
        var quantity: Int
    }

    var name: String
    var items: [Item]
}

@Suite("A missing key's coding path")
struct MissingKeyPathTests {
    private func failure(_ userInfo: [AnyHashable: Any]) throws -> NotificationDecodingFailure {
        let handle = Notificatable<Login>.name(uniqueName())
        let failure = try #require(throws: NotificationDecodingFailure.self) {
            _ = try handle.payload(from: Notification(name: handle.name, object: nil, userInfo: userInfo))
        }
        return failure
    }

    @Test func atRunTimeThePathIsTheDictionarysAndTheLineSaysWhere() throws {
        let top = try failure(["items": [] as [Any]])
        #expect(top.codingPath.isEmpty)
        guard case .keyNotFound(let key, _)? = top.error as? DecodingError else {
            Issue.record("expected keyNotFound, got \(top.error)")
            return
        }
        #expect(key.stringValue == "name")
        #expect(top.description.contains("(decodingFailed at the top level): No value for key \"name\"."))

        let nested = try failure(["name": "Ada", "items": [["sku": "A", "quantity": 1], ["sku": "B"]]])
        #expect(nested.codingPath.map(\.stringValue) == ["items", "Index 1"])
        #expect(nested.description.contains("(decodingFailed at items[1]): No value for key \"quantity\"."))
    }

    @Test func aFixtureWritesTheSamePathWithTheKeyApart() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        func fixture(_ name: String, userInfo: String, error: String) throws -> UserInfoFixture {
            try UserInfoFixture(
                contentsOf: folder.write(
                    name,
                    dictionaryBody: """
                        <key>type</key><string>Login</string>
                        <key>userInfo</key>\(userInfo)
                        <key>expect</key><dict><key>error</key><dict>
                            <key>kind</key><string>keyNotFound</string>\(error)
                        </dict></dict>
                        """))
        }
        let noName = "<dict><key>items</key><array/></dict>"
        // The path the runtime reports, [], with the key apart.
        try fixture(
            "top.plist", userInfo: noName, error: "<key>codingPath</key><array/><key>key</key><string>name</string>"
        )
        .verify(Login.self)
        try fixture("top-any-key.plist", userInfo: noName, error: "<key>codingPath</key><array/>").verify(Login.self)
        let wrongKey = try fixture(
            "top-wrong-key.plist", userInfo: noName,
            error: "<key>codingPath</key><array/><key>key</key><string>items</string>")
        #expect(
            wrongKey.check(Login.self)?.contains(
                "expected keyNotFound \"items\" at the top level, but decoding threw keyNotFound \"name\" at the top "
                    + "level (") == true)

        // The old rule's path, ending in the key, is a mismatch that says what to write instead.
        let oldRule = try fixture(
            "top-old-rule.plist", userInfo: noName, error: "<key>codingPath</key><array><string>name</string></array>")
        let message = try #require(oldRule.check(Login.self))
        #expect(
            message.hasSuffix(
                "A keyNotFound path leads to the dictionary that lacks the key, as JSONDecoder's does: write "
                    + "codingPath [] and key \"name\""), "\(message)")

        let nested = try fixture(
            "nested.plist",
            userInfo: """
                <dict><key>name</key><string>Ada</string><key>items</key><array>
                    <dict><key>sku</key><string>A</string><key>quantity</key><integer>1</integer></dict>
                    <dict><key>sku</key><string>B</string></dict>
                </array></dict>
                """,
            error: "<key>codingPath</key><array><string>items</string><integer>1</integer></array>"
                + "<key>key</key><string>quantity</string>")
        try nested.verify(Login.self)
    }

    @Test func aKeyOnlyGoesWithKeyNotFound() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "key-on-type-mismatch.plist",
            dictionaryBody: """
                <key>type</key><string>Login</string><key>userInfo</key><dict/>
                <key>expect</key><dict><key>error</key><dict>
                    <key>kind</key><string>typeMismatch</string><key>codingPath</key><array/>
                    <key>key</key><string>name</string>
                </dict></dict>
                """)
        let error = try #require(throws: UserInfoFixtureError.self) { try UserInfoFixture(contentsOf: url) }
        #expect(error.code == .invalidExpectation)
        #expect(error.location == "expect.error.key")
    }
}
