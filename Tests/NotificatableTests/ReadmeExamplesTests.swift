import Foundation
import Notificatable
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
        #expect(blocks.count >= 6, "README.md should show the package line and one example per product")
        // The escape hatch is for the durable-delivery block alone; see the top of ReadmeExamples.swift.
        #expect(blocks.filter { $0.file != nil }.count <= 1, "only the durable block may live outside \(here)")
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

    /// Issue 28: the README is a front door of at most 350 lines, and its first screen sends server-side readers to
    /// the PostgreSQL integration's README (the depth is in the DocC articles and that README).
    @Test func theReadmeIsAFrontDoor() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 351, "README.md has \(lines.count - 1) lines; the front door holds at most 350")
        let firstScreen = lines.prefix(20).joined(separator: "\n")
        #expect(firstScreen.contains("(Integrations/NotificatablePostgres/README.md)"))
        let integration = Self.packageRoot.appendingPathComponent("Integrations/NotificatablePostgres/README.md")
        #expect(FileManager.default.fileExists(atPath: integration.path))
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

        let manifest = docsReadmeManifest()
        #expect(manifest.dependencies.map(\.url) == ["https://github.com/notificatable/Notificatable.git"])
        #expect(manifest.targets.map(\.name) == ["MyApp", "MyAppTests"])
        let products = manifest.targets.flatMap(\.dependencies).compactMap { dependency -> String? in
            if case .product(let name, "Notificatable") = dependency { return name } else { return nil }
        }
        #expect(Set(products) == ["Notificatable", "NotificatableSystem", "NotificatableTesting"])
    }

    @Test func theRelayExampleCarriesPostsUntilStopped() {
        let warehouse = NotificationCenter()
        let storefront = NotificationCenter()
        let bag = DisposeBag()
        defer { bag.dispose() }
        let relays = join(warehouse: warehouse, storefront: storefront, bag: bag)
        let heard = ValueRecorder<Int>()
        Notificatable.orderDidShip.subscribe(center: storefront) { note in heard.append(note.userInfo.id) }.store(
            in: bag)
        Notificatable.orderDidShip.post(Order(id: 18, total: 1), center: warehouse)
        relays.forEach { $0.stop() }
        Notificatable.orderDidShip.post(Order(id: 19, total: 1), center: warehouse)
        #expect(heard.values == [18])
    }
}
