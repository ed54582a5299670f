// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
import Foundation
import Notificatable

struct ScaffoldedKeyboardInfo: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var animationCurve: Swift.Int
    var animationDuration: Swift.Double
    var centerBegin: Foundation.CGPoint
    var centerEnd: Foundation.CGPoint
    var frameBegin: Foundation.CGRect
    var frameEnd: Foundation.CGRect
    var isLocal: Swift.Bool
}

extension Notificatable where Info == ScaffoldedKeyboardInfo {
    // The capture has no notification name: write it in place of "ScaffoldedKeyboardInfo".
    static let scaffoldedKeyboardInfo = Notificatable.name(
        "ScaffoldedKeyboardInfo",
        decoder: {
            let decoder = UserInfoDecoder()
            decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
            return decoder
        }())
}
