// The keys of the authentication tests, and how they reach the peer process: `--key ID:BASE64`, repeated for a
// rotation list (the first signs, every one is accepted).
import Foundation
import NotificatablePostgres

/// The keys the authentication tests share between processes, and the peer's `--key` option.
public enum PeerKeys {
    /// One test key: an id and 32 bytes of secret.
    public struct TestKey: Sendable {
        /// The key id.
        public let id: String
        /// The secret.
        public let secret: Data

        /// A key whose secret is 32 bytes derived from `seed`: distinct seeds, distinct secrets.
        public init(id: String, seed: UInt8) {
            self.id = id
            self.secret = Data((0..<32).map { UInt8(truncatingIfNeeded: Int($0) &* 31 &+ Int(seed) &* 7 &+ 1) })
        }

        /// The key for an ``HMACMessageAuthenticator``.
        public func key() throws -> HMACMessageAuthenticator.Key {
            try HMACMessageAuthenticator.Key(id: id, secret: secret)
        }
    }

    /// The peer's arguments for `keys`: `--key ID:BASE64` for each, in order.
    public static func arguments(_ keys: [TestKey]) -> [String] {
        keys.flatMap { ["--key", "\($0.id):\($0.secret.base64EncodedString())"] }
    }

    /// An authenticator with `keys`, in order.
    public static func authenticator(_ keys: [TestKey]) throws -> HMACMessageAuthenticator {
        try HMACMessageAuthenticator(keys: keys.map { try $0.key() })
    }

    /// The authenticator that the peer's `--key` options describe, or `nil` when there are none.
    ///
    /// - Throws: ``FixtureError`` for an option that is not `--key ID:BASE64`, or the authenticator's error.
    public static func authenticator(options arguments: [String]) throws -> HMACMessageAuthenticator? {
        var keys: [HMACMessageAuthenticator.Key] = []
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            guard option == "--key", let value = remaining.popFirst(),
                let colon = value.firstIndex(of: ":"),
                let secret = Data(base64Encoded: String(value[value.index(after: colon)...]))
            else {
                throw FixtureError("expected --key ID:BASE64, found \(option)")
            }
            keys.append(try HMACMessageAuthenticator.Key(id: String(value[..<colon]), secret: secret))
        }
        return keys.isEmpty ? nil : try HMACMessageAuthenticator(keys: keys)
    }
}
