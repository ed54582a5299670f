import Foundation

/// The error a fixture file gives when it cannot be used: it is unreadable, not a property list, or breaks the
/// fixture format described on ``UserInfoFixture``.
///
/// The error names the file, the place inside the fixture and the problem, so a failing test says what to fix:
///
/// ```text
/// /path/Fixtures/keyboard-will-show.plist: userInfo.UIKeyboardFrameEndUserInfoKey.$rect:
///     $rect needs 4 numbers [x, y, width, height], found 3
/// ```
///
/// It is a struct that wraps an internal enum, so new codes can be added without breaking callers.
public struct UserInfoFixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem the fixture has.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Raw: String, Sendable {
            case unreadableFile
            case invalidPropertyList
            case missingField
            case unexpectedField
            case invalidField
            case invalidTag
            case invalidExpectation
            case unknownType
            case tooLarge
        }

        let raw: Raw

        /// The file or directory could not be read.
        public static let unreadableFile = Code(raw: .unreadableFile)
        /// The file is not a property list, or its top level is not a dictionary.
        public static let invalidPropertyList = Code(raw: .invalidPropertyList)
        /// A required field (`type`, `userInfo` or `expect`) is missing.
        public static let missingField = Code(raw: .missingField)
        /// The fixture has a field that the format does not define, usually a misspelling.
        public static let unexpectedField = Code(raw: .unexpectedField)
        /// A field has the wrong type or an unknown value, for example an unknown strategy name in `decoder`.
        public static let invalidField = Code(raw: .invalidField)
        /// A `$` tag in `userInfo` is unknown or its payload is malformed.
        public static let invalidTag = Code(raw: .invalidTag)
        /// The `expect` field is malformed, or asks for something it does not hold.
        public static let invalidExpectation = Code(raw: .invalidExpectation)
        /// The fixture names a `type` that the ``UserInfoFixtureRegistry`` does not know.
        public static let unknownType = Code(raw: .unknownType)
        /// The fixture nests deeper than ``UserInfoFixture/maximumDepth`` levels, or holds more than
        /// ``UserInfoFixture/maximumValueCount`` values once `$nest` and shared binary property-list objects are
        /// expanded, or an expected coding path holds more than that many elements once its `$repeat` are expanded.
        public static let tooLarge = Code(raw: .tooLarge)

        /// The code's name, such as `invalidTag`.
        public var description: String { raw.rawValue }
    }

    /// What kind of problem the fixture has.
    public let code: Code
    /// The fixture file, or the directory when the directory itself could not be read.
    public let file: URL
    /// Where inside the fixture the problem is, such as `userInfo.frame.$rect`; empty for the whole file.
    public let location: String
    /// A sentence that says what is wrong and what was expected.
    public let message: String

    /// Creates an error. Tools that extend the format can use it to report their own problems the same way.
    ///
    /// - Parameters:
    ///   - code: What kind of problem the fixture has.
    ///   - file: The fixture file.
    ///   - location: Where inside the fixture the problem is; empty for the whole file.
    ///   - message: What is wrong and what was expected.
    public init(_ code: Code, file: URL, location: String = "", message: String) {
        self.code = code
        self.file = file
        self.location = location
        self.message = message
    }

    /// The file's path, the location inside it and the message, on one line.
    public var description: String {
        let path = Self.displayPath(file)
        return location.isEmpty ? "\(path): \(message)" : "\(path): \(location): \(message)"
    }

    /// `file`'s path relative to the current directory when it is inside it (`Fixtures/Keyboard/show.plist` from
    /// the package's folder, as `swift test` runs), its full path otherwise.
    static func displayPath(_ file: URL) -> String {
        let path = file.standardizedFileURL.path
        var directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path
        if !directory.hasSuffix("/") { directory += "/" }
        return path.hasPrefix(directory) && path.count > directory.count
            ? String(path.dropFirst(directory.count)) : path
    }
}
