import Foundation
import Testing

/// Keeps the DocC articles and the `DocCExamples` test target in step; see the comment at the top of
/// `Tests/DocCExamples/DocCExamples.swift`. The mechanism is the README's (`ReadmeExamplesTests`), over every
/// article of the three catalogs.
@Suite struct DocCExamplesTests {
    static let root = ReadmeExamplesTests.packageRoot

    /// Every Markdown file of every DocC catalog under `Sources/`, as paths from the package root.
    static func articles() throws -> [String] {
        let sources = root.appendingPathComponent("Sources")
        var paths: [String] = []
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            let path = url.path
            if path.hasSuffix(".md"), path.contains(".docc/") {
                paths.append(String(path.dropFirst(root.path.count + 1)))
            }
        }
        return paths.sorted()
    }

    /// The files a DocC block may be found in: the DocCExamples target, and the README's examples for a block that
    /// the README shows too.
    static func exampleFiles() throws -> [String] {
        let folder = root.appendingPathComponent("Tests/DocCExamples")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".swift") }.sorted()
        return names.map { "Tests/DocCExamples/\($0)" } + ["Tests/NotificatableTests/ReadmeExamples.swift"]
    }

    static func lines(of path: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func everyDocCBlockIsCompiled() throws {
        let articles = try Self.articles()
        #expect(articles.count >= 10, "the three catalogs should have been found under Sources/")
        let files = try Self.exampleFiles().map { ($0, try Self.lines(of: $0)) }
        var blockCount = 0
        for article in articles {
            let markdown = try String(contentsOf: Self.root.appendingPathComponent(article), encoding: .utf8)
            let blocks = ReadmeExamplesTests.docsSwiftBlocksWithFiles(in: markdown)
            blockCount += blocks.count
            for (index, block) in blocks.enumerated() {
                let candidates = try block.file.map { [($0, try Self.lines(of: $0))] } ?? files
                let found = candidates.contains { ReadmeExamplesTests.docsContains($0.1, block.lines) }
                #expect(
                    found,
                    """
                    \(article): swift block #\(index + 1), starting "\(block.lines.first ?? "")", is not compiled: \
                    paste it unchanged into a file of Tests/DocCExamples
                    """
                )
            }
        }
        #expect(blockCount >= 30, "the articles should hold at least 30 swift blocks; found \(blockCount)")
    }

    @Test func theCheckerRejectsTheOldTestingSnippet() throws {
        // The snippet issue 15 found: `Locked` and `fixtureURL` exist nowhere, so it must not be found compiled.
        let stale = [
            "let fixture = try UserInfoFixture(contentsOf: fixtureURL(\"keyboard-will-show.plist\"))",
            "let received = Locked<[KeyboardFrame]>([])",
        ]
        for (_, lines) in try Self.exampleFiles().map({ ($0, try Self.lines(of: $0)) }) {
            #expect(!ReadmeExamplesTests.docsContains(lines, [stale[0]]))
            #expect(!ReadmeExamplesTests.docsContains(lines, [stale[1]]))
        }
    }

    @Test func theKeyboardFixtureOfTheArticleIsTheOneItsTestsRun() throws {
        let article = try String(
            contentsOf: Self.root.appendingPathComponent(
                "Sources/Notificatable/Documentation.docc/TestingWithFixtures.md"),
            encoding: .utf8)
        let xml = article.components(separatedBy: "```xml\n").dropFirst().first?.components(separatedBy: "```").first
        let fixture = try String(
            contentsOf: Self.root.appendingPathComponent("Fixtures/Keyboard/keyboard-will-show.plist"), encoding: .utf8)
        #expect(xml == fixture)
    }
}
