import Foundation
import Notificatable
import Testing

// Shared helpers for the coder tests: every error test checks the error's kind *and* its coding path, the way
// swift-foundation's own coder tests do.

/// The four kinds of `DecodingError`.
enum DecodingErrorKind: String, CustomStringConvertible {
    case typeMismatch, valueNotFound, keyNotFound, dataCorrupted
    var description: String { rawValue }
}

/// One element of an expected coding path.
///
/// A string literal is a string key (`intValue == nil`), an integer literal is an array index (`intValue == index`,
/// spelled `"Index n"` as Foundation's coders spell it), and ``intKey(_:)`` is an integer dictionary key
/// (`stringValue == "n"`, `intValue == n`). Both `stringValue` and `intValue` of the actual key are compared.
enum PathElement: Equatable, CustomStringConvertible, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case key(String)
    case index(Int)
    case intKey(Int)
    case other(stringValue: String, intValue: Int?)

    init(stringLiteral value: String) { self = .key(value) }
    init(integerLiteral value: Int) { self = .index(value) }

    init(_ key: any CodingKey) {
        switch key.intValue {
        case .none: self = .key(key.stringValue)
        case .some(let int) where key.stringValue == "Index \(int)": self = .index(int)
        case .some(let int) where key.stringValue == String(int): self = .intKey(int)
        case .some(let int): self = .other(stringValue: key.stringValue, intValue: int)
        }
    }

    var description: String {
        switch self {
        case .key(let string): "\"\(string)\""
        case .index(let index): "[\(index)]"
        case .intKey(let int): "intKey(\(int))"
        case .other(let string, let int): "other(\(string), \(int.map(String.init) ?? "nil"))"
        }
    }
}

extension DecodingError {
    var kind: DecodingErrorKind {
        switch self {
        case .typeMismatch: .typeMismatch
        case .valueNotFound: .valueNotFound
        case .keyNotFound: .keyNotFound
        case .dataCorrupted: .dataCorrupted
        @unknown default: .dataCorrupted
        }
    }

    var context: Context? {
        switch self {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            context
        @unknown default: nil
        }
    }

    /// The type named by `typeMismatch` and `valueNotFound`.
    var expectedType: Any.Type? {
        switch self {
        case .typeMismatch(let type, _), .valueNotFound(let type, _): type
        default: nil
        }
    }
}

/// Runs `body`, which must throw a `DecodingError` of `kind` whose `codingPath` is `path`.
///
/// - Parameters:
///   - kind: the kind of error expected.
///   - path: the expected `codingPath`.
///   - missingKey: for `keyNotFound`, the key that was not found.
///   - type: for `typeMismatch` and `valueNotFound`, the type the error names.
///   - message: a substring of `debugDescription`.
///   - sourceLocation: where to report a failed expectation.
///   - body: the code that must throw.
/// - Returns: the error's context, for further checks, or `nil` when the expectation failed.
@discardableResult
func expectDecodingError<R>(
    _ kind: DecodingErrorKind,
    at path: [PathElement],
    missingKey: PathElement? = nil,
    type: Any.Type? = nil,
    message: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> DecodingError.Context? {
    let result: R
    do {
        result = try body()
    } catch let error as DecodingError {
        #expect(error.kind == kind, "kind: \(error)", sourceLocation: sourceLocation)
        guard let context = error.context else {
            Issue.record("no context in \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(
            context.codingPath.map(PathElement.init) == path,
            "codingPath, in \(context.debugDescription)",
            sourceLocation: sourceLocation
        )
        if let missingKey {
            if case .keyNotFound(let key, _) = error {
                #expect(PathElement(key) == missingKey, "missing key", sourceLocation: sourceLocation)
            } else {
                Issue.record("expected keyNotFound(\(missingKey)), got \(error)", sourceLocation: sourceLocation)
            }
        }
        if let type {
            #expect(
                error.expectedType.map { String(reflecting: $0) } == String(reflecting: type),
                "type named by the error",
                sourceLocation: sourceLocation
            )
        }
        if let message {
            #expect(
                context.debugDescription.localizedCaseInsensitiveContains(message),
                "message \"\(context.debugDescription)\" should contain \"\(message)\"",
                sourceLocation: sourceLocation
            )
        }
        return context
    } catch {
        Issue.record(
            "expected DecodingError.\(kind), got \(Swift.type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected DecodingError.\(kind) at \(path), got a value: \(result)", sourceLocation: sourceLocation)
    return nil
}

// MARK: - Small shared fixtures

/// A one-property wrapper, so that a value is read through a keyed container at the path `["value"]`.
struct Box<Value: Codable>: Codable {
    var value: Value
}

extension Box: Equatable where Value: Equatable {}

/// A one-property wrapper whose property is optional, so that it is read with `decodeIfPresent`.
struct OptionalBox<Value: Codable>: Codable {
    var value: Value?
}

extension OptionalBox: Equatable where Value: Equatable {}

/// Decodes `Box<T>` from `["value": value]` and returns the inner value.
func decodeBoxed<T: Codable>(_ type: T.Type, _ value: Any, using decoder: UserInfoDecoder = UserInfoDecoder()) throws
    -> T
{
    try decoder.decode(Box<T>.self, from: ["value": value]).value
}

/// A labelled value of any type, for parameterized tests (`Any` is not `Sendable`; the values used are immutable).
struct Sample: @unchecked Sendable, CustomTestStringConvertible {
    let label: String
    let value: Any
    init(_ label: String, _ value: Any) {
        self.label = label
        self.value = value
    }
    var testDescription: String { label }
}

/// Runs a closure as the `init(from:)` of a type being decoded, so that a test can drive the containers by hand.
///
/// The closure travels in the decoder's `userInfo`; ``inspect(_:using:_:)`` installs it and returns its result.
struct Inspect: Decodable {
    static let key = CodingUserInfoKey(rawValue: "NotificatableTests.inspect")!
    let result: Any

    init(from decoder: any Decoder) throws {
        guard let body = decoder.userInfo[Self.key] as? @Sendable (any Decoder) throws -> Any else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no inspector"))
        }
        result = try body(decoder)
    }
}

/// Decodes `value` as an ``Inspect``, with `body` as its `init(from:)`, and returns what `body` returned.
func inspect<R>(
    _ value: Any, using decoder: UserInfoDecoder = UserInfoDecoder(),
    _ body: @escaping @Sendable (any Decoder) throws -> R
) throws -> R {
    decoder.userInfo[Inspect.key] = { @Sendable (decoder: any Decoder) throws -> Any in try body(decoder) }
    let inspected = try decoder.decode(Inspect.self, fromValue: value)
    return try #require(inspected.result as? R)
}

/// A coding key that takes any string or integer.
struct AnyKey: CodingKey, Hashable, ExpressibleByStringLiteral {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
    init(stringLiteral value: String) { self.init(stringValue: value) }
}

/// The coding path as comparable elements.
func elements(_ path: [any CodingKey]) -> [PathElement] { path.map(PathElement.init) }
