// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// Decode it as the fixture does, with
//     decoder.keyDecodingStrategy = .affixed(prefix: "AVAudioSessionInterruption", suffix: "Key")
import Foundation

struct ScaffoldedAudioInterruption: Swift.Codable, Swift.Equatable {
    var reason: Swift.Int
    var type: Swift.Int
}
