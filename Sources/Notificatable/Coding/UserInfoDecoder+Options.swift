import Foundation

extension UserInfoDecoder {
    /// The decoder's options as one immutable value, read once per `decode` call.
    struct Options: @unchecked Sendable {
        var keyStrategy: KeyDecodingStrategy = .useDefaultKeys
        var dateStrategy: DateDecodingStrategy = .deferredToDate
        var dataStrategy: DataDecodingStrategy = .deferredToData
        var userInfo: [CodingUserInfoKey: any Sendable] = [:]

        func decodeTopLevel<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not implemented yet"))
        }
    }
}
