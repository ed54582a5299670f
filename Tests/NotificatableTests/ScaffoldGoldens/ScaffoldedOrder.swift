// Scaffolded by notificatable-fixtures: check each type before you rely on it.
import Foundation

struct ScaffoldedOrder: Swift.Codable, Swift.Equatable {
    var id: Swift.String
    var sections: [Section]

    struct Section: Swift.Codable, Swift.Equatable {
        var items: [Item]
        var title: Swift.String

        struct Item: Swift.Codable, Swift.Equatable {
            var count: Swift.Int
            var sku: Swift.String
            var tags: [Swift.String]
        }
    }
}
