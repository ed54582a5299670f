import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// Every `.plist` under `Fixtures/`, subfolders included, sorted by path.
func allFixtureFiles(under folder: URL = fixturesDirectory) -> [URL] {
    let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    var files: [URL] = []
    while let url = enumerator?.nextObject() as? URL {
        if url.pathExtension == "plist" { files.append(url) }
    }
    return files.sorted { $0.path < $1.path }
}

/// A fresh temporary folder for one test.
struct CaptureFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("NotificatableCapture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

// MARK: - Deep comparison

/// Compares two `userInfo` trees exactly: the dynamic type of every value (so a Swift `Int` is not an `NSNumber`, and
/// an `NSString` is not a `String`), the `objCType` of every `NSNumber`, the kind and content of every `NSValue`, and
/// the type of every key. It is written independently of the capture code, so the round trip cannot check itself.
/// Returns the first difference, or `nil`.
func deepDifference(_ left: Any, _ right: Any, at path: String = "userInfo") -> String? {
    let leftType = type(of: left)
    let rightType = type(of: right)
    guard ObjectIdentifier(leftType) == ObjectIdentifier(rightType) else {
        return "\(path): \(leftType) became \(rightType)"
    }
    if let left = left as? NSNumber, leftType is NSNumber.Type, let right = right as? NSNumber {
        let leftEncoding = String(cString: left.objCType)
        let rightEncoding = String(cString: right.objCType)
        guard leftEncoding == rightEncoding else { return "\(path): NSNumber \(leftEncoding) became \(rightEncoding)" }
        if left.doubleValue.isNaN && right.doubleValue.isNaN { return nil }
        return left.isEqual(right) ? nil : "\(path): \(left) became \(right)"
    }
    if let left = left as? NSValue, leftType is NSValue.Type, let right = right as? NSValue {
        let leftContent = boxedGeometry(left)
        let rightContent = boxedGeometry(right)
        return leftContent == rightContent ? nil : "\(path): NSValue \(leftContent) became \(rightContent)"
    }
    if let left = left as? [Any], !(leftType is AnyClass), let right = right as? [Any] {
        return arrayDifference(left, right, path)
    }
    if let left = left as? NSArray, leftType is NSArray.Type, let right = right as? NSArray {
        return arrayDifference(Array(left), Array(right), path)
    }
    if let left = left as? NSDictionary, leftType is NSDictionary.Type, let right = right as? NSDictionary {
        return dictionaryDifference(anyHashableCopy(left), anyHashableCopy(right), path)
    }
    if let left = left as? [AnyHashable: Any], let right = right as? [AnyHashable: Any] {
        return dictionaryDifference(left, right, path)
    }
    return scalarDifference(left, right, path)
}

private func anyHashableCopy(_ dictionary: NSDictionary) -> [AnyHashable: Any] {
    var copy: [AnyHashable: Any] = [:]
    for (key, value) in dictionary {
        if let key = key as? AnyHashable { copy[key] = value }
    }
    return copy
}

private func arrayDifference(_ left: [Any], _ right: [Any], _ path: String) -> String? {
    guard left.count == right.count else { return "\(path): \(left.count) elements became \(right.count)" }
    for index in left.indices {
        if let difference = deepDifference(left[index], right[index], at: "\(path)[\(index)]") { return difference }
    }
    return nil
}

private func dictionaryDifference(_ left: [AnyHashable: Any], _ right: [AnyHashable: Any], _ path: String) -> String? {
    guard Set(left.keys) == Set(right.keys) else {
        return "\(path): keys \(left.keys.map { "\($0)" }.sorted()) became \(right.keys.map { "\($0)" }.sorted())"
    }
    for (key, value) in left {
        guard let rightKey = right.keys.first(where: { $0 == key }), let other = right[key] else {
            return "\(path): lost \(key)"
        }
        guard ObjectIdentifier(type(of: key.base)) == ObjectIdentifier(type(of: rightKey.base)) else {
            return "\(path): key \(key) of type \(type(of: key.base)) became \(type(of: rightKey.base))"
        }
        if let difference = deepDifference(value, other, at: "\(path).\(key.base)") { return difference }
    }
    return nil
}

private func scalarDifference(_ left: Any, _ right: Any, _ path: String) -> String? {
    let same: Bool
    switch (left, right) {
    case (let left as Date, let right as Date):
        same = left.timeIntervalSinceReferenceDate.bitPattern == right.timeIntervalSinceReferenceDate.bitPattern
    case (let left as URL, let right as URL): same = left.absoluteString == right.absoluteString
    case (let left as String, let right as String): same = left == right
    case (let left as Data, let right as Data): same = left == right
    case (let left as UUID, let right as UUID): same = left == right
    case (let left as Decimal, let right as Decimal): same = left == right
    case (is NSNull, is NSNull): same = true
    default:
        // Swift numbers, compared by their exact text so that NaN equals NaN and -0.0 differs from 0.
        same = String(describing: left) == String(describing: right)
    }
    return same ? nil : "\(path): \(left) became \(right)"
}

/// What an `NSValue` holds: its boxed struct's type and content. On Linux the struct is read by reflection, which
/// does not leak as `objCType` there does.
func boxedGeometry(_ value: NSValue) -> String {
    #if canImport(Darwin) || NOTIFICATABLE_APPLE_CHECK
    return "\(String(cString: value.objCType)) \(value)"
    #else
    guard let boxed = Mirror(reflecting: value).children.first(where: { $0.label == "_value" })?.value else {
        return "\(String(cString: value.objCType)) \(value)"
    }
    return "\(type(of: boxed)) \(boxed)"
    #endif
}

/// The plist objects an expectation holds, so two encodings of the same value compare equal.
func expectationDifference(_ left: UserInfoFixture.Expectation, _ right: UserInfoFixture.Expectation) -> String? {
    switch (left, right) {
    case (.value(let left), .value(let right)):
        guard let leftObject = try? PropertyListSerialization.propertyList(from: left, options: [], format: nil),
            let rightObject = try? PropertyListSerialization.propertyList(from: right, options: [], format: nil)
        else { return "expect.value is not a property list" }
        return deepDifference(leftObject, rightObject, at: "expect.value")
    case (.error(let left), .error(let right)):
        return left == right ? nil : "expect.error \(left) became \(right)"
    default:
        return "expect \(left) became \(right)"
    }
}

// MARK: - The round trip

@Suite("Fixture capture")
struct FixtureCaptureTests {
    @Test("The round trip covers every fixture")
    func roundTripCoversEverything() {
        let files = allFixtureFiles()
        #expect(files.count >= 130)
        #expect(files.contains { $0.path.contains("/Examples/") })
    }

    /// Load, capture the loaded `userInfo`, write the capture, load it again: everything is the same, down to the
    /// `NSNumber` type, the `NSValue` kind and the type of each key.
    @Test("Capture loses nothing: load, capture, load gives the same fixture", arguments: allFixtureFiles())
    func roundTrip(_ file: URL) throws {
        let original = try UserInfoFixture(contentsOf: file)
        var capture = FixtureCapture(userInfo: original.userInfo)
        #expect(capture.notes.isEmpty, "\(capture.notes)")
        capture.summary = original.summary
        capture.typeName = original.typeName
        capture.decoderConfiguration = original.decoderConfiguration
        capture.expectation = original.expectation

        let folder = try CaptureFolder()
        defer { folder.remove() }
        let copy = folder.file(file.lastPathComponent)
        try capture.write(to: copy)
        let reloaded = try UserInfoFixture(contentsOf: copy)

        #expect(deepDifference(original.userInfo, reloaded.userInfo) == nil)
        #expect(reloaded.summary == original.summary)
        #expect(reloaded.typeName == original.typeName)
        #expect(reloaded.decoderConfiguration == original.decoderConfiguration)
        #expect(expectationDifference(original.expectation, reloaded.expectation) == nil)
        // The copy is a working test case too.
        // Fixtures of types registered elsewhere (Fixtures/Keyboard, decoded by the DocC examples) are compared
        // above; those of this target's types must also still pass.
        if fixtureRegistry.typeNames.contains(reloaded.typeName) {
            #expect(try fixtureRegistry.check(reloaded) == nil)
        }
        // And writing it again gives the same text: captures are stable.
        var again = FixtureCapture(userInfo: reloaded.userInfo)
        again.summary = reloaded.summary
        again.typeName = reloaded.typeName
        again.decoderConfiguration = reloaded.decoderConfiguration
        again.expectation = reloaded.expectation
        #expect(again.propertyList == capture.propertyList)
    }

    @Test("The deep comparison sees NSNumber types, NSValue kinds, key types and bridging")
    func deepComparisonIsStrict() {
        let rect = NSValue(rect: CGRect(x: 0, y: 0, width: 1, height: 1))
        #expect(deepDifference(["a": NSNumber(value: 1)], ["a": NSNumber(value: 1.0)]) != nil)
        #expect(deepDifference(["a": NSNumber(value: true)], ["a": NSNumber(value: 1)]) != nil)
        #expect(deepDifference(["a": NSNumber(value: 1)], ["a": 1]) != nil)
        #expect(deepDifference(["a": rect], ["a": NSValue(size: CGSize(width: 1, height: 1))]) != nil)
        #expect(deepDifference(["a": rect], ["a": NSValue(rect: CGRect(x: 0, y: 0, width: 1, height: 2))]) != nil)
        #expect(deepDifference(["a": "x"], ["a": NSString(string: "x")]) != nil)
        #expect(deepDifference([1: "x"] as [AnyHashable: Any], ["1": "x"]) != nil)
        #expect(deepDifference(["a": [1, 2]], ["a": NSArray(array: [1, 2])]) != nil)
        #expect(deepDifference(["a": Double.nan], ["a": Double.nan]) == nil)
        #expect(deepDifference(["a": rect], ["a": NSValue(rect: CGRect(x: 0, y: 0, width: 1, height: 1))]) == nil)
    }

    // MARK: - Live values

    /// A userInfo with every kind of value a notification carries, boxed in every way the capture distinguishes.
    static func liveUserInfo() -> [AnyHashable: Any] {
        [
            "rect": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336.5)),
            "point": NSValue(point: CGPoint(x: 195, y: -0.25)),
            "size": NSValue(size: CGSize(width: 3, height: 4)),
            "range": NSValue(range: NSRange(location: 2, length: 5)),
            "boolNumber": NSNumber(value: true),
            "intNumber": NSNumber(value: 7),
            "doubleNumber": NSNumber(value: 0.25),
            "nanNumber": NSNumber(value: Double.nan),
            "hugeNumber": NSNumber(value: UInt64.max),
            "swiftInt": 42,
            "swiftUInt8": UInt8(200),
            "swiftUInt64": UInt64.max,
            "swiftBool": false,
            "swiftDouble": 1.0e300,
            "swiftFloat": Float(0.1),
            "swiftCGFloat": CGFloat(2.5),
            "decimal": Decimal(string: "9.99") ?? Decimal(),
            "date": Date(timeIntervalSinceReferenceDate: 785_000_000.125),
            "wholeDate": Date(timeIntervalSinceReferenceDate: 785_000_000),
            "data": Data([0, 1, 2, 255]),
            "url": URL(string: "https://example.com/a?b=c&d=e") ?? URL(fileURLWithPath: "/"),
            "nsurl": NSURL(fileURLWithPath: "/tmp/x"),
            "uuid": UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
            "nsuuid": NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? NSUUID(),
            "null": NSNull(),
            "string": "tab\tcr\rlt<amp&",
            "nsstring": NSString(string: "bridged"),
            "array": [NSNumber(value: 1), "two", [3] as [Any]] as [Any],
            "nsarray": NSArray(array: [NSNumber(value: 1.5)]),
            "nested": ["inner": ["deep": NSNumber(value: false)] as [String: Any]] as [String: Any],
            "nsdictionary": NSDictionary(dictionary: ["k": NSNumber(value: 1)]),
            "intKeyed": [1: "one", -2: "minus two"] as [AnyHashable: Any],
            "mixedKeys": ["name": "a", 3: "b"] as [AnyHashable: Any],
            "$dollar": "a key that starts with $",
        ]
    }

    @Test("A live userInfo is written exactly as it was boxed")
    func liveValuesRoundTrip() throws {
        let userInfo = Self.liveUserInfo()
        var withNarrowNumber = userInfo
        withNarrowNumber["int32Number"] = NSNumber(value: Int32(-3))
        let capture = FixtureCapture(userInfo: withNarrowNumber)
        // An NSNumber keeps its kind (integer, here), not its width: a property list has one integer type.
        let narrow = try #require(capture.userInfo["int32Number"] as? NSNumber)
        #expect(narrow == NSNumber(value: -3) && String(cString: narrow.objCType) == "q")
        #expect(capture.notes.isEmpty, "\(capture.notes)")
        var captured = capture.userInfo
        captured["int32Number"] = nil
        #expect(deepDifference(userInfo, captured) == nil)

        let folder = try CaptureFolder()
        defer { folder.remove() }
        let file = folder.file("live.plist")
        try capture.write(to: file)
        var reread = try FixtureCapture(contentsOf: file).userInfo
        reread["int32Number"] = nil
        #expect(deepDifference(userInfo, reread) == nil)

        let text = capture.propertyList
        #expect(
            text.contains(
                "<dict><key>$rect</key><array><real>0</real><real>508</real><real>390</real><real>336.5</real>"))
        #expect(text.contains("<key>int32Number</key><integer>-3</integer>"))
        #expect(text.contains("<key>boolNumber</key><true/>"))
        #expect(text.contains("<key>swiftBool</key><dict><key>$bool</key><false/></dict>"))
        #expect(text.contains("<key>swiftUInt64</key><dict><key>$uint64</key><string>18446744073709551615</string>"))
        #expect(text.contains("<key>date</key><dict><key>$date</key><real>785000000.125</real></dict>"))
        #expect(text.contains("<key>wholeDate</key><date>2025-11-16T15:33:20Z</date>"))
        #expect(text.contains("<key>$$dollar</key>"))
        #expect(text.contains("tab\tcr&#13;lt&lt;amp&amp;"))
    }

    @Test("A value no fixture can hold becomes a reported placeholder, which decodes as a type mismatch")
    func placeholder() throws {
        final class RouteDescription: CustomStringConvertible {
            var description: String { "<RouteDescription: speaker>" }
        }
        let capture = FixtureCapture(userInfo: [
            "reason": NSNumber(value: 2), "previousRoute": RouteDescription(),
            "list": [NSNumber(value: 1), RouteDescription()] as [Any],
        ])
        #expect(capture.notes.map(\.location) == ["userInfo.list[1]", "userInfo.previousRoute"].sorted())
        #expect(capture.notes.allSatisfy { $0.isPlaceholder })
        #expect(capture.notes.first?.description.contains("RouteDescription has no fixture form") == true)
        #expect(capture.propertyList.contains("<key>$placeholder</key>"))
        #expect(capture.propertyList.contains("<string>&lt;RouteDescription: speaker&gt;</string>"))

        struct Route: Decodable {
            var reason: Int
            var previousRoute: String
        }
        struct Reason: Decodable { var reason: Int }
        let userInfo = capture.userInfo
        #expect(try UserInfoDecoder().decode(Reason.self, from: userInfo).reason == 2)
        let error = #expect(throws: DecodingError.self) { try UserInfoDecoder().decode(Route.self, from: userInfo) }
        guard case .typeMismatch(_, let context)? = error else {
            Issue.record("expected a typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["previousRoute"])
    }

    @Test("A notification's name and object are written; a capture without type and expect is not yet a test")
    func notificationAndIncompleteCapture() throws {
        final class Sender: CustomStringConvertible {
            var description: String { "the sender" }
        }
        let notification = Notification(
            name: Notification.Name("UIKeyboardWillShowNotification"), object: Sender(),
            userInfo: ["UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25)])
        let capture = FixtureCapture(notification)
        #expect(capture.notificationName == "UIKeyboardWillShowNotification")
        #expect(capture.objectDescription == "Sender: the sender")
        #expect(capture.propertyList.contains("A capture, not yet a test"))

        let folder = try CaptureFolder()
        defer { folder.remove() }
        let file = folder.file("capture.plist")
        try capture.write(to: file)
        let error = #expect(throws: UserInfoFixtureError.self) { try UserInfoFixture(contentsOf: file) }
        #expect(error?.code == .missingField)
        #expect(error?.location == "type")

        var complete = try FixtureCapture(contentsOf: file)
        #expect(complete.notificationName == "UIKeyboardWillShowNotification")
        #expect(complete.objectDescription == "Sender: the sender")
        struct Duration: Codable, Equatable { var animationDuration: Double }
        complete.typeName = "Duration"
        complete.decoderConfiguration.keyStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        try complete.expect(Duration(animationDuration: 0.25))
        try complete.write(to: file)
        let fixture = try UserInfoFixture(contentsOf: file)
        #expect(fixture.notificationName == "UIKeyboardWillShowNotification")
        #expect(fixture.check(Duration.self) == nil)
        #expect(!complete.propertyList.contains("not yet a test"))

        complete.expectError(.keyNotFound, at: ["frameEnd"])
        try complete.write(to: file)
        #expect(
            try UserInfoFixture(contentsOf: file).expectation
                == .error(.init(kind: .keyNotFound, codingPath: ["frameEnd"])))
    }

    @Test("The file layout is the hand-written one")
    func layout() {
        var capture = FixtureCapture(
            userInfo: [
                "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336)),
                "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7),
                "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
            ], name: Notification.Name("UIKeyboardWillShowNotification"))
        capture.summary = "Keyboard will show."
        capture.typeName = "KeyboardInfo"
        capture.decoderConfiguration.keyStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        capture.expectError(.keyNotFound, at: ["frameBegin"])
        #expect(
            capture.propertyList == """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>description</key>
                \t<string>Keyboard will show.</string>
                \t<key>name</key><string>UIKeyboardWillShowNotification</string>
                \t<key>type</key><string>KeyboardInfo</string>
                \t<key>decoder</key>
                \t<dict>
                \t\t<key>key</key><string>affixed</string>
                \t\t<key>prefix</key><string>UIKeyboard</string>
                \t\t<key>suffix</key><string>UserInfoKey</string>
                \t</dict>
                \t<key>userInfo</key>
                \t<dict>
                \t\t<key>UIKeyboardAnimationCurveUserInfoKey</key><integer>7</integer>
                \t\t<key>UIKeyboardFrameEndUserInfoKey</key>
                \t\t<dict><key>$rect</key><array><real>0</real><real>508</real><real>390</real><real>336</real></array></dict>
                \t\t<key>UIKeyboardIsLocalUserInfoKey</key><true/>
                \t</dict>
                \t<key>expect</key>
                \t<dict>
                \t\t<key>error</key>
                \t\t<dict>
                \t\t\t<key>kind</key><string>keyNotFound</string>
                \t\t\t<key>codingPath</key><array><string>frameBegin</string></array>
                \t\t</dict>
                \t</dict>
                </dict>
                </plist>

                """)
    }

    @Test("An Optional stored in the userInfo is unwrapped, and nil is written as NSNull with a note")
    func optionals() {
        let present: Int? = 3
        let absent: String? = nil
        let capture = FixtureCapture(userInfo: ["present": present as Any, "absent": absent as Any])
        #expect(capture.notes.map(\.description) == ["userInfo.absent: an Optional holding nil; written as NSNull"])
        let expected: [AnyHashable: Any] = ["present": 3, "absent": NSNull()]
        #expect(deepDifference(capture.userInfo, expected) == nil)
    }

    @Test("A typed Swift collection is written as a collection of Any, and that is reported")
    func typedCollections() {
        let capture = FixtureCapture(userInfo: ["ids": [1, 2], "counts": ["a": 1] as [String: Int]])
        #expect(capture.notes.map(\.location) == ["userInfo.counts", "userInfo.ids"])
        #expect(
            capture.notes.last?.message
                == "a Array<Int>; written as an [Any] of its elements, as a fixture's arrays are")
        let expected: [AnyHashable: Any] = ["ids": [1, 2] as [Any], "counts": ["a": 1] as [String: Any]]
        #expect(deepDifference(capture.userInfo, expected) == nil)
    }

    @Test("A self-containing dictionary is cut off with a placeholder instead of recursing for ever")
    func selfContaining() {
        let dictionary = NSMutableDictionary()
        dictionary["self"] = dictionary
        let capture = FixtureCapture(userInfo: ["loop": dictionary])
        #expect(capture.notes.count == 1)
        #expect(capture.notes.first?.message.contains("nested deeper than") == true)
        dictionary.removeAllObjects()  // breaks the cycle, so the dictionary is released
    }
}

// MARK: - Recording to a folder

@Suite("Fixture recorder")
struct FixtureRecorderTests {
    @Test(
        "File names are readable and stable",
        arguments: [
            ("UIKeyboardWillShowNotification", "ui-keyboard-will-show"),
            ("AVAudioSessionInterruptionNotification", "av-audio-session-interruption"),
            (
                "NSUbiquitousKeyValueStoreDidChangeExternallyNotification",
                "ns-ubiquitous-key-value-store-did-change-externally"
            ),
            ("com.example.didSync", "com-example-did-sync"),
            ("UserDidLogin", "user-did-login"),
            ("Notification", "notification"),
            ("", "notification"),
        ])
    func fileStem(_ name: String, _ stem: String) {
        #expect(FixtureRecorder.fileStem(for: name) == stem)
    }

    @Test("Each posted notification of a recorded name becomes a numbered fixture file")
    func recordsToFolder() throws {
        let center = NotificationCenter()
        let folder = try CaptureFolder()
        defer { folder.remove() }
        // A file from an earlier session is kept: numbering continues after it.
        try Data("kept".utf8).write(to: folder.file("system-ui-keyboard-will-show-1.plist"))

        let keyboard = Notification.Name("UIKeyboardWillShowNotification")
        let audio = Notification.Name("AVAudioSessionInterruptionNotification")
        let recorder = try FixtureRecorder(
            names: [keyboard, audio], folder: folder.url, center: center, filePrefix: "system-")
        center.post(name: keyboard, object: nil, userInfo: ["UIKeyboardIsLocalUserInfoKey": NSNumber(value: true)])
        center.post(name: audio, object: nil, userInfo: ["AVAudioSessionInterruptionTypeKey": NSNumber(value: 1)])
        center.post(name: Notification.Name("Unrecorded"), object: nil, userInfo: ["a": 1])
        center.post(name: keyboard, object: nil, userInfo: ["view": UnrecordableView()])
        recorder.stop()
        center.post(name: keyboard, object: nil, userInfo: nil)

        #expect(
            recorder.files.map(\.lastPathComponent) == [
                "system-ui-keyboard-will-show-2.plist", "system-av-audio-session-interruption-1.plist",
                "system-ui-keyboard-will-show-3.plist",
            ])
        #expect(recorder.errors.isEmpty)
        #expect(recorder.notes.count == 1)
        #expect(recorder.notes.first?.hasPrefix("system-ui-keyboard-will-show-3.plist: userInfo.view: ") == true)
        #expect(try String(contentsOf: folder.file("system-ui-keyboard-will-show-1.plist"), encoding: .utf8) == "kept")

        let first = try FixtureCapture(contentsOf: folder.file("system-ui-keyboard-will-show-2.plist"))
        #expect(first.notificationName == keyboard.rawValue)
        let expected: [AnyHashable: Any] = ["UIKeyboardIsLocalUserInfoKey": NSNumber(value: true)]
        #expect(deepDifference(first.userInfo, expected) == nil)
    }

    @Test("A file that cannot be written is reported")
    func unwritableFolder() throws {
        let center = NotificationCenter()
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let name = Notification.Name("SomethingHappened")
        let recorder = try FixtureRecorder(names: [name], folder: folder.url, center: center)
        try FileManager.default.removeItem(at: folder.url)
        center.post(name: name, object: nil, userInfo: nil)
        #expect(recorder.files.isEmpty)
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.first?.contains("something-happened-1.plist") == true)
    }
}

private final class UnrecordableView: @unchecked Sendable {}

/// Numbers that look like a Unix time, which a `Date` property with the default strategy would read as seconds since
/// 2001 without an error (1,700,000,000 lands in 2054), are pointed out by `show` and `scaffold`.
@Suite struct FixtureTimestampNoteTests {
    @Test func showAndScaffoldPointOutAUnixTime() {
        let capture = FixtureCapture(
            userInfo: [
                "createdAt": 1_700_000_000.0, "sentAtMillis": NSNumber(value: Int64(1_700_000_000_123)),
                "count": 42, "userID": 12_345,
            ],
            name: Notification.Name("OrderDidShip"))
        let notes = capture.timestampNotes
        #expect(notes.map(\.location).sorted() == ["userInfo.createdAt", "userInfo.sentAtMillis"])
        let seconds = notes.first { $0.location == "userInfo.createdAt" }
        #expect(seconds?.message.contains("2023-11-14T22:13:20Z") == true)
        #expect(seconds?.message.contains(".secondsSince1970") == true)
        #expect(seconds?.message.contains("2054-") == true)
        #expect(
            notes.first { $0.location == "userInfo.sentAtMillis" }?.message.contains(".millisecondsSince1970") == true)
        #expect(capture.inspection.contains("note: userInfo.createdAt: 1700000000.0 looks like a Unix time"))
        let source = capture.scaffold(typeName: "OrderShipped")
        #expect(source.contains("// userInfo.createdAt: 1700000000.0 looks like a Unix time (2023-11-14T22:13:20Z)"))
    }

    @Test func noNoteWhenTheDecoderReadsUnixTimesOrTheNumberIsNotOne() {
        var capture = FixtureCapture(userInfo: ["createdAt": 1_700_000_000.0])
        capture.decoderConfiguration.dateStrategy = .secondsSince1970
        #expect(capture.timestampNotes.isEmpty)
        #expect(FixtureCapture(userInfo: ["count": 42, "ratio": 0.5, "big": 9e15]).timestampNotes.isEmpty)
    }
}

/// A fixture error names its file relative to the current directory (the package's folder under `swift test`), as
/// the mismatch messages name theirs, not by its absolute path.
@Suite struct FixtureErrorPathTests {
    @Test func theFileIsNamedRelativeToTheCurrentDirectory() {
        let directory = FileManager.default.currentDirectoryPath
        let inside = URL(fileURLWithPath: directory).appendingPathComponent("Fixtures/Examples/broken.plist")
        let error = UserInfoFixtureError(.invalidField, file: inside, location: "userInfo.count", message: "bad")
        #expect(error.description == "Fixtures/Examples/broken.plist: userInfo.count: bad")
        let outside = URL(fileURLWithPath: "/nonexistent-root/broken.plist")
        #expect(
            UserInfoFixtureError(.invalidField, file: outside, message: "bad").description
                == "/nonexistent-root/broken.plist: bad")
    }
}
