import Foundation
import Testing

/// Runs `notificatable-demo`, the README's first command, and pins what it prints: every section shows what its
/// title says, nothing reaches standard error, and no Foundation-internal class name leaks into the output.
///
/// `swift test` builds the demo with the tests, next to the test bundle; the test fails if it cannot find it.
@Suite struct DemoOutputTests {
    /// The sections' titles, in order, and lines (or parts of lines) each must print.
    static let sections: [(title: String, lines: [String])] = [
        (
            "1. Keyboard notifications as the system posts them, decoded into KeyboardInfo",
            [
                "• system-keyboard-will-show.plist  (7 keys; the end frame is an NSValue, as UIKit boxes it)",
                "  frameEnd (0, 508, 390, 336), duration 0.25 s, curve 7",
                "  frameEnd (0, 844, 390, 336), duration 0.25 s, curve 7",
            ]
        ),
        (
            "2. Malformed payloads give an error with its coding path; nothing traps",
            [
                "  ✗ typeMismatch at frameEnd: ", "  ✗ typeMismatch at animationDuration: ",
                "  ✗ keyNotFound \"frameEnd\" at <top level>: ", "  ✗ typeMismatch at users[1].isAdmin: ",
            ]
        ),
        (
            "3. A legacy poster reaches a typed subscriber",
            ["  typed subscriber got frameEnd (0, 508, 390, 336), curve 7"]
        ),
        (
            "4. A typed poster reaches a legacy observer (plain keys)",
            [
                "  legacy observer read userInfo[\"name\"] = Ada",
                "  typed subscriber got User(id: 7, name: \"Ada\", isAdmin: true)",
            ]
        ),
        (
            "5. A handle without payload",
            ["  didLogout fired, object: the session of Ada", "  didLogout fired, object: nil"]
        ),
        (
            "6. A bad payload is reported, not delivered, and other subscribers are served",
            [
                "  1. User subscriber: not called; its onFailure got typeMismatch at isAdmin: ",
                "  2. UserName subscriber, same name: served, got name \"Eve\"",
                "  3. plain Foundation observer: served, read userInfo[\"name\"] = Eve",
            ]
        ),
        (
            "7. A dispose bag ends its subscriptions",
            ["  while the bag lives: 1 delivery", "  after the bag is gone: still 1 delivery"]
        ),
        (
            "8. Across processes: two centers joined by a relay",
            [
                "  storefront, legacy observer: userInfo[\"orderID\"] = A-17",
                "  storefront, typed subscriber: order A-17, 3 items",
                "  warehouse: cache invalidated (a Never handle, sent the other way)",
                "  on the wire: {\"sequence\":1,",
                "  relay event: messageTooLarge (com.example.OrderShipped on channel \"com.example.OrderShipped\"): "
                    + "The message is 9178 bytes, over the transport's limit of 7999 bytes; it was not sent.",
            ]
        ),
    ]

    /// The demo executable: beside the test bundle (SwiftPM puts every product of a build in one folder).
    static func demoExecutable() -> URL? {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let folder = testBinary.deletingLastPathComponent()
        // A test bundle on Darwin is a directory, Foo.xctest/Contents/MacOS/Foo; on Linux it is the binary itself.
        let candidates = [
            folder, folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("notificatable-demo") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test func eachSectionShowsWhatItsTitleSays() throws {
        let demo = try #require(Self.demoExecutable(), "notificatable-demo was not built next to the tests")
        let process = Process()
        process.executableURL = demo
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationStatus == 0)
        #expect(stderr.isEmpty, "the demo wrote to standard error: \(stderr)")
        for internalName in ["NSSpecialValue", "NSConcreteValue", "__NS", "NSCF", "Foundation."] {
            #expect(!stdout.contains(internalName), "the demo prints \(internalName)")
        }

        let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let titleIndices = Self.sections.map { section in lines.firstIndex(of: section.title) }
        #expect(titleIndices.allSatisfy { $0 != nil }, "a section title is missing")
        let starts = titleIndices.compactMap { $0 }
        #expect(starts == starts.sorted(), "the sections are out of order")
        #expect(lines.first { !$0.isEmpty } == Self.sections.first?.title, "something is printed before section 1")
        #expect(stdout.hasSuffix("\nDone.\n"))
        for (index, section) in Self.sections.enumerated() {
            guard let start = titleIndices[index] else { continue }
            let end = titleIndices.dropFirst(index + 1).compactMap { $0 }.first ?? lines.count
            let body = lines[(start + 1)..<end]
            #expect(body.first == String(repeating: "─", count: section.title.count))
            for expected in section.lines {
                #expect(body.contains { $0.hasPrefix(expected) }, "section \(index + 1) does not print \"\(expected)\"")
            }
        }
    }
}
