// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
import Foundation

struct ScaffoldedKeyboardInfo: Codable, Equatable {
    var animationCurve: Int
    var animationDuration: Double
    var centerBegin: CGPoint
    var centerEnd: CGPoint
    var frameBegin: CGRect
    var frameEnd: CGRect
    var isLocal: Bool
}
