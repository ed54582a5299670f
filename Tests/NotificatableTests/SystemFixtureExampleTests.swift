import Foundation
import NotificatableTesting
import Testing

/// The README's example: a user-defined payload type tested against its own fixture files in a few lines.
/// The fixtures are in `Fixtures/Examples/`, one documented shape and one malformed variant.
@Suite("System: a user-defined type tested with the fixture loader")
struct SystemFixtureExampleTests {
    // README example, from here …
    struct DownloadFinished: Codable, Equatable {
        var url: URL
        var byteCount: Int
    }

    @Test(arguments: try fixtures(in: fixturesDirectory.appendingPathComponent("Examples")))
    func downloadFinishedDecodes(_ fixture: UserInfoFixture) throws {
        var registry = UserInfoFixtureRegistry()
        registry.register(DownloadFinished.self)
        #expect(try registry.check(fixture) == nil)
    }
    // … to here.

    @Test("The example folder holds one documented shape and one malformed variant")
    func exampleFolderIsNotEmpty() throws {
        let examples = try fixtures(in: fixturesDirectory.appendingPathComponent("Examples"))
        #expect(examples.map(\.name) == ["download-finished-size-as-string", "download-finished"])
        try #require(examples.count == 2)
        #expect(examples[0].expectation == .error(.init(kind: .typeMismatch, codingPath: ["byteCount"])))
        #expect(try examples[1].expectedValue(as: DownloadFinished.self) == DownloadFinished(
            url: try #require(URL(string: "https://example.com/report.pdf")), byteCount: 52_400))
    }
}
