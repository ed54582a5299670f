// Scaffolded by notificatable-fixtures: check each type before you rely on it.
// The keys share the prefix "NSWorkspaceVolume" and the suffix "Key", as UIKit's do. Decoding with
//     decoder.keyDecodingStrategy = .affixed(prefix: "NSWorkspaceVolume", suffix: "Key")
// makes the CodingKeys below unnecessary: delete them when you do.
import Foundation
import Notificatable

struct ScaffoldedWorkspaceVolume: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var localizedName: Swift.String
    var url: Foundation.URL

    enum CodingKeys: Swift.String, Swift.CodingKey {
        case localizedName = "NSWorkspaceVolumeLocalizedNameKey"
        case url = "NSWorkspaceVolumeURLKey"
    }
}

extension Notificatable where Info == ScaffoldedWorkspaceVolume {
    // The capture has no notification name: write it in place of "ScaffoldedWorkspaceVolume".
    static let scaffoldedWorkspaceVolume = Notificatable.name("ScaffoldedWorkspaceVolume")
}
