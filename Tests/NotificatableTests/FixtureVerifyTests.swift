import Foundation
import Notificatable
import NotificatableTesting
import Testing

// What a failing fixture test reports (`verify`, the field-by-field diff), expected values written with tags, and a
// broken file among good ones: issue 15, items 1 to 3.

private struct VerifyOrder: Codable, Equatable {
    struct Item: Codable, Equatable {
        var sku: String
        var quantity: Int
    }

    var id: Int
    var items: [Item]
    var tags: [String: Int]
    var note: String?
    var total: Decimal
}

/// Writes one fixture whose type is `VerifyOrder` and whose `expect.value` is fixed; `userInfo` varies per test.
private func orderFixture(_ folder: TemporaryFixtures, _ name: String, userInfo: String) throws -> UserInfoFixture {
    try UserInfoFixture(
        contentsOf: folder.write(
            "\(name).plist",
            dictionaryBody: """
                <key>type</key><string>VerifyOrder</string>
                <key>userInfo</key>\(userInfo)
                <key>expect</key><dict><key>value</key><dict>
                    <key>id</key><integer>42</integer>
                    <key>items</key><array>
                        <dict><key>sku</key><string>A</string><key>quantity</key><integer>1</integer></dict>
                        <dict><key>sku</key><string>B</string><key>quantity</key><integer>2</integer></dict>
                    </array>
                    <key>tags</key><dict><key>gift</key><integer>1</integer></dict>
                    <key>total</key><dict><key>$decimal</key><string>9.99</string></dict>
                </dict></dict>
                """))
}

private func orderUserInfo(quantity: Int = 2, gift: Int = 1, note: String? = nil, total: String = "9.99") -> String {
    """
    <dict>
        <key>id</key><integer>42</integer>
        <key>items</key><array>
            <dict><key>sku</key><string>A</string><key>quantity</key><integer>1</integer></dict>
            <dict><key>sku</key><string>B</string><key>quantity</key><integer>\(quantity)</integer></dict>
        </array>
        <key>tags</key><dict><key>gift</key><integer>\(gift)</integer></dict>
        \(note.map { "<key>note</key><string>\($0)</string>" } ?? "")
        <key>total</key><dict><key>$decimal</key><string>\(total)</string></dict>
    </dict>
    """
}

private var orderRegistry: UserInfoFixtureRegistry {
    var registry = UserInfoFixtureRegistry()
    registry.register(VerifyOrder.self)
    return registry
}

@Suite("Fixture verify: a failing case says why")
struct FixtureVerifyTests {
    @Test("verify passes when the outcome matches, and throws nothing")
    func verifyPasses() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try orderFixture(folder, "match", userInfo: orderUserInfo())
        try orderRegistry.verify(fixture)
        try fixture.verify(VerifyOrder.self)
        #expect(try orderRegistry.check(fixture) == nil)
    }

    @Test("A value mismatch throws an error listing each differing field by its bracketed path")
    func valueMismatchListsFields() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try orderFixture(
            folder, "order-shipped", userInfo: orderUserInfo(quantity: 3, gift: 2, note: "leave at door", total: "9.98")
        )
        let mismatch = #expect(throws: UserInfoFixtureMismatch.self) { try orderRegistry.verify(fixture) }
        #expect(mismatch?.file == fixture.url)
        #expect(
            mismatch?.differences == [
                .init(path: "items[1].quantity", decoded: "3", expected: "2"),
                .init(path: "tags.gift", decoded: "2", expected: "1"),
                .init(path: "note", decoded: "\"leave at door\"", expected: "nil"),
                .init(path: "total", decoded: "9.98", expected: "9.99"),
            ])
        let message = try #require(mismatch?.description)
        #expect(message.hasPrefix("order-shipped.plist: the decoded value differs from expect.value in 4 fields:\n"))
        #expect(message.contains("\n  items[1].quantity: decoded 3, expected 2\n"))
        #expect(message.contains("\n  decoded:  VerifyOrder("))
        #expect(message.contains("\n  expected: VerifyOrder("))
        // What a Swift Testing report prints for a thrown error is its description; `check` returns the same text.
        #expect(String(describing: try #require(mismatch)) == message)
        #expect(try orderRegistry.check(fixture) == message)
        #expect(fixture.check(VerifyOrder.self) == message)
    }

    @Test("Arrays of different lengths report the missing or extra elements")
    func lengthMismatch() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let userInfo = """
            <dict>
                <key>id</key><integer>42</integer>
                <key>items</key><array>
                    <dict><key>sku</key><string>A</string><key>quantity</key><integer>1</integer></dict>
                </array>
                <key>tags</key><dict><key>gift</key><integer>1</integer><key>rush</key><integer>1</integer></dict>
                <key>total</key><dict><key>$decimal</key><string>9.99</string></dict>
            </dict>
            """
        let fixture = try orderFixture(folder, "short", userInfo: userInfo)
        let mismatch = #expect(throws: UserInfoFixtureMismatch.self) { try fixture.verify(VerifyOrder.self) }
        #expect(
            mismatch?.differences == [
                .init(path: "items[1]", decoded: "(absent)", expected: "Item(sku: \"B\", quantity: 2)"),
                .init(path: "tags.rush", decoded: "1", expected: "(absent)"),
            ])
    }

    @Test("A decoding error where a value was expected, and the reverse, throw the explanation")
    func outcomeKindMismatch() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let broken = try orderFixture(folder, "id-as-string", userInfo: "<dict><key>id</key><string>x</string></dict>")
        let thrown = #expect(throws: UserInfoFixtureMismatch.self) { try orderRegistry.verify(broken) }
        #expect(thrown?.differences == [])
        // Issue 41: the reason first, then the expected value, on a line of its own.
        let text = thrown?.description ?? ""
        #expect(text.contains("id-as-string.plist: decoding threw typeMismatch at id ("), "\(text)")
        #expect(text.contains("but expect.value expects a value\n  expected: VerifyOrder("), "\(text)")

        // A nested path is written as the package writes it everywhere: `items[1].quantity`.
        let nested = try orderFixture(
            folder, "quantity-as-string",
            userInfo: orderUserInfo().replacingOccurrences(
                of: "<integer>2</integer></dict>", with: "<string>two</string></dict>"))
        let nestedThrown = #expect(throws: UserInfoFixtureMismatch.self) { try orderRegistry.verify(nested) }
        #expect(
            nestedThrown?.description.contains("decoding threw typeMismatch at items[1].quantity (") == true,
            "\(String(describing: nestedThrown))")

        let url = try folder.write(
            "unexpected-success.plist",
            dictionaryBody: """
                <key>type</key><string>VerifyOrder</string><key>userInfo</key>\(orderUserInfo())
                <key>expect</key><dict><key>error</key><dict><key>kind</key><string>typeMismatch</string>
                <key>codingPath</key><array><string>id</string></array></dict></dict>
                """)
        let success = #expect(throws: UserInfoFixtureMismatch.self) {
            try orderRegistry.verify(UserInfoFixture(contentsOf: url))
        }
        #expect(
            success?.description.contains(
                "expected typeMismatch at id, but decoding succeeded\n  decoded:  VerifyOrder(") == true)
    }

    @Test("A fixture problem is thrown as UserInfoFixtureError, not as a mismatch")
    func fixtureProblemsAreFixtureErrors() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try orderFixture(folder, "unregistered", userInfo: orderUserInfo())
        let unknown = #expect(throws: UserInfoFixtureError.self) { try UserInfoFixtureRegistry().verify(fixture) }
        #expect(unknown?.code == .unknownType)
        let unreadable = #expect(throws: UserInfoFixtureError.self) { try fixture.verify(FixtureTypes.IntValue.self) }
        #expect(unreadable?.code == .invalidExpectation)
        #expect(unreadable?.location == "expect.value")
    }

    @Test("A single value, a custom == and a long list: the diff stays readable")
    func diffEdges() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let single = try UserInfoFixture(
            contentsOf: folder.write(
                "single.plist",
                dictionaryBody: """
                    <key>type</key><string>IntKeyedStrings</string>
                    <key>userInfo</key><dict><key>$intKeys</key><dict><key>1</key><string>one</string></dict></dict>
                    <key>expect</key><dict><key>value</key><dict><key>1</key><string>uno</string></dict></dict>
                    """))
        let mismatch = #expect(throws: UserInfoFixtureMismatch.self) { try single.verify([Int: String].self) }
        #expect(mismatch?.differences == [.init(path: "[1]", decoded: "\"one\"", expected: "\"uno\"")])

        let many = (0..<30).map { "<integer>\($0)</integer>" }.joined()
        let manyExpected = (0..<30).map { "<integer>\($0 + 1)</integer>" }.joined()
        let list = try UserInfoFixture(
            contentsOf: folder.write(
                "list.plist",
                dictionaryBody: """
                    <key>type</key><string>IntegerList</string>
                    <key>userInfo</key><dict><key>values</key><array>\(many)</array></dict>
                    <key>expect</key><dict><key>value</key><dict><key>values</key><array>\(manyExpected)</array></dict></dict>
                    """))
        let listMismatch = #expect(throws: UserInfoFixtureMismatch.self) {
            try list.verify(FixtureTypes.IntegerList.self)
        }
        #expect(listMismatch?.differences.count == 20)
        #expect(listMismatch?.differences.first == .init(path: "values[0]", decoded: "0", expected: "1"))
        #expect(listMismatch?.description.contains("in 20 fields (the first 20):") == true)
    }
}

@Suite("Fixture expectations use the userInfo tags")
struct FixtureExpectedTagTests {
    @Test("Decimal, URL, Date, rect and null can be expected values, from the fixtures in Fixtures/")
    func taggedExpectedValues() throws {
        let tagged = try UserInfoFixture(
            contentsOf: fixturesDirectory.appendingPathComponent("expect-tagged-values.plist"))
        try fixtureRegistry.verify(tagged)
        let invoice = try tagged.expectedValue(as: FixtureTypes.Invoice.self)
        let posix = Locale(identifier: "en_US_POSIX")
        #expect(invoice.total == Decimal(string: "9.99", locale: posix))
        #expect(invoice.receipt == URL(string: "https://example.com/receipts/42"))
        #expect(invoice.issuedAt == Date(timeIntervalSince1970: 1_709_294_400))
        #expect(invoice.frame == CGRect(x: 0, y: 508, width: 390, height: 336))
        #expect(invoice.note == nil)
        #expect(invoice.lineTotals == [Decimal(string: "4.5", locale: posix), Decimal(string: "5.49", locale: posix)])

        let real = try UserInfoFixture(
            contentsOf: fixturesDirectory.appendingPathComponent("expect-decimal-as-real.plist"))
        try fixtureRegistry.verify(real)
        #expect(try real.expectedValue(as: FixtureTypes.Price.self).amount == Decimal(string: "9.99", locale: posix))
    }

    @Test("A tagged expected value still catches a decoded value that differs")
    func taggedExpectationFails() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "price.plist",
            dictionaryBody: """
                <key>type</key><string>Price</string>
                <key>userInfo</key><dict><key>amount</key><real>9.98</real></dict>
                <key>expect</key><dict><key>value</key><dict>
                    <key>amount</key><dict><key>$decimal</key><string>9.99</string></dict>
                </dict></dict>
                """)
        let mismatch = #expect(throws: UserInfoFixtureMismatch.self) {
            try fixtureRegistry.verify(UserInfoFixture(contentsOf: url))
        }
        #expect(mismatch?.differences == [.init(path: "amount", decoded: "9.98", expected: "9.99")])
    }

    @Test("A plain expected value is still read by PropertyListDecoder, so {relative: …} reads as a URL")
    func plainExpectedValuesUsePropertyListDecoder() throws {
        let fixture = try UserInfoFixture(
            contentsOf: fixturesDirectory.appendingPathComponent("values-url-and-uuid.plist"))
        #expect(
            try fixture.expectedValue(as: FixtureTypes.Link.self).url == URL(string: "https://example.com/a/b?c=d#e"))
    }

    @Test("An expected value neither decoder can read names both readings")
    func unreadableByBoth() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "price-as-text.plist",
            dictionaryBody: """
                <key>type</key><string>Price</string>
                <key>userInfo</key><dict><key>amount</key><real>1</real></dict>
                <key>expect</key><dict><key>value</key><dict><key>amount</key><true/></dict></dict>
                """)
        let error = #expect(throws: UserInfoFixtureError.self) {
            try UserInfoFixture(contentsOf: url).expectedValue(as: FixtureTypes.Price.self)
        }
        #expect(error?.code == .invalidExpectation)
        #expect(error?.location == "expect.value")
        #expect(error?.message.contains("PropertyListDecoder: ") == true)
        #expect(error?.message.contains("UserInfoDecoder: typeMismatch at amount (") == true)
    }
}

@Suite("Fixture folders: a broken file is one failing case")
struct FixtureBrokenFileTests {
    @Test("fixtures(in:) returns a broken file as a fixture that carries its error; the good ones still run")
    func brokenFileAmongGoodOnes() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let good =
            "<key>type</key><string>IntValue</string><key>userInfo</key><dict><key>value</key><integer>3</integer></dict>"
            + "<key>expect</key><dict><key>value</key><dict><key>value</key><integer>3</integer></dict></dict>"
        _ = try folder.write("a-good.plist", dictionaryBody: good)
        let brokenURL = try folder.write(
            "b-broken.plist",
            dictionaryBody: "<key>type</key><string>IntValue</string><key>userInfo</key><dict/>"
                + "<key>expect</key><dict><key>value</key><dict/><key>error</key><dict/></dict>")
        _ = try folder.write("c-good.plist", dictionaryBody: good)

        let loaded = try fixtures(in: folder.directory)
        #expect(loaded.map(\.id) == ["a-good.plist", "b-broken.plist", "c-good.plist"])
        #expect(loaded.map { $0.loadError == nil } == [true, false, true])

        try fixtureRegistry.verify(loaded[0])
        try fixtureRegistry.verify(loaded[2])

        let broken = loaded[1]
        #expect(broken.description == "b-broken.plist")
        let error = try #require(broken.loadError)
        #expect(error.code == .invalidExpectation)
        #expect(error.file == brokenURL)
        #expect(error.description.contains("must hold exactly one of `value` and `error`"))
        // The same error as loading the file alone, from every entry point.
        #expect(throws: error) { try UserInfoFixture(contentsOf: brokenURL) }
        #expect(throws: error) { try fixtureRegistry.verify(broken) }
        #expect(throws: error) { try fixtureRegistry.check(broken) }
        #expect(throws: error) { try fixtureRegistry.validate(broken) }
        #expect(throws: error) { try broken.verify(FixtureTypes.IntValue.self) }
        #expect(throws: error) { try broken.expectedValue(as: FixtureTypes.IntValue.self) }
        #expect(broken.check(FixtureTypes.IntValue.self) == error.description)
        #expect(broken.userInfo.isEmpty)
    }

    @Test("An unreadable file in the folder is one failing fixture too")
    func unreadableFile() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write("not-a-plist.plist", raw: "this is < not a plist")
        let loaded = try fixtures(in: folder.directory)
        #expect(loaded.count == 1)
        #expect(loaded.first?.loadError?.code == .invalidPropertyList)
        #expect(loaded.first?.loadError?.file == url)
    }
}
