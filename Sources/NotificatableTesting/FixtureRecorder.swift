import Foundation

/// Records notifications of the names you choose, as they are posted, and writes each one into a folder as a
/// fixture file (a ``FixtureCapture``).
///
/// Use it in a debug build, on a device or in the simulator, to learn what the system really posts:
///
/// ```swift
/// #if DEBUG
/// let fixtureRecorder = try FixtureRecorder(
///     names: [UIResponder.keyboardWillShowNotification, AVAudioSession.interruptionNotification],
///     folder: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("Fixtures"))
/// #endif
/// ```
///
/// Each notification becomes one file, named after the notification and numbered in the order of posting:
/// `ui-keyboard-will-show-1.plist`, `ui-keyboard-will-show-2.plist`, `av-audio-session-interruption-1.plist`. The
/// numbering continues after the files already in the folder, so nothing is overwritten. Values that a fixture cannot
/// hold are written as placeholders and listed in ``notes``; files that could not be written are listed in
/// ``errors``. Nothing is dropped silently.
///
/// It observes each name with `addObserver(forName:object:queue:using:)` and never with a `nil` name, so it is safe on
/// a center that also carries Foundation's typed messages. It writes on the posting thread. Recording ends with
/// ``stop()`` or when the recorder is released. Every method is thread-safe.
public final class FixtureRecorder: @unchecked Sendable {
    /// The folder the files are written into.
    public let folder: URL
    /// The center the recorder observes.
    public let center: NotificationCenter

    private let lock = NSLock()
    private var observers: [NSObjectProtocol] = []
    private var counters: [String: Int] = [:]
    private var written: [URL] = []
    private var recordedNotes: [URL: [FixtureCapture.Note]] = [:]
    private var writeErrors: [String] = []
    private let prefix: String

    /// Starts recording notifications of the given names into `folder`, which is created if needed.
    ///
    /// - Parameters:
    ///   - names: The names to record; each is observed separately.
    ///   - folder: A file URL of the folder to write into.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`, where the system posts.
    ///   - filePrefix: Text put before every file name, such as `system-`, as `Fixtures/` names its files.
    /// - Throws: Foundation's error when the folder cannot be created.
    public init(
        names: [Notification.Name], folder: URL, center: NotificationCenter = .default, filePrefix: String = ""
    ) throws {
        self.folder = folder
        self.center = center
        self.prefix = filePrefix
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var added: [NSObjectProtocol] = []
        for name in Set(names).sorted(by: { $0.rawValue < $1.rawValue }) {
            added.append(
                center.addObserver(forName: name, object: nil, queue: nil) { [weak self] notification in
                    self?.record(FixtureCapture(notification))
                })
        }
        lock.withLock { observers = added }
    }

    deinit {
        for observer in observers { center.removeObserver(observer) }
    }

    /// Stops recording. The files stay; calling it again does nothing.
    public func stop() {
        let ending = lock.withLock {
            let ending = observers
            observers = []
            return ending
        }
        for observer in ending { center.removeObserver(observer) }
    }

    /// The files written so far, in the order of the posts.
    public var files: [URL] { lock.withLock { written } }

    /// Everything a capture could not keep exactly, with the file it is in, such as
    /// `ui-keyboard-will-show-1.plist: userInfo.SomeKey: a UIView has no fixture form; written as a $placeholder`.
    public var notes: [String] {
        lock.withLock {
            written.flatMap { file in (recordedNotes[file] ?? []).map { "\(file.lastPathComponent): \($0)" } }
        }
    }

    /// The files that could not be written, each with the reason.
    public var errors: [String] { lock.withLock { writeErrors } }

    /// Writes one capture under the next free number for its name.
    func record(_ capture: FixtureCapture) {
        let base = prefix + Self.fileStem(for: capture.notificationName ?? "notification")
        let fileManager = FileManager.default
        // The number is reserved under the lock; the file is written outside it.
        let url: URL = lock.withLock {
            var number = counters[base] ?? 0
            var candidate: URL
            repeat {
                number += 1
                candidate = folder.appendingPathComponent("\(base)-\(number).plist")
            } while fileManager.fileExists(atPath: candidate.path)
            counters[base] = number
            return candidate
        }
        do {
            try capture.write(to: url)
            lock.withLock {
                written.append(url)
                recordedNotes[url] = capture.notes
            }
        } catch {
            lock.withLock { writeErrors.append("\(url.path): \(error.localizedDescription)") }
        }
    }

    /// A readable, stable file name for a notification name: `UIKeyboardWillShowNotification` becomes
    /// `ui-keyboard-will-show`, and `com.example.didSync` becomes `com-example-did-sync`.
    ///
    /// - Parameter name: The notification's raw name.
    /// - Returns: Lowercase words joined by hyphens, without the trailing word `Notification`.
    public static func fileStem(for name: String) -> String {
        var trimmed = Substring(name)
        if trimmed.hasSuffix("Notification") && trimmed.count > "Notification".count {
            trimmed = trimmed.dropLast("Notification".count)
        }
        var words: [String] = []
        var current = ""
        let characters = Array(trimmed)
        for (index, character) in characters.enumerated() {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            if character.isUppercase, !current.isEmpty {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                // A new word starts at an uppercase letter after a lowercase one or a digit, and at the last capital
                // of an acronym that a lowercase letter follows: `UIKeyboard` → `ui`, `keyboard`.
                if previous.isLowercase || previous.isNumber
                    || (previous.isUppercase && next.map { $0.isLowercase } == true)
                {
                    words.append(current)
                    current = ""
                }
            }
            current += character.lowercased()
        }
        if !current.isEmpty { words.append(current) }
        return words.isEmpty ? "notification" : words.joined(separator: "-")
    }
}
