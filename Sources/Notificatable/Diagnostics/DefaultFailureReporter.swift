import Foundation

/// What ``NotificationDecodingFailure/defaultHandler`` does with a failure, with the output injectable for tests.
///
/// In debug builds it writes every failure. In release builds it writes the first failure of each (name, kind)
/// pair, and at most ``limit`` lines in all: a notification that fails on every post, or a flood of distinct names,
/// cannot fill the log. The line that reaches the limit says so, and how to see every failure.
final class DefaultFailureReporter: @unchecked Sendable {
    /// The reporter of the default handler: every failure in debug builds, the first per (name, kind) in release
    /// builds, on standard error.
    static let shared = DefaultFailureReporter(printsEveryFailure: isDebugBuild, write: writeToStandardError)

    #if DEBUG
    static let isDebugBuild = true
    #else
    static let isDebugBuild = false
    #endif

    /// The most lines a release build writes in the life of the process.
    static let releaseLimit = 20

    private struct Key: Hashable {
        let name: Notification.Name
        let kind: NotificationDecodingFailure.Kind
    }

    let printsEveryFailure: Bool
    let limit: Int
    private let write: @Sendable (String) -> Void
    private let lock = NSLock()
    private var seen: Set<Key> = []
    private var written = 0

    init(printsEveryFailure: Bool, limit: Int = releaseLimit, write: @escaping @Sendable (String) -> Void) {
        self.printsEveryFailure = printsEveryFailure
        self.limit = limit
        self.write = write
    }

    func report(_ failure: NotificationDecodingFailure) {
        guard !printsEveryFailure else {
            write("Notificatable: \(failure)\n")
            return
        }
        let key = Key(name: failure.name, kind: failure.kind)
        // Decided under the lock, written after unlocking.
        let position: Int? = lock.withLock {
            guard written < limit, seen.insert(key).inserted else { return nil }
            written += 1
            return written
        }
        guard let position else { return }
        var line = "Notificatable: \(failure)\n"
        if position == 1 {
            line +=
                "Notificatable: release builds print the first failure of each name and kind only, \(limit) in all;"
                + " set NotificationDecodingFailure.handler to see every one\n"
        }
        if position == limit {
            line += "Notificatable: \(limit) failures printed; no more are printed in this process\n"
        }
        write(line)
    }

    private static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
