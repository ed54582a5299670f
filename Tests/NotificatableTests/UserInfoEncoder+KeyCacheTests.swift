import Foundation
import Testing

@testable import Notificatable

/// Keys that are data: a custom `CodingKey` made from strings, as a type passing a `[String: V]` through its own
/// `encode(to:)` writes them.
private struct DataKeyed: Encodable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var keys: [String]

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (offset, key) in keys.enumerated() { try container.encode(offset, forKey: Key(stringValue: key)) }
    }
}

private struct Ordinary: Encodable {
    var firstName = "Ada"
    var lastName = "Lovelace"
    var birthYear = 1815

    enum CodingKeys: String, CodingKey { case firstName, lastName, birthYear }
}

@Suite("UserInfoEncoder: the converted-key cache is bounded")
struct UserInfoEncoderKeyCacheTests {
    @Test(
        "keys that are data stop being cached after the bound, and are still converted",
        arguments: [
            UserInfoEncoder.KeyEncodingStrategy.convertToSnakeCase, .affixed(prefix: "My", suffix: "Key"),
        ])
    func dataKeysAreNotKeptForever(strategy: UserInfoEncoder.KeyEncodingStrategy) throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = strategy
        // 16,500 keys, 150 at a time: the held-out repro's count.
        for batch in 0..<110 {
            let keys = (0..<150).map { "fieldNumber\(batch * 150 + $0)" }
            let encoded = try encoder.encode(DataKeyed(keys: keys))
            let expected = keys.map { key -> String in
                switch strategy {
                case .affixed: "MyFieldNumber\(key.dropFirst("fieldNumber".count))Key"
                default: "field_number\(key.dropFirst("fieldNumber".count))"
                }
            }
            #expect(Set(encoded.keys.compactMap { $0.base as? String }) == Set(expected))
        }
        let names = try #require(encoder.options.keyNames).names(for: DataKeyed.Key.self)
        #expect(names.isUncached)
        #expect(names.swiftKeys.isEmpty, "kept \(names.swiftKeys.count) keys")

        // The type's own keys are still cached, and a data-keyed type does not disturb them.
        let ordinary = try encoder.encode(Ordinary())
        #expect(ordinary.count == 3)
        let cached = try #require(encoder.options.keyNames).names(for: Ordinary.CodingKeys.self)
        #expect(cached.swiftKeys == ["firstName", "lastName", "birthYear"])
        #expect(!cached.isUncached)
    }

    @Test("a key type with up to the bound's keys stays cached")
    func keysUpToTheBoundAreCached() throws {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let keys = (0..<KeyAffixes.maximumCachedKeys).map { "key\($0)Name" }
        _ = try encoder.encode(DataKeyed(keys: keys))
        _ = try encoder.encode(DataKeyed(keys: keys))
        let names = try #require(encoder.options.keyNames).names(for: DataKeyed.Key.self)
        #expect(names.swiftKeys.count == KeyAffixes.maximumCachedKeys)
        #expect(!names.isUncached)
        let more = try encoder.encode(DataKeyed(keys: ["oneMoreKey"]))
        #expect(more["one_more_key"] as? Int == 0)
        #expect(try #require(encoder.options.keyNames).names(for: DataKeyed.Key.self).isUncached)
    }
}
