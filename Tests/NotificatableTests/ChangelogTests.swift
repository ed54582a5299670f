import Foundation
import Testing

/// The README's package setup and CHANGELOG.md agree: the version the README asks for has an entry, and the entry
/// list keeps an Unreleased section on top for the next changes.
@Suite struct ChangelogTests {
    static func read(_ name: String) throws -> String {
        try String(contentsOf: ReadmeExamplesTests.packageRoot.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theReadmeVersionHasAChangelogEntry() throws {
        let readme = try Self.read("README.md")
        let changelog = try Self.read("CHANGELOG.md")
        let marker = "from: \""
        let start = try #require(readme.range(of: marker)).upperBound
        let version = String(readme[start...].prefix { $0 != "\"" })
        #expect(version == "0.1.0")
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") }.map(String.init)
        #expect(headings.first == "## [Unreleased]")
        #expect(headings.contains("## [\(version)]"))
        #expect(
            changelog.contains("[\(version)]: https://github.com/notificatable/Notificatable/releases/tag/\(version)"))
    }

    @Test func theReadmeSaysHowAPathDependencyIsNamed() throws {
        let readme = try Self.read("README.md")
        #expect(readme.contains("With a path dependency, SwiftPM names the package after its folder"))
        #expect(readme.contains("\"unknown package\""))
    }
}
