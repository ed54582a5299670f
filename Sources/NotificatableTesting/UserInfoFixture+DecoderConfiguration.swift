import Foundation
import Notificatable

extension UserInfoFixture {
    /// The decoder strategies a fixture asks for in its `decoder` field.
    ///
    /// Only strategies that data can describe are offered; the `.custom` strategies take closures, which a file
    /// cannot hold. ``makeDecoder()`` turns the configuration into a `UserInfoDecoder`.
    ///
    /// ```xml
    /// <key>decoder</key>
    /// <dict>
    ///     <key>key</key><string>affixed</string>
    ///     <key>prefix</key><string>UIKeyboard</string>
    ///     <key>suffix</key><string>UserInfoKey</string>
    ///     <key>date</key><string>secondsSince1970</string>
    ///     <key>data</key><string>base64</string>
    /// </dict>
    /// ```
    public struct DecoderConfiguration: Sendable, Equatable {
        /// The key strategy, written in the `key` field (with `prefix` and `suffix` for `affixed`).
        public enum KeyStrategy: Sendable, Equatable {
            /// `useDefaultKeys`: `UserInfoDecoder.KeyDecodingStrategy.useDefaultKeys`.
            case useDefaultKeys
            /// `convertFromSnakeCase`: `UserInfoDecoder.KeyDecodingStrategy.convertFromSnakeCase`.
            case convertFromSnakeCase
            /// `affixed`: `UserInfoDecoder.KeyDecodingStrategy.affixed(prefix:suffix:)`.
            case affixed(prefix: String, suffix: String)
        }

        /// The date strategy, written in the `date` field (with `dateFormat` for `formatted`).
        public enum DateStrategy: Sendable, Equatable {
            /// `deferredToDate`: `UserInfoDecoder.DateDecodingStrategy.deferredToDate`.
            case deferredToDate
            /// `secondsSince1970`: `UserInfoDecoder.DateDecodingStrategy.secondsSince1970`.
            case secondsSince1970
            /// `millisecondsSince1970`: `UserInfoDecoder.DateDecodingStrategy.millisecondsSince1970`.
            case millisecondsSince1970
            /// `iso8601`: `UserInfoDecoder.DateDecodingStrategy.iso8601`.
            case iso8601
            /// `formatted`: `UserInfoDecoder.DateDecodingStrategy.formatted(_:)` with a `DateFormatter` that
            /// uses this format, the `en_US_POSIX` locale and UTC, so the fixture reads the same everywhere.
            case formatted(dateFormat: String)
        }

        /// The data strategy, written in the `data` field.
        public enum DataStrategy: Sendable, Equatable {
            /// `deferredToData`: `UserInfoDecoder.DataDecodingStrategy.deferredToData`.
            case deferredToData
            /// `base64`: `UserInfoDecoder.DataDecodingStrategy.base64`.
            case base64
        }

        /// How keys are mapped. Defaults to ``KeyStrategy/useDefaultKeys``.
        public var keyStrategy: KeyStrategy
        /// How dates are read. Defaults to ``DateStrategy/deferredToDate``.
        public var dateStrategy: DateStrategy
        /// How data is read. Defaults to ``DataStrategy/deferredToData``.
        public var dataStrategy: DataStrategy

        /// Creates a configuration; every strategy defaults to the decoder's own default.
        ///
        /// - Parameters:
        ///   - keyStrategy: How keys are mapped.
        ///   - dateStrategy: How dates are read.
        ///   - dataStrategy: How data is read.
        public init(
            keyStrategy: KeyStrategy = .useDefaultKeys, dateStrategy: DateStrategy = .deferredToDate,
            dataStrategy: DataStrategy = .deferredToData
        ) {
            self.keyStrategy = keyStrategy
            self.dateStrategy = dateStrategy
            self.dataStrategy = dataStrategy
        }

        /// Creates a decoder with these strategies.
        ///
        /// - Returns: A new `UserInfoDecoder`.
        public func makeDecoder() -> UserInfoDecoder {
            let decoder = UserInfoDecoder()
            switch keyStrategy {
            case .useDefaultKeys: decoder.keyDecodingStrategy = .useDefaultKeys
            case .convertFromSnakeCase: decoder.keyDecodingStrategy = .convertFromSnakeCase
            case .affixed(let prefix, let suffix):
                decoder.keyDecodingStrategy = .affixed(prefix: prefix, suffix: suffix)
            }
            switch dateStrategy {
            case .deferredToDate: decoder.dateDecodingStrategy = .deferredToDate
            case .secondsSince1970: decoder.dateDecodingStrategy = .secondsSince1970
            case .millisecondsSince1970: decoder.dateDecodingStrategy = .millisecondsSince1970
            case .iso8601: decoder.dateDecodingStrategy = .iso8601
            case .formatted(let format):
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(secondsFromGMT: 0)
                formatter.dateFormat = format
                decoder.dateDecodingStrategy = .formatted(formatter)
            }
            switch dataStrategy {
            case .deferredToData: decoder.dataDecodingStrategy = .deferredToData
            case .base64: decoder.dataDecodingStrategy = .base64
            }
            return decoder
        }
    }
}

// MARK: - Reading the `decoder` field

extension UserInfoFixture.DecoderConfiguration {
    init(reading raw: Any, with reader: FixtureReader) throws {
        let location = ["decoder"]
        let fields = try reader.dictionary(raw, location, code: .invalidField)
        try reader.checkKeys(
            fields, allowed: ["key", "prefix", "suffix", "date", "dateFormat", "data"], location,
            code: .unexpectedField)
        func name(_ field: String) throws -> String? {
            try fields[field].map { try reader.string($0, location + [field]) }
        }
        func unknown(_ field: String, _ value: String, _ known: [String]) -> UserInfoFixtureError {
            reader.error(
                .invalidField, location + [field],
                "unknown strategy \"\(value)\"; expected one of \(known.joined(separator: ", "))")
        }

        switch try name("key") ?? "useDefaultKeys" {
        case "useDefaultKeys": keyStrategy = .useDefaultKeys
        case "convertFromSnakeCase": keyStrategy = .convertFromSnakeCase
        case "affixed":
            keyStrategy = .affixed(prefix: try name("prefix") ?? "", suffix: try name("suffix") ?? "")
        case let other: throw unknown("key", other, ["useDefaultKeys", "convertFromSnakeCase", "affixed"])
        }
        var isAffixed = false
        if case .affixed = keyStrategy { isAffixed = true }
        if !isAffixed, fields["prefix"] != nil || fields["suffix"] != nil {
            throw reader.error(.invalidField, location, "prefix and suffix only apply to the key strategy affixed")
        }

        switch try name("date") ?? "deferredToDate" {
        case "deferredToDate": dateStrategy = .deferredToDate
        case "secondsSince1970": dateStrategy = .secondsSince1970
        case "millisecondsSince1970": dateStrategy = .millisecondsSince1970
        case "iso8601": dateStrategy = .iso8601
        case "formatted":
            guard let format = try name("dateFormat"), !format.isEmpty else {
                throw reader.error(
                    .missingField, location + ["dateFormat"],
                    "is missing; the date strategy formatted needs a dateFormat string")
            }
            dateStrategy = .formatted(dateFormat: format)
        case let other:
            throw unknown(
                "date", other,
                ["deferredToDate", "secondsSince1970", "millisecondsSince1970", "iso8601", "formatted"])
        }
        var isFormatted = false
        if case .formatted = dateStrategy { isFormatted = true }
        if !isFormatted, fields["dateFormat"] != nil {
            throw reader.error(.invalidField, location, "dateFormat only applies to the date strategy formatted")
        }

        switch try name("data") ?? "deferredToData" {
        case "deferredToData": dataStrategy = .deferredToData
        case "base64": dataStrategy = .base64
        case let other: throw unknown("data", other, ["deferredToData", "base64"])
        }
    }
}
