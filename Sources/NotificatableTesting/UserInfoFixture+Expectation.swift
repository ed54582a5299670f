import Foundation
import Notificatable

extension UserInfoFixture {
    /// What decoding a fixture's `userInfo` must give: a value or an error.
    public enum Expectation: Sendable, Equatable {
        /// Decoding succeeds with the value that `expect.value` describes.
        ///
        /// The data is `expect.value` as a binary property list, tags included. Read it with
        /// ``UserInfoFixture/expectedValue(as:)``, which uses Foundation's `PropertyListDecoder` for a plain
        /// property list, so the decoder under test does not check itself, and reads tags as `userInfo` does.
        case value(Data)
        /// Decoding fails with this kind of `DecodingError` at this coding path.
        case error(ExpectedError)
    }

    /// The four kinds of `DecodingError`, named as in the `kind` field of an error expectation.
    public enum DecodingErrorKind: String, Sendable, CaseIterable {
        /// `DecodingError.keyNotFound`: a key is missing.
        case keyNotFound
        /// `DecodingError.valueNotFound`: `NSNull` or `nil` where a non-optional value belongs.
        case valueNotFound
        /// `DecodingError.typeMismatch`: a value of the wrong type, such as a string for a number.
        case typeMismatch
        /// `DecodingError.dataCorrupted`: a value of the right type that cannot be read, such as 300 for a `UInt8`.
        case dataCorrupted

        /// The kind of a decoding error.
        ///
        /// - Parameter error: The error to classify.
        public init(_ error: DecodingError) {
            switch error {
            case .keyNotFound: self = .keyNotFound
            case .valueNotFound: self = .valueNotFound
            case .typeMismatch: self = .typeMismatch
            case .dataCorrupted: self = .dataCorrupted
            @unknown default: self = .dataCorrupted
            }
        }
    }

    /// One element of an expected coding path.
    ///
    /// A string matches a coding key by its `stringValue`, and an integer by its `intValue`. Array indices and
    /// integer dictionary keys are both integers, because a coding path does not tell them apart. Write the
    /// property's name (or its raw value in explicit `CodingKeys`), not the dictionary key that a key strategy
    /// maps it to.
    public enum CodingPathElement: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByIntegerLiteral
    {
        /// Matches a coding key whose `stringValue` is this string.
        case string(String)
        /// Matches a coding key whose `intValue` is this integer: an array index or an integer dictionary key.
        case int(Int)

        /// Creates a string element, so a path can be written `["items", 0, "name"]`.
        ///
        /// - Parameter value: The key's string value.
        public init(stringLiteral value: String) { self = .string(value) }

        /// Creates an integer element, so a path can be written `["items", 0, "name"]`.
        ///
        /// - Parameter value: The key's integer value.
        public init(integerLiteral value: Int) { self = .int(value) }

        /// Whether a coding key is the one this element describes.
        ///
        /// - Parameter key: A key from a `DecodingError`'s coding path.
        /// - Returns: `true` when the key's `stringValue` (or `intValue`) equals the element.
        public func matches(_ key: any CodingKey) -> Bool {
            switch self {
            case .string(let string): key.stringValue == string
            case .int(let int): key.intValue == int
            }
        }

        /// The element as it is written in a fixture: a quoted string, or a number.
        public var description: String {
            switch self {
            case .string(let string): "\"\(string)\""
            case .int(let int): "\(int)"
            }
        }
    }

    /// The error a fixture expects: the kind of `DecodingError`, its coding path, and for `keyNotFound` the missing key.
    ///
    /// The path follows `JSONDecoder`'s rule, the one `UserInfoDecoder` and `NotificationDecodingFailure` follow:
    /// it leads to the value that is wrong, and for `keyNotFound` to the **dictionary that lacks the key**, which is
    /// named apart, in ``key``. A missing top-level `name` is `keyNotFound` at path `[]` with key `"name"`.
    public struct ExpectedError: Sendable, Equatable, CustomStringConvertible {
        /// The kind of `DecodingError`.
        public var kind: DecodingErrorKind
        /// The coding path the error must carry, from the top level to the offending value; for `keyNotFound`, to the
        /// dictionary that lacks the key.
        public var codingPath: [CodingPathElement]
        /// For `keyNotFound`, the key that must be missing (its `stringValue`), or `nil` to accept any key.
        public var key: String?

        /// Creates an expected error.
        ///
        /// - Parameters:
        ///   - kind: The kind of `DecodingError`.
        ///   - codingPath: The coding path the error must carry, such as `["items", 0, "name"]`; for `keyNotFound`,
        ///     the path of the dictionary that lacks the key.
        ///   - key: For `keyNotFound`, the missing key; `nil` accepts any key.
        public init(kind: DecodingErrorKind, codingPath: [CodingPathElement], key: String? = nil) {
            self.kind = kind
            self.codingPath = codingPath
            self.key = key
        }

        /// Whether an error is a `DecodingError` of this kind with exactly this coding path (and, for `keyNotFound`
        /// with a ``key``, that key).
        ///
        /// - Parameter error: The error that decoding threw.
        /// - Returns: `true` when the kind, every element of the coding path and the key match.
        public func matches(_ error: any Error) -> Bool {
            guard let error = error as? DecodingError, DecodingErrorKind(error) == kind else { return false }
            if let key, case .keyNotFound(let missing, _) = error, missing.stringValue != key { return false }
            return Self.matches(codingPath, UserInfoFixture.codingPath(of: error))
        }

        static func matches(_ expected: [CodingPathElement], _ path: [any CodingKey]) -> Bool {
            path.count == expected.count && zip(expected, path).allSatisfy { $0.matches($1) }
        }

        /// The expectation as a sentence fragment, such as `typeMismatch at items[0].name` or
        /// `keyNotFound "count" at items[2]`: the path is written as the package writes it everywhere (string keys
        /// joined by dots, integer keys in brackets). An expectation at the top level has no `at` part
        /// (`dataCorrupted`), except a missing key's, which says `at the top level`.
        public var description: String {
            let missing = key.map { " \"\($0)\"" } ?? ""
            return
                "\(kind)\(missing)\(UserInfoFixture.place(codingPath.map(\.codingKey), keyNotFound: kind == .keyNotFound))"
        }
    }

    /// Reads the expected value.
    ///
    /// ```swift
    /// let expected = try fixture.expectedValue(as: KeyboardFrame.self)
    /// ```
    ///
    /// A plain property list is read by Foundation's `PropertyListDecoder`, so the decoder under test does not check
    /// itself. A value that `PropertyListDecoder` cannot read (a `Decimal` written as `<real>9.99</real>`), or one
    /// written with the same tags as `userInfo` (`{"$decimal": "9.99"}`, `{"$url": "…"}`, `{"$rect": […]}`,
    /// `{"$null": true}`…), is built the way `userInfo` is built and read by a `UserInfoDecoder` with its default
    /// strategies. Its keys are the properties' names: the fixture's key strategy applies to `userInfo` only.
    ///
    /// - Parameter type: The type to read, usually the fixture's registered type.
    /// - Returns: The value that decoding the fixture's `userInfo` must give.
    /// - Throws: ``UserInfoFixtureError``: the fixture's ``loadError`` when its file could not be loaded, or the code
    ///   ``UserInfoFixtureError/Code/invalidExpectation`` when the fixture expects an error, or when `expect.value`
    ///   cannot be read as `type`.
    public func expectedValue<T: Decodable>(as type: T.Type) throws -> T {
        if let loadError { throw loadError }
        guard case .value(let data) = expectation else {
            throw UserInfoFixtureError(
                .invalidExpectation, file: url, location: "expect",
                message: "expects an error, not a value")
        }
        let raw: Any
        do {
            raw = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw UserInfoFixtureError(
                .invalidExpectation, file: url, location: "expect.value", message: "cannot be read back")
        }
        var propertyListError: (any Error)?
        if !Self.containsDollarKey(raw) {
            do {
                return try PropertyListDecoder().decode(T.self, from: data)
            } catch {
                propertyListError = error
            }
        }
        let value = try FixtureReader(file: url).value(raw, ["expect", "value"])
        do {
            return try UserInfoDecoder().decode(T.self, fromValue: value.makeValue())
        } catch {
            let tried = propertyListError.map { "PropertyListDecoder: \(Self.describe($0)); " } ?? ""
            throw UserInfoFixtureError(
                .invalidExpectation, file: url, location: "expect.value",
                message: "cannot be read as \(T.self): \(tried)UserInfoDecoder: \(Self.describe(error))")
        }
    }

    /// Whether a property-list object holds a dictionary key starting with `$`: a tag, or an escaped `$$` key.
    ///
    /// It walks the value with a list of its own, not the call stack, and asks each value only whether it is an
    /// array or a dictionary (not whether it is a number, which would bridge a Swift array, and everything in it, to
    /// Foundation), so no depth of nesting can overflow the stack.
    static func containsDollarKey(_ raw: Any) -> Bool {
        var pending: [Any] = [raw]
        while let next = pending.popLast() {
            if let array = next as? [Any] {
                pending.append(contentsOf: array)
            } else if let dictionary = next as? [AnyHashable: Any] {
                for (key, value) in dictionary {
                    if let key = key.base as? String, key.hasPrefix("$") { return true }
                    pending.append(value)
                }
            }
        }
        return false
    }

    /// Decodes ``userInfo`` and compares the outcome with the fixture's expectation.
    ///
    /// An expected value is compared with `==`; an expected error by its kind and its whole coding path. Prefer
    /// ``verify(_:using:)`` in a test: it throws the same explanation, so the test report shows it.
    ///
    /// ```swift
    /// #expect(fixture.check(KeyboardFrame.self) == nil)
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode, usually the one the fixture's ``typeName`` names.
    ///   - decoder: The decoder to use. By default, a new decoder with the fixture's strategies
    ///     (``makeDecoder()``); a decoder passed here is used as it is.
    /// - Returns: `nil` when the outcome matches, or else a description of the mismatch that names the fixture,
    ///   what was expected and what happened (for a value, each field that differs), or the fixture's own problem
    ///   (its ``loadError``, or an unreadable `expect.value`).
    public func check<T: Decodable & Equatable>(_ type: T.Type, using decoder: UserInfoDecoder? = nil) -> String? {
        do {
            return try mismatch(T.self, using: decoder)?.message
        } catch {
            return "\(error)"
        }
    }

    /// Decodes ``userInfo``, compares the outcome with the fixture's expectation, and throws when they differ.
    ///
    /// ```swift
    /// @Test(arguments: try fixtures(in: folder))
    /// func decodes(_ fixture: UserInfoFixture) throws {
    ///     try fixture.verify(KeyboardFrame.self)
    /// }
    /// ```
    ///
    /// The thrown error's description is the whole explanation, so the test report says why the case failed.
    ///
    /// - Parameters:
    ///   - type: The type to decode, usually the one the fixture's ``typeName`` names.
    ///   - decoder: The decoder to use. By default, a new decoder with the fixture's strategies.
    /// - Throws: ``UserInfoFixtureMismatch`` when the outcome differs from the expectation (listing each field that
    ///   differs for a value); ``UserInfoFixtureError`` when the fixture itself is broken (its ``loadError``, or an
    ///   `expect.value` that cannot be read as `type`).
    public func verify<T: Decodable & Equatable>(_ type: T.Type, using decoder: UserInfoDecoder? = nil) throws {
        if let mismatch = try mismatch(T.self, using: decoder) { throw mismatch }
    }

    /// The mismatch between the outcome and the expectation, or `nil` when they match.
    func mismatch<T: Decodable & Equatable>(_ type: T.Type, using decoder: UserInfoDecoder?) throws
        -> UserInfoFixtureMismatch?
    {
        if let loadError { throw loadError }
        let decoder = decoder ?? makeDecoder()
        return try mismatch(T.self, outcome: Result { try decoder.decode(T.self, from: userInfo) })
    }

    /// The mismatch between an outcome of decoding ``userInfo`` and the expectation, or `nil` when they match.
    func mismatch<T: Decodable & Equatable>(_ type: T.Type, outcome: Result<T, any Error>) throws
        -> UserInfoFixtureMismatch?
    {
        switch expectation {
        case .value:
            let expected = try expectedValue(as: T.self)
            switch outcome {
            case .success(let decoded):
                if decoded == expected { return nil }
                let differences = FieldDiff.differences(decoded, expected)
                var lines: [String]
                if differences.isEmpty {
                    lines = [
                        "\(description): decoded \(decoded), but expected \(expected) (== is false, yet no field differs)"
                    ]
                } else {
                    let fields = differences.count == 1 ? "1 field" : "\(differences.count) fields"
                    let more = differences.count >= FieldDiff.limit ? " (the first \(FieldDiff.limit))" : ""
                    lines = ["\(description): the decoded value differs from expect.value in \(fields)\(more):"]
                    lines += differences.map { "  \($0)" }
                    lines += ["  decoded:  \(Self.trimmed(decoded))", "  expected: \(Self.trimmed(expected))"]
                }
                return UserInfoFixtureMismatch(
                    file: url, differences: differences, message: lines.joined(separator: "\n"))
            case .failure(let error):
                return UserInfoFixtureMismatch(
                    file: url,
                    message: "\(description): decoding threw \(Self.describe(error)), but expect.value expects a value"
                        + "\n  expected: \(Self.trimmed(expected))")
            }
        case .error(let expectedError):
            switch outcome {
            case .success(let decoded):
                return UserInfoFixtureMismatch(
                    file: url,
                    message: "\(description): expected \(expectedError), but decoding succeeded"
                        + "\n  decoded:  \(Self.trimmed(decoded))")
            case .failure(let error):
                if expectedError.matches(error) { return nil }
                return UserInfoFixtureMismatch(
                    file: url,
                    message: "\(description): expected \(expectedError), but decoding threw \(Self.describe(error))"
                        + Self.keyNotFoundHint(expectedError, error))
            }
        }
    }

    /// How a value is shown after the reason of a mismatch: its description, cut at 300 characters, so the reason
    /// stays on screen.
    static func trimmed(_ value: Any) -> String {
        let text = String(describing: value)
        guard text.count > 300 else { return text }
        return "\(text.prefix(300))… (\(text.count) characters)"
    }

    /// For a `keyNotFound` expectation written with the missing key at the end of its path, the rule and the
    /// fields to write instead; empty otherwise.
    static func keyNotFoundHint(_ expected: ExpectedError, _ error: any Error) -> String {
        guard expected.kind == .keyNotFound, case .keyNotFound(let key, let context)? = error as? DecodingError,
            ExpectedError.matches(expected.codingPath, context.codingPath + [key])
        else { return "" }
        let path = expected.codingPath.dropLast().map(\.description).joined(separator: ", ")
        return ". A keyNotFound path leads to the dictionary that lacks the key, as JSONDecoder's does: write "
            + "codingPath [\(path)] and key \"\(key.stringValue)\""
    }

    // MARK: - Describing errors

    /// The error's coding path, `JSONDecoder`'s: for `keyNotFound`, the path of the dictionary that lacks the key.
    static func codingPath(of error: DecodingError) -> [any CodingKey] {
        switch error {
        case .keyNotFound(_, let context), .valueNotFound(_, let context), .typeMismatch(_, let context),
            .dataCorrupted(let context):
            context.codingPath
        @unknown default: []
        }
    }

    /// Where in the value a coding path leads, as a message says it: ` at items[1].quantity`, written by the package's
    /// one path formatter, so that fixture messages agree with ``NotificationDecodingFailure`` and the decoder; empty
    /// for the top level, except for a missing key, whose dictionary is ` at the top level`.
    static func place(_ path: [any CodingKey], keyNotFound: Bool = false) -> String {
        codingPathDescription(path).map { " at \($0)" } ?? (keyNotFound ? " at the top level" : "")
    }

    /// A `DecodingError` as its kind, the missing key of a `keyNotFound`, its path and its message.
    static func describe(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return "\(type(of: error)): \(error)" }
        let message: String
        switch decodingError {
        case .keyNotFound(_, let context), .valueNotFound(_, let context), .typeMismatch(_, let context),
            .dataCorrupted(let context):
            message = context.debugDescription
        @unknown default:
            message = "\(decodingError)"
        }
        var missing = ""
        if case .keyNotFound(let key, _) = decodingError { missing = " \"\(key.stringValue)\"" }
        let isKeyNotFound = DecodingErrorKind(decodingError) == .keyNotFound
        return "\(DecodingErrorKind(decodingError))\(missing)"
            + "\(place(codingPath(of: decodingError), keyNotFound: isKeyNotFound)) (\(message))"
    }
}

// MARK: - Reading the `expect` field

extension UserInfoFixture.Expectation {
    init(reading raw: Any, with reader: FixtureReader) throws {
        let location = ["expect"]
        let fields = try reader.dictionary(raw, location, code: .invalidExpectation)
        try reader.checkKeys(fields, allowed: ["value", "error"], location, code: .invalidExpectation)
        switch (fields["value"], fields["error"]) {
        case (let value?, nil):
            // Checked now, so a malformed tag fails when the file is loaded; read again by `expectedValue(as:)`.
            _ = try reader.value(value, location + ["value"])
            do {
                self = .value(try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
            } catch {
                throw reader.error(.invalidExpectation, location + ["value"], "cannot be stored as a property list")
            }
        case (nil, let error?):
            self = .error(try UserInfoFixture.ExpectedError(reading: error, reader, location + ["error"]))
        default:
            throw reader.error(.invalidExpectation, location, "must hold exactly one of `value` and `error`")
        }
    }
}

extension UserInfoFixture.ExpectedError {
    init(reading raw: Any, _ reader: FixtureReader, _ location: [String]) throws {
        let fields = try reader.dictionary(raw, location, code: .invalidExpectation)
        try reader.checkKeys(fields, allowed: ["kind", "codingPath", "key"], location, code: .invalidExpectation)
        let kindName = try reader.string(fields["kind"], location + ["kind"], code: .invalidExpectation)
        guard let kind = UserInfoFixture.DecodingErrorKind(rawValue: kindName) else {
            throw reader.error(
                .invalidExpectation, location + ["kind"],
                "unknown kind \"\(kindName)\"; expected one of "
                    + UserInfoFixture.DecodingErrorKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard let rawPath = fields["codingPath"] else {
            throw reader.error(
                .missingField, location + ["codingPath"],
                "is missing; write an empty array for an error at the top level")
        }
        let key = try fields["key"].map { try reader.string($0, location + ["key"], code: .invalidExpectation) }
        if key != nil, kind != .keyNotFound {
            throw reader.error(.invalidExpectation, location + ["key"], "only applies to the kind keyNotFound")
        }
        self.init(kind: kind, codingPath: try Self.path(rawPath, reader, location + ["codingPath"]), key: key)
    }

    /// The most elements an expected coding path holds once its `$repeat`s are expanded: 100,000, the most values a
    /// fixture holds. A `$repeat` inside a `$repeat` multiplies, so without it a few bytes could ask for billions.
    static let maximumCodingPathLength = UserInfoFixture.maximumValueCount

    /// Reads a coding path of at most `limit` elements once expanded, or throws a ``UserInfoFixtureError/Code/tooLarge``
    /// error at the element that would go past it.
    private static func path(
        _ raw: Any, _ reader: FixtureReader, _ location: [String], limit: Int = maximumCodingPathLength
    ) throws -> [UserInfoFixture.CodingPathElement] {
        guard case .array(let array)? = FixtureReader.classify(raw) else {
            throw reader.error(.invalidExpectation, location, "must be an array of strings and integers")
        }
        var path: [UserInfoFixture.CodingPathElement] = []
        for (index, element) in array.enumerated() {
            let elementLocation = location + ["[\(index)]"]
            if path.count >= limit {
                throw tooLong(reader, elementLocation)
            }
            switch FixtureReader.classify(element) {
            case .string(let string)?: path.append(.string(string))
            case .number(.integer(let integer))?:
                guard let int = Int(exactly: integer) else {
                    throw reader.error(.invalidExpectation, elementLocation, "is out of range for Int")
                }
                path.append(.int(int))
            case .dictionary(let dictionary)? where dictionary.count == 1 && dictionary["$repeat"] != nil:
                path += try repeated(
                    dictionary["$repeat"] as Any, reader, elementLocation + ["$repeat"], limit: limit - path.count)
            default:
                throw reader.error(
                    .invalidExpectation, elementLocation,
                    "a coding path element must be a string, an integer or {\"$repeat\": …}")
            }
        }
        return path
    }

    private static func repeated(_ raw: Any, _ reader: FixtureReader, _ location: [String], limit: Int) throws
        -> [UserInfoFixture.CodingPathElement]
    {
        let fields = try reader.dictionary(raw, location, code: .invalidExpectation)
        try reader.checkKeys(fields, allowed: ["count", "path"], location, code: .invalidExpectation)
        guard let rawCount = fields["count"], case .number(.integer(let count))? = FixtureReader.classify(rawCount),
            (0...100_000).contains(count)
        else { throw reader.error(.invalidExpectation, location + ["count"], "must be an integer from 0 to 100000") }
        guard let rawPath = fields["path"] else {
            throw reader.error(.missingField, location + ["path"], "is missing; expected the path elements to repeat")
        }
        let element = try path(rawPath, reader, location + ["path"], limit: limit)
        // Counted before anything is repeated: `count` times `element.count` elements must fit in what is left.
        guard count == 0 || element.count <= limit / Int(count) else { throw tooLong(reader, location) }
        return Array([[UserInfoFixture.CodingPathElement]](repeating: element, count: Int(count)).joined())
    }

    private static func tooLong(_ reader: FixtureReader, _ location: [String]) -> UserInfoFixtureError {
        reader.error(
            .tooLarge, location,
            "the coding path holds more than \(maximumCodingPathLength) elements once its $repeat are expanded, the "
                + "most an expected coding path holds")
    }
}

// MARK: - Writing paths

extension UserInfoFixture.CodingPathElement {
    /// The element as a coding key, for the package's path formatter: a string key, or an integer one.
    var codingKey: any CodingKey { FixturePathKey(self) }
}

/// A coding key made from a fixture's path element.
private struct FixturePathKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ element: UserInfoFixture.CodingPathElement) {
        switch element {
        case .string(let string):
            stringValue = string
            intValue = nil
        case .int(let int):
            stringValue = String(int)
            intValue = int
        }
    }

    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
