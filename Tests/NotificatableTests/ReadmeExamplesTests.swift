import Foundation
import Notificatable
import NotificatableSystem
import Testing

/// Keeps README.md and `ReadmeExamples.swift` in step; see the comment at the top of `ReadmeExamples.swift`.
@Suite struct ReadmeExamplesTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A ```swift block of a Markdown text: its lines without `import` lines and outer blank lines, and the file
    /// that must hold it, if a `<!-- readme-example: path -->` comment on the line before its fence names one.
    struct DocsBlock: Equatable {
        var lines: [String]
        var file: String?
    }

    static let docsFileMarker = "<!-- readme-example:"

    /// The ```swift blocks of a Markdown text, each as its lines without `import` lines and outer blank lines.
    static func docsSwiftBlocks(in markdown: String) -> [[String]] {
        docsSwiftBlocksWithFiles(in: markdown).map(\.lines)
    }

    /// The ```swift blocks of a Markdown text, with the file named by a marker comment right before the fence.
    static func docsSwiftBlocksWithFiles(in markdown: String) -> [DocsBlock] {
        var blocks: [DocsBlock] = []
        var current: [String]?
        var file: String?
        var previous = ""
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" {
                    current = []
                    file = docsMarkedFile(previous)
                }
            } else if trimmed == "```" {
                var block = current?.filter { !$0.hasPrefix("import ") } ?? []
                while block.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { block.removeFirst() }
                while block.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { block.removeLast() }
                blocks.append(DocsBlock(lines: block, file: file))
                current = nil
            } else {
                current?.append(line)
            }
            previous = trimmed
        }
        return blocks
    }

    /// The path in `<!-- readme-example: path -->`, or `nil` if `line` is not such a comment.
    static func docsMarkedFile(_ line: String) -> String? {
        guard line.hasPrefix(docsFileMarker), line.hasSuffix("-->") else { return nil }
        let path = line.dropFirst(docsFileMarker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
        return path.isEmpty ? nil : path
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
        let here = "Tests/NotificatableTests/ReadmeExamples.swift"
        let blocks = Self.docsSwiftBlocksWithFiles(in: readme)
        #expect(blocks.count >= 6, "README.md should show the package line and the five main uses")
        // The escape hatch is for the Combine block alone; see the top of ReadmeExamples.swift.
        #expect(blocks.filter { $0.file != nil }.count <= 1, "only the Combine block may live outside \(here)")
        for (index, block) in blocks.enumerated() {
            let path = block.file ?? here
            let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(path), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let found = Self.docsContains(lines, block.lines)
            #expect(
                found,
                "README.md's swift block #\(index + 1), starting \"\(block.lines.first ?? "")\", is not in \(path)"
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
        let marked =
            "<!-- readme-example: Tests/Other.swift -->\n```swift\nlet y = 2\n```\n\n```swift\nlet z = 3\n```\n"
        #expect(
            Self.docsSwiftBlocksWithFiles(in: marked) == [
                DocsBlock(lines: ["let y = 2"], file: "Tests/Other.swift"), DocsBlock(lines: ["let z = 3"], file: nil),
            ]
        )
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
        let products = manifest.targets.flatMap(\.dependencies).compactMap { dependency -> String? in
            if case .product(let name, "Notificatable") = dependency { return name } else { return nil }
        }
        #expect(Set(products) == ["Notificatable", "NotificatableSystem", "NotificatableTesting"])
    }

    @Test func theMoreExamplesRun() async throws {
        let center = NotificationCenter()

        let keyboard = followKeyboard(center: center)
        SystemNotifications.keyboardWillChangeFrame.post(
            KeyboardNotificationInfo(frameBegin: .zero, frameEnd: CGRect(x: 0, y: 508, width: 390, height: 336)),
            center: center
        )
        keyboard.dispose()

        let banner = WelcomeBanner(center: center)
        let chat = ChatScreen(center: center)
        userDidLogin.post("ada", center: center)
        #expect(banner.message == "Welcome back, ada")
        chat.close()

        let bar = ProgressBar()
        reportProgress(0.5)
        #expect(bar.fraction == 0.5)

        checkSubscription(center: center)
        deliveryOrder(center: center)

        let warehouse = NotificationCenter()
        let storefront = NotificationCenter()
        let relays = join(warehouse: warehouse, storefront: storefront)
        let heard = ValueRecorder<Int>()
        Notificatable.orderDidShip.subscribe(center: storefront) { note in heard.append(note.userInfo.id) }
        Notificatable.orderDidShip.post(Order(id: 18, total: 1), center: warehouse)
        relays.forEach { $0.stop() }
        Notificatable.orderDidShip.post(Order(id: 19, total: 1), center: warehouse)
        #expect(heard.values == [18])

        // The async sequence: the loop receives a post made after it has started, and cancelling ends it.
        let watcher = watchLogins(center: center)
        announceLogin("grace", center: center)
        try await Task.sleep(nanoseconds: 50_000_000)
        watcher.cancel()
        await watcher.value

        let label = await GreetingLabel(center: center)
        await MainActor.run { userDidLogin.post("ada", center: center) }
        #expect(await label.text == "Hello, ada")
        _ = traceNotificationsInDebugBuilds  // compiled, not run: the tracer is global, and other suites test it
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
