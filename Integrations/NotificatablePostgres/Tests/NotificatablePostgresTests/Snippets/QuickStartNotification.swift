import Notificatable

struct OrderPlaced: Codable, Sendable {
    var orderID: Int
    var total: Int
}

extension Notificatable where Info == OrderPlaced {
    static let orderPlaced = Notificatable.name("Orders.OrderPlaced")
}
