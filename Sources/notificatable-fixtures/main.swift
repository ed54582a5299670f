// notificatable-fixtures: check, show and scaffold fixture files. The work is done by
// `FixtureCommandLine.run` in NotificatableTesting, which the tests call directly; this is only the process's edge.
import Foundation
import NotificatableTesting

let status = FixtureCommandLine.run(
    Array(CommandLine.arguments.dropFirst()),
    output: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
    errorOutput: { text in FileHandle.standardError.write(Data(text.utf8)) })
exit(status)
