import Foundation
import Notificatable

/// Maps the `type` names that fixtures use to the Swift types they decode into, and checks fixtures against them.
///
/// A fixture file names its target type with a string; the registry turns that string back into a type, so one
/// parameterized test can run fixtures for many types:
///
/// ```swift
/// var registry = UserInfoFixtureRegistry()
/// registry.register(KeyboardFrame.self)                     // named "KeyboardFrame"
/// registry.register([Int: String].self, named: "IntKeyedStrings")
///
/// @Test(arguments: try fixtures(in: folder))
/// func decodes(_ fixture: UserInfoFixture) throws {
///     try registry.verify(fixture)
/// }
/// ```
///
/// Register the app's handle instead of the type, with `register(orderPlaced)`, to decode each fixture the way the app
/// does: through the handle's decoder, strategies and converters.
///
/// ``verify(_:)`` throws an error whose description explains the failure, so the test report says why; it needs
/// neither Swift Testing nor XCTest. ``check(_:)`` returns the same explanation as a string instead.
///
/// A fixture that names a type the registry does not know fails loudly with
/// ``UserInfoFixtureError/Code/unknownType``, rather than being skipped.
public struct UserInfoFixtureRegistry: Sendable {
    private var checks: [String: any FixtureCheck] = [:]

    /// Creates an empty registry.
    public init() {}

    /// Registers a type under a name that fixtures use in their `type` field.
    ///
    /// Registering a second type under the same name replaces the first.
    ///
    /// - Parameters:
    ///   - type: The type to decode. It must be `Equatable`, so the decoded value can be compared with the expected
    ///     one (see ``UserInfoFixture/expectedValue(as:)`` for how the expected value is read).
    ///   - name: The name fixtures use. Defaults to the type's name, such as `KeyboardFrame`.
    public mutating func register<T: Decodable & Equatable>(_ type: T.Type, named name: String? = nil) {
        checks[name ?? String(describing: type)] = TypedFixtureCheck<T>()
    }

    /// Registers an app's handle under a name that fixtures use in their `type` field: its fixtures are decoded
    /// through the handle, with its decoder and converters (see ``UserInfoFixture/verify(through:)``).
    ///
    /// ```swift
    /// registry.register(AppNotifications.orderPlaced)          // named "OrderPlaced", the payload type's name
    /// ```
    ///
    /// Registering a second handle or type under the same name replaces the first.
    ///
    /// - Parameters:
    ///   - handle: The handle whose payload type the fixtures decode into.
    ///   - name: The name fixtures use. Defaults to the payload type's name.
    public mutating func register<T: Decodable & Equatable>(_ handle: Notificatable<T>, named name: String? = nil) {
        checks[name ?? String(describing: T.self)] = HandleFixtureCheck<T>(handle: handle)
    }

    /// The registered names, sorted.
    public var typeNames: [String] { checks.keys.sorted() }

    /// Decodes the fixture into the type its `type` field names, compares the outcome with its expectation, and
    /// throws when they differ.
    ///
    /// ```swift
    /// @Test(arguments: try fixtures(in: folder))
    /// func decodes(_ fixture: UserInfoFixture) throws {
    ///     try registry.verify(fixture)
    /// }
    /// ```
    ///
    /// The thrown error's description is the whole explanation, so a failing test case reports why it failed:
    ///
    /// ```text
    /// order.plist: the decoded value differs from expect.value in 1 field:
    ///   items[1].quantity: decoded 3, expected 2
    ///   decoded:  Order(…)
    ///   expected: Order(…)
    /// ```
    ///
    /// - Parameter fixture: The fixture to verify.
    /// - Throws: ``UserInfoFixtureMismatch`` when the outcome differs from the expectation;
    ///   ``UserInfoFixtureError`` when the fixture is broken: its ``UserInfoFixture/loadError``, a type the registry
    ///   does not know (``UserInfoFixtureError/Code/unknownType``), or an unreadable `expect.value`.
    public func verify(_ fixture: UserInfoFixture) throws {
        try registeredCheck(for: fixture).verify(fixture)
    }

    /// Decodes the fixture into the type its `type` field names and compares the outcome with its expectation.
    ///
    /// Prefer ``verify(_:)`` in tests: `#expect(try registry.check(fixture) == nil)` reports only that the
    /// expectation failed, while `try registry.verify(fixture)` reports the explanation.
    ///
    /// - Parameter fixture: The fixture to check.
    /// - Returns: `nil` when the outcome matches, or else a description of the mismatch
    ///   (see ``UserInfoFixture/check(_:using:)``).
    /// - Throws: ``UserInfoFixtureError``: the fixture's ``UserInfoFixture/loadError``, or the code
    ///   ``UserInfoFixtureError/Code/unknownType`` when the registry has no type of that name.
    public func check(_ fixture: UserInfoFixture) throws -> String? {
        try registeredCheck(for: fixture).check(fixture)
    }

    /// Checks the fixture itself, without running the decoder under test: it loaded, its type is registered, and
    /// an expected value can be read as that type (see ``UserInfoFixture/expectedValue(as:)``).
    ///
    /// Run it beside ``verify(_:)`` so a broken fixture is reported as a fixture problem, not as a decoder bug.
    ///
    /// - Parameter fixture: The fixture to validate.
    /// - Throws: ``UserInfoFixtureError``: the fixture's ``UserInfoFixture/loadError``, or the code
    ///   ``UserInfoFixtureError/Code/unknownType`` or ``UserInfoFixtureError/Code/invalidExpectation``.
    public func validate(_ fixture: UserInfoFixture) throws {
        try registeredCheck(for: fixture).validate(fixture)
    }

    private func registeredCheck(for fixture: UserInfoFixture) throws -> any FixtureCheck {
        if let loadError = fixture.loadError { throw loadError }
        guard let check = checks[fixture.typeName] else {
            throw UserInfoFixtureError(
                .unknownType, file: fixture.url, location: "type",
                message: "no type named \"\(fixture.typeName)\" is registered; known types are "
                    + typeNames.joined(separator: ", "))
        }
        return check
    }
}

/// A registered type, erased. A generic struct rather than a closure, because a closure that captured `T.self`
/// would need `T`'s metatype to be `Sendable`, which would burden every registered type.
private protocol FixtureCheck: Sendable {
    func check(_ fixture: UserInfoFixture) -> String?
    func verify(_ fixture: UserInfoFixture) throws
    func validate(_ fixture: UserInfoFixture) throws
}

private struct TypedFixtureCheck<T: Decodable & Equatable>: FixtureCheck {
    func check(_ fixture: UserInfoFixture) -> String? { fixture.check(T.self) }

    func verify(_ fixture: UserInfoFixture) throws { try fixture.verify(T.self) }

    func validate(_ fixture: UserInfoFixture) throws {
        if case .value = fixture.expectation { _ = try fixture.expectedValue(as: T.self) }
    }
}

private struct HandleFixtureCheck<T: Decodable & Equatable>: FixtureCheck {
    let handle: Notificatable<T>

    func check(_ fixture: UserInfoFixture) -> String? {
        do {
            return try fixture.mismatch(through: handle, checksType: false)?.message
        } catch {
            return "\(error)"
        }
    }

    func verify(_ fixture: UserInfoFixture) throws {
        if let mismatch = try fixture.mismatch(through: handle, checksType: false) { throw mismatch }
    }

    func validate(_ fixture: UserInfoFixture) throws {
        if case .value = fixture.expectation { _ = try fixture.expectedValue(as: T.self) }
    }
}
