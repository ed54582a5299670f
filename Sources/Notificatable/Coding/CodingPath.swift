/// An immutable linked list of coding keys, shared between a parent and its children.
///
/// Containers extend the path only when they hand a nested value to a child decoder or encoder, and the list is
/// turned into `[CodingKey]` only when an error is thrown or `codingPath` is read. Nothing on the hot path of a
/// primitive read allocates for the path.
indirect enum CodingPathNode {
    case root
    case key(any CodingKey, CodingPathNode)
    case index(Int, CodingPathNode)

    /// The path as an array, outermost key first.
    var path: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = self
        while true {
            switch node {
            case .root:
                return keys.reversed()
            case .key(let key, let parent):
                keys.append(key)
                node = parent
            case .index(let index, let parent):
                keys.append(IndexCodingKey(index))
                node = parent
            }
        }
    }

    func appending(_ key: any CodingKey) -> CodingPathNode { .key(key, self) }
    func appending(index: Int) -> CodingPathNode { .index(index, self) }

    /// The full path with one more key, built only for an error or a `codingPath` read.
    func path(with key: any CodingKey) -> [any CodingKey] { path + [key] }
    func path(withIndex index: Int) -> [any CodingKey] { path + [IndexCodingKey(index)] }
}

/// The coding key of an element of an unkeyed container, spelled like Foundation's coders spell it.
struct IndexCodingKey: CodingKey, Sendable {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A coding key made from a string or an integer found in a dictionary.
struct AnyCodingKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
    init(_ key: any CodingKey) {
        self.stringValue = key.stringValue
        self.intValue = key.intValue
    }
    static let `super` = AnyCodingKey(stringValue: "super")
}

/// A coding path written as Swift writes it in a `DecodingError`'s description: `items[1].quantity`, with integer keys
/// (array indices and the keys of an `[Int: V]`) in brackets and string keys joined by dots. An empty path is
/// written as `nil`, for the caller to say "the top level" in its own words. The one path formatter of the package:
/// NotificatableTesting's messages use it too.
package func codingPathDescription(_ path: [any CodingKey]) -> String? {
    guard !path.isEmpty else { return nil }
    var result = ""
    for key in path {
        if let int = key.intValue {
            result += "[\(int)]"
        } else {
            if !result.isEmpty { result += "." }
            result += key.stringValue
        }
    }
    return result
}
