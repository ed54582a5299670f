// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIContentSizeCategory", suffix: "Key")
import Foundation
import Notificatable

struct ScaffoldedContentSizeCategoryChange: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var newValue: Swift.String
}

extension Notificatable where Info == ScaffoldedContentSizeCategoryChange {
    // The capture has no notification name: write it in place of "ScaffoldedContentSizeCategoryChange".
    static let scaffoldedContentSizeCategoryChange = Notificatable.name(
        "ScaffoldedContentSizeCategoryChange",
        decoder: {
            let decoder = UserInfoDecoder()
            decoder.keyDecodingStrategy = .affixed(prefix: "UIContentSizeCategory", suffix: "Key")
            return decoder
        }())
}
