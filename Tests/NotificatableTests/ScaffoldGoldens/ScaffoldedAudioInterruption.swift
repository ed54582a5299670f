// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "AVAudioSessionInterruption", suffix: "Key")
import Foundation
import Notificatable

struct ScaffoldedAudioInterruption: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var reason: Swift.Int
    var type: Swift.Int
}

extension Notificatable where Info == ScaffoldedAudioInterruption {
    // The capture has no notification name: write it in place of "ScaffoldedAudioInterruption".
    static let scaffoldedAudioInterruption = Notificatable.name(
        "ScaffoldedAudioInterruption",
        decoder: {
            let decoder = UserInfoDecoder()
            decoder.keyDecodingStrategy = .affixed(prefix: "AVAudioSessionInterruption", suffix: "Key")
            return decoder
        }())
}
