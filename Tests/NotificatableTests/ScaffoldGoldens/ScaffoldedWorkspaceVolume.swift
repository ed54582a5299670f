// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// The keys share the prefix "NSWorkspaceVolume" and the suffix "Key", as UIKit's do. Decoding with
//     decoder.keyDecodingStrategy = .affixed(prefix: "NSWorkspaceVolume", suffix: "Key")
// makes the CodingKeys below unnecessary: delete them when you do.
import Foundation

struct ScaffoldedWorkspaceVolume: Codable, Equatable {
    var localizedName: String
    var url: URL

    enum CodingKeys: String, CodingKey {
        case localizedName = "NSWorkspaceVolumeLocalizedNameKey"
        case url = "NSWorkspaceVolumeURLKey"
    }
}
