import Foundation

/// A notification whose payload could not be produced, or a typed post whose plain keys could not be written.
///
/// When a typed subscriber receives a notification it cannot turn into its payload type, the subscriber's handler
/// is not called, other subscribers are still served, and the failure is reported: to the subscription's
/// `onFailure:` handler if it has one, otherwise to the global ``handler``. Reports run synchronously on the posting
/// thread.
///
/// ```swift
/// userDidLogin.subscribe(center: center, onFailure: { failure in
///     log("\(failure.name.rawValue): \(failure.kind) at \(failure.codingPath.map(\.stringValue))")
/// }) { note in
///     show(note.userInfo)
/// }
/// ```
///
/// ``Notificatable/payload(from:)`` throws the same value.
///
/// The value is `Sendable` although ``object`` is not: it holds the object that the poster passed, exactly as the
/// `Notification` it was built from does, and it is handed over synchronously on the posting thread. Don't keep the
/// object beyond the handler unless you know it is safe to share.
public struct NotificationDecodingFailure: Error, @unchecked Sendable {
    /// What went wrong. New kinds may be added; compare with `==` rather than switching exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable {
            case payloadTypeMismatch, converterFailed, decodingFailed, noConversion, plainKeysEncodingFailed
            case malformedMessage, unsupportedMessageVersion
        }
        private let storage: Storage

        /// The value under ``NotificatableUserInfoKey`` is not of the payload type. No other conversion is tried.
        public static let payloadTypeMismatch = Kind(storage: .payloadTypeMismatch)
        /// A converter added with ``Notificatable/addingConverter(_:)`` threw ``NotificationDecodingFailure/error``.
        public static let converterFailed = Kind(storage: .converterFailed)
        /// Decoding the whole `userInfo` threw ``NotificationDecodingFailure/error``, a `DecodingError`.
        public static let decodingFailed = Kind(storage: .decodingFailed)
        /// There was no typed payload, every converter returned `nil`, and the payload type is not `Decodable`.
        public static let noConversion = Kind(storage: .noConversion)
        /// A typed post could not write the payload's plain keys (see ``Notificatable/postingPlainKeys(encoder:)``).
        /// The notification was still posted with its typed payload.
        public static let plainKeysEncodingFailed = Kind(storage: .plainKeysEncodingFailed)
        /// A `NotificationRelay` received a message that is not a valid relay message: not JSON, or a field missing
        /// or of the wrong type. ``NotificationDecodingFailure/error`` is the `DecodingError`, with the field's path.
        public static let malformedMessage = Kind(storage: .malformedMessage)
        /// A `NotificationRelay` received a message of a format version it does not read. The path is `version`.
        public static let unsupportedMessageVersion = Kind(storage: .unsupportedMessageVersion)

        /// The name of the kind, such as `payloadTypeMismatch`.
        public var description: String {
            switch storage {
            case .payloadTypeMismatch: "payloadTypeMismatch"
            case .converterFailed: "converterFailed"
            case .decodingFailed: "decodingFailed"
            case .noConversion: "noConversion"
            case .plainKeysEncodingFailed: "plainKeysEncodingFailed"
            case .malformedMessage: "malformedMessage"
            case .unsupportedMessageVersion: "unsupportedMessageVersion"
            }
        }
    }

    /// A closure that receives failures: a subscription's `onFailure:` argument, or the global ``handler``.
    public typealias Handler = @Sendable (NotificationDecodingFailure) -> Void

    /// What went wrong.
    public let kind: Kind
    /// The name of the notification.
    public let name: Notification.Name
    /// The handle's payload type; `NotificationRelayMessage` for a relayed message whose name is not known.
    public let payloadType: any Any.Type
    /// The underlying error: a `DecodingError` (for a type mismatch, its path is ``NotificatableUserInfoKey``), an
    /// `EncodingError` for ``Kind/plainKeysEncodingFailed``, or whatever a converter threw.
    public let error: any Error
    /// The notification's object, as the poster passed it.
    public let object: Any?

    /// The payload type's name, such as `MyApp.User`.
    public var payloadTypeName: String { String(reflecting: payloadType) }

    /// The coding path of ``error`` if it is a `DecodingError` or `EncodingError`; otherwise empty.
    ///
    /// It follows `JSONDecoder`'s rule: the path leads to the offending value, and for `keyNotFound` to the
    /// dictionary that lacks the key, which the error names apart (`[]` for a missing top-level key).
    public var codingPath: [any CodingKey] {
        switch error {
        case let error as DecodingError:
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context),
                .keyNotFound(_, let context), .dataCorrupted(let context):
                return context.codingPath
            @unknown default:
                return []
            }
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context):
                return context.codingPath
            @unknown default:
                return []
            }
        default:
            return []
        }
    }

    package init(kind: Kind, name: Notification.Name, payloadType: any Any.Type, error: any Error, object: Any?) {
        self.kind = kind
        self.name = name
        self.payloadType = payloadType
        self.error = error
        self.object = object
    }
}

// MARK: - CustomStringConvertible

extension NotificationDecodingFailure: CustomStringConvertible {
    /// A one-line diagnostic, such as
    /// `UserDidLogin: cannot produce MyApp.Order (decodingFailed at items[1].quantity): …`.
    ///
    /// The coding path is written as Swift writes it in a `DecodingError`: string keys joined by dots, integer keys
    /// and array indices in brackets. A failure at the top level has no `at` part, except a missing key, whose path
    /// is the dictionary's: `UserDidLogin: cannot produce MyApp.User (decodingFailed at the top level): No value for
    /// key "id".`
    public var description: String {
        var missingKey = false
        if case .keyNotFound? = error as? DecodingError { missingKey = true }
        let place = codingPathDescription(codingPath).map { " at \($0)" } ?? (missingKey ? " at the top level" : "")
        let detail: String
        switch error {
        case let error as DecodingError:
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context),
                .keyNotFound(_, let context), .dataCorrupted(let context):
                detail = context.debugDescription
            @unknown default:
                detail = String(describing: error)
            }
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context):
                detail = context.debugDescription
            @unknown default:
                detail = String(describing: error)
            }
        default:
            detail = String(describing: error)
        }
        let verb = kind == .plainKeysEncodingFailed ? "cannot write plain keys of" : "cannot produce"
        return "\(name.rawValue): \(verb) \(payloadTypeName) (\(kind)\(place)): \(detail)"
    }
}

// MARK: - Reporting

extension NotificationDecodingFailure {
    /// The handler for failures of subscriptions that have no `onFailure:` handler of their own.
    ///
    /// It is called synchronously on the posting thread, so keep it short and thread-safe. Setting it is
    /// thread-safe. The default, ``defaultHandler``, writes to standard error: every failure in debug builds, and
    /// in release builds the first failure of each name and kind, at most 20 lines in the life of the process.
    /// Install your own handler to log every failure in a release build.
    ///
    /// ```swift
    /// NotificationDecodingFailure.handler = { failure in
    ///     logger.error("\(failure)")
    /// }
    /// ```
    public static var handler: Handler {
        get { FailureHandlerStorage.shared.handler }
        set { FailureHandlerStorage.shared.handler = newValue }
    }

    /// The default ``handler``: writes ``description`` to standard error, prefixed with `Notificatable: `.
    ///
    /// - In debug builds (where Notificatable is compiled with `DEBUG`), every failure.
    /// - In release builds, the first failure of each pair of notification name and ``Kind``, and at most 20 lines
    ///   in the life of the process, so that a notification that fails on every post cannot flood the log. The
    ///   first line says so; the twentieth says that no more will be printed.
    public static let defaultHandler: Handler = { failure in
        DefaultFailureReporter.shared.report(failure)
    }

    /// Sends the failure to `onFailure` if given, otherwise to the global handler.
    package func report(to onFailure: Handler?) {
        NotificationTracing.trace(.decodingFailed(self))
        if let onFailure {
            onFailure(self)
        } else {
            Self.handler(self)
        }
    }
}

/// The global failure handler, guarded by a lock so that it can be read and replaced from any thread.
private final class FailureHandlerStorage: @unchecked Sendable {
    static let shared = FailureHandlerStorage()

    private let lock = NSLock()
    private var _handler: NotificationDecodingFailure.Handler = NotificationDecodingFailure.defaultHandler

    var handler: NotificationDecodingFailure.Handler {
        get { lock.withLock { _handler } }
        set {
            let replaced = lock.withLock {
                let replaced = _handler
                _handler = newValue
                return replaced
            }
            // The old handler, and what it captured, are released here, after unlocking: a deinit among them may
            // read or set the handler.
            withExtendedLifetime(replaced) {}
        }
    }
}
