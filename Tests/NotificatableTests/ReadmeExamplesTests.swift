import Foundation
import Notificatable
import Testing

/// Keeps README.md and `ReadmeExamples.swift` in step; see the comment at the top of `ReadmeExamples.swift`.
@Suite struct ReadmeExamplesTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The ```swift blocks of a Markdown text, each as its lines without `import` lines and outer blank lines.
    static func docsSwiftBlocks(in markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil {
                if line.trimmingCharacters(in: .whitespaces) == "```swift" { current = [] }
            } else if line.trimmingCharacters(in: .whitespaces) == "```" {
                var block = current?.filter { !$0.hasPrefix("import ") } ?? []
                while block.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { block.removeFirst() }
                while block.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { block.removeLast() }
                blocks.append(block)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Whether `block` appears in `lines` as a contiguous run, every line shifted by the same indentation.
    static func docsContains(_ lines: [String], _ block: [String]) -> Bool {
        guard let first = block.first, !lines.isEmpty else { return block.isEmpty }
        for start in lines.indices where lines[start].hasSuffix(first) {
            let indent = String(lines[start].dropLast(first.count))
            guard indent.allSatisfy({ $0 == " " }), start + block.count <= lines.count else { continue }
            let matches = zip(block, lines[start..<(start + block.count)]).allSatisfy { expected, actual in
                expected.trimmingCharacters(in: .whitespaces).isEmpty
                    ? actual.trimmingCharacters(in: .whitespaces).isEmpty
                    : actual == indent + expected
            }
            if matches { return true }
        }
        return false
    }

    @Test func everyReadmeBlockIsCompiledHere() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let examples = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("Tests/NotificatableTests/ReadmeExamples.swift"),
            encoding: .utf8
        )
        let lines = examples.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blocks = Self.docsSwiftBlocks(in: readme)
        #expect(blocks.count >= 6, "README.md should show the package line and the five main uses")
        for (index, block) in blocks.enumerated() {
            let found = Self.docsContains(lines, block)
            #expect(
                found,
                "README.md's swift block #\(index + 1), starting \"\(block.first ?? "")\", is not in ReadmeExamples.swift"
            )
        }
    }

    @Test func theCheckerFindsIndentedBlocksAndRejectsEditedOnes() {
        let file = ["func f() {", "    let a = 1", "", "    print(a)", "}"]
        #expect(Self.docsContains(file, ["let a = 1", "", "print(a)"]))
        #expect(!Self.docsContains(file, ["let a = 2", "", "print(a)"]))
        #expect(!Self.docsContains(file, ["let a = 1", "print(a)"]))
        let markdown = "text\n```swift\nimport Foundation\n\nlet x = 1\n```\n```sh\nswift test\n```\n"
        #expect(Self.docsSwiftBlocks(in: markdown) == [["let x = 1"]])
    }

    @Test func examplesRun() throws {
        shipOrder(center: NotificationCenter())

        let center = NotificationCenter()
        let subscription = observeThemes(center: center)
        legacyPoster(center: center)
        subscription.dispose()
        #expect(subscription.isDisposed)

        readKeyboardChange()

        let log = SessionLog(center: center)
        userDidLogin.post("ada", center: center)
        userDidLogout.post(center: center)
        _ = log

        let manifest = docsReadmeManifest()
        #expect(manifest.dependencies.map(\.url) == ["https://github.com/notificatable/Notificatable.git"])
        #expect(manifest.targets.map(\.name) == ["MyApp", "MyAppTests"])
    }

    @Test func theSystemExampleDecodesWhatItPrints() throws {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        let change = try decoder.decode(
            KeyboardFrameChange.self,
            from: [
                "UIKeyboardFrameBeginUserInfoKey": NSValue(rect: CGRect(x: 0, y: 844, width: 390, height: 336)),
                "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 508, width: 390, height: 336)),
                "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
                "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7),
                "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
            ]
        )
        #expect(change.frameEnd.minY == 508)
        #expect(change.animationCurve == 7)
        #expect(change.isLocal == true)
    }
}
