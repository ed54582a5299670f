import Foundation

@testable import Notificatable

/// A thread-safe list of values, for handlers that run on other threads.
final class ValueRecorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(_ value: Value) { lock.withLock { storage.append(value) } }
    var values: [Value] { lock.withLock { storage } }
    var count: Int { lock.withLock { storage.count } }
}

/// A thread-safe counter.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

struct User: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

struct OptionalFields: Codable, Equatable, Sendable {
    var name: String?
    var age: Int?
}

/// A payload type that is neither Decodable nor Sendable.
final class OpaqueBox {
    var value: Int
    init(_ value: Int) { self.value = value }
}

/// A sender whose `==` says every instance is equal, to show that filters compare identity.
final class Sender: Equatable, Hashable, @unchecked Sendable {
    static func == (lhs: Sender, rhs: Sender) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// An object whose lifetime a test watches through a weak reference.
final class Probe: @unchecked Sendable {}

/// Collects failures from `onFailure:`.
typealias FailureRecorder = ValueRecorder<NotificationDecodingFailure>

extension ValueRecorder where Value == NotificationDecodingFailure {
    var handler: @Sendable (NotificationDecodingFailure) -> Void {
        { [self] failure in append(failure) }
    }
}

func uniqueName(_ function: String = #function) -> String {
    "Test.\(function).\(UUID().uuidString)"
}

func paths(_ failure: NotificationDecodingFailure) -> [String] {
    failure.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
}
