import Crypto
import Foundation
import NotificatableRelay

/// Signs every relay message with HMAC-SHA256 under a shared secret, and refuses every received message whose tag does
/// not match: only the processes that hold a key can post through the relays.
///
/// PostgreSQL lets any role that can connect run `NOTIFY` on any channel, so without it a reporting tool or a
/// compromised service can make every relay post any typed notification. Give every relay the same keys:
///
/// ```swift
/// // openssl rand -base64 32; Data(base64Encoded: "") is empty Data, not nil, so check both
/// guard let encoded = environment["RELAY_KEY_2026_11"], let secret = Data(base64Encoded: encoded), !secret.isEmpty
/// else { … }
/// let authenticator = try HMACMessageAuthenticator(keys: [.init(id: "2026-11", secret: secret)])
/// let relay = NotificationRelay(
///     transport: PostgresNotificationTransport(configuration: configuration),
///     authenticator: authenticator,
///     onEvent: { event in logger.warning("\(event)") }   // .unauthenticatedMessage: refused, never posted
/// )
/// ```
///
/// **The framing.** A sealed message is one header line, then the message's exact bytes:
///
/// ```text
/// hmac-sha256:<key id>:<tag>\n<message>
/// ```
///
/// where `<tag>` is the standard Base64 (with padding, 44 characters, canonical: any other spelling of the same bytes
/// is refused) of HMAC-SHA256(secret, message bytes). The tag
/// covers the whole message as sent (name, sender, sequence number and payload), never a re-serialization; the
/// header names the key so that the receiver picks it without trying each. The Across Processes article of
/// `NotificatableRelay` has a worked example, and what a tag protects and what it does not (it does not encrypt:
/// anyone who can `LISTEN` reads every payload).
///
/// **Rotation.** It signs with the first key and accepts a tag under any key of the list. To replace a key without
/// refusing anything: add the new key last everywhere; once every process has it, move it first everywhere (they sign
/// with it); once every process signs with it, remove the old one.
///
/// It does not depend on PostgreSQL: it works with any transport. It is immutable, so relays may share it.
public struct HMACMessageAuthenticator: NotificationMessageAuthenticator {
    /// One secret and the id that names it in the tag's header.
    ///
    /// Its description names the key and never shows the secret.
    public struct Key: Sendable, CustomStringConvertible {
        /// The key's id, written in every tag made with it: 1 to ``HMACMessageAuthenticator/maximumKeyIDLength``
        /// ASCII letters, digits, `.`, `_` or `-` (a date such as `2026-11` makes rotation readable).
        public let id: String
        /// The HMAC state after the secret's padded blocks: each message's tag starts from a copy of it, which halves
        /// the cost of a tag against `HMAC.authenticationCode(for:using:)` (measured: 1.35 µs instead of 2.9 µs for a
        /// 255-byte message).
        let initialState: HMAC<SHA256>
        /// The id's UTF-8 bytes, compared with a received header without making a string.
        let idBytes: [UInt8]

        /// Creates a key.
        ///
        /// ```swift
        /// let key = try HMACMessageAuthenticator.Key(id: "2026-11", secret: secretBytes)   // 32 random bytes or more
        /// ```
        ///
        /// - Parameters:
        ///   - id: The key's id: 1 to 64 ASCII letters, digits, `.`, `_` or `-`. It is not secret.
        ///   - secret: The secret: at least ``HMACMessageAuthenticator/minimumSecretSize`` (32) random bytes, such as
        ///     the bytes of `openssl rand -base64 32`, decoded. `Data`, `[UInt8]` and swift-crypto's `SymmetricKey`
        ///     all fit.
        /// - Throws: ``MessageAuthenticationError`` of kind ``MessageAuthenticationError/Kind/invalidKeyID`` or
        ///   ``MessageAuthenticationError/Kind/secretTooShort``.
        public init(id: String, secret: some ContiguousBytes) throws(MessageAuthenticationError) {
            guard HMACMessageAuthenticator.isValidKeyID(id) else {
                throw MessageAuthenticationError(kind: .invalidKeyID, keyID: id)
            }
            let key = SymmetricKey(data: secret)
            guard key.bitCount / 8 >= HMACMessageAuthenticator.minimumSecretSize else {
                throw MessageAuthenticationError(kind: .secretTooShort, keyID: id, size: key.bitCount / 8)
            }
            self.id = id
            self.initialState = HMAC<SHA256>(key: key)
            self.idBytes = Array(id.utf8)
        }

        /// HMAC-SHA256 of `message` under this key's secret.
        func authenticationCode(for message: Data) -> HMAC<SHA256>.MAC {
            var hmac = initialState
            hmac.update(data: message)
            return hmac.finalize()
        }

        /// `HMAC-SHA256 key "2026-11"`: the id, never the secret.
        public var description: String { "HMAC-SHA256 key \"\(id)\"" }
    }

    /// The fewest bytes a secret may have: 32, the output size of SHA-256.
    public static let minimumSecretSize = 32

    /// The longest key id, in bytes: 64.
    public static let maximumKeyIDLength = 64

    /// The start of every sealed message: `hmac-sha256:`.
    public static let headerPrefix = "hmac-sha256:"

    /// The keys, in order: the first signs, every one verifies.
    public let keys: [Key]

    /// The key that signs: the first of ``keys``.
    public let signingKey: Key

    private let header: Data

    /// Creates an authenticator that signs with the first key and accepts a tag under any of them.
    ///
    /// ```swift
    /// // Rotating: sign with the new key, still accept the old one.
    /// let authenticator = try HMACMessageAuthenticator(keys: [
    ///     .init(id: "2026-11", secret: newSecret),
    ///     .init(id: "2026-10", secret: oldSecret),
    /// ])
    /// ```
    ///
    /// - Parameter keys: At least one key; no two with the same id.
    /// - Throws: ``MessageAuthenticationError`` of kind ``MessageAuthenticationError/Kind/noKeys`` or
    ///   ``MessageAuthenticationError/Kind/duplicateKeyID``.
    public init(keys: [Key]) throws(MessageAuthenticationError) {
        guard let first = keys.first else { throw MessageAuthenticationError(kind: .noKeys) }
        var ids: Set<String> = []
        for key in keys {
            guard ids.insert(key.id).inserted else {
                throw MessageAuthenticationError(kind: .duplicateKeyID, keyID: key.id)
            }
        }
        self.keys = keys
        self.signingKey = first
        self.header = Data("\(Self.headerPrefix)\(first.id):".utf8)
    }

    /// Creates an authenticator with one key.
    ///
    /// ```swift
    /// let authenticator = try HMACMessageAuthenticator(keyID: "2026-11", secret: secret)
    /// ```
    ///
    /// - Parameters:
    ///   - keyID: The key's id (see ``Key/init(id:secret:)``).
    ///   - secret: At least 32 random bytes.
    /// - Throws: ``MessageAuthenticationError`` of kind ``MessageAuthenticationError/Kind/invalidKeyID`` or
    ///   ``MessageAuthenticationError/Kind/secretTooShort``.
    public init(keyID: String, secret: some ContiguousBytes) throws(MessageAuthenticationError) {
        try self.init(keys: [Key(id: keyID, secret: secret)])
    }

    /// The bytes ``seal(_:)`` adds: the header line, `hmac-sha256:`, the signing key's id, `:`, 44 characters of
    /// Base64 and a newline (58 bytes plus the id).
    public var maximumOverhead: Int { header.count + Self.tagLength + 1 }

    /// Signs `message` with the signing key: `hmac-sha256:<key id>:<Base64 tag>\n` followed by `message` unchanged.
    ///
    /// - Parameter message: The exact bytes to sign.
    /// - Returns: The sealed message, ``maximumOverhead`` bytes longer; text if `message` is.
    public func seal(_ message: Data) -> Data {
        let tag = signingKey.authenticationCode(for: message)
        var sealed = Data()
        sealed.reserveCapacity(maximumOverhead + message.count)
        sealed.append(header)
        sealed.append(contentsOf: Data(tag).base64EncodedData())
        sealed.append(UInt8(ascii: "\n"))
        sealed.append(message)
        return sealed
    }

    /// Checks the tag of a sealed message, in constant time, and returns the message it signs.
    ///
    /// - Parameter sealed: The bytes as received.
    /// - Returns: The bytes after the header line, exactly as they were signed.
    /// - Throws: ``MessageAuthenticationError`` of kind ``MessageAuthenticationError/Kind/missingTag`` when the bytes
    ///   do not start with `hmac-sha256:` (a plain message), ``MessageAuthenticationError/Kind/malformedTag`` when
    ///   the header line is not `hmac-sha256:<key id>:<44 characters of Base64>`, or the tag is not the canonical
    ///   Base64 of its 32 bytes (so that a sealed message has exactly one form),
    ///   ``MessageAuthenticationError/Kind/unknownKey`` for a key id not among ``keys``, and
    ///   ``MessageAuthenticationError/Kind/invalidTag`` when the tag does not match the bytes.
    public func open(_ sealed: Data) throws(MessageAuthenticationError) -> Data {
        guard sealed.starts(with: Self.headerPrefixBytes) else { throw MessageAuthenticationError(kind: .missingTag) }
        let headerStart = sealed.index(sealed.startIndex, offsetBy: Self.headerPrefixBytes.count)
        let longestHeader = Self.maximumKeyIDLength + 1 + Self.tagLength
        let searchEnd = sealed.index(headerStart, offsetBy: longestHeader + 1, limitedBy: sealed.endIndex)
        guard let newline = sealed[headerStart..<(searchEnd ?? sealed.endIndex)].firstIndex(of: UInt8(ascii: "\n")),
            let colon = sealed[headerStart..<newline].firstIndex(of: UInt8(ascii: ":")),
            sealed.distance(from: colon, to: newline) == Self.tagLength + 1,
            case let tagText = sealed[sealed.index(after: colon)..<newline],
            let tag = Data(base64Encoded: tagText),
            tag.count == SHA256.byteCount,
            // Only the canonical spelling: `Data(base64Encoded:)` ignores the two spare bits of the last character
            // before the padding, so without this every tag had four spellings that opened.
            tag.base64EncodedData().elementsEqual(tagText)
        else {
            throw MessageAuthenticationError(kind: .malformedTag)
        }
        let keyID = sealed[headerStart..<colon]
        // A linear search: a list holds one key, or two or three while rotating.
        guard let key = keys.first(where: { $0.idBytes.elementsEqual(keyID) }) else {
            let id = String(decoding: keyID, as: UTF8.self)
            throw MessageAuthenticationError(kind: .unknownKey, keyID: Self.isValidKeyID(id) ? id : nil)
        }
        let message = sealed[sealed.index(after: newline)...]
        // The tag is checked with swift-crypto's constant-time comparison (the `==` of a MAC and bytes, which
        // `HMAC.isValidAuthenticationCode` uses too), from the key's prepared state.
        guard key.authenticationCode(for: message) == tag else {
            throw MessageAuthenticationError(kind: .invalidTag, keyID: key.id)
        }
        return Data(message)
    }

    /// The UTF-8 bytes of ``headerPrefix``.
    private static let headerPrefixBytes = Array(headerPrefix.utf8)

    /// The length of a Base64 tag: 32 bytes as 44 characters, padding included.
    private static let tagLength = 44

    static func isValidKeyID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...maximumKeyIDLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }
}

/// An error of ``HMACMessageAuthenticator``: a key it refuses to be created with, or a received message it refuses.
///
/// A relay reports a refused message as a `NotificationTransportEvent` of kind `unauthenticatedMessage` with this
/// error:
///
/// ```swift
/// let relay = NotificationRelay(transport: transport, authenticator: authenticator, onEvent: { event in
///     if let error = event.error as? MessageAuthenticationError, error.kind == .invalidTag { alertSecurity(event) }
/// })
/// ```
public struct MessageAuthenticationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New kinds may be added; compare with `==` rather than switching exhaustively.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The message does not start with `hmac-sha256:`: it is not signed (a plain message, or not a relay's).
        public static let missingTag = Kind("missingTag")
        /// The message starts with `hmac-sha256:` but its header line is not `<key id>:<44 characters of Base64>`
        /// followed by a newline, or the tag is not written in canonical Base64 (the two spare bits of its 43rd
        /// character set: a spelling that decodes to the same bytes, which ``HMACMessageAuthenticator`` refuses so
        /// that a sealed message has exactly one form).
        public static let malformedTag = Kind("malformedTag")
        /// The tag names a key id that is not among the authenticator's keys; ``MessageAuthenticationError/keyID``
        /// names it, when it is a valid id.
        public static let unknownKey = Kind("unknownKey")
        /// The tag does not match the message's bytes under the key it names: signed with another secret, or altered
        /// after signing.
        public static let invalidTag = Kind("invalidTag")
        /// A secret shorter than ``HMACMessageAuthenticator/minimumSecretSize`` bytes was given to
        /// ``HMACMessageAuthenticator/Key/init(id:secret:)``.
        public static let secretTooShort = Kind("secretTooShort")
        /// A key id that is empty, longer than ``HMACMessageAuthenticator/maximumKeyIDLength`` bytes, or holds a
        /// character other than ASCII letters, digits, `.`, `_` and `-`.
        public static let invalidKeyID = Kind("invalidKeyID")
        /// Two keys of one authenticator have the same id.
        public static let duplicateKeyID = Kind("duplicateKeyID")
        /// An authenticator was given no key.
        public static let noKeys = Kind("noKeys")

        /// The name of the kind, such as `invalidTag`.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The key id concerned, if any (never a secret).
    public let keyID: String?
    /// The secret's size in bytes, for ``Kind/secretTooShort``.
    public let size: Int?

    init(kind: Kind, keyID: String? = nil, size: Int? = nil) {
        self.kind = kind
        self.keyID = keyID
        self.size = size
    }

    /// A sentence that says what went wrong.
    public var description: String {
        let key = keyID.map { "\"\($0)\"" } ?? "(unnamed)"
        switch kind {
        case .missingTag:
            return "The message is not signed (it does not start with \"hmac-sha256:\"); it was refused."
        case .malformedTag:
            return "The message's tag line is not \"hmac-sha256:<key id>:<Base64 tag>\"; it was refused."
        case .unknownKey:
            return "The message is signed with key \(key), which this authenticator does not hold; it was refused."
        case .invalidTag:
            return "The message's tag does not match its bytes under key \(key); it was refused."
        case .secretTooShort:
            return "The secret of key \(key) is \(size ?? 0) bytes; at least "
                + "\(HMACMessageAuthenticator.minimumSecretSize) random bytes are needed."
        case .invalidKeyID:
            return "The key id \(key) is not 1 to \(HMACMessageAuthenticator.maximumKeyIDLength) ASCII letters, "
                + "digits, '.', '_' or '-'."
        case .duplicateKeyID:
            return "Two keys have the id \(key)."
        default:
            return "An authenticator needs at least one key."
        }
    }
}
