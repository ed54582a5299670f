import Foundation
import Notificatable

// MARK: - Verifying through a handle

extension UserInfoFixture {
    /// Decodes the fixture's `userInfo` through `handle`, as the handle's subscribers receive a legacy post, compares
    /// the outcome with the expectation, and throws when they differ.
    ///
    /// ```swift
    /// @Test(arguments: try fixtures(in: folder))
    /// func orderPlacedReadsEveryFixture(_ fixture: UserInfoFixture) throws {
    ///     try fixture.verify(through: AppNotifications.orderPlaced)
    /// }
    /// ```
    ///
    /// The handle's own conversion chain decides: its converters first, then its decoder, with the strategies the
    /// app set on it, so a fixture does not repeat them. An expected value is compared with `==`, and an expected
    /// error by its kind and coding path (a converter's error, or another failure that is not a `DecodingError`, is
    /// a mismatch that says so).
    ///
    /// A fixture may still carry a `decoder` field, for the tools that read it alone; when that field names a
    /// strategy the handle does not use, the fixture and the app disagree on what the `userInfo` means, and this is
    /// reported as a mismatch before anything is decoded.
    ///
    /// The fixture's `type` must name `T`: its name (`OrderPlaced`), or its name qualified by its module or enclosing
    /// types (`MyApp.OrderPlaced`). A fixture of another type, or with a typo in its `type`, is an error
    /// (``UserInfoFixtureError/Code/unknownType``) rather than a test that passes by decoding the wrong thing.
    ///
    /// - Parameter handle: The app's handle for the notification.
    /// - Throws: ``UserInfoFixtureMismatch`` when the outcome differs from the expectation, or when the fixture's
    ///   `decoder` field disagrees with the handle's decoder; ``UserInfoFixtureError`` when the fixture itself is
    ///   broken (its ``loadError``, a `type` that does not name `T`, or an `expect.value` that cannot be read as
    ///   `T`).
    public func verify<T: Decodable & Equatable>(through handle: Notificatable<T>) throws {
        if let mismatch = try mismatch(through: handle) { throw mismatch }
    }

    /// Decodes the fixture's `userInfo` through `handle` and compares the outcome with the expectation; see
    /// ``verify(through:)``.
    ///
    /// - Parameter handle: The app's handle for the notification.
    /// - Returns: `nil` when the outcome matches, or else the explanation that ``verify(through:)`` would throw.
    public func check<T: Decodable & Equatable>(through handle: Notificatable<T>) -> String? {
        do {
            return try mismatch(through: handle)?.message
        } catch {
            return "\(error)"
        }
    }

    /// The mismatch; `checksType` is `false` for a registry, which chose the handle by the fixture's `type` already
    /// (under a name of its own, perhaps).
    func mismatch<T: Decodable & Equatable>(through handle: Notificatable<T>, checksType: Bool = true) throws
        -> UserInfoFixtureMismatch?
    {
        if let loadError { throw loadError }
        if checksType { try requireTypeNamed(T.self, by: "the handle \"\(handle.name.rawValue)\"") }
        if declaresDecoder, let handleDecoder = handle.legacyDecoder {
            let disagreements = decoderConfiguration.disagreements(with: handleDecoder)
            if !disagreements.isEmpty {
                return UserInfoFixtureMismatch(
                    file: url,
                    message: "\(description): the fixture's decoder field disagrees with the decoder of the handle "
                        + "\"\(handle.name.rawValue)\", which is what decodes it: "
                        + disagreements.joined(separator: "; ")
                        + ". Remove the field, or make it say what the handle does.")
            }
        }
        let notification = Notification(name: handle.name, object: nil, userInfo: userInfo)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try handle.payload(from: notification))
        } catch {
            // A decoding failure's own error is what the expectation describes; any other failure is itself.
            outcome = .failure(error.error is DecodingError ? error.error : error)
        }
        return try mismatch(T.self, outcome: outcome)
    }
}

// MARK: - The fixture's type

extension UserInfoFixture {
    /// Throws ``UserInfoFixtureError/Code/unknownType`` unless the fixture's `type` names `T`, by its name or by its
    /// name qualified by its module or enclosing types.
    func requireTypeNamed<T>(_ type: T.Type, by user: String) throws {
        let name = String(describing: T.self)
        // A private or local type's qualified name has an "(unknown context at $…)" component: left out.
        let qualified = String(reflecting: T.self).split(separator: ".").filter { !$0.hasPrefix("(") }
            .joined(separator: ".")
        if typeName == name || typeName == qualified || qualified.hasSuffix("." + typeName) { return }
        throw UserInfoFixtureError(
            .unknownType, file: url, location: "type",
            message: "the fixture's type is \"\(typeName)\", but \(user) decodes \(name); fix the fixture's type, or "
                + "verify it with the handle of \(typeName)")
    }
}

// MARK: - Comparing with a decoder

extension UserInfoFixture.DecoderConfiguration {
    /// Where this configuration and `decoder`'s strategies differ, one phrase for each strategy, such as
    /// `date: the fixture says iso8601, the handle uses deferredToDate`; empty when they agree.
    func disagreements(with decoder: UserInfoDecoder) -> [String] {
        var result: [String] = []
        func compare(_ field: String, _ fixture: String, _ handle: String) {
            if fixture != handle { result.append("\(field): the fixture says \(fixture), the handle uses \(handle)") }
        }
        compare("key", Self.describe(keyStrategy), Self.describe(decoder.keyDecodingStrategy))
        compare("date", Self.describe(dateStrategy), Self.describe(decoder.dateDecodingStrategy))
        compare("data", Self.describe(dataStrategy), Self.describe(decoder.dataDecodingStrategy))
        return result
    }

    private static func describe(_ strategy: KeyStrategy) -> String {
        switch strategy {
        case .useDefaultKeys: "useDefaultKeys"
        case .convertFromSnakeCase: "convertFromSnakeCase"
        case .affixed(let prefix, let suffix): "affixed(prefix: \"\(prefix)\", suffix: \"\(suffix)\")"
        }
    }

    private static func describe(_ strategy: UserInfoDecoder.KeyDecodingStrategy) -> String {
        switch strategy {
        case .useDefaultKeys: "useDefaultKeys"
        case .convertFromSnakeCase: "convertFromSnakeCase"
        case .affixed(let prefix, let suffix): "affixed(prefix: \"\(prefix)\", suffix: \"\(suffix)\")"
        case .custom: "a custom key strategy"
        }
    }

    private static func describe(_ strategy: DateStrategy) -> String {
        switch strategy {
        case .deferredToDate: "deferredToDate"
        case .secondsSince1970: "secondsSince1970"
        case .millisecondsSince1970: "millisecondsSince1970"
        case .iso8601: "iso8601"
        case .formatted(let format): "formatted(dateFormat: \"\(format)\")"
        }
    }

    private static func describe(_ strategy: UserInfoDecoder.DateDecodingStrategy) -> String {
        switch strategy {
        case .deferredToDate: "deferredToDate"
        case .secondsSince1970: "secondsSince1970"
        case .millisecondsSince1970: "millisecondsSince1970"
        case .iso8601: "iso8601"
        case .formatted(let formatter): "formatted(dateFormat: \"\(formatter.dateFormat ?? "")\")"
        case .custom: "a custom date strategy"
        }
    }

    private static func describe(_ strategy: DataStrategy) -> String {
        switch strategy {
        case .deferredToData: "deferredToData"
        case .base64: "base64"
        }
    }

    private static func describe(_ strategy: UserInfoDecoder.DataDecodingStrategy) -> String {
        switch strategy {
        case .deferredToData: "deferredToData"
        case .base64: "base64"
        case .custom: "a custom data strategy"
        }
    }
}
