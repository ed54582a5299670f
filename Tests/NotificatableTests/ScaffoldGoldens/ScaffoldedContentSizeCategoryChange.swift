// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIContentSizeCategory", suffix: "Key")
import Foundation

struct ScaffoldedContentSizeCategoryChange: Swift.Codable, Swift.Equatable {
    var newValue: Swift.String
}
