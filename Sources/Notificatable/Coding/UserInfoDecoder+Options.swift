import Foundation

extension UserInfoDecoder {
    /// The decoder's options as one immutable value, read once per `decode` call and shared by handles.
    ///
    /// `@unchecked Sendable`: every stored property is a value or an immutable, lock-protected class
    /// (`KeyAffixes`), except `DateFormatter` inside ``DateDecodingStrategy/formatted(_:)``, which Foundation
    /// documents as thread-safe for formatting and parsing.
    struct Options: @unchecked Sendable {
        var keyStrategy: KeyDecodingStrategy = .useDefaultKeys {
            didSet {
                if case .affixed(let prefix, let suffix) = keyStrategy {
                    affixes = KeyAffixes(prefix: prefix, suffix: suffix)
                } else {
                    affixes = nil
                }
                if case .useDefaultKeys = keyStrategy {
                    keyStrategyRenamesKeys = false
                } else {
                    keyStrategyRenamesKeys = true
                }
            }
        }
        /// Whether the key strategy is anything but ``KeyDecodingStrategy/useDefaultKeys``.
        private(set) var keyStrategyRenamesKeys = false
        var dateStrategy: DateDecodingStrategy = .deferredToDate
        var dataStrategy: DataDecodingStrategy = .deferredToData
        var userInfo: [CodingUserInfoKey: any Sendable] = [:]
        /// The cached mapping for `.affixed(prefix:suffix:)`.
        private(set) var affixes: KeyAffixes?

        /// The nesting depth at which decoding stops with `dataCorrupted` instead of exhausting the stack.
        static let maximumDepth = 512

        func decodeTopLevel<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
            let decoder = UserInfoDecoderImpl(options: self, value: value)
            return try decoder.unbox(value, as: type, parent: .root, component: nil)
        }
    }
}
