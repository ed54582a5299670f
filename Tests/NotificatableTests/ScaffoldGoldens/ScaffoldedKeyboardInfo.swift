// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
import Foundation

struct ScaffoldedKeyboardInfo: Swift.Codable, Swift.Equatable {
    var animationCurve: Swift.Int
    var animationDuration: Swift.Double
    var centerBegin: Foundation.CGPoint
    var centerEnd: Foundation.CGPoint
    var frameBegin: Foundation.CGRect
    var frameEnd: Foundation.CGRect
    var isLocal: Swift.Bool
}
