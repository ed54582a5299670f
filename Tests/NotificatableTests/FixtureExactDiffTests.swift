import Foundation
import NotificatableTesting
import Testing

// Issue 33 item 5: a fixture diff shows values exactly, so two values that differ never look alike: a date with its
// fraction of a second and its exact interval, a double with the digits that read back to it.

private struct Stamp: Codable, Equatable {
    var updatedAt: Date
    var ratio: Double
}

@Suite("Fixture diffs show exact values")
struct FixtureExactDiffTests {
    @Test func subSecondDatesAndLastDigitDoublesDifferInTheDiff() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let fixture = try UserInfoFixture(
            contentsOf: folder.write(
                "stamp.plist",
                dictionaryBody: """
                    <key>type</key><string>Stamp</string>
                    <key>userInfo</key><dict>
                        <key>updatedAt</key><dict><key>$date</key><real>817389128.25</real></dict>
                        <key>ratio</key><real>0.30000000000000004</real>
                    </dict>
                    <key>expect</key><dict><key>value</key><dict>
                        <key>updatedAt</key><dict><key>$date</key><real>817389128.125</real></dict>
                        <key>ratio</key><real>0.3</real>
                    </dict></dict>
                    """))
        let mismatch = try #require(throws: UserInfoFixtureMismatch.self) { try fixture.verify(Stamp.self) }
        // The fields in declaration order.
        #expect(
            mismatch.differences == [
                .init(
                    path: "updatedAt", decoded: "2026-11-26T12:32:08.250Z (817389128.25 s after 2001-01-01)",
                    expected: "2026-11-26T12:32:08.125Z (817389128.125 s after 2001-01-01)"),
                .init(path: "ratio", decoded: "0.30000000000000004", expected: "0.3"),
            ], "\(mismatch.message)")
        // The dates differ by an eighth of a second, and the line says so.
        #expect(mismatch.message.contains("updatedAt: decoded 2026-11-26T12:32:08.250Z"), "\(mismatch.message)")
    }
}
