import Foundation
import Testing

@testable import NotificatableTesting

/// Hostile `expect` fields: a `$repeat` inside a `$repeat` multiplies, and the raw expected value can nest deeper than
/// any stack (issue 29 item 12's leftovers).
@Suite("Fixture limits: expected coding paths and values")
struct FixtureExpectationLimitsTests {
    /// An expected error whose coding path is `element`.
    static func body(codingPath element: String) -> String {
        """
        <key>type</key><string>Chain</string><key>userInfo</key><dict/>
        <key>expect</key><dict><key>error</key><dict><key>kind</key><string>typeMismatch</string>
        <key>codingPath</key><array>\(element)</array></dict></dict>
        """
    }

    /// `{"$repeat": {count: count, path: [inner]}}`.
    static func repeated(_ count: Int, _ inner: String) -> String {
        "<dict><key>$repeat</key><dict><key>count</key><integer>\(count)</integer>"
            + "<key>path</key><array>\(inner)</array></dict></dict>"
    }

    @Test("Nested $repeat that expand past 100,000 elements are refused with tooLarge at the $repeat")
    func nestedRepeatHasABudget() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }

        // 1,000 × 1,000: a million elements, made in a moment before, and accepted.
        let million = try folder.write(
            "million.plist",
            dictionaryBody: Self.body(codingPath: Self.repeated(1_000, Self.repeated(1_000, "<string>a</string>"))))
        let error = try #require(throws: UserInfoFixtureError.self) { _ = try UserInfoFixture(contentsOf: million) }
        #expect(error.code == .tooLarge)
        #expect(error.location == "expect.error.codingPath[0].$repeat", "\(error)")
        #expect(error.message.contains("more than 100000 elements once its $repeat are expanded"), "\(error)")

        // 100,000 × 100,000 (10^10 elements): refused before anything is repeated.
        let huge = try folder.write(
            "huge.plist",
            dictionaryBody: Self.body(
                codingPath: Self.repeated(100_000, Self.repeated(100_000, "<string>a</string>"))))
        let hugeError = try #require(throws: UserInfoFixtureError.self) { _ = try UserInfoFixture(contentsOf: huge) }
        #expect(hugeError.code == .tooLarge)
        #expect(hugeError.location == "expect.error.codingPath[0].$repeat")

        // Elements after a run that used the whole budget are refused where they stand.
        let after = try folder.write(
            "after.plist",
            dictionaryBody: Self.body(codingPath: Self.repeated(100_000, "<string>a</string>") + "<integer>1</integer>")
        )
        let afterError = try #require(throws: UserInfoFixtureError.self) { _ = try UserInfoFixture(contentsOf: after) }
        #expect(afterError.code == .tooLarge)
        #expect(afterError.location == "expect.error.codingPath[1]")

        // Exactly the budget is fine, however it is nested.
        let exact = try folder.write(
            "exact.plist",
            dictionaryBody: Self.body(
                codingPath: Self.repeated(1_000, Self.repeated(99, "<string>a</string>") + "<integer>0</integer>")))
        let fixture = try UserInfoFixture(contentsOf: exact)
        guard case .error(let expected) = fixture.expectation else {
            Issue.record("not an expected error")
            return
        }
        #expect(expected.codingPath.count == 100_000)
        let run = Array(repeating: UserInfoFixture.CodingPathElement.string("a"), count: 99) + [.int(0)]
        #expect(Array(expected.codingPath.prefix(100)) == run)
    }

    @Test("Looking for a $ key walks a value nested 100,000 levels on a 512 KiB stack")
    func dollarKeySearchIsIterative() {
        let found = FoundOnThread()
        onSmallStack {
            for leaf in ["plain", "$tag"] {
                var value: Any = [leaf: 1] as [String: Any]
                for level in 0..<100_000 {
                    value = level.isMultiple(of: 2) ? [value] as [Any] : ["next": value] as [String: Any]
                }
                found.add("\(leaf) \(UserInfoFixture.containsDollarKey(value))")
                // Taken apart a level at a time: releasing the chain whole would recurse as deep as it nests.
                while true {
                    if let array = value as? [Any], let inner = array.first {
                        value = inner
                    } else if let dictionary = value as? [String: Any], let inner = dictionary["next"] {
                        value = inner
                    } else {
                        break
                    }
                }
            }
        }
        #expect(found.all == ["plain false", "$tag true"])
    }
}
