import Foundation
import Notificatable

/// One decoder test case read from a property-list file: the `userInfo` a notification carries, the type to decode
/// it into, optional decoder strategies, and the expected outcome (a value, or an error with its coding path).
///
/// Load a folder of fixtures and run each one as a parameterized Swift Testing test:
///
/// ```swift
/// import Testing
/// import NotificatableTesting
///
/// let registry: UserInfoFixtureRegistry = {
///     var registry = UserInfoFixtureRegistry()
///     registry.register(KeyboardFrame.self)   // fixtures say <key>type</key><string>KeyboardFrame</string>
///     return registry
/// }()
///
/// @Test(arguments: try fixtures(in: URL(fileURLWithPath: #filePath)
///     .deletingLastPathComponent().appendingPathComponent("Fixtures")))
/// func decodes(_ fixture: UserInfoFixture) throws {
///     try registry.verify(fixture)
/// }
/// ```
///
/// `verify` throws when the outcome differs from the expectation, and the error's description says why (each
/// field that differs, for a value), so the test report shows the explanation.
///
/// ## The fixture format
///
/// A fixture is one property-list file with the extension `.plist`. Write it as XML so that it reads well in a
/// review. Its top level is a dictionary with these fields; any other field is an error, to catch misspellings.
///
/// - `description` (string, optional): what the case shows. It is read as ``summary``.
/// - `name` and `object` (strings, optional): the name of the notification the fixture was captured from, and a
///   description of its object, as ``FixtureCapture`` writes them. They are read as ``notificationName`` and
///   ``objectDescription``, and change nothing in the test.
/// - `type` (string, required): the name of the Swift type to decode, looked up in a ``UserInfoFixtureRegistry``.
/// - `decoder` (dictionary, optional): the decoder's strategies, all optional. See ``DecoderConfiguration``.
///   - `key`: `useDefaultKeys` (the default), `convertFromSnakeCase`, or `affixed` together with the string
///     fields `prefix` and `suffix`.
///   - `date`: `deferredToDate` (the default), `secondsSince1970`, `millisecondsSince1970`, `iso8601`, or
///     `formatted` together with a `dateFormat` string, read in the `en_US_POSIX` locale and UTC.
///   - `data`: `deferredToData` (the default) or `base64`.
/// - `userInfo` (dictionary, required): the dictionary exactly as the system would post it. Its values follow the
///   rules below.
/// - `expect` (dictionary, required) holds exactly one of two fields:
///   - `value`: the expected decoded value, keyed by the properties' names (the `decoder` strategies apply to
///     `userInfo` only). A `nil` optional is left out, an enum is written as its raw value. Two forms:
///     - a plain property list in the Codable form that Foundation's `PropertyListDecoder` reads, which is read by
///       `PropertyListDecoder`, so the decoder under test does not check itself: `CGRect` as
///       `[[x, y], [width, height]]`, `CGPoint` as `[x, y]`, `CGSize` as `[width, height]`, `NSRange` as
///       `[location, length]`, `URL` as `{relative: "https://…"}`, and a `[Int: V]` dictionary with keys such as
///       `"1"`;
///     - the same values and tags as `userInfo` (below), for what that form cannot hold: `{"$decimal": "9.99"}`,
///       `{"$url": "https://…"}`, `{"$rect": [x, y, width, height]}`, `{"$null": true}`, `{"$intKeys": …}`… Such a
///       value, or a plain one that `PropertyListDecoder` cannot read (a `Decimal` written `<real>9.99</real>`), is
///       built as `userInfo` is and read by a `UserInfoDecoder` with its default strategies.
///   - `error`: a dictionary with `kind` (`keyNotFound`, `valueNotFound`, `typeMismatch` or `dataCorrupted`),
///     `codingPath`, an array of path elements (empty for the top level), and for `keyNotFound` an optional `key`,
///     the missing key. The path follows `JSONDecoder`'s rule: it leads to the offending value, and for `keyNotFound`
///     to the dictionary that lacks the key, so a missing top-level `name` is `codingPath` `[]` with `key` `name`.
///     A string element matches a coding key's
///     `stringValue`: the property's name, or its raw value in explicit `CodingKeys`, but never the dictionary key
///     that a key strategy such as `affixed` produced. An integer element matches a coding key's `intValue`: an
///     array index, or an integer dictionary key, which a coding path cannot tell apart. The element
///     `{"$repeat": {count: 3, path: ["child"]}}` stands for `path` repeated `count` times, for deep paths; once
///     every `$repeat` is expanded (one may hold another), a path holds at most 100,000 elements
///     (``UserInfoFixture/maximumValueCount``), or loading fails with ``UserInfoFixtureError/Code/tooLarge``.
///
/// ### Values in `userInfo`
///
/// Plain property-list values become what the system posts on Apple platforms:
///
/// - `<string>` becomes a `String`; `<date>` a `Date`; `<data>` a `Data`.
/// - `<integer>` becomes an `NSNumber` holding an `Int64` (a `UInt64` above `Int64.max`), and `<real>` an
///   `NSNumber` holding a `Double`.
/// - `<true/>` and `<false/>` become a **boolean `NSNumber`**, as in system notifications (not a Swift `Bool`;
///   write `$bool` for that).
/// - `<array>` becomes a Swift `[Any]`, and a nested `<dict>` a Swift `[String: Any]`. The top-level `userInfo`
///   is an `[AnyHashable: Any]` with `String` keys.
///
/// A dictionary with a single key that starts with `$` is a **tag**, for a value that a property list cannot hold:
///
/// - `{"$rect": [x, y, width, height]}`, `{"$point": [x, y]}`, `{"$size": [width, height]}` and
///   `{"$range": [location, length]}` become an `NSValue`, boxed as the system boxes geometry
///   (`NSValue(rect:)` and the like; `NSValue(cgRect:)` and the like where UIKit exists).
/// - `{"$url": "https://…"}` becomes a `URL`, and `{"$nsurl": "…"}` an `NSURL`.
/// - `{"$null": true}` becomes `NSNull()`.
/// - `{"$intKeys": {"1": …, "-2": …}}` becomes an `[AnyHashable: Any]` whose keys are `Int`s. It may also be the
///   whole `userInfo`.
/// - `{"$int": 3}`, and likewise `$int8`, `$int16`, `$int32`, `$int64`, `$uint`, `$uint8`, `$uint16`, `$uint32` and
///   `$uint64`, become a Swift integer of exactly that type. The payload is an `<integer>`, or a `<string>` for a
///   value above `Int64.max` (`{"$uint64": "18446744073709551615"}`).
/// - `{"$double": 2.5}`, `{"$float": 2.5}` and `{"$cgfloat": 2.5}` become a Swift `Double`, `Float` or `CGFloat`.
///   The payload is a number, or a string such as `"nan"`, `"inf"`, `"-inf"` or `"1e300"`.
/// - `{"$bool": true}` becomes a Swift `Bool`, and `{"$decimal": "1.25"}` a `Decimal`.
/// - `{"$nsstring": "…"}`, `{"$nsarray": […]}` and `{"$nsdictionary": {…}}` become Foundation objects instead of
///   Swift values.
/// - `{"$nest": {depth: 600, key: "child", leaf: …}}` wraps `leaf` in `depth` dictionaries under `key`, or in
///   `depth` arrays when `key` is left out. Property lists cannot nest deeper than 512 levels, so deep input is
///   generated this way, up to ``maximumDepth`` levels in all.
///
/// ``FixtureCapture`` writes four more tags, which may be written by hand too:
///
/// - `{"$uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}` becomes a `UUID`, and `$nsuuid` an `NSUUID`.
/// - `{"$date": 785_000_000.125}` becomes the `Date` that many seconds after 2001-01-01T00:00:00Z, exactly; `<date>`
///   holds whole seconds only.
/// - `{"$entries": [{key: …, value: …}, …]}` becomes an `[AnyHashable: Any]` with keys of any scalar kind: `NSNumber`
///   keys, or strings and integers mixed. It may also be the whole `userInfo`.
/// - `{"$placeholder": {type: "AVAudioSessionRouteDescription", description: "…"}}` marks a value that a fixture
///   cannot hold. It becomes an object of no type that a decoder reads, so decoding it gives a `typeMismatch`, as
///   the original object would; `notificatable-fixtures check` lists every placeholder.
///
/// A key that really starts with `$` is written with two: `$$key` is read as the key `$key`. An unknown tag, or a
/// `$` key next to other keys, is an error.
///
/// ### Example
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
/// <plist version="1.0">
/// <dict>
///     <key>description</key><string>Keyboard will show, with the frame boxed in an NSValue</string>
///     <key>type</key><string>KeyboardFrame</string>
///     <key>decoder</key>
///     <dict>
///         <key>key</key><string>affixed</string>
///         <key>prefix</key><string>UIKeyboard</string>
///         <key>suffix</key><string>UserInfoKey</string>
///     </dict>
///     <key>userInfo</key>
///     <dict>
///         <key>UIKeyboardFrameEndUserInfoKey</key>
///         <dict><key>$rect</key><array><real>0</real><real>456</real><real>390</real><real>388</real></array></dict>
///         <key>UIKeyboardAnimationDurationUserInfoKey</key><real>0.25</real>
///     </dict>
///     <key>expect</key>
///     <dict>
///         <key>value</key>
///         <dict>
///             <key>frameEnd</key>
///             <array>
///                 <array><real>0</real><real>456</real></array>
///                 <array><real>390</real><real>388</real></array>
///             </array>
///             <key>animationDuration</key><real>0.25</real>
///         </dict>
///     </dict>
/// </dict>
/// </plist>
/// ```
///
/// An error expectation reads `<key>error</key><dict><key>kind</key><string>typeMismatch</string>`
/// `<key>codingPath</key><array><string>items</string><integer>0</integer></array></dict>`.
///
/// A malformed fixture gives a ``UserInfoFixtureError`` that names the file, the place inside it and the problem.
/// ``init(contentsOf:)`` throws it; ``fixtures(in:)`` keeps it in the fixture's ``loadError`` instead, so one broken
/// file becomes one failing test case while the others still run.
///
/// ## Sendable
///
/// `[AnyHashable: Any]` is not `Sendable`, so a fixture keeps a checked, `Sendable` description of the dictionary
/// and builds ``userInfo`` afresh on each access. Every access gives new Foundation objects.
public struct UserInfoFixture: Sendable, Identifiable, CustomStringConvertible {
    /// The file the fixture was read from.
    public let url: URL
    /// The fixture's `description` field: what the case shows. Empty when the file has none.
    public let summary: String
    /// The fixture's `type` field: the name of the Swift type to decode, as registered in a
    /// ``UserInfoFixtureRegistry``.
    public let typeName: String
    /// The fixture's `decoder` field: the strategies to decode with.
    public let decoderConfiguration: DecoderConfiguration
    /// The fixture's `expect` field: the decoded value or the error that decoding must give.
    public let expectation: Expectation
    /// The fixture's `name` field: the name of the notification it was captured from, or `nil`.
    public let notificationName: String?
    /// The fixture's `object` field: a description of the captured notification's object, or `nil`. It is for the
    /// reader of the file; no test reads it.
    public let objectDescription: String?
    /// The checked description of `userInfo`, from which each access to ``userInfo`` builds new objects.
    let root: FixtureValue
    /// Whether the file has a `decoder` field, as opposed to the default strategies by omission: a fixture verified
    /// through a handle must not name strategies the handle does not use.
    let declaresDecoder: Bool

    /// Why the fixture's file could not be loaded, for a fixture that ``fixtures(in:)`` returned in place of a
    /// broken file; `nil` for a fixture that loaded.
    ///
    /// A fixture with a load error has no content: its ``typeName`` and ``summary`` are empty, its ``userInfo`` is
    /// empty and its ``expectation`` means nothing. Every check reports the error instead of running:
    /// ``UserInfoFixtureRegistry/verify(_:)``, ``UserInfoFixtureRegistry/check(_:)``,
    /// ``UserInfoFixtureRegistry/validate(_:)`` and ``expectedValue(as:)`` throw it, and ``check(_:using:)`` returns
    /// its description.
    public private(set) var loadError: UserInfoFixtureError? = nil

    /// The file name without its extension, such as `keyboard-will-show`.
    public var name: String { url.deletingPathExtension().lastPathComponent }

    /// The file name with its extension, which identifies the fixture among its folder's fixtures.
    ///
    /// Swift Testing uses it to tell test cases apart, so a single fixture's case can be re-run.
    public var id: String { url.lastPathComponent }

    /// The file name, such as `keyboard-will-show.plist`, which is how a test report names the fixture's case.
    public var description: String { url.lastPathComponent }

    /// The dictionary that the system would post, with `NSNumber`, `NSValue`, `URL`, `NSNull`, `Int` keys and so on,
    /// as described on ``UserInfoFixture``. Each access builds new objects.
    public var userInfo: [AnyHashable: Any] { root.makeUserInfo() }

    /// Reads and checks a fixture file.
    ///
    /// - Parameter url: A file URL of a property list in the format described on ``UserInfoFixture``.
    /// - Throws: ``UserInfoFixtureError`` naming the file and the problem when the file is unreadable, is not a
    ///   property list, or breaks the format.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw UserInfoFixtureError(
                .unreadableFile, file: url, message: "cannot read the file: \(error.localizedDescription)")
        }
        try self.init(data: data, url: url)
    }

    /// Reads a fixture from the bytes of a property list; `url` names it in errors and reports.
    init(data: Data, url: URL) throws {
        let reader = FixtureReader(file: url)
        try reader.measure(data)
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw reader.error(
                .invalidPropertyList, [], "is not a valid property list: \(Self.underlyingMessage(error))")
        }
        guard case .dictionary(let fields)? = FixtureReader.classify(plist) else {
            throw reader.error(.invalidPropertyList, [], "the top level must be a dictionary")
        }
        try reader.checkKeys(
            fields, allowed: ["description", "name", "object", "type", "decoder", "userInfo", "expect"], [],
            code: .unexpectedField)
        self.url = url
        self.summary = try fields["description"].map { try reader.string($0, ["description"]) } ?? ""
        self.notificationName = try fields["name"].map { try reader.string($0, ["name"]) }
        self.objectDescription = try fields["object"].map { try reader.string($0, ["object"]) }
        self.typeName = try reader.string(fields["type"], ["type"])
        if typeName.isEmpty { throw reader.error(.invalidField, ["type"], "must name a type") }
        self.decoderConfiguration =
            try fields["decoder"].map { try DecoderConfiguration(reading: $0, with: reader) }
            ?? DecoderConfiguration()
        self.declaresDecoder = fields["decoder"] != nil
        guard let rawUserInfo = fields["userInfo"] else {
            throw reader.error(.missingField, ["userInfo"], "is missing; expected the userInfo dictionary")
        }
        self.root = try reader.userInfo(rawUserInfo)
        guard let rawExpectation = fields["expect"] else {
            throw reader.error(.missingField, ["expect"], "is missing; expected a dictionary with `value` or `error`")
        }
        self.expectation = try Expectation(reading: rawExpectation, with: reader)
    }

    /// A fixture standing for a file that could not be loaded: it carries the error, and every check throws it.
    init(failedToLoad url: URL, error: UserInfoFixtureError) {
        self.url = url
        self.summary = ""
        self.typeName = ""
        self.notificationName = nil
        self.objectDescription = nil
        self.decoderConfiguration = DecoderConfiguration()
        self.declaresDecoder = false
        self.expectation = .error(ExpectedError(kind: .dataCorrupted, codingPath: []))
        self.root = .dictionary([], bridged: false)
        self.loadError = error
    }

    /// The most specific message in a Foundation error, which for a plist parse error says what is wrong.
    private static func underlyingMessage(_ error: any Error) -> String {
        let nsError = error as NSError
        if let debug = nsError.userInfo[NSDebugDescriptionErrorKey] as? String { return debug }
        return nsError.localizedDescription
    }

    /// Creates a decoder with the fixture's strategies.
    ///
    /// - Returns: A new decoder configured from the fixture's `decoder` field.
    public func makeDecoder() -> UserInfoDecoder {
        decoderConfiguration.makeDecoder()
    }
}

/// Reads every fixture in a folder, sorted by file name.
///
/// The folder is not searched recursively; only files whose extension is `.plist` are read, so a `README.md` can
/// sit beside them. Use the result as the arguments of a parameterized test, so adding a file adds a test case:
///
/// ```swift
/// @Test(arguments: try fixtures(in: fixturesFolder))
/// func decodes(_ fixture: UserInfoFixture) throws {
///     try registry.verify(fixture)
/// }
/// ```
///
/// A file that cannot be read or breaks the format does not stop the others: it is returned as a fixture whose
/// ``UserInfoFixture/loadError`` holds the error, and `verify` (like every other check) throws that error. The
/// broken file is one failing test case, named by its file and reporting its error; the other files still run.
///
/// - Parameter directory: A file URL of the folder.
/// - Returns: The fixtures, sorted by file name, a broken file's among them.
/// - Throws: ``UserInfoFixtureError`` if the folder itself cannot be listed.
public func fixtures(in directory: URL) throws -> [UserInfoFixture] {
    let contents: [URL]
    do {
        contents = try FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
    } catch {
        throw UserInfoFixtureError(
            .unreadableFile, file: directory,
            message: "cannot list the fixture folder: \(error.localizedDescription)")
    }
    return
        contents
        .filter { $0.pathExtension == "plist" }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
        .map { url in
            do {
                return try UserInfoFixture(contentsOf: url)
            } catch let error as UserInfoFixtureError {
                return UserInfoFixture(failedToLoad: url, error: error)
            } catch {
                return UserInfoFixture(
                    failedToLoad: url, error: UserInfoFixtureError(.unreadableFile, file: url, message: "\(error)"))
            }
        }
}
