// Scaffolded by notificatable-fixtures: check each type before you rely on it.
import Foundation
import Notificatable

struct ScaffoldedOrder: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var id: Swift.String
    var sections: [Section]

    struct Section: Swift.Codable, Swift.Equatable, Swift.Sendable {
        var items: [Item]
        var title: Swift.String

        struct Item: Swift.Codable, Swift.Equatable, Swift.Sendable {
            var count: Swift.Int
            var sku: Swift.String
            var tags: [Swift.String]
        }
    }
}

extension Notificatable where Info == ScaffoldedOrder {
    // The capture has no notification name: write it in place of "ScaffoldedOrder".
    static let scaffoldedOrder = Notificatable.name("ScaffoldedOrder")
}
