// Scaffolded by notificatable-fixtures: check each type before you rely on it.
import Foundation

struct ScaffoldedOrder: Codable, Equatable {
    var id: String
    var sections: [Section]

    struct Section: Codable, Equatable {
        var items: [Item]
        var title: String

        struct Item: Codable, Equatable {
            var count: Int
            var sku: String
            var tags: [String]
        }
    }
}
