import Foundation
import Testing

/// Keeps the package README and the DocC articles of `Sources/NotificatablePostgres/Documentation.docc` compiled
/// as printed. Every ```swift block sits right under a marker naming the file that compiles it, a path from the
/// package root:
///
/// - `<!-- snippet: Tests/NotificatablePostgresTests/Snippets/Name.swift -->`: the block is that whole file, byte
///   for byte, imports included (a reader who copies it gets a file that compiles with those imports alone);
/// - `<!-- snippet-lines: path -->`: the block's lines appear in that file as consecutive lines, indentation aside,
///   and the block has no import the file lacks (the manifest lines, which compile against a look-alike).
///
/// The files of `Snippets/` are compiled by this test target, so a snippet that stops compiling fails the build.
@Suite struct QuickStartReadmeTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let catalog = "Sources/NotificatablePostgres/Documentation.docc"
    static let snippets = "Tests/NotificatablePostgresTests/Snippets"

    /// One ```swift block: its lines, the marker's kind (`snippet` or `snippet-lines`) and path, and the heading
    /// (`## …`) it is under.
    struct Block: Equatable {
        var lines: [String]
        var kind: String?
        var file: String?
        var section: String
    }

    /// The ```swift blocks of `markdown`, each with the marker on the line right before its fence, if any, and
    /// without the indentation of its fence.
    static func swiftBlocks(in markdown: String) -> [Block] {
        var blocks: [Block] = []
        var current: [String]?
        var marker: (kind: String, file: String)?
        var section = ""
        var previous = ""
        var indentation = 0
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if line.hasPrefix("## ") { section = line }
                if trimmed == "```swift" {
                    current = []
                    marker = Self.marker(previous)
                    indentation = line.prefix { $0 == " " }.count
                }
            } else if trimmed == "```" {
                blocks.append(Block(lines: current ?? [], kind: marker?.kind, file: marker?.file, section: section))
                current = nil
            } else {
                // A block inside a list item is indented like its fence: the file has it without that indentation.
                let indent = min(indentation, line.prefix { $0 == " " }.count)
                current?.append(String(line.dropFirst(indent)))
            }
            previous = trimmed
        }
        return blocks
    }

    /// The kind and path of `<!-- snippet: path -->` or `<!-- snippet-lines: path -->`, or nil.
    static func marker(_ line: String) -> (kind: String, file: String)? {
        guard line.hasPrefix("<!-- "), line.hasSuffix(" -->") else { return nil }
        let body = line.dropFirst(5).dropLast(4)
        guard let colon = body.firstIndex(of: ":") else { return nil }
        let kind = String(body[..<colon])
        guard kind == "snippet" || kind == "snippet-lines" else { return nil }
        return (kind, body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// Whether `block` appears in `lines` as consecutive lines, whatever their indentation.
    static func contains(_ lines: [String], _ block: [String]) -> Bool {
        let trim = { (line: String) in line.trimmingCharacters(in: .whitespaces) }
        let (lines, block) = (lines.map(trim), block.map(trim))
        guard !block.isEmpty, block.count <= lines.count else { return block.isEmpty }
        return (0...(lines.count - block.count)).contains { Array(lines[$0..<($0 + block.count)]) == block }
    }

    /// Why `block` is not compiled as printed, or nil when it is.
    static func problem(with block: Block, fileText: String?) -> String? {
        guard let kind = block.kind, let file = block.file else { return "has no snippet marker" }
        guard let fileText else { return "names \(file), which does not exist" }
        let fileLines = fileText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        switch kind {
        case "snippet":
            return block.lines.joined(separator: "\n") + "\n" == fileText ? nil : "differs from \(file)"
        default:
            let imports = { (lines: [String]) in Set(lines.filter { $0.hasPrefix("import ") }) }
            guard imports(block.lines).isSubset(of: imports(fileLines)) else {
                return "imports what \(file) does not"
            }
            let body = block.lines.filter { !$0.hasPrefix("import ") }
            return contains(fileLines, body) ? nil : "is not in \(file)"
        }
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The README and every article of the catalog, as paths from the package root.
    static func documents() throws -> [String] {
        let articles = try FileManager.default.contentsOfDirectory(
            atPath: packageRoot.appendingPathComponent(catalog).path)
        return ["README.md"] + articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }

    @Test func everySwiftBlockOfTheReadmeAndTheArticlesIsCompiledAsPrinted() throws {
        let documents = try Self.documents()
        #expect(documents.count >= 8, "the README, the landing page and at least six articles")
        var used: Set<String> = []
        var count = 0
        for document in documents {
            for (index, block) in Self.swiftBlocks(in: try Self.read(document)).enumerated() {
                count += 1
                if let file = block.file { used.insert(file) }
                let problem = Self.problem(with: block, fileText: block.file.flatMap { try? Self.read($0) })
                #expect(
                    problem == nil,
                    "\(document): swift block #\(index + 1) (\(block.lines.first ?? "")) \(problem ?? "")")
            }
        }
        #expect(count >= 10, "found only \(count) swift blocks")
        // A file of Snippets/ that no document shows any more is a stale example: remove it.
        let files = try FileManager.default.contentsOfDirectory(
            atPath: Self.packageRoot.appendingPathComponent(Self.snippets).path
        ).filter { $0.hasSuffix(".swift") }.map { "\(Self.snippets)/\($0)" }
        #expect(Set(files).subtracting(used).isEmpty, "shown nowhere: \(Set(files).subtracting(used).sorted())")
    }

    @Test func theReadmeQuickStartIsTheManifestThenThreeWholeFiles() throws {
        let readme = try Self.read("README.md")
        let blocks = Self.swiftBlocks(in: readme).filter { $0.section == "## Server-side quick start" }
        #expect(blocks.map(\.kind) == ["snippet-lines", "snippet", "snippet", "snippet"])
        #expect(
            blocks.compactMap(\.file).map { ($0 as NSString).lastPathComponent } == [
                "QuickStartManifest.swift", "QuickStartNotification.swift", "QuickStartPublisher.swift",
                "QuickStartConsumer.swift",
            ])
        // The consumer's file names the handle with nothing but the integration and its server-side packages
        // imported: NotificatablePostgres re-exports Notificatable and NotificatableRelay (issue 42).
        let consumer = try Self.read("\(Self.snippets)/QuickStartConsumer.swift")
        #expect(consumer.contains("Notificatable.orderPlaced"))
        #expect(!consumer.contains("import Notificatable\n") && !consumer.contains("import NotificatableRelay"))
    }

    @Test func theReadmeStaysAFrontDoor() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 300, "README.md has \(lines) lines; move detail to an article")
        // Where a new `process` consumer starts is an option whose default may change: the README names it.
        #expect(readme.contains("startsAtOldestStored"))
    }

    @Test func theCheckerRejectsAnEditedBlockAndAMissingMarker() {
        let markdown = """
            ## Server-side quick start
            <!-- snippet: A.swift -->
            ```swift
            import A
            let x = 1
            ```
            ```swift
            let y = 2
            ```
            """
        let blocks = Self.swiftBlocks(in: markdown)
        #expect(blocks.count == 2)
        #expect(
            blocks[0]
                == Block(
                    lines: ["import A", "let x = 1"], kind: "snippet", file: "A.swift",
                    section: "## Server-side quick start"))
        #expect(Self.problem(with: blocks[0], fileText: "import A\nlet x = 1\n") == nil)
        #expect(Self.problem(with: blocks[0], fileText: "import A\nlet x = 2\n") != nil)
        #expect(Self.problem(with: blocks[0], fileText: "let x = 1\n") != nil, "the imports are part of the file")
        #expect(Self.problem(with: blocks[0], fileText: nil) != nil)
        #expect(Self.problem(with: blocks[1], fileText: "let y = 2\n") != nil, "a block without a marker")
        let item = "- item:\n\n  <!-- snippet: B.swift -->\n  ```swift\n  f {\n      g()\n  }\n  ```\n"
        let indented = Self.swiftBlocks(in: item)
        #expect(indented.map(\.lines) == [["f {", "    g()", "}"]])
        let lines = Block(lines: ["import B", "let x = 1"], kind: "snippet-lines", file: "A.swift", section: "")
        #expect(Self.problem(with: lines, fileText: "import A\nfunc f() {\n    let x = 1\n}\n") != nil)
        #expect(Self.problem(with: lines, fileText: "import B\nfunc f() {\n    let x = 1\n}\n") == nil)
    }
}
