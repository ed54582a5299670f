import Foundation
import Testing

@testable import Notificatable

// Behaviour that the docs promise and that no other suite asserted: failure descriptions for every kind of
// underlying error, the encoder's less common containers, and the encoder's option accessors.

/// A payload whose encoding always fails at a known path, for the plain-keys failure.
struct DocsUnencodable: Codable, Sendable, Equatable {
    var id: Int

    enum CodingKeys: String, CodingKey { case id }

    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            id, .init(codingPath: encoder.codingPath + [CodingKeys.id], debugDescription: "id cannot be written")
        )
    }
}

/// An error a converter throws: neither a `DecodingError` nor an `EncodingError`.
struct DocsConverterError: Error, CustomStringConvertible {
    var description: String { "the theme server is down" }
}

/// Encodes through the containers that the synthesized conformances never use.
struct DocsNestedArrays: Encodable {
    func encode(to encoder: any Encoder) throws {
        var outer = encoder.unkeyedContainer()
        var inner = outer.nestedUnkeyedContainer()
        try inner.encode(1)
        try inner.encode(2)
        try CGFloat(2.5).encode(to: outer.superEncoder())
        var keyed = outer.nestedContainer(keyedBy: DocsNestedArrays.Key.self)
        try keyed.encode(CGFloat(1.5), forKey: .width)
    }

    enum Key: String, CodingKey { case width }
}

@Suite struct DocsBehaviourTests {
    @Test func converterErrorsAreDescribedAsTheyAreAndHaveNoPath() throws {
        let handle = Notificatable<String>.name(uniqueName()).addingConverter { _ in throw DocsConverterError() }
        let note = Notification(name: handle.name, object: nil, userInfo: ["theme": "dark"])
        do {
            _ = try handle.payload(from: note)
            Issue.record("a throwing converter must fail the conversion")
        } catch {
            #expect(error.kind == .converterFailed)
            #expect(error.codingPath.isEmpty)
            #expect(error.description.hasSuffix(": the theme server is down"))
            #expect(error.description.contains("cannot produce Swift.String (converterFailed): "))
        }
    }

    @Test func decodingFailuresNameTheNestedPathInTheirDescription() throws {
        struct Inner: Decodable { var count: Int }
        struct Outer: Decodable { var items: [Inner] }
        let handle = Notificatable<Outer>.name(uniqueName())
        let note = Notification(
            name: handle.name, object: nil, userInfo: ["items": [["count": 1], ["count": "two"]]]
        )
        do {
            _ = try handle.payload(from: note)
            Issue.record("a string count must not decode")
        } catch {
            #expect(error.kind == .decodingFailed)
            #expect(paths(error) == ["items", "1", "count"])
            #expect(error.description.contains("(decodingFailed at items[1].count)"))
            #expect(error.description.contains("found a string"))
        }
    }

    @Test func everyKindHasItsName() {
        let kinds: [NotificationDecodingFailure.Kind] = [
            .payloadTypeMismatch, .converterFailed, .decodingFailed, .noConversion, .plainKeysEncodingFailed,
        ]
        let names = [
            "payloadTypeMismatch", "converterFailed", "decodingFailed", "noConversion", "plainKeysEncodingFailed",
        ]
        #expect(kinds.map(\.description) == names)
        #expect(Set(kinds).count == kinds.count)
    }

    @Test func encoderWritesNestedArraysSuperEncodersAndCGFloatAsPlainValues() throws {
        let encoded = try UserInfoEncoder().encodeValue(DocsNestedArrays())
        let array = try #require(encoded as? [Any])
        #expect(array.count == 3)
        #expect((array[0] as? [Any])?.compactMap { $0 as? Int } == [1, 2])
        // CGFloat is written as a Double, a property-list type.
        #expect(array[1] as? Double == 2.5)
        #expect((array[2] as? [String: Any])?["width"] as? Double == 1.5)
        #expect(try UserInfoDecoder().decode(CGFloat.self, fromValue: array[1]) == 2.5)
    }

    @Test func encoderOptionsReadBackWhatWasSet() {
        let encoder = UserInfoEncoder()
        #expect(encoder.encodesGeometryAsNSValue == false)
        encoder.encodesGeometryAsNSValue = true
        #expect(encoder.encodesGeometryAsNSValue)
        guard case .deferredToDate = encoder.dateEncodingStrategy else {
            Issue.record("the default date strategy is deferredToDate")
            return
        }
        encoder.dateEncodingStrategy = .millisecondsSince1970
        guard case .millisecondsSince1970 = encoder.dateEncodingStrategy else {
            Issue.record("the date strategy did not read back")
            return
        }
    }
}

// MARK: - Global failure handler

extension HandleDefaultCenterTests {
    @Test func plainKeysFailureIsReportedWithItsPathAndThePostStillCarriesThePayload() throws {
        let center = NotificationCenter()
        let handle = Notificatable<DocsUnencodable>.name(uniqueName()).postingPlainKeys()
        let failures = ValueRecorder<NotificationDecodingFailure>()
        let previous = NotificationDecodingFailure.handler
        defer { NotificationDecodingFailure.handler = previous }
        // The plain-keys failure has no subscription of its own, so it goes to the global handler. That is global
        // state, so this test lives in the one serialized suite that replaces the handler; reports of other
        // suites' notifications are filtered out by name.
        let name = handle.name
        NotificationDecodingFailure.handler = { failure in
            if failure.name == name { failures.append(failure) }
        }
        let received = ValueRecorder<DocsUnencodable>()
        let subscription = handle.subscribe(center: center) { note in received.append(note.userInfo) }
        defer { subscription.dispose() }

        handle.post(DocsUnencodable(id: 7), center: center)

        #expect(received.values == [DocsUnencodable(id: 7)])
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .plainKeysEncodingFailed)
        #expect(paths(failure) == ["id"])
        #expect(failure.description.contains("cannot write plain keys of"))
        #expect(failure.description.contains("(plainKeysEncodingFailed at id): "))
        #expect(failure.description.hasSuffix("id cannot be written"))
    }
}
