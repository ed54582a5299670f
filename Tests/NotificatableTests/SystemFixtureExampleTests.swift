import Foundation
import NotificatableTesting
import Testing

/// The README's example of a user-defined payload type tested with the fixture loader in a few lines is
/// `DownloadFinished` and `downloadFinishedDecodes` in `ReadmeExamples.swift`, where every README block is compiled.
/// Its fixtures are in `Fixtures/Examples/`: one documented shape and one malformed variant. This suite checks that
/// the folder holds what the README says it does, so the example cannot pass by running no fixture at all.
@Suite("System: a user-defined type tested with the fixture loader")
struct SystemFixtureExampleTests {
    @Test("The example folder holds one documented shape and one malformed variant")
    func exampleFolderIsNotEmpty() throws {
        let examples = try fixtures(in: fixturesDirectory.appendingPathComponent("Examples"))
        #expect(examples.map(\.name) == ["download-finished-size-as-string", "download-finished"])
        try #require(examples.count == 2)
        #expect(examples[0].expectation == .error(.init(kind: .typeMismatch, codingPath: ["byteCount"])))
        #expect(
            try examples[1].expectedValue(as: DownloadFinished.self)
                == DownloadFinished(
                    url: try #require(URL(string: "https://example.com/report.pdf")), byteCount: 52_400))
    }

    @Test("The README's folder is the fixtures folder of the package's own tests")
    func readmeFolderIsTheFixturesFolder() {
        #expect(fixturesFolder.standardizedFileURL == fixturesDirectory.standardizedFileURL)
    }
}
