import Foundation
import NotificatableTesting
import Testing

// Issue 33 item 7: `scaffold` on a capture without a payload suggests a `Never` handle instead of an empty struct, and
// `check`'s summary line comes after the problems it counts however its output is read.

@Suite("notificatable-fixtures: no payload, and the order of check's report")
struct FixtureToolReportTests {
    @Test("scaffold on a capture without a payload suggests Notificatable.withoutPayload, which compiles")
    func scaffoldWithoutPayload() throws {
        let named = FixtureCapture(userInfo: nil, name: Notification.Name("UIApplicationDidBecomeActiveNotification"))
        let source = named.scaffold()
        #expect(
            source.hasSuffix(
                "import Notificatable\n\nlet applicationDidBecomeActive = "
                    + "Notificatable.withoutPayload(\"UIApplicationDidBecomeActiveNotification\")\n"), "\(source)")
        #expect(!source.contains("struct"), "\(source)")

        // An empty userInfo is the same; without a name, the type name stands in for it, and the comment says so.
        let bare = FixtureCapture(userInfo: [:]).scaffold(typeName: "SessionExpired")
        #expect(bare.contains("// The capture has no notification name: write it in place of \"SessionExpired\".\n"))
        #expect(bare.hasSuffix("let sessionExpired = Notificatable.withoutPayload(\"SessionExpired\")\n"), "\(bare)")

        // A name no literal can hold as it is stays exactly that name, in one line.
        let odd = FixtureCapture(userInfo: nil, name: Notification.Name("Did\"Quit\\\n\u{202E}")).scaffold()
        #expect(odd.contains("Notificatable.withoutPayload(\"Did\\\"Quit\\\\\\n\\u{202E}\")\n"), "\(odd)")
        #expect(
            odd.split(separator: "\n").allSatisfy {
                $0.hasPrefix("//") || $0.hasPrefix("import") || $0.hasPrefix("let")
            })

        // The command prints the same for the file, and the suggestion type-checks against the built module.
        let folder = try CaptureFolder()
        defer { folder.remove() }
        try named.write(to: folder.file("did-become-active.plist"))
        let run = ToolRun("scaffold", folder.file("did-become-active.plist").path)
        #expect(run.status == 0)
        #expect(run.output == source)
        let modules = try #require(NoPayloadMisuseTests.modulesFolder(), "no built modules found")
        let client = folder.file("client.swift")
        try Data(
            (source + bare.replacingOccurrences(of: "import Notificatable\n", with: "")
                + odd
                .replacingOccurrences(of: "import Notificatable\n", with: "")
                .replacingOccurrences(of: "let didQuit", with: "let didQuit2")).utf8
        ).write(to: client)
        let diagnostics = try NoPayloadMisuseTests.typecheck(
            client, modules: modules, cache: folder.file("cache"))
        #expect(!diagnostics.contains("error:"), "\(diagnostics)")
    }

    /// `notificatable-fixtures`: beside the test bundle, as every product of the build.
    static func toolExecutable() -> URL? {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        return [folder, folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()]
            .map { $0.appendingPathComponent("notificatable-fixtures") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs the tool; `merged` sends both of its streams into one pipe, as `2>&1 |` does.
    static func runTool(_ arguments: [String], merged: Bool) throws -> (status: Int32, output: String, errors: String) {
        let tool = try #require(toolExecutable(), "notificatable-fixtures was not built next to the tests")
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = merged ? output : errors
        try process.run()
        // The report is a few lines, far below a pipe's buffer: reading one stream after the other cannot stall.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = merged ? Data() : errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errorData, as: UTF8.self)
        )
    }

    @Test("check prints its summary after the problems, with both streams in one pipe and with each read apart")
    func checkSummaryComesLast() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        for name in ["a.plist", "b.plist", "c.plist"] {
            try Data("not a property list".utf8).write(to: folder.file(name))
        }
        var capture = FixtureCapture(userInfo: ["route": NSObject()])
        capture.typeName = "Route"
        capture.expectError(.typeMismatch, at: ["route"])
        try capture.write(to: folder.file("placeholder.plist"))
        let arguments = ["check", folder.url.path, folder.file("missing.plist").path]
        let expected = [
            folder.file("missing.plist").path + ": no such file or folder",
            folder.file("a.plist").path + ": is not a valid property list",
            folder.file("b.plist").path + ": is not a valid property list",
            folder.file("c.plist").path + ": is not a valid property list",
            folder.file("placeholder.plist").path + ": userInfo.route: warning:",
            "checked 4 fixture files: 4 bad, 1 placeholder",
        ]

        let merged = try Self.runTool(arguments, merged: true)
        #expect(merged.status == 1)
        let lines = merged.output.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count, "\(merged.output)")
        for (line, start) in zip(lines, expected) {
            #expect(line.hasPrefix(start), "\(merged.output)")
        }

        // Read apart, as a CI log or an IDE reads the two streams: the report is whole, in order, on one of them.
        let apart = try Self.runTool(arguments, merged: false)
        #expect(apart.status == 1)
        #expect(apart.errors.isEmpty, "\(apart.errors)")
        #expect(apart.output == merged.output)
    }
}
