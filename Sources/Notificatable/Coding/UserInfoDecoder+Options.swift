import Foundation

extension UserInfoDecoder {
    /// The decoder's options as one immutable object, read once per `decode` call and shared by handles.
    ///
    /// A class, so that reading the options for a call, and handing them to the decoder that does the work, costs one
    /// retain instead of a copy of every strategy. Changing a strategy replaces the whole object; a new object keeps
    /// the key-mapping cache of the old one when the key strategy did not change.
    ///
    /// `@unchecked Sendable`: every stored property is a value or an immutable, lock-protected class
    /// (`KeyAffixes`), except `DateFormatter` inside ``DateDecodingStrategy/formatted(_:)``, which Foundation
    /// documents as thread-safe for formatting and parsing.
    final class Options: @unchecked Sendable {
        let keyStrategy: KeyDecodingStrategy
        let dateStrategy: DateDecodingStrategy
        let dataStrategy: DataDecodingStrategy
        let userInfo: [CodingUserInfoKey: any Sendable]
        /// Whether the key strategy is anything but ``KeyDecodingStrategy/useDefaultKeys``.
        let keyStrategyRenamesKeys: Bool
        /// The mapping for `.affixed(prefix:suffix:)`.
        let affixes: KeyAffixes?
        /// What decodes with this key strategy have learned about each type (see ``DecodingPlan``).
        let plans: DecodingPlans

        /// The nesting depth at which decoding stops with `dataCorrupted` instead of exhausting the stack.
        static let maximumDepth = 512

        /// The default options, shared by every handle made without a decoder.
        static let defaults = Options()

        convenience init() {
            self.init(
                keyStrategy: .useDefaultKeys, dateStrategy: .deferredToDate, dataStrategy: .deferredToData,
                userInfo: [:], affixes: nil, plans: DecodingPlans()
            )
        }

        private init(
            keyStrategy: KeyDecodingStrategy, dateStrategy: DateDecodingStrategy, dataStrategy: DataDecodingStrategy,
            userInfo: [CodingUserInfoKey: any Sendable], affixes: KeyAffixes?, plans: DecodingPlans
        ) {
            self.keyStrategy = keyStrategy
            self.dateStrategy = dateStrategy
            self.dataStrategy = dataStrategy
            self.userInfo = userInfo
            self.affixes = affixes
            self.plans = plans
            if case .useDefaultKeys = keyStrategy {
                keyStrategyRenamesKeys = false
            } else {
                keyStrategyRenamesKeys = true
            }
        }

        /// A copy with the given key strategy, and new plans for it.
        func with(keyStrategy: KeyDecodingStrategy) -> Options {
            var affixes: KeyAffixes?
            if case .affixed(let prefix, let suffix) = keyStrategy {
                affixes = KeyAffixes(prefix: prefix, suffix: suffix)
            }
            return Options(
                keyStrategy: keyStrategy, dateStrategy: dateStrategy, dataStrategy: dataStrategy, userInfo: userInfo,
                affixes: affixes, plans: DecodingPlans()
            )
        }

        /// A copy with the given date strategy.
        func with(dateStrategy: DateDecodingStrategy) -> Options {
            Options(
                keyStrategy: keyStrategy, dateStrategy: dateStrategy, dataStrategy: dataStrategy, userInfo: userInfo,
                affixes: affixes, plans: plans
            )
        }

        /// A copy with the given data strategy.
        func with(dataStrategy: DataDecodingStrategy) -> Options {
            Options(
                keyStrategy: keyStrategy, dateStrategy: dateStrategy, dataStrategy: dataStrategy, userInfo: userInfo,
                affixes: affixes, plans: plans
            )
        }

        /// A copy with the given contextual information.
        func with(userInfo: [CodingUserInfoKey: any Sendable]) -> Options {
            Options(
                keyStrategy: keyStrategy, dateStrategy: dateStrategy, dataStrategy: dataStrategy, userInfo: userInfo,
                affixes: affixes, plans: plans
            )
        }

        func decodeTopLevel<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
            let plan = plans.plan(for: T.self)
            let decoder = UserInfoDecoderImpl(options: self, plan: plan, value: value)
            return try decoder.unbox(value, as: type, reader: plan.reader)
        }
    }
}
