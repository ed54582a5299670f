import Foundation
import Notificatable
import Testing

// Keyed, unkeyed, single-value and nested containers, superDecoder, the kinds of dictionaries and arrays a userInfo
// holds, integer keys and the paths of deep errors.

private struct Point: Codable, Equatable {
    var x: Int
    var y: Int
}

private struct Item: Codable, Equatable {
    var name: String
    var frame: CGRect
}

private struct Payload: Codable, Equatable {
    var items: [Item]
    var byID: [Int: Item]
    var matrix: [[Int]]
}

// MARK: - A class hierarchy that encodes its superclass through superEncoder/superDecoder

private class Animal: Codable, Equatable {
    var name: String
    init(name: String) { self.name = name }
    static func == (lhs: Animal, rhs: Animal) -> Bool { lhs.name == rhs.name && type(of: lhs) == type(of: rhs) }
}

private final class Dog: Animal {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case breed }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

/// Uses `superDecoder(forKey:)` and `superEncoder(forKey:)` with a named key.
private final class Cat: Animal {
    var lives: Int
    init(name: String, lives: Int) {
        self.lives = lives
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case lives, animal }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lives = try container.decode(Int.self, forKey: .lives)
        let superDecoder = try container.superDecoder(forKey: .animal)
        #expect(elements(superDecoder.codingPath) == elements(container.codingPath) + ["animal"])
        try super.init(from: superDecoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
        try super.encode(to: container.superEncoder(forKey: .animal))
    }
}

// MARK: - Recursive types for the depth cap

private indirect enum Tree: Codable, Equatable {
    case leaf(Int)
    case node(Tree)

    /// The userInfo form of a tree `depth` nodes deep, built without the encoder (which has no depth cap).
    static func userInfo(depth: Int) -> Any {
        var value: Any = ["leaf": ["_0": 1] as [String: Any]] as [String: Any]
        for _ in 0..<depth { value = ["node": ["_0": value] as [String: Any]] as [String: Any] }
        return value
    }

    /// Where decoding stops: each node is one level (its `init(from:)`), and the nested container of its `node` case
    /// is none, as the encoder counts them, so the 513th node is the first that is refused.
    static let cappedPath: [PathElement] = Array(repeating: ["node", "_0"] as [PathElement], count: 512).flatMap { $0 }

    var depth: Int {
        var tree = self
        var depth = 0
        while case .node(let inner) = tree {
            depth += 1
            tree = inner
        }
        return depth
    }
}

private final class ClassNode: Codable {
    var children: [ClassNode]
    init(children: [ClassNode]) { self.children = children }
}

/// Recursion through `superDecoder(forKey:)`: a fresh decoder per level must still count towards the cap.
private final class SuperChain: Decodable {
    var next: SuperChain?
    private enum CodingKeys: String, CodingKey { case next }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        next = container.contains(.next) ? try SuperChain(from: container.superDecoder(forKey: .next)) : nil
    }
}

@Suite("UserInfoDecoder: containers")
struct UserInfoDecoderContainerTests {
    // MARK: Keyed, unkeyed, single value, nested

    @Test func everyContainerKindWithPaths() throws {
        let userInfo: [AnyHashable: Any] = [
            "id": 7,
            "position": ["x": 1, "y": 2] as [String: Any],
            "tags": ["a", "b"] as [Any],
            "grid": [[1, 2] as [Any], ["k": 3] as [String: Any]] as [Any],
        ]
        let result = try inspect(userInfo) { decoder -> [String] in
            var trace: [String] = []
            let container = try decoder.container(keyedBy: AnyKey.self)
            #expect(elements(container.codingPath) == [])
            trace.append("id=\(try container.decode(Int.self, forKey: "id"))")

            let position = try container.nestedContainer(keyedBy: AnyKey.self, forKey: "position")
            #expect(elements(position.codingPath) == ["position"])
            trace.append("x=\(try position.decode(Int.self, forKey: "x"))")

            var tags = try container.nestedUnkeyedContainer(forKey: "tags")
            #expect(elements(tags.codingPath) == ["tags"])
            trace.append("count=\(tags.count ?? -1)")
            trace.append(try tags.decode(String.self))
            trace.append(try tags.decode(String.self))
            trace.append("end=\(tags.isAtEnd)")

            var grid = try container.nestedUnkeyedContainer(forKey: "grid")
            var row = try grid.nestedUnkeyedContainer()
            #expect(elements(row.codingPath) == ["grid", 0])
            trace.append("row=\(try row.decode(Int.self)),\(try row.decode(Int.self))")
            let cell = try grid.nestedContainer(keyedBy: AnyKey.self)
            #expect(elements(cell.codingPath) == ["grid", 1])
            trace.append("k=\(try cell.decode(Int.self, forKey: "k"))")
            #expect(grid.isAtEnd)
            #expect(grid.currentIndex == 2)
            expectDecodingError(.keyNotFound, at: ["grid", 1], missingKey: "missing") {
                try cell.decode(Int.self, forKey: "missing")
            }

            // Nested containers and reads never change their parents' paths.
            #expect(elements(container.codingPath) == [])
            #expect(elements(decoder.codingPath) == [])
            #expect(elements(position.codingPath) == ["position"])
            #expect(elements(grid.codingPath) == ["grid"])
            return trace
        }
        #expect(result == ["id=7", "x=1", "count=2", "a", "b", "end=true", "row=1,2", "k=3"])
    }

    @Test func nestedDecoderPathsAreRestoredAfterErrors() throws {
        let userInfo: [AnyHashable: Any] = ["a": ["b": "not a point"] as [String: Any], "c": ["x": 1, "y": 2]]
        let point = try inspect(userInfo) { decoder -> Point in
            let container = try decoder.container(keyedBy: AnyKey.self)
            let a = try container.nestedContainer(keyedBy: AnyKey.self, forKey: "a")
            expectDecodingError(.typeMismatch, at: ["a", "b"]) { try a.decode(Point.self, forKey: "b") }
            #expect(elements(decoder.codingPath) == [])
            #expect(elements(a.codingPath) == ["a"])
            return try container.decode(Point.self, forKey: "c")
        }
        #expect(point == Point(x: 1, y: 2))
    }

    @Test func singleValueDecoderSeesItsPath() throws {
        struct Wrapped: Decodable {
            var path: [PathElement]
            var value: Int
            init(from decoder: any Decoder) throws {
                path = elements(decoder.codingPath)
                value = try decoder.singleValueContainer().decode(Int.self)
            }
        }
        let decoded = try UserInfoDecoder().decode([String: [Wrapped]].self, from: ["k": [1, 2] as [Any]])
        #expect(decoded["k"]?.map(\.value) == [1, 2])
        #expect(decoded["k"]?.map(\.path) == [["k", 0], ["k", 1]])
        expectDecodingError(.typeMismatch, at: ["k", 1], type: Int.self) {
            try UserInfoDecoder().decode([String: [Wrapped]].self, from: ["k": [1, "two"] as [Any]])
        }
    }

    @Test func unkeyedIndexAdvancesOnlyOnSuccess() throws {
        let trace = try inspect(["one", 2, NSNull()] as [Any]) { decoder -> [String] in
            var container = try decoder.unkeyedContainer()
            var trace = ["count=\(container.count ?? -1)", "index=\(container.currentIndex)"]
            expectDecodingError(.typeMismatch, at: [0], type: Int.self) { try container.decode(Int.self) }
            trace.append("index=\(container.currentIndex)")
            expectDecodingError(.typeMismatch, at: [0]) { try container.decode(Point.self) }
            expectDecodingError(.typeMismatch, at: [0]) { try container.nestedUnkeyedContainer() }
            expectDecodingError(.typeMismatch, at: [0]) { try container.nestedContainer(keyedBy: AnyKey.self) }
            trace.append("index=\(container.currentIndex)")
            trace.append(try container.decode(String.self))
            trace.append("index=\(container.currentIndex)")
            trace.append("\(try container.decode(Int.self))")
            expectDecodingError(.valueNotFound, at: [2], type: Int.self) { try container.decode(Int.self) }
            trace.append("index=\(container.currentIndex) end=\(container.isAtEnd)")
            trace.append("\(try container.decodeIfPresent(Int.self) as Any)")
            trace.append("end=\(container.isAtEnd)")
            expectDecodingError(.valueNotFound, at: [3], message: "at end") { try container.decode(Int.self) }
            expectDecodingError(.valueNotFound, at: [3]) { try container.decodeNil() }
            expectDecodingError(.valueNotFound, at: [3]) { try container.decode(Point.self) }
            expectDecodingError(.valueNotFound, at: [3]) { try container.nestedUnkeyedContainer() }
            return trace
        }
        #expect(
            trace == [
                "count=3", "index=0", "index=0", "index=0", "one", "index=1", "2", "index=2 end=false", "nil",
                "end=true",
            ])
    }

    // MARK: superDecoder

    @Test func superDecoderReadsTheSuperclass() throws {
        let dog = try UserInfoDecoder().decode(Dog.self, from: ["breed": "collie", "super": ["name": "Lassie"]])
        #expect(dog.name == "Lassie")
        #expect(dog.breed == "collie")
        let encoded = try UserInfoEncoder().encode(Dog(name: "Rex", breed: "boxer"))
        #expect((encoded["super"] as? [String: Any])?["name"] as? String == "Rex")
        #expect(try UserInfoDecoder().decode(Dog.self, from: encoded) == Dog(name: "Rex", breed: "boxer"))

        expectDecodingError(.keyNotFound, at: ["super"], missingKey: "name") {
            try UserInfoDecoder().decode(Dog.self, from: ["breed": "collie", "super": [String: Any]()])
        }
        // A missing "super" reads as null, as in JSONDecoder.
        expectDecodingError(.valueNotFound, at: ["super"]) {
            try UserInfoDecoder().decode(Dog.self, from: ["breed": "collie"])
        }
        expectDecodingError(.typeMismatch, at: ["pets", 1, "super", "name"], type: String.self) {
            try UserInfoDecoder().decode(
                [String: [Dog]].self,
                from: [
                    "pets": [["breed": "a", "super": ["name": "A"]], ["breed": "b", "super": ["name": 2]]] as [Any]
                ]
            )
        }
    }

    @Test func superDecoderForKey() throws {
        let cat = try UserInfoDecoder().decode(Cat.self, from: ["lives": 9, "animal": ["name": "Tom"]])
        #expect(cat == Cat(name: "Tom", lives: 9))
        let encoded = try UserInfoEncoder().encode(Cat(name: "Felix", lives: 7))
        #expect(encoded["super"] == nil)
        #expect((encoded["animal"] as? [String: Any])?["name"] as? String == "Felix")
        #expect(try UserInfoDecoder().decode(Cat.self, from: encoded) == Cat(name: "Felix", lives: 7))
        expectDecodingError(.keyNotFound, at: ["animal"], missingKey: "name") {
            try UserInfoDecoder().decode(Cat.self, from: ["lives": 9, "animal": ["nom": "Tom"]])
        }
    }

    @Test func superDecoderInAnUnkeyedContainer() throws {
        let names = try inspect([["name": "A"], ["name": "B"]] as [Any]) { decoder -> [String] in
            var container = try decoder.unkeyedContainer()
            let first = try container.superDecoder()
            #expect(elements(first.codingPath) == [0])
            #expect(container.currentIndex == 1)
            let second = try container.superDecoder()
            #expect(elements(second.codingPath) == [1])
            #expect(container.isAtEnd)
            // The super decoders stay valid after the container moved on.
            return [try Animal(from: first).name, try Animal(from: second).name]
        }
        #expect(names == ["A", "B"])
    }

    // MARK: Kinds of dictionaries and arrays

    static let dictionaryFormSamples: [Sample] = {
        let plain: [String: Any] = ["x": 1, "y": 2]
        let mutable = NSMutableDictionary()
        mutable["x"] = NSNumber(value: 1)
        mutable["y"] = NSNumber(value: 2)
        return [
            Sample("[AnyHashable: Any]", plain as [AnyHashable: Any]), Sample("[String: Any]", plain),
            Sample("NSDictionary", NSDictionary(dictionary: plain)), Sample("NSMutableDictionary", mutable),
            Sample("[String: Int]", ["x": 1, "y": 2] as [String: Int]),
            Sample("[String: NSNumber]", ["x": NSNumber(value: 1), "y": NSNumber(value: 2)]),
            Sample("[AnyHashable: Int]", [AnyHashable("x"): 1, AnyHashable("y"): 2]),
        ]
    }()

    @Test(arguments: dictionaryFormSamples)
    func dictionaryForms(sample: Sample) throws {
        #expect(try UserInfoDecoder().decode(Point.self, fromValue: sample.value) == Point(x: 1, y: 2))
        #expect(try decodeBoxed(Point.self, sample.value) == Point(x: 1, y: 2))
        #expect(try UserInfoDecoder().decode([String: Int].self, fromValue: sample.value) == ["x": 1, "y": 2])
        expectDecodingError(.keyNotFound, at: ["value", "k"], missingKey: "z") {
            try decodeBoxed([String: Point3].self, ["k": sample.value]).isEmpty
        }
    }

    private struct Point3: Codable {
        var x, y, z: Int
    }

    @Test func largeDictionariesInEveryForm() throws {
        // More than 16 keys takes the hashed lookup path.
        var plain: [String: Any] = [:]
        for index in 0..<40 { plain["k\(index)"] = index }
        plain["value"] = 5
        let forms: [Any] = [plain, plain as [AnyHashable: Any], NSDictionary(dictionary: plain)]
        for form in forms {
            let decoded = try UserInfoDecoder().decode([String: Int].self, fromValue: form)
            #expect(decoded.count == 41)
            #expect(decoded["k39"] == 39)
            #expect(try UserInfoDecoder().decode(Box<Int>.self, fromValue: form).value == 5)
            expectDecodingError(.keyNotFound, at: [], missingKey: "k40") {
                try UserInfoDecoder().decode(Required40.self, fromValue: form)
            }
        }
    }

    private struct Required40: Decodable {
        var k39: Int
        var k40: Int
    }

    static let arrayFormSamples: [Sample] = [
        Sample("[Any]", [1, 2, 3] as [Any]), Sample("NSArray", NSArray(array: [1, 2, 3])),
        Sample("NSMutableArray", NSMutableArray(array: [1, 2, 3])), Sample("[Int]", [1, 2, 3]),
        Sample("[NSNumber]", [NSNumber(value: 1), NSNumber(value: 2), NSNumber(value: 3)]),
        Sample("[Int8]", [Int8(1), 2, 3]),
    ]

    @Test(arguments: arrayFormSamples)
    func arrayForms(sample: Sample) throws {
        #expect(try UserInfoDecoder().decode([Int].self, fromValue: sample.value) == [1, 2, 3])
        #expect(try decodeBoxed([UInt8].self, sample.value) == [1, 2, 3])
        expectDecodingError(.typeMismatch, at: ["value"], message: "Expected a dictionary") {
            try decodeBoxed(Point.self, sample.value)
        }
    }

    @Test func stringArraysAndNestedArrays() throws {
        #expect(try decodeBoxed([String].self, ["a", "b"]) == ["a", "b"])
        #expect(try decodeBoxed([String].self, NSArray(array: [NSString(string: "a")])) == ["a"])
        #expect(try decodeBoxed([[String]].self, [["a"], []] as [[String]]) == [["a"], []])
        expectDecodingError(.typeMismatch, at: ["value", 1], type: String.self) {
            try decodeBoxed([String].self, ["a", 1] as [Any])
        }
    }

    @Test func containersOfTheWrongKind() {
        expectDecodingError(.typeMismatch, at: ["value"], message: "Expected an array") {
            try decodeBoxed([Int].self, ["a": 1] as [String: Any])
        }
        expectDecodingError(.typeMismatch, at: ["value"], message: "an array") {
            try decodeBoxed([Int].self, NSDictionary(dictionary: ["a": 1]))
        }
        expectDecodingError(.typeMismatch, at: ["value"], message: "found a string") {
            try decodeBoxed([Int].self, "1,2")
        }
        expectDecodingError(.typeMismatch, at: ["value"], message: "found a number") {
            try decodeBoxed(Point.self, 5)
        }
        expectDecodingError(.typeMismatch, at: [], message: "dictionary") {
            try UserInfoDecoder().decode(Point.self, fromValue: [1, 2])
        }
    }

    // MARK: Integer keys

    @Test func integerKeysDecodeIntoIntKeyedDictionaries() throws {
        let hashable: [AnyHashable: Any] = [AnyHashable(1): "one", AnyHashable(2): "two"]
        #expect(try UserInfoDecoder().decode([Int: String].self, from: hashable) == [1: "one", 2: "two"])
        let object = NSDictionary(dictionary: [NSNumber(value: 1): "one", NSNumber(value: 2): "two"])
        #expect(try UserInfoDecoder().decode([Int: String].self, fromValue: object) == [1: "one", 2: "two"])
        // The decimal-string form the encoder writes.
        #expect(
            try UserInfoDecoder().decode([Int: String].self, from: ["1": "one", "-2": "two"]) == [1: "one", -2: "two"])
        var large: [AnyHashable: Any] = [:]
        for index in 0..<30 { large[AnyHashable(index)] = "\(index)" }
        let decoded = try UserInfoDecoder().decode([Int: String].self, from: large)
        #expect(decoded.count == 30)
        #expect(decoded[29] == "29")
        // Integer keys also read into a String-keyed dictionary, as their decimal string.
        #expect(try UserInfoDecoder().decode([String: String].self, from: hashable) == ["1": "one", "2": "two"])
    }

    /// Every key `allKeys` lists as an integer can be read: `NSNumber` keys (as an `NSDictionary` bridges), in small
    /// and large dictionaries, and other integer types such as `Int64`.
    @Test(arguments: [5, 30])
    func integerKeysOfOtherTypesCanBeRead(count: Int) throws {
        var numbers: [AnyHashable: Any] = [:]
        var int64s: [AnyHashable: Any] = [:]
        var expected: [Int: String] = [:]
        for index in 0..<count {
            numbers[AnyHashable(NSNumber(value: index))] = "\(index)"
            int64s[AnyHashable(Int64(index))] = "\(index)"
            expected[index] = "\(index)"
        }
        #expect(try UserInfoDecoder().decode([Int: String].self, from: numbers) == expected)
        #expect(try UserInfoDecoder().decode([Int: String].self, from: int64s) == expected)
        let object = NSMutableDictionary()
        for index in 0..<count { object[NSNumber(value: index)] = "\(index)" }
        #expect(try UserInfoDecoder().decode([Int: String].self, fromValue: object) == expected)
        let bridged = try #require(object as? [AnyHashable: Any])
        #expect(try UserInfoDecoder().decode([Int: String].self, from: bridged) == expected)
    }

    private enum IntKeys: Int, CodingKey { case zero = 0, one = 1 }

    @Test func intCodingKeysMatchIntegerKeys() throws {
        let values = try inspect([AnyHashable(0): "a", AnyHashable(1): "b"] as [AnyHashable: Any]) {
            decoder -> [String] in
            let container = try decoder.container(keyedBy: IntKeys.self)
            #expect(Set(container.allKeys) == [.zero, .one])
            return [try container.decode(String.self, forKey: .zero), try container.decode(String.self, forKey: .one)]
        }
        #expect(values == ["a", "b"])
        expectDecodingError(.typeMismatch, at: [.intKey(7)], type: Int.self) {
            try UserInfoDecoder().decode([Int: Int].self, from: [AnyHashable(7): "x"])
        }
    }

    // MARK: Deep paths

    @Test func deepErrorPathsNameEveryStep() {
        let good: [String: Any] = ["name": "a", "frame": NSValue(rect: .zero)]
        let bad: [String: Any] = ["name": "c", "frame": "not a rect"]
        expectDecodingError(.dataCorrupted, at: ["items", 2, "frame"], message: "not a rect") {
            try UserInfoDecoder().decode(
                Payload.self,
                from: ["items": [good, good, bad] as [Any], "byID": [:] as [String: Any], "matrix": [] as [Any]]
            )
        }
        expectDecodingError(.dataCorrupted, at: ["byID", .intKey(7), "frame"]) {
            try UserInfoDecoder().decode(
                Payload.self, from: ["items": [] as [Any], "byID": [AnyHashable(7): bad], "matrix": [] as [Any]]
            )
        }
        expectDecodingError(.dataCorrupted, at: ["matrix", 1, 0], message: "not an integer") {
            try UserInfoDecoder().decode(
                Payload.self,
                from: ["items": [] as [Any], "byID": [:] as [String: Any], "matrix": [[1], [1.5]] as [Any]]
            )
        }
        if let context = expectDecodingError(
            .dataCorrupted, at: ["items", 2, "frame"],
            { () throws -> Payload in
                try UserInfoDecoder().decode(
                    Payload.self,
                    from: ["items": [good, good, bad] as [Any], "byID": [:] as [String: Any], "matrix": [] as [Any]]
                )
            })
        {
            // Index keys carry their intValue; string keys have none.
            #expect(context.codingPath.map(\.intValue) == [nil, 2, nil])
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 2", "frame"])
        }
    }

    // MARK: Depth cap

    @Test func shallowRecursionDecodes() throws {
        let tree = try UserInfoDecoder().decode(Tree.self, fromValue: Tree.userInfo(depth: 300))
        #expect(tree.depth == 300)
    }

    @Test(arguments: [600, 10_000])
    func deepRecursionIsDataCorrupted(depth: Int) {
        let value = Tree.userInfo(depth: depth)
        let context = expectDecodingError(.dataCorrupted, at: Tree.cappedPath, message: "nested more than 512") {
            try UserInfoDecoder().decode(Tree.self, fromValue: value)
        }
        #expect(context != nil)
    }

    @Test func deepClassTreeIsDataCorrupted() {
        var value: Any = ["children": [] as [Any]] as [String: Any]
        for _ in 0..<600 { value = ["children": [value]] as [String: Any] }
        // Each level is two nested values (the node and its array), so the cap stops at 256 nodes.
        expectDecodingError(
            .dataCorrupted, at: Array(repeating: ["children", 0] as [PathElement], count: 256).flatMap { $0 }
        ) {
            try UserInfoDecoder().decode(ClassNode.self, fromValue: value)
        }
    }

    /// A chain of Foundation dictionaries deeper than the cap stops at the cap, like Swift dictionaries do.
    @Test func deepFoundationDictionaryChainIsDataCorrupted() {
        let leaf = NSMutableDictionary()
        leaf["_0"] = 1
        var value = NSMutableDictionary()
        value["leaf"] = leaf
        for _ in 0..<600 {
            let inner = NSMutableDictionary()
            inner["_0"] = value
            let outer = NSMutableDictionary()
            outer["node"] = inner
            value = outer
        }
        expectDecodingError(.dataCorrupted, at: Tree.cappedPath) {
            try UserInfoDecoder().decode(Tree.self, fromValue: value)
        }
    }

    /// A Foundation collection that contains itself stops at the depth cap.
    ///
    /// On Linux this relies on the decoder reading nested `NSDictionary` and `NSArray` values through Core
    /// Foundation: Foundation's own accessors there bridge a nested collection to Swift recursively, which never
    /// ends for a self-containing one.
    @Test
    func selfReferencingFoundationCollectionIsAnErrorNotAHang() {
        let dictionary = NSMutableDictionary()
        let inner = NSMutableDictionary()
        inner["_0"] = dictionary
        dictionary["node"] = inner
        defer { inner.removeAllObjects() }  // breaks the cycle
        expectDecodingError(.dataCorrupted, at: Tree.cappedPath) {
            try UserInfoDecoder().decode(Tree.self, fromValue: dictionary)
        }
        let list = NSMutableArray()
        list.add(list)
        defer { list.removeAllObjects() }
        expectDecodingError(.dataCorrupted, at: Array(repeating: 0, count: 512)) {
            try UserInfoDecoder().decode(Nested.self, fromValue: list)
        }
    }

    private indirect enum Nested: Decodable {
        case list([Nested])
        init(from decoder: any Decoder) throws { self = .list(try [Nested](from: decoder)) }
    }

    @Test(arguments: [600, 10_000])
    func recursionThroughSuperDecoderIsCapped(depth: Int) {
        var value: Any = [String: Any]()
        for _ in 0..<depth { value = ["next": value] as [String: Any] }
        let context = expectDecodingError(.dataCorrupted, at: Array(repeating: "next", count: 512), message: "nested") {
            try UserInfoDecoder().decode(SuperChain.self, fromValue: value)
        }
        #expect(context != nil)
    }

    // MARK: Top level

    @Test func decodeFromValueTakesArraysAndSingleValues() throws {
        let decoder = UserInfoDecoder()
        #expect(try decoder.decode([Int].self, fromValue: [1, 2]) == [1, 2])
        #expect(try decoder.decode([Point].self, fromValue: [["x": 1, "y": 2]]) == [Point(x: 1, y: 2)])
        #expect(try decoder.decode(Int.self, fromValue: NSNumber(value: 4)) == 4)
        #expect(try decoder.decode(String.self, fromValue: "s") == "s")
        #expect(try decoder.decode(Int?.self, fromValue: NSNull()) == nil)
        #expect(try decoder.decode(Point.self, fromValue: ["x": 1, "y": 2] as [String: Any]) == Point(x: 1, y: 2))
        #expect(
            try decoder.decode([CGRect].self, fromValue: [NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4))])
                == [CGRect(x: 1, y: 2, width: 3, height: 4)])
        expectDecodingError(.typeMismatch, at: [1], type: Int.self) {
            try decoder.decode([Int].self, fromValue: [1, "2"])
        }
        expectDecodingError(.typeMismatch, at: [], type: Int.self) { try decoder.decode(Int.self, fromValue: "4") }
        expectDecodingError(.valueNotFound, at: [], type: Int.self) {
            try decoder.decode(Int.self, fromValue: NSNull())
        }
    }
}
