import Foundation
import Testing

@testable import Notificatable

/// A `Decodable` class payload with a subclass, to check that the decoding step returns exactly the handle's type.
class DeliveredAnimal: Codable, @unchecked Sendable {
    let name: String
    init(name: String) { self.name = name }
}

final class DeliveredDog: DeliveredAnimal, @unchecked Sendable {}

/// The legacy-post path that the delivery work made specialized: a handle without converters decodes inline, one
/// with converters goes through the general chain; both must deliver and report exactly as before.
@Suite struct DeliveryPathTests {
    @Test func aLegacyPostDecodesForAClassPayload() {
        let center = NotificationCenter()
        let handle = Notificatable<DeliveredAnimal>.name(uniqueName())
        let names = ValueRecorder<String>()
        let d = handle.subscribe(center: center) { note in names.append(note.userInfo.name) }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["name": "Rex"])
        #expect(names.values == ["Rex"])
    }

    @Test func aTypedPostOfASubclassReachesTheBaseClassHandle() {
        let center = NotificationCenter()
        let name = uniqueName()
        let animals = Notificatable<DeliveredAnimal>.name(name)
        let dogs = Notificatable<DeliveredDog>.name(name)
        let seen = ValueRecorder<String>()
        let d = animals.subscribe(center: center) { note in
            seen.append("\(type(of: note.userInfo)) \(note.userInfo.name)")
        }
        defer { d.dispose() }
        dogs.post(DeliveredDog(name: "Rex"), center: center)
        #expect(seen.values == ["DeliveredDog Rex"])
    }

    @Test func withoutConvertersADecodingFailureIsReportedWithItsPath() throws {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName())
        let failures = FailureRecorder()
        let delivered = Counter()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["name": "Ada"])
        #expect(delivered.count == 0)
        let failure = try #require(failures.values.first)
        #expect(failures.count == 1)
        #expect(failure.kind == .decodingFailed)
        guard case .keyNotFound(let key, _) = failure.error as? DecodingError else {
            Issue.record("expected keyNotFound, got \(failure.error)")
            return
        }
        #expect(key.stringValue == "age")
        #expect(failure.codingPath.isEmpty)
    }

    @Test func aNestedDecodingFailureKeepsItsCodingPath() throws {
        struct Outer: Codable, Sendable { var user: User }
        let center = NotificationCenter()
        let handle = Notificatable<Outer>.name(uniqueName())
        let failures = FailureRecorder()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["user": ["name": "Ada", "age": "old"]])
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .decodingFailed)
        guard case .typeMismatch = failure.error as? DecodingError else {
            Issue.record("expected typeMismatch, got \(failure.error)")
            return
        }
        #expect(failure.codingPath.map(\.stringValue) == ["user", "age"])
    }

    @Test func aConverterThatReturnsNilFallsThroughToTheDecoder() {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName()).addingConverter { _ in nil }
        let users = ValueRecorder<User>()
        let d = handle.subscribe(center: center) { note in users.append(note.userInfo) }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["name": "Ada", "age": 36])
        #expect(users.values == [User(name: "Ada", age: 36)])
    }

    @Test func withAConverterADecodingFailureIsStillReported() throws {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName()).addingConverter { _ in nil }
        let failures = FailureRecorder()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["name": 7, "age": 36])
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .decodingFailed)
        #expect(failure.codingPath.map(\.stringValue) == ["name"])
    }

    @Test func aReservedKeyOfTheWrongTypeIsAMismatchEvenWhenThePlainKeysDecode() throws {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName())
        let failures = FailureRecorder()
        let delivered = Counter()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { d.dispose() }
        center.post(
            name: handle.name, object: nil,
            userInfo: ["name": "Ada", "age": 36, NotificatableUserInfoKey: "not a user"])
        #expect(delivered.count == 0)
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .payloadTypeMismatch)
        #expect(failure.codingPath.map(\.stringValue) == [NotificatableUserInfoKey])
    }

    @Test func theHandleDecoderIsUsedOnTheInlinePath() {
        let center = NotificationCenter()
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Snake: Codable, Equatable, Sendable { var userName: String }
        let handle = Notificatable<Snake>.name(uniqueName(), decoder: decoder)
        let seen = ValueRecorder<Snake>()
        let d = handle.subscribe(center: center) { note in seen.append(note.userInfo) }
        defer { d.dispose() }
        center.post(name: handle.name, object: nil, userInfo: ["user_name": "ada"])
        #expect(seen.values == [Snake(userName: "ada")])
    }
}
