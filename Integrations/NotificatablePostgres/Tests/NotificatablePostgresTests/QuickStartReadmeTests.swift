import Foundation
import Testing

/// Keeps the README's "Server-side quick start" and `QuickStartExample.swift` in step: every ```swift block of the
/// section, without its `import` lines and outer blank lines, must appear line for line in that file (indentation
/// aside).
@Suite struct QuickStartReadmeTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The ```swift blocks of `markdown` between the heading `section` and the next `## ` heading.
    static func swiftBlocks(in markdown: String, section: String) -> [[String]] {
        var blocks: [[String]] = []
        var inSection = false
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil && line.hasPrefix("## ") {
                inSection = line == section
                continue
            }
            guard inSection else { continue }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" { current = [] }
            } else if trimmed == "```" {
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

    /// Whether `block` appears in `lines` as consecutive lines, whatever their indentation.
    static func contains(_ lines: [String], _ block: [String]) -> Bool {
        let trim = { (line: String) in line.trimmingCharacters(in: .whitespaces) }
        let (lines, block) = (lines.map(trim), block.map(trim))
        guard !block.isEmpty, block.count <= lines.count else { return block.isEmpty }
        return (0...(lines.count - block.count)).contains { Array(lines[$0..<($0 + block.count)]) == block }
    }

    @Test func everyQuickStartBlockIsCompiledInQuickStartExample() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.packageRoot.appendingPathComponent(
                "Tests/NotificatablePostgresTests/QuickStartExample.swift"), encoding: .utf8)
        let lines = example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blocks = Self.swiftBlocks(in: readme, section: "## Server-side quick start")
        #expect(blocks.count == 4)
        for block in blocks {
            #expect(Self.contains(lines, block), "not in QuickStartExample.swift:\n\(block.joined(separator: "\n"))")
        }
    }

    @Test func theQuickStartComesFirst() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let headings = readme.split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(headings.first == "## Server-side quick start")
    }

    @Test func theCheckerRejectsAnEditedBlock() {
        let markdown =
            "## Server-side quick start\n```swift\nimport A\nlet x = 1\n```\n## Next\n```swift\nlet y = 2\n```\n"
        let blocks = Self.swiftBlocks(in: markdown, section: "## Server-side quick start")
        #expect(blocks == [["let x = 1"]])
        #expect(Self.contains(["a", "let x = 1"], blocks[0]))
        #expect(!Self.contains(["let x = 2"], blocks[0]))
    }
}
