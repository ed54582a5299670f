import Foundation

/// The `notificatable-fixtures` command: `check`, `show` and `scaffold`. The executable is a thin `main` around
/// ``run(_:output:errorOutput:)``, so tests call the same code without starting a process.
package enum FixtureCommandLine {
    /// Exit status: everything was fine.
    package static let success: Int32 = 0
    /// Exit status: a fixture is bad, or a file could not be read.
    package static let failure: Int32 = 1
    /// Exit status: the command line itself is wrong.
    package static let usageError: Int32 = 2

    // Each usage text ends with a newline (the blank line before its closing quotes), so the shell's prompt starts
    // on a line of its own after `--help`.
    static let usage = """
        usage: notificatable-fixtures <command> [options]

        Check, inspect and scaffold the fixture files of NotificatableTesting.

        commands:
          check PATH…                    check fixture files, and folders of them (subfolders included)
          show FIXTURE                   print the userInfo as the decoder will see it, with types
          scaffold FIXTURE [--name NAME] print a Codable payload type for the fixture's userInfo

        Run `notificatable-fixtures <command> --help` for the details of a command.

        """

    static let checkUsage = """
        usage: notificatable-fixtures check PATH…

        Checks each fixture file, and each .plist file in each folder and its subfolders, against the fixture format.
        Prints every problem as FILE: KEY PATH: what is wrong and what was expected, and lists each $placeholder,
        which a test cannot decode, as a warning. A capture whose type and expect are not filled in yet is bad.
        It does not decode: the payload types live in your test target. The problems, the warnings and the summary
        line after them all go to standard output, in that order, however the output is read.

        Exit status: 0 when every file is good, 1 when any file is bad, a path cannot be read, or a folder holds
        no fixture file, 2 for a wrong command line.

        """

    static let showUsage = """
        usage: notificatable-fixtures show FIXTURE

        Prints the fixture's userInfo as the decoder will see it: every value with its type (NSNumber (boolean),
        NSValue (rect), Int, NSString…), and under a key strategy the property each key maps to. FIXTURE may be a
        capture whose type and expect are not filled in yet.

        Exit status: 0 on success, 1 when the file cannot be read, 2 for a wrong command line.

        """

    static let scaffoldUsage = """
        usage: notificatable-fixtures scaffold FIXTURE [--name TypeName]

        Prints a Swift struct, Codable and Equatable, that decodes the fixture's userInfo: Swift-style property
        names, CodingKeys where the raw keys differ, a suggestion of .affixed(prefix:suffix:) when the keys share a
        prefix and suffix as UIKit's do, and types inferred from the values (CGRect for a rect NSValue, Bool for a
        boolean NSNumber, Int or Double by the number's type, Date, URL, nested structs, arrays, an Optional for
        NSNull), each written with its module (Swift.Int, Foundation.Date) so that the source compiles whatever the
        keys. A value whose type cannot be inferred is left as a comment that says why; a capture without a payload
        gets a Notificatable.withoutPayload handle instead of a struct. Check each type before you rely on it: one
        sample cannot show everything.

        options:
          --name TypeName   the struct's name (default: the fixture's type, or one made from the notification's name)

        Exit status: 0 on success, 1 when the file cannot be read, 2 for a wrong command line.

        """

    /// Runs the command.
    ///
    /// - Parameters:
    ///   - arguments: The arguments without the program's name, such as `["check", "Fixtures"]`.
    ///   - output: Receives the text for standard output.
    ///   - errorOutput: Receives the text for standard error.
    /// - Returns: The exit status.
    package static func run(
        _ arguments: [String], output: (String) -> Void, errorOutput: (String) -> Void
    ) -> Int32 {
        guard let command = arguments.first else {
            errorOutput(usage)
            return usageError
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            output(usage)
            return success
        case "check":
            if rest.contains(where: isHelp) {
                output(checkUsage)
                return success
            }
            return check(rest, output: output, errorOutput: errorOutput)
        case "show":
            if rest.contains(where: isHelp) {
                output(showUsage)
                return success
            }
            guard rest.count == 1, let path = rest.first, !path.hasPrefix("-") else {
                errorOutput("error: show takes one fixture file\n\n" + showUsage)
                return usageError
            }
            return withCapture(path, errorOutput: errorOutput) { output($0.inspection) }
        case "scaffold":
            if rest.contains(where: isHelp) {
                output(scaffoldUsage)
                return success
            }
            var paths: [String] = []
            var name: String?
            var index = 0
            while index < rest.count {
                let argument = rest[index]
                if argument == "--name" {
                    guard index + 1 < rest.count, isIdentifier(rest[index + 1]) else {
                        errorOutput(
                            "error: --name needs a Swift type name, such as KeyboardFrameChange\n\n" + scaffoldUsage)
                        return usageError
                    }
                    name = rest[index + 1]
                    index += 2
                } else if argument.hasPrefix("-") {
                    errorOutput("error: unknown option \(argument)\n\n" + scaffoldUsage)
                    return usageError
                } else {
                    paths.append(argument)
                    index += 1
                }
            }
            guard paths.count == 1, let path = paths.first else {
                errorOutput("error: scaffold takes one fixture file\n\n" + scaffoldUsage)
                return usageError
            }
            return withCapture(path, errorOutput: errorOutput) { output($0.scaffold(typeName: name)) }
        default:
            errorOutput("error: unknown command \(command)\n\n" + usage)
            return usageError
        }
    }

    private static func isHelp(_ argument: String) -> Bool { argument == "--help" || argument == "-h" }

    private static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    private static func withCapture(
        _ path: String, errorOutput: (String) -> Void, _ body: (FixtureCapture) -> Void
    ) -> Int32 {
        do {
            body(try FixtureCapture(contentsOf: URL(fileURLWithPath: path)))
            return success
        } catch let error as UserInfoFixtureError {
            errorOutput(describe(error, displayPath: path) + "\n")
        } catch {
            errorOutput("\(path): \(error)\n")
        }
        return failure
    }

    /// An error as `FILE: KEY PATH: message`, with the file as the user wrote it.
    static func describe(_ error: UserInfoFixtureError, displayPath: String) -> String {
        error.location.isEmpty
            ? "\(displayPath): \(error.message)" : "\(displayPath): \(error.location): \(error.message)"
    }

    // MARK: - check

    /// The report (each problem, each placeholder warning, then the summary) goes to `output` only: split over two
    /// streams, a reader that drains them separately, or a terminal that merges them late, showed the summary before
    /// the problems it counts. Only a wrong command line goes to `errorOutput`.
    private static func check(_ paths: [String], output: (String) -> Void, errorOutput: (String) -> Void) -> Int32 {
        if let option = paths.first(where: { $0.hasPrefix("-") }) {
            errorOutput("error: unknown option \(option)\n\n" + checkUsage)
            return usageError
        }
        guard !paths.isEmpty else {
            errorOutput("error: check needs at least one file or folder\n\n" + checkUsage)
            return usageError
        }
        var files: [String] = []
        var bad = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                output("\(path): no such file or folder\n")
                bad += 1
                continue
            }
            if isDirectory.boolValue {
                let found = fixtureFiles(in: path)
                // A folder that holds no fixture (a typo'd path that happens to exist, a folder emptied by mistake)
                // would otherwise pass with "checked 0 fixture files", and a CI step guarding it would guard nothing.
                guard !found.isEmpty else {
                    output("\(path): no fixture files (.plist) in this folder or its subfolders\n")
                    bad += 1
                    continue
                }
                files += found
            } else {
                files.append(path)
            }
        }
        var warnings = 0
        for file in files {
            let url = URL(fileURLWithPath: file)
            do {
                _ = try UserInfoFixture(contentsOf: url)
                // The placeholders a capture left: the file is valid, but a test cannot decode those values.
                for note in try FixtureCapture(contentsOf: url).placeholderNotes {
                    output("\(file): \(note.location): warning: \(note.message)\n")
                    warnings += 1
                }
            } catch let error as UserInfoFixtureError {
                output(describe(error, displayPath: file) + "\n")
                bad += 1
            } catch {
                output("\(file): \(error)\n")
                bad += 1
            }
        }
        let summary =
            "checked \(FixtureInspector.count(files.count, "fixture file")): "
            + (bad == 0 ? "all good" : "\(bad) bad")
            + (warnings == 0 ? "" : ", \(FixtureInspector.count(warnings, "placeholder"))")
        output(summary + "\n")
        return bad == 0 ? success : failure
    }

    /// The `.plist` files in a folder and its subfolders, sorted, with paths that start with the folder as given.
    private static func fixtureFiles(in folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if relative.hasSuffix(".plist") && !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                files.append(folder.hasSuffix("/") ? folder + relative : folder + "/" + relative)
            }
        }
        return files.sorted()
    }
}
