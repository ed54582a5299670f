import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// `Fixtures/` at the package root, found from this file's path so the tests run from any working directory.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // NotificatableTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // package root
    .appendingPathComponent("Fixtures")

/// Every fixture in `Fixtures/`: adding a file adds a test case to each parameterized test below.
@Suite("Fixtures")
struct FixtureTests {
    /// The fixture itself is sound: it loaded, its type is registered and its expected value can be read. This
    /// separates a broken fixture from a decoder bug.
    @Test("Each fixture is well formed", arguments: try fixtures(in: fixturesDirectory))
    func fixtureIsWellFormed(_ fixture: UserInfoFixture) throws {
        try fixtureRegistry.validate(fixture)
    }

    /// The decoder gives the fixture's expected value, or its expected error kind and coding path.
    @Test("Each fixture decodes as expected", arguments: try fixtures(in: fixturesDirectory))
    func fixtureDecodesAsExpected(_ fixture: UserInfoFixture) throws {
        try fixtureRegistry.verify(fixture)
    }

    @Test("The folder holds enough system shapes, failures and cases")
    func folderCoverage() throws {
        let all = try fixtures(in: fixturesDirectory)
        let system = all.filter { $0.name.hasPrefix("system-") }
        let failures = all.filter { if case .error = $0.expectation { true } else { false } }
        #expect(all.count >= 45)
        #expect(system.count >= 10)
        #expect(failures.count >= 15)
        #expect(all.map(\.id) == all.map(\.id).sorted())
        #expect(all.allSatisfy { !$0.summary.isEmpty })
        #expect(all.compactMap(\.loadError).isEmpty)
    }
}

// MARK: - The loader

/// Writes fixture files into a fresh temporary folder, never into `Fixtures/`.
struct TemporaryFixtures {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("NotificatableFixtureTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Writes `body` (the content of the top-level `<dict>`) as a complete XML property list.
    func write(_ name: String, dictionaryBody body: String) throws -> URL {
        try write(
            name,
            raw: """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><dict>\(body)</dict></plist>
                """)
    }

    func write(_ name: String, raw: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(raw.utf8).write(to: url)
        return url
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

private let minimalExpectation = "<key>expect</key><dict><key>value</key><dict/></dict>"

@Suite("Fixture loader")
struct FixtureLoaderTests {
    @Test("The loader builds real NSValue, URL, NSNull, NSNumber, Int-key and Swift values")
    func loaderBuildsFoundationValues() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "values.plist",
            dictionaryBody: """
                <key>type</key><string>Anything</string>
                <key>userInfo</key>
                <dict>
                    <key>rect</key><dict><key>$rect</key><array><real>1</real><real>2</real><real>3</real><integer>4</integer></array></dict>
                    <key>point</key><dict><key>$point</key><array><real>5.5</real><real>6</real></array></dict>
                    <key>size</key><dict><key>$size</key><array><real>7</real><real>8</real></array></dict>
                    <key>range</key><dict><key>$range</key><array><integer>9</integer><integer>10</integer></array></dict>
                    <key>url</key><dict><key>$url</key><string>https://example.com/a?b=c</string></dict>
                    <key>nsurl</key><dict><key>$nsurl</key><string>file:///tmp/</string></dict>
                    <key>null</key><dict><key>$null</key><true/></dict>
                    <key>ints</key><dict><key>$intKeys</key><dict><key>1</key><string>one</string><key>-2</key><string>minus two</string></dict></dict>
                    <key>integer</key><integer>3</integer>
                    <key>real</key><real>2.5</real>
                    <key>bool</key><true/>
                    <key>swiftBool</key><dict><key>$bool</key><true/></dict>
                    <key>int8</key><dict><key>$int8</key><integer>-128</integer></dict>
                    <key>uint64</key><dict><key>$uint64</key><string>18446744073709551615</string></dict>
                    <key>bigInteger</key><integer>18446744073709551615</integer>
                    <key>nan</key><dict><key>$double</key><string>nan</string></dict>
                    <key>float</key><dict><key>$float</key><real>0.5</real></dict>
                    <key>decimal</key><dict><key>$decimal</key><string>1.25</string></dict>
                    <key>nsstring</key><dict><key>$nsstring</key><string>s</string></dict>
                    <key>nsarray</key><dict><key>$nsarray</key><array><integer>1</integer></array></dict>
                    <key>nsdictionary</key><dict><key>$nsdictionary</key><dict><key>a</key><string>b</string></dict></dict>
                    <key>nested</key><dict><key>inner</key><array><string>x</string></array></dict>
                    <key>deep</key><dict><key>$nest</key><dict><key>depth</key><integer>3</integer><key>key</key><string>k</string><key>leaf</key><integer>1</integer></dict></dict>
                    <key>$$literal</key><string>dollar</string>
                    <key>date</key><date>2023-11-14T22:13:20Z</date>
                    <key>data</key><data>AAEC</data>
                </dict>
                \(minimalExpectation)
                """)
        let fixture = try UserInfoFixture(contentsOf: url)
        let userInfo = fixture.userInfo

        #expect(userInfo.keys.allSatisfy { $0.base is String })
        let rect = try #require(userInfo["rect"] as? NSValue)
        let point = try #require(userInfo["point"] as? NSValue)
        let size = try #require(userInfo["size"] as? NSValue)
        #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
        #expect(rect.cgRectValue == CGRect(x: 1, y: 2, width: 3, height: 4))
        #expect(point.cgPointValue == CGPoint(x: 5.5, y: 6))
        #expect(size.cgSizeValue == CGSize(width: 7, height: 8))
        #else
        #expect(rect.rectValue == CGRect(x: 1, y: 2, width: 3, height: 4))
        #expect(point.pointValue == CGPoint(x: 5.5, y: 6))
        #expect(size.sizeValue == CGSize(width: 7, height: 8))
        #endif
        #expect((userInfo["range"] as? NSValue)?.rangeValue == NSRange(location: 9, length: 10))

        #expect(kind(userInfo["url"]) == ObjectIdentifier(URL.self))
        #expect((userInfo["url"] as? URL)?.absoluteString == "https://example.com/a?b=c")
        #expect(isInstance(userInfo["nsurl"], of: NSURL.self))
        #expect(isInstance(userInfo["null"], of: NSNull.self))

        let ints = try #require(userInfo["ints"] as? [AnyHashable: Any])
        #expect(ints.keys.allSatisfy { $0.base is Int })
        #expect(ints[AnyHashable(1)] as? String == "one")
        #expect(ints[AnyHashable(-2)] as? String == "minus two")

        // Plain plist numbers are NSNumbers, booleans are boolean NSNumbers, as the system posts them.
        #expect(isInstance(userInfo["integer"], of: NSNumber.self))
        #expect((userInfo["integer"] as? NSNumber)?.intValue == 3)
        #expect(isInstance(userInfo["real"], of: NSNumber.self))
        #expect(kind(userInfo["bool"]) == ObjectIdentifier(type(of: NSNumber(value: true))))
        #expect(isInstance(userInfo["bigInteger"], of: NSNumber.self))
        #expect((userInfo["bigInteger"] as? NSNumber)?.uint64Value == UInt64.max)

        // Tags give Swift values of exactly the named type.
        #expect(kind(userInfo["swiftBool"]) == ObjectIdentifier(Bool.self))
        #expect(userInfo["int8"] as? Int8 == -128)
        #expect(kind(userInfo["int8"]) == ObjectIdentifier(Int8.self))
        #expect(userInfo["uint64"] as? UInt64 == UInt64.max)
        #expect(kind(userInfo["uint64"]) == ObjectIdentifier(UInt64.self))
        #expect((userInfo["nan"] as? Double)?.isNaN == true)
        #expect(kind(userInfo["float"]) == ObjectIdentifier(Float.self))
        #expect(userInfo["decimal"] as? Decimal == Decimal(string: "1.25", locale: Locale(identifier: "en_US_POSIX")))
        #expect(isInstance(userInfo["nsstring"], of: NSString.self))
        #expect(isInstance(userInfo["nsarray"], of: NSArray.self))
        #expect(isInstance(userInfo["nsdictionary"], of: NSDictionary.self))
        #expect(((userInfo["nested"] as? [String: Any])?["inner"] as? [Any])?.first as? String == "x")
        let deep = ((userInfo["deep"] as? [String: Any])?["k"] as? [String: Any])?["k"] as? [String: Any]
        #expect((deep?["k"] as? NSNumber)?.intValue == 1)
        #expect(userInfo["$literal"] as? String == "dollar")
        #expect(userInfo["date"] as? Date == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(userInfo["data"] as? Data == Data([0, 1, 2]))

        // Each access builds new objects, so tests never share a mutable object.
        let first = fixture.userInfo["rect"] as? NSValue
        let second = fixture.userInfo["rect"] as? NSValue
        #expect(first != nil && first !== second)
    }

    /// The dynamic type of a value, compared by identity; nil for a missing value.
    private func kind(_ value: Any?) -> ObjectIdentifier? {
        value.map { ObjectIdentifier(type(of: $0)) }
    }

    /// Whether the value is an instance of the Foundation class itself (or a subclass), not a bridged Swift value.
    private func isInstance<T: NSObject>(_ value: Any?, of type: T.Type) -> Bool {
        guard let value else { return false }
        return Swift.type(of: value) is T.Type
    }

    @Test("A fixture carries its name, summary, type, strategies and expectation")
    func fixtureProperties() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "some-case.plist",
            dictionaryBody: """
                <key>description</key><string>What it shows</string>
                <key>type</key><string>KeyboardInfo</string>
                <key>decoder</key><dict>
                    <key>key</key><string>affixed</string><key>prefix</key><string>UIKeyboard</string>
                    <key>suffix</key><string>UserInfoKey</string>
                    <key>date</key><string>formatted</string><key>dateFormat</key><string>yyyy</string>
                    <key>data</key><string>base64</string>
                </dict>
                <key>userInfo</key><dict/>
                <key>expect</key><dict><key>error</key><dict>
                    <key>kind</key><string>typeMismatch</string>
                    <key>codingPath</key><array><string>a</string><integer>0</integer>
                        <dict><key>$repeat</key><dict><key>count</key><integer>2</integer>
                            <key>path</key><array><string>b</string><integer>1</integer></array></dict></dict>
                    </array>
                </dict></dict>
                """)
        let fixture = try UserInfoFixture(contentsOf: url)
        #expect(fixture.name == "some-case")
        #expect(fixture.id == "some-case.plist")
        #expect(fixture.description == "some-case.plist")
        #expect(fixture.summary == "What it shows")
        #expect(fixture.typeName == "KeyboardInfo")
        #expect(fixture.url == url)
        #expect(
            fixture.decoderConfiguration
                == UserInfoFixture.DecoderConfiguration(
                    keyStrategy: .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey"),
                    dateStrategy: .formatted(dateFormat: "yyyy"),
                    dataStrategy: .base64))
        #expect(fixture.expectation == .error(.init(kind: .typeMismatch, codingPath: ["a", 0, "b", 1, "b", 1])))
        #expect(fixture.userInfo.isEmpty)
        #expect(throws: UserInfoFixtureError.self) { _ = try fixture.expectedValue(as: Int.self) }
        let decoder = fixture.makeDecoder()
        if case .affixed(let prefix, let suffix) = decoder.keyDecodingStrategy {
            #expect(prefix == "UIKeyboard" && suffix == "UserInfoKey")
        } else {
            Issue.record("the decoder's key strategy is not affixed")
        }
    }

    @Test("An expected error matches a DecodingError by kind and whole coding path")
    func expectedErrorMatching() {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) {
                self.stringValue = "Index \(intValue)"
                self.intValue = intValue
            }
        }
        let path: [any CodingKey] = [Key(stringValue: "items"), Key(intValue: 2)]
        let typeMismatch = DecodingError.typeMismatch(Int.self, .init(codingPath: path, debugDescription: "x"))
        let keyNotFound = DecodingError.keyNotFound(
            Key(stringValue: "count"), .init(codingPath: path, debugDescription: "x"))

        #expect(UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items", 2]).matches(typeMismatch))
        #expect(!UserInfoFixture.ExpectedError(kind: .dataCorrupted, codingPath: ["items", 2]).matches(typeMismatch))
        #expect(!UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items"]).matches(typeMismatch))
        #expect(!UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items", 3]).matches(typeMismatch))
        #expect(!UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items", "2"]).matches(typeMismatch))
        // keyNotFound's path is the dictionary's, as JSONDecoder's is (issue 33 item 4); the key is named apart.
        #expect(UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: ["items", 2]).matches(keyNotFound))
        #expect(
            UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: ["items", 2], key: "count")
                .matches(keyNotFound))
        #expect(
            !UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: ["items", 2], key: "total")
                .matches(keyNotFound))
        #expect(
            !UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: ["items", 2, "count"]).matches(keyNotFound))
        #expect(
            !UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: []).matches(CocoaError(.fileNoSuchFile)))
        // Paths are written as everywhere else in the package (NotificationDecodingFailure, the decoder's messages):
        // string keys joined by dots, integer keys in brackets, and no `at` for the top level.
        #expect(
            UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items", 2]).description
                == "typeMismatch at items[2]")
        #expect(
            UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: ["items", 2], key: "count").description
                == "keyNotFound \"count\" at items[2]")
        #expect(
            UserInfoFixture.ExpectedError(kind: .keyNotFound, codingPath: [], key: "name").description
                == "keyNotFound \"name\" at the top level")
        #expect(
            UserInfoFixture.ExpectedError(kind: .typeMismatch, codingPath: ["items", "2"]).description
                == "typeMismatch at items.2")
        #expect(UserInfoFixture.ExpectedError(kind: .dataCorrupted, codingPath: []).description == "dataCorrupted")
    }

    @Test("fixtures(in:) reads only .plist files, sorted by name")
    func folderListing() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let body = "<key>type</key><string>IntValue</string><key>userInfo</key><dict/>\(minimalExpectation)"
        _ = try folder.write("b.plist", dictionaryBody: body)
        _ = try folder.write("a.plist", dictionaryBody: body)
        _ = try folder.write("README.md", raw: "# not a fixture")
        _ = try folder.write(".hidden.plist", raw: "not even a plist")
        #expect(try fixtures(in: folder.directory).map(\.id) == ["a.plist", "b.plist"])
    }

    @Test("A missing folder is an unreadableFile error naming the folder")
    func missingFolder() {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-such-fixtures-\(UUID().uuidString)")
        let error = #expect(throws: UserInfoFixtureError.self) { try fixtures(in: missing) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.file == missing)
    }

    @Test("A fixture naming an unregistered type fails loudly, naming the file and the type")
    func unknownTypeFailsLoudly() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "unknown-type.plist",
            dictionaryBody: """
                <key>type</key><string>NoSuchType</string><key>userInfo</key><dict/>\(minimalExpectation)
                """)
        let fixture = try UserInfoFixture(contentsOf: url)
        let checkError = #expect(throws: UserInfoFixtureError.self) { try fixtureRegistry.check(fixture) }
        #expect(checkError?.code == .unknownType)
        #expect(checkError?.description.contains("unknown-type.plist") == true)
        #expect(checkError?.description.contains("NoSuchType") == true)
        let validateError = #expect(throws: UserInfoFixtureError.self) { try fixtureRegistry.validate(fixture) }
        #expect(validateError?.code == .unknownType)
    }

    @Test("An expected value that PropertyListDecoder cannot read as the type is a fixture error")
    func unreadableExpectedValue() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "bad-expected-value.plist",
            dictionaryBody: """
                <key>type</key><string>IntValue</string><key>userInfo</key><dict/>
                <key>expect</key><dict><key>value</key><dict><key>value</key><string>three</string></dict></dict>
                """)
        let fixture = try UserInfoFixture(contentsOf: url)
        let error = #expect(throws: UserInfoFixtureError.self) { try fixtureRegistry.validate(fixture) }
        #expect(error?.code == .invalidExpectation)
        #expect(error?.location == "expect.value")
        #expect(error?.description.contains("bad-expected-value.plist") == true)
        #expect(fixture.check(FixtureTypes.IntValue.self)?.contains("bad-expected-value.plist") == true)
    }

    @Test("check(_:) describes each kind of mismatch, naming the fixture")
    func checkDescribesMismatches() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        func fixture(_ name: String, userInfo: String, expect: String) throws -> UserInfoFixture {
            try UserInfoFixture(
                contentsOf: folder.write(
                    "\(name).plist",
                    dictionaryBody: """
                        <key>type</key><string>IntValue</string><key>userInfo</key>\(userInfo)<key>expect</key>\(expect)
                        """))
        }
        let three = "<dict><key>value</key><integer>3</integer></dict>"
        let pass = try fixture("pass", userInfo: three, expect: "<dict><key>value</key>\(three)</dict>")
        #expect(pass.check(FixtureTypes.IntValue.self) == nil)

        let wrongValue = try fixture(
            "wrong-value", userInfo: three,
            expect: "<dict><key>value</key><dict><key>value</key><integer>4</integer></dict></dict>")
        let valueMismatch = try #require(wrongValue.check(FixtureTypes.IntValue.self))
        #expect(valueMismatch.hasPrefix("wrong-value.plist: the decoded value differs from expect.value in 1 field"))
        #expect(valueMismatch.contains("  value: decoded 3, expected 4\n"))

        let unexpectedSuccess = try fixture(
            "unexpected-success", userInfo: three,
            expect: """
                <dict><key>error</key><dict><key>kind</key><string>typeMismatch</string>
                <key>codingPath</key><array><string>value</string></array></dict></dict>
                """)
        let successMismatch = try #require(unexpectedSuccess.check(FixtureTypes.IntValue.self))
        #expect(successMismatch.contains("expected typeMismatch at value, but decoding succeeded\n  decoded:  "))

        let wrongPath = try fixture(
            "wrong-path", userInfo: "<dict><key>value</key><string>3</string></dict>",
            expect: """
                <dict><key>error</key><dict><key>kind</key><string>typeMismatch</string>
                <key>codingPath</key><array><string>other</string></array></dict></dict>
                """)
        let pathMismatch = try #require(wrongPath.check(FixtureTypes.IntValue.self))
        #expect(
            pathMismatch.contains(
                "expected typeMismatch at other, but decoding threw typeMismatch at value ("))

        let unexpectedError = try fixture(
            "unexpected-error", userInfo: "<dict/>",
            expect: "<dict><key>value</key>\(three)</dict>")
        let errorMismatch = try #require(unexpectedError.check(FixtureTypes.IntValue.self))
        #expect(
            errorMismatch.hasPrefix("unexpected-error.plist: decoding threw keyNotFound \"value\" at the top level ("))
    }

    @Test("The registry lists its type names")
    func registryNames() {
        var registry = UserInfoFixtureRegistry()
        registry.register(FixtureTypes.IntValue.self)
        registry.register([Int: String].self, named: "IntKeyedStrings")
        #expect(registry.typeNames == ["IntKeyedStrings", "IntValue"])
    }
}

// MARK: - Malformed fixtures

/// One malformed fixture: the file's content, the error code it must give, and text the error must contain.
struct MalformedFixture: Sendable, CustomStringConvertible {
    var name: String
    var content: String
    var code: UserInfoFixtureError.Code
    var fragment: String

    var description: String { name }

    static func dictionary(_ name: String, _ body: String, _ code: UserInfoFixtureError.Code, _ fragment: String)
        -> Self
    {
        MalformedFixture(
            name: name,
            content: """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict>\(body)</dict></plist>
                """, code: code, fragment: fragment)
    }

    static func userInfo(_ name: String, _ userInfo: String, _ code: UserInfoFixtureError.Code, _ fragment: String)
        -> Self
    {
        dictionary(
            name, "<key>type</key><string>T</string><key>userInfo</key>\(userInfo)\(minimalExpectation)", code, fragment
        )
    }

    static func expect(_ name: String, _ expect: String, _ fragment: String) -> Self {
        dictionary(
            name, "<key>type</key><string>T</string><key>userInfo</key><dict/><key>expect</key>\(expect)",
            .invalidExpectation, fragment)
    }

    static let all: [MalformedFixture] = [
        MalformedFixture(
            name: "not-a-plist", content: "this is < not a plist", code: .invalidPropertyList,
            fragment: "not a valid property list"),
        MalformedFixture(
            name: "top-level-array", content: "<plist version=\"1.0\"><array/></plist>",
            code: .invalidPropertyList, fragment: "top level must be a dictionary"),
        .dictionary("missing-type", "<key>userInfo</key><dict/>\(minimalExpectation)", .missingField, "type"),
        .dictionary(
            "empty-type", "<key>type</key><string></string><key>userInfo</key><dict/>\(minimalExpectation)",
            .invalidField, "must name a type"),
        .dictionary(
            "type-not-a-string", "<key>type</key><integer>1</integer><key>userInfo</key><dict/>\(minimalExpectation)",
            .invalidField, "expected a string, found an integer"),
        .dictionary(
            "missing-user-info", "<key>type</key><string>T</string>\(minimalExpectation)", .missingField, "userInfo"),
        .dictionary(
            "missing-expect", "<key>type</key><string>T</string><key>userInfo</key><dict/>", .missingField, "expect"),
        .dictionary(
            "misspelt-field",
            "<key>type</key><string>T</string><key>userInfo</key><dict/>"
                + "<key>expected</key><dict/>", .unexpectedField, "expected"),
        .userInfo("user-info-not-a-dictionary", "<array/>", .invalidField, "must be a dictionary"),
        .userInfo(
            "unknown-tag", "<dict><key>a</key><dict><key>$rec</key><array/></dict></dict>", .invalidTag,
            "unknown tag $rec"),
        .userInfo(
            "rect-with-three-numbers",
            "<dict><key>frame</key><dict><key>$rect</key><array><real>0</real><real>0</real><real>1</real></array></dict></dict>",
            .invalidTag, "userInfo.frame.$rect: $rect needs 4 numbers"),
        .userInfo(
            "point-with-a-string",
            "<dict><key>p</key><dict><key>$point</key><array><real>0</real><string>1</string></array></dict></dict>",
            .invalidTag, "$point needs 2 numbers"),
        .userInfo(
            "negative-range",
            "<dict><key>r</key><dict><key>$range</key><array><integer>-1</integer><integer>1</integer></array></dict></dict>",
            .invalidTag, "non-negative"),
        .userInfo(
            "empty-url", "<dict><key>u</key><dict><key>$url</key><string></string></dict></dict>", .invalidTag,
            "valid URL"),
        .userInfo(
            "null-false", "<dict><key>n</key><dict><key>$null</key><false/></dict></dict>", .invalidTag, "<true/>"),
        .userInfo(
            "int8-overflow-in-tag", "<dict><key>i</key><dict><key>$int8</key><integer>300</integer></dict></dict>",
            .invalidTag, "does not fit in Int8"),
        .userInfo(
            "float-tag-out-of-range", "<dict><key>f</key><dict><key>$float</key><real>1e39</real></dict></dict>",
            .invalidTag, "does not fit in Float"),
        .userInfo(
            "int-keys-not-integers",
            "<dict><key>m</key><dict><key>$intKeys</key><dict><key>one</key><string>1</string></dict></dict></dict>",
            .invalidTag, "keys that are integers"),
        .userInfo(
            "tag-beside-other-keys",
            "<dict><key>v</key><dict><key>$null</key><true/><key>other</key><integer>1</integer></dict></dict>",
            .invalidTag, "must be the only key"),
        .userInfo(
            "nest-without-leaf",
            "<dict><key>v</key><dict><key>$nest</key><dict><key>depth</key><integer>2</integer></dict></dict></dict>",
            .invalidTag, "leaf"),
        .expect(
            "expect-both-value-and-error",
            "<dict><key>value</key><dict/><key>error</key><dict/></dict>", "exactly one of"),
        .expect("expect-neither", "<dict/>", "exactly one of"),
        .expect(
            "expect-unknown-kind",
            "<dict><key>error</key><dict><key>kind</key><string>typeMisMatch</string>"
                + "<key>codingPath</key><array/></dict></dict>", "unknown kind \"typeMisMatch\""),
        .expect(
            "expect-real-in-path",
            "<dict><key>error</key><dict><key>kind</key><string>typeMismatch</string>"
                + "<key>codingPath</key><array><real>1.5</real></array></dict></dict>", "coding path element"),
        .dictionary(
            "expect-malformed-tag-in-value",
            "<key>type</key><string>T</string><key>userInfo</key><dict/><key>expect</key>"
                + "<dict><key>value</key><dict><key>frame</key><dict><key>$rect</key><array/></dict></dict></dict>",
            .invalidTag, "expect.value.frame.$rect: $rect needs 4 numbers"),
        .dictionary(
            "expect-unknown-tag-in-value",
            "<key>type</key><string>T</string><key>userInfo</key><dict/><key>expect</key>"
                + "<dict><key>value</key><dict><key>total</key><dict><key>$decimel</key><string>1</string></dict>"
                + "</dict></dict>",
            .invalidTag, "expect.value.total.$decimel: unknown tag $decimel"),
        .dictionary(
            "expect-error-without-path",
            "<key>type</key><string>T</string><key>userInfo</key><dict/><key>expect</key>"
                + "<dict><key>error</key><dict><key>kind</key><string>keyNotFound</string></dict></dict>",
            .missingField, "codingPath"),
        .dictionary(
            "unknown-key-strategy",
            "<key>type</key><string>T</string><key>decoder</key><dict><key>key</key><string>snakeCase</string></dict>"
                + "<key>userInfo</key><dict/>\(minimalExpectation)", .invalidField, "unknown strategy \"snakeCase\""),
        .dictionary(
            "formatted-without-format",
            "<key>type</key><string>T</string><key>decoder</key><dict><key>date</key><string>formatted</string></dict>"
                + "<key>userInfo</key><dict/>\(minimalExpectation)", .missingField, "dateFormat"),
        .dictionary(
            "prefix-without-affixed",
            "<key>type</key><string>T</string><key>decoder</key><dict><key>prefix</key><string>UI</string></dict>"
                + "<key>userInfo</key><dict/>\(minimalExpectation)", .invalidField,
            "only apply to the key strategy affixed"),
    ]
}

@Suite("Malformed fixtures")
struct MalformedFixtureTests {
    @Test("A malformed fixture gives an error that names the file and the problem", arguments: MalformedFixture.all)
    func malformedFixture(_ malformed: MalformedFixture) throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write("\(malformed.name).plist", raw: malformed.content)

        let error = #expect(throws: UserInfoFixtureError.self) { try UserInfoFixture(contentsOf: url) }
        #expect(error?.code == malformed.code)
        #expect(error?.file == url)
        #expect(error?.description.contains("\(malformed.name).plist") == true)
        #expect(error?.description.contains(malformed.fragment) == true, "\(String(describing: error))")

        // In a folder, the broken file is one fixture that carries the same error, and every check throws it, so it
        // is one failing test case that cannot hide among good ones.
        let loaded = try fixtures(in: folder.directory)
        #expect(loaded.map(\.id) == ["\(malformed.name).plist"])
        #expect(loaded.first?.loadError == error)
        let verifyError = #expect(throws: UserInfoFixtureError.self) {
            try fixtureRegistry.verify(#require(loaded.first))
        }
        #expect(verifyError == error)
    }
}
