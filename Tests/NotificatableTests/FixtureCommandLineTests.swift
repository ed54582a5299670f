import Foundation
import Notificatable
import NotificatableTesting
import Testing

/// Runs `notificatable-fixtures` in-process, through the function its `main` calls.
struct ToolRun {
    var status: Int32
    var output: String
    var errorOutput: String

    init(_ arguments: String...) {
        self.init(arguments)
    }

    init(_ arguments: [String]) {
        var output = ""
        var errorOutput = ""
        status = FixtureCommandLine.run(arguments, output: { output += $0 }, errorOutput: { errorOutput += $0 })
        self.output = output
        self.errorOutput = errorOutput
    }
}

// MARK: - Scaffold goldens

/// One golden file in `ScaffoldGoldens/`: the struct that `scaffold` prints for a fixture, kept verbatim. The same
/// file is compiled into this test target, and the struct decodes its fixture.
struct ScaffoldGolden: Sendable, CustomStringConvertible {
    var fixture: String
    var typeName: String
    var check: @Sendable (UserInfoFixture) -> String?

    var description: String { typeName }

    var goldenFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("ScaffoldGoldens/\(typeName).swift")
    }

    static let all: [ScaffoldGolden] = [
        ScaffoldGolden(fixture: "system-keyboard-will-show", typeName: "ScaffoldedKeyboardInfo") {
            $0.check(ScaffoldedKeyboardInfo.self)
        },
        ScaffoldGolden(fixture: "system-audio-interruption-began", typeName: "ScaffoldedAudioInterruption") {
            $0.check(ScaffoldedAudioInterruption.self)
        },
        ScaffoldGolden(
            fixture: "system-content-size-category-did-change", typeName: "ScaffoldedContentSizeCategoryChange"
        ) { $0.check(ScaffoldedContentSizeCategoryChange.self) },
        ScaffoldGolden(fixture: "system-workspace-did-mount", typeName: "ScaffoldedWorkspaceVolume") {
            $0.check(ScaffoldedWorkspaceVolume.self)
        },
        ScaffoldGolden(fixture: "nesting-arrays-of-dictionaries", typeName: "ScaffoldedOrder") {
            $0.check(ScaffoldedOrder.self)
        },
    ]
}

@Suite("notificatable-fixtures scaffold")
struct ScaffoldTests {
    /// To accept a deliberate change of the output, run once with `UPDATE_SCAFFOLD_GOLDENS=1 swift test --filter
    /// Scaffold`, and review the diff.
    @Test("The tool prints the golden struct", arguments: ScaffoldGolden.all)
    func matchesGolden(_ golden: ScaffoldGolden) throws {
        let fixture = fixturesDirectory.appendingPathComponent("\(golden.fixture).plist").path
        let run = ToolRun("scaffold", fixture, "--name", golden.typeName)
        #expect(run.status == 0)
        #expect(run.errorOutput.isEmpty)
        if ProcessInfo.processInfo.environment["UPDATE_SCAFFOLD_GOLDENS"] == "1" {
            try Data(run.output.utf8).write(to: golden.goldenFile)
        }
        #expect(run.output == (try String(contentsOf: golden.goldenFile, encoding: .utf8)))
    }

    @Test("The golden struct decodes its fixture to the expected value", arguments: ScaffoldGolden.all)
    func goldenDecodes(_ golden: ScaffoldGolden) throws {
        let fixture = try UserInfoFixture(
            contentsOf: fixturesDirectory.appendingPathComponent("\(golden.fixture).plist"))
        #expect(golden.check(fixture) == nil)
    }

    @Test("The article From the Device to a Test shows what scaffold really prints for the device fixture")
    func articleShowsRealOutput() throws {
        let fixture = fixturesDirectory.appendingPathComponent("Device/system-ui-keyboard-will-show-1.plist").path
        let run = ToolRun("scaffold", fixture, "--name", "KeyboardWillShow")
        let article = try String(
            contentsOf: ReadmeExamplesTests.packageRoot.appendingPathComponent(
                "Sources/NotificatableTesting/Documentation.docc/FromTheDeviceToATest.md"),
            encoding: .utf8)
        #expect(run.status == 0)
        #expect(article.contains("```swift\n" + run.output + "```\n"))
    }

    @Test("Without a key strategy, shared UIKit affixes are suggested and CodingKeys keep the struct working")
    func suggestsAffixes() throws {
        let capture = FixtureCapture(userInfo: [
            "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336)),
            "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
            "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
        ])
        let source = capture.scaffold(typeName: "KeyboardChange")
        #expect(
            source.contains(
                "//     decoder.keyDecodingStrategy = .affixed(prefix: \"UIKeyboard\", suffix: \"UserInfoKey\")"))
        #expect(source.contains("    var frameEnd: Foundation.CGRect\n"))
        #expect(source.contains("    var isLocal: Swift.Bool\n"))
        #expect(source.contains("        case frameEnd = \"UIKeyboardFrameEndUserInfoKey\"\n"))
    }

    @Test("Types are inferred from the boxed values")
    func inferredTypes() {
        let capture = FixtureCapture(
            userInfo: [
                "count": NSNumber(value: 3), "ratio": NSNumber(value: 0.5), "enabled": NSNumber(value: false),
                "when": Date(timeIntervalSinceReferenceDate: 0), "link": URL(fileURLWithPath: "/tmp"),
                "origin": NSValue(point: CGPoint(x: 1, y: 2)), "id": UUID(), "blob": Data([1]),
                "swiftInt": 7, "missing": NSNull(), "mixed": [NSNumber(value: 1), NSNumber(value: 1.5)],
                "entries": [["name": "a", "size": NSNumber(value: 1)], ["name": "b", "note": "x"]],
                "default": "a keyword", "old_value": "snake", "URLString": "acronym",
                "route": ["port": "speaker"], "view": NSObject(), "words": [NSNumber(value: 1), "one"],
                "nothing": [Any](), "gaps": [NSNumber(value: 1), NSNull()],
            ], name: Notification.Name("UIApplicationDidFinishLaunchingNotification"))
        let source = capture.scaffold()
        for line in [
            "struct ApplicationDidFinishLaunching: Swift.Codable, Swift.Equatable, Swift.Sendable {",
            "    var count: Swift.Int\n",
            "    var ratio: Swift.Double\n", "    var enabled: Swift.Bool\n", "    var when: Foundation.Date\n",
            "    var link: Foundation.URL\n", "    var origin: Foundation.CGPoint\n", "    var id: Foundation.UUID\n",
            "    var blob: Foundation.Data\n", "    var swiftInt: Swift.Int\n",
            "    // var missing: <unknown>  // \"missing\" holds only NSNull, whose type cannot be inferred.\n",
            "    var mixed: [Swift.Double]\n", "    var entries: [Entry]\n", "        var name: Swift.String\n",
            "        var size: Swift.Int?\n", "        var note: Swift.String?\n", "    var `default`: Swift.String\n",
            "    var oldValue: Swift.String\n", "    var urlString: Swift.String\n", "    var route: Route\n",
            "    // var words: <unknown>  // \"words\" holds an array whose elements are values of different types.\n",
            "    // var nothing: <unknown>  // \"nothing\" holds an empty array, whose element type cannot be inferred.\n",
            "    var gaps: [Swift.Int?]\n",
            "    // var view: <unknown>  // \"view\" holds a NSObject, which the capture could not write.\n",
            "        case oldValue = \"old_value\"\n", "        case urlString = \"URLString\"\n",
            "        case `default`\n",
            // Issue 41: the handle, declared once.
            "import Notificatable\n", "extension Notificatable where Info == ApplicationDidFinishLaunching {\n",
            "    static let applicationDidFinishLaunching = Notificatable.name(\"UIApplicationDidFinishLaunching"
                + "Notification\")\n",
        ] {
            #expect(source.contains(line), "missing \(line.debugDescription) in\n\(source)")
        }
    }
}

// MARK: - check

@Suite("notificatable-fixtures check")
struct CheckCommandTests {
    @Test("The package's own fixtures are all good")
    func packageFixtures() {
        let run = ToolRun("check", fixturesDirectory.path)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.errorOutput.isEmpty)
        #expect(run.output.hasSuffix("fixture files: all good\n"))
        #expect(run.output.contains("checked \(allFixtureFiles().count) fixture files"))
    }

    /// One broken file, the line `check` must print for it, and nothing else.
    struct Broken: Sendable, CustomStringConvertible {
        var name: String
        var content: String
        var message: String
        var description: String { name }
    }

    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        """

    static func file(_ body: String) -> String { header + "<plist version=\"1.0\"><dict>\(body)</dict></plist>" }

    static let expect = "<key>expect</key><dict><key>value</key><dict/></dict>"

    static let broken: [Broken] = [
        Broken(
            name: "bad-tag.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>frame</key>"
                    + "<dict><key>$rect</key><array><real>0</real><real>0</real><real>390</real></array></dict>"
                    + "</dict>\(expect)"),
            message: "bad-tag.plist: userInfo.frame.$rect: $rect needs 4 numbers [x, y, width, height], "
                + "found an array of 3 (a real, a real, a real)"),
        Broken(
            name: "unknown-tag.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>u</key>"
                    + "<dict><key>$uri</key><string>x</string></dict></dict>\(expect)"),
            message: "unknown-tag.plist: userInfo.u.$uri: unknown tag $uri; known tags are"),
        Broken(
            name: "wrong-type.plist",
            content: file("<key>type</key><integer>3</integer><key>userInfo</key><dict/>\(expect)"),
            message: "wrong-type.plist: type: expected a string, found an integer"),
        Broken(
            name: "missing-field.plist",
            content: file("<key>type</key><string>T</string>\(expect)"),
            message: "missing-field.plist: userInfo: is missing; expected the userInfo dictionary"),
        Broken(
            name: "capture-without-type.plist",
            content: file("<key>userInfo</key><dict/>"),
            message: "capture-without-type.plist: type: is missing; expected a string"),
        Broken(
            name: "not-a-plist.plist", content: "this is not a property list",
            message: "not-a-plist.plist: is not a valid property list"),
        Broken(
            name: "bad-uuid.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>id</key>"
                    + "<dict><key>$uuid</key><string>not-a-uuid</string></dict></dict>\(expect)"),
            message: "bad-uuid.plist: userInfo.id.$uuid: $uuid needs a UUID string, found \"not-a-uuid\""),
        Broken(
            name: "bad-entries-key.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>$entries</key><array><dict>"
                    + "<key>key</key><array/><key>value</key><string>x</string></dict></array></dict>\(expect)"),
            message: "bad-entries-key.plist: userInfo.$entries[0].key: a key of $entries must be a string"),
        Broken(
            name: "date-as-string.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>when</key><dict>"
                    + "<key>$date</key><string>yesterday</string></dict></dict>\(expect)"),
            message: "date-as-string.plist: userInfo.when.$date: $date needs the seconds since 2001-01-01T00:00:00Z "
                + "as a number, found a string"),
        Broken(
            name: "placeholder-without-type.plist",
            content: file(
                "<key>type</key><string>T</string><key>userInfo</key><dict><key>v</key><dict>"
                    + "<key>$placeholder</key><dict/></dict></dict>\(expect)"),
            message: "placeholder-without-type.plist: userInfo.v.$placeholder.type: is missing; expected a string"),
    ]

    @Test("A broken file is reported with its file, key path and what was expected; exit status 1", arguments: broken)
    func brokenFile(_ broken: Broken) throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        try Data(broken.content.utf8).write(to: folder.file(broken.name))
        let good = try FixtureCapture(contentsOf: fixturesDirectory.appendingPathComponent("dates-native.plist"))
        try good.write(to: folder.file("good.plist"))

        let run = ToolRun("check", folder.url.path)
        #expect(run.status == 1)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix(folder.url.path + "/" + broken.message) == true, "\(lines)")
        #expect(lines.last == "checked 2 fixture files: 1 bad")
        #expect(run.errorOutput.isEmpty)

        // The same file named directly.
        let direct = ToolRun("check", folder.file(broken.name).path)
        #expect(direct.status == 1)
        #expect(direct.output.hasPrefix(folder.file(broken.name).path + ":"))
    }

    @Test("Every bad file is listed, a missing path is bad, and placeholders are warnings")
    func severalFiles() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        try Data("nope".utf8).write(to: folder.file("a.plist"))
        try FileManager.default.createDirectory(at: folder.file("sub"), withIntermediateDirectories: true)
        try Data("nope".utf8).write(to: folder.file("sub/b.plist"))
        try Data("not a fixture, not checked".utf8).write(to: folder.file("notes.txt"))
        var capture = FixtureCapture(userInfo: ["reason": NSNumber(value: 1), "route": NSObject()])
        capture.typeName = "Route"
        capture.expectError(.typeMismatch, at: ["route"])
        try capture.write(to: folder.file("placeholder.plist"))

        let run = ToolRun("check", folder.url.path, folder.file("missing.plist").path)
        #expect(run.status == 1)
        let reported: [String] = run.output.split(separator: "\n").dropLast().filter { !$0.contains("warning:") }
            .map { line in String(line.prefix { $0 != ":" }) }
        let expected: [String] = [
            folder.file("missing.plist").path, folder.file("a.plist").path, folder.file("sub/b.plist").path,
        ]
        #expect(reported == expected)
        #expect(
            run.output.contains(
                "placeholder.plist: userInfo.route: warning: a placeholder for a NSObject"))
        #expect(run.output.hasSuffix("checked 3 fixture files: 3 bad, 1 placeholder\n"))

        let clean = ToolRun("check", folder.file("placeholder.plist").path)
        #expect(clean.status == 0)
    }

    @Test("A folder with no fixture file in it is an error that names the folder; exit status 1")
    func folderWithoutFixtures() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        // A folder emptied by mistake, or one that holds everything but fixtures: nothing there is checked.
        try FileManager.default.createDirectory(at: folder.file("empty"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.file("notes/sub"), withIntermediateDirectories: true)
        try Data("not a fixture".utf8).write(to: folder.file("notes/sub/readme.txt"))
        try Data("hidden".utf8).write(to: folder.file("notes/.hidden.plist"))

        for name in ["empty", "notes", "empty/"] {
            let path = folder.file(name).path + (name.hasSuffix("/") ? "/" : "")
            let run = ToolRun("check", path)
            #expect(run.status == 1, "\(name)")
            #expect(
                run.output
                    == "\(path): no fixture files (.plist) in this folder or its subfolders\n"
                    + "checked 0 fixture files: 1 bad\n", "\(name)")
            #expect(run.errorOutput.isEmpty, "\(name)")
        }

        // Next to a good folder, the empty one still fails the check, and only it is named.
        let mixed = ToolRun("check", fixturesDirectory.path, folder.file("empty").path)
        #expect(mixed.status == 1)
        #expect(mixed.output.hasPrefix(folder.file("empty").path + ": no fixture files"))
        #expect(mixed.output.hasSuffix("fixture files: 1 bad\n"))
    }
}

// MARK: - show, help and usage

@Suite("notificatable-fixtures show and usage")
struct FixtureToolUsageTests {
    @Test("show prints each value with its type, and the property a key maps to")
    func show() {
        let run = ToolRun("show", fixturesDirectory.appendingPathComponent("system-keyboard-will-show.plist").path)
        #expect(run.status == 0)
        for line in [
            "type: KeyboardInfo\n",
            "decoder: keys .affixed(prefix: \"UIKeyboard\", suffix: \"UserInfoKey\")\n",
            "userInfo: [AnyHashable: Any], 7 keys\n",
            "  \"UIKeyboardAnimationCurveUserInfoKey\" (→ animationCurve): NSNumber (integer) 7\n",
            "  \"UIKeyboardAnimationDurationUserInfoKey\" (→ animationDuration): NSNumber (floating point) 0.25\n",
            "  \"UIKeyboardFrameEndUserInfoKey\" (→ frameEnd): NSValue (rect) x 0.0, y 508.0, width 390.0, height 336.0\n",
            "  \"UIKeyboardIsLocalUserInfoKey\" (→ isLocal): NSNumber (boolean) true\n",
        ] {
            #expect(run.output.contains(line), "missing \(line.debugDescription) in\n\(run.output)")
        }

        let bridged = ToolRun("show", fixturesDirectory.appendingPathComponent("nesting-bridged-containers.plist").path)
        #expect(bridged.output.contains("NSArray, "))
        #expect(bridged.output.contains("NSString \""))
    }

    @Test("Every subcommand has --help, which exits 0", arguments: [[], ["check"], ["show"], ["scaffold"]])
    func help(_ command: [String]) {
        let run = ToolRun(command + ["--help"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("usage: notificatable-fixtures \(command.first ?? "<command>")"))
        // The shell prompt must not end up on the last line of the help.
        #expect(run.output.hasSuffix(".\n") && !run.output.hasSuffix("\n\n"), "\(run.output.suffix(40))")
        #expect(run.errorOutput.isEmpty)
    }

    @Test(
        "A wrong command line exits 2 with the usage",
        arguments: [
            [], ["frobnicate"], ["check"], ["check", "--verbose", "x"], ["show"], ["show", "a", "b"], ["scaffold"],
            ["scaffold", "a.plist", "--name"], ["scaffold", "a.plist", "--name", "not a name"],
            ["scaffold", "a.plist", "--color"],
        ])
    func usageErrors(_ arguments: [String]) {
        let run = ToolRun(arguments)
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("usage: notificatable-fixtures"))
        #expect(run.errorOutput.hasSuffix(".\n") && !run.errorOutput.hasSuffix("\n\n"))
        #expect(run.output.isEmpty)
    }

    @Test("show and scaffold report an unreadable file with exit status 1")
    func unreadable() {
        for command in ["show", "scaffold"] {
            let run = ToolRun(command, "/nonexistent/fixture.plist")
            #expect(run.status == 1)
            #expect(run.errorOutput.hasPrefix("/nonexistent/fixture.plist: cannot read the file"))
        }
    }
}
