import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

// Issue 43: a message is written in one pass (`WireJSONWriter.writeMessage`), straight from the payload's values to
// bytes. These tests hold it to the two-step path it replaced (`WireValue.write`, then the writer's `write`), byte for
// byte, and to the same errors at the same paths.

/// The bytes `write` leaves in a fresh writer, or its `EncodingError` (any other error is recorded as an issue).
private func written(_ write: (inout WireJSONWriter) throws -> Void) -> Result<[UInt8], EncodingError> {
    do {
        var writer = WireJSONWriter()
        try write(&writer)
        return .success(writer.bytes)
    } catch let error as EncodingError {
        return .failure(error)
    } catch {
        Issue.record("unexpected error \(error)")
        return .success([])
    }
}

/// The payload's bytes as the two-step path writes them, or its error.
private func twoStep(_ payload: [AnyHashable: Any]) -> Result<[UInt8], EncodingError> {
    written { writer in
        let path: [any CodingKey] = [WireKey("payload")]
        try writer.write(try WireValue.write(topLevel: payload, path: path), path: path)
    }
}

/// The payload's bytes as the one-pass writer writes them, or its error.
private func onePass(_ payload: [AnyHashable: Any]) -> Result<[UInt8], EncodingError> {
    written { writer in try writer.writePayload(payload) }
}

/// Expects both paths to refuse `payload` alike, and a whole message of it to throw `invalidValue` at `path`, its
/// description holding `saying` when given.
private func expectRefused(
    _ payload: [AnyHashable: Any], at path: [PathElement], saying: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(describe(onePass(payload)) == describe(twoStep(payload)), sourceLocation: sourceLocation)
    #expect(sourceLocation: sourceLocation) {
        try NotificationRelayMessage.messageBytes(
            name: .init("N"), sender: "s", sequence: 1, payload: payload, headers: [:])
    } throws: { error in
        guard case .invalidValue(_, let context) = error as? EncodingError else { return false }
        return context.codingPath.map(PathElement.init) == path
            && saying.map { context.debugDescription.contains($0) } ?? true
    }
}

/// The error's kind and path, comparable.
private func describe(_ result: Result<[UInt8], EncodingError>) -> String {
    switch result {
    case .success(let bytes): return String(decoding: bytes, as: UTF8.self)
    case .failure(.invalidValue(_, let context)):
        return "invalidValue at \(context.codingPath.map(PathElement.init)): \(context.debugDescription)"
    case .failure(let error): return "other error \(error)"
    }
}

@Suite("Relay wire writer: one pass, the same bytes")
struct RelayWireWriterTests {
    /// Every value a payload may hold, in every boxing the encoder or a caller may give it: Swift values, Foundation
    /// numbers and strings, bridged collections, and the shapes that take the tags and the escape.
    nonisolated(unsafe) static let payloads: [[AnyHashable: Any]] = [
        [:],
        [
            "index": 7, "sentAt": UInt64(7_000), "orderID": "A-100007", "weight": 2.5,
            "note": "shipped by the benchmark",
        ],
        [
            "string": "é😀\"; DROP\n\t\u{1}\u{FEFF}\u{2028}\u{2029}", "int": 42, "negative": -7, "zero": 0,
            "nine": 9, "ten": 10, "min": Int.min, "max": Int.max, "double": 2.5, "third": 1.0 / 3.0,
            "tiny": 1e-7, "big": 1e300, "negativeZero": -0.0, "bool": true, "false": false,
        ],
        ["nan": Double.nan, "inf": Double.infinity, "minusInf": -Double.infinity],
        [
            "date": Date(timeIntervalSince1970: 1_764_000_000.25), "epoch": Date(timeIntervalSince1970: 0),
            "before": Date(timeIntervalSince1970: -1.5), "reference": Date(timeIntervalSinceReferenceDate: 0),
            "far": Date.distantFuture, "past": Date.distantPast, "huge": Date(timeIntervalSinceReferenceDate: 1e300),
            "small": Date(timeIntervalSinceReferenceDate: 1e-300),
        ],
        ["data": Data([0, 1, 254, 255]), "empty": Data()],
        ["array": [1, "two", [3.5], [] as [Any], ["k": NSNull()]] as [Any], "null": NSNull()],
        ["nested": ["x": ["y": 1] as [String: Any]] as [String: Any], "emptyObject": [:] as [String: Any]],
        ["$date": "the payload's own one key"],
        ["$date": 1, "other": 2],
        ["dollar": ["$date": "not a tag"] as [String: Any], "two": ["$a": 1, "$b": 2] as [String: Any]],
        ["deep": ["$x": ["$y": ["$z": true] as [String: Any]] as [String: Any]] as [String: Any]],
        ["hashable": ["$only": 1] as [AnyHashable: Any], "plain": ["b": 1, "a": 2] as [AnyHashable: Any]],
        [
            "i8": Int8(-8), "u8": UInt8(8), "i16": Int16(-16), "u16": UInt16(16), "i32": Int32(-32),
            "u32": UInt32(32), "i64": Int64.min, "u64": UInt64.max, "uint": UInt.max, "float": Float(0.1),
            "floatNaN": Float.nan,
        ],
        [
            "nsInt": NSNumber(value: 3), "nsDouble": NSNumber(value: 2.5), "nsIntegral": NSNumber(value: 2.0),
            "nsTrue": NSNumber(value: true), "nsUnsigned": NSNumber(value: UInt64.max),
            "nsNaN": NSNumber(value: Double.nan),
            "nsString": NSString(string: "bridged"), "nsNull": NSNull(),
        ],
        [
            "ints": [1, 2, 3], "strings": ["a", "b"], "typedDictionary": ["b": 1, "a": 2],
            "nsArray": NSArray(array: [1, "x"]), "nsDictionary": NSDictionary(dictionary: ["k": 1, "$j": 2]),
            "dates": [Date(timeIntervalSince1970: 5)],
        ],
        ["é": 1, "e\u{301}x": 2, "Z": 3, "a": 4, "": 5, "😀": 6, "\u{10FFFF}": 7, "\u{FFFF}": 8],
    ]

    @Test(arguments: payloads.indices)
    func onePassWritesTheBytesOfTheTwoStepPath(index: Int) {
        let payload = Self.payloads[index]
        #expect(describe(onePass(payload)) == describe(twoStep(payload)))
    }

    @Test func theDocumentedMessageByteForByte() throws {
        let bytes = try NotificationRelayMessage.messageBytes(
            name: .init("OrderShipped"), sender: "S", sequence: 42,
            payload: [
                "orderID": "A-17", "weight": 2.5, "shippedAt": Date(timeIntervalSince1970: 1_764_000_000.25),
                "blob": Data([1, 2, 3]), "tag": ["$own": 1] as [String: Any],
            ],
            headers: ["traceparent": "00-1-2-01", "a": "b"])
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"sequence":42,"version":1,"name":"OrderShipped","sender":"S","payload":{"blob":{"$data":"AQID"},"#
                + #""orderID":"A-17","shippedAt":{"$date":1764000000.25},"tag":{"$escape":{"$own":1}},"weight":2.5},"#
                + #""headers":{"a":"b","traceparent":"00-1-2-01"}}"#)
        let none = try NotificationRelayMessage.messageBytes(
            name: .init("N"), sender: "s", sequence: 1, payload: nil, headers: [:])
        #expect(String(decoding: none, as: UTF8.self) == #"{"sequence":1,"version":1,"name":"N","sender":"s"}"#)
    }

    /// The relay's path (the body outside the lock, the sequence added under it) and the one-pass message agree.
    @Test(arguments: [1, 9, 10, 4_711, Int.max])
    func theBodyWithItsSequenceIsTheWholeMessage(sequence: Int) throws {
        let payload: [AnyHashable: Any] = ["a": 1, "b": ["$c": Data([9])] as [String: Any]]
        let headers = ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]
        let body = try NotificationRelayMessage.unsequencedBody(
            name: .init("N"), sender: "s", payload: payload, headers: headers)
        let whole = try NotificationRelayMessage.messageBytes(
            name: .init("N"), sender: "s", sequence: sequence, payload: payload, headers: headers)
        #expect(body.message(withSequence: sequence) == whole)
        #expect(body.size(withSequence: sequence) == whole.count)
        let read = try NotificationRelayMessage(decoding: whole)
        #expect(read.sequence == sequence)
        #expect(read.headers == headers)
    }

    @Test func aValueThatIsNotAPropertyListValueIsRefusedAtItsPath() {
        let payloads: [([AnyHashable: Any], [PathElement])] = [
            (["list": [1, NSObject()] as [Any]], ["payload", "list", 1]),
            (
                ["nested": ["deeper": ["x": NSObject()] as [String: Any]] as [String: Any]],
                ["payload", "nested", "deeper", "x"]
            ),
            (["object": NSObject()], ["payload", "object"]),
            (["at": Date(timeIntervalSinceReferenceDate: .infinity)], ["payload", "at", "$date"]),
        ]
        for (payload, path) in payloads {
            expectRefused(payload, at: path)
        }
    }

    @Test func aKeyThatIsNotAStringIsRefusedAtItsDictionary() {
        let payloads: [([AnyHashable: Any], [PathElement])] = [
            ([1: "x"], ["payload"]),
            (["inner": [AnyHashable(2): "y"] as [AnyHashable: Any]], ["payload", "inner"]),
        ]
        for (payload, path) in payloads {
            expectRefused(payload, at: path, saying: "is not a string")
        }
    }

    @Test func theEnvelopeLimitsAreCheckedBeforeThePayload() {
        let long = String(repeating: "x", count: NotificationRelayMessage.maximumSenderLength + 1)
        #expect {
            try NotificationRelayMessage.messageBytes(
                name: .init("N"), sender: long, sequence: 1, payload: ["bad": NSObject()], headers: [:])
        } throws: { error in
            guard case .invalidValue(_, let context) = error as? EncodingError else { return false }
            return context.codingPath.map(PathElement.init) == ["sender"]
        }
        var headers: [String: String] = [:]
        for index in 0...NotificationRelayMessage.maximumHeaderCount { headers["h\(index)"] = "v" }
        #expect {
            try NotificationRelayMessage.messageBytes(
                name: .init("N"), sender: "s", sequence: 1, payload: ["bad": NSObject()], headers: headers)
        } throws: { error in
            guard case .invalidValue(_, let context) = error as? EncodingError else { return false }
            return context.codingPath.map(PathElement.init) == ["headers"]
        }
    }

    @Test func aRandomSenderIsAnUpperCaseVersionFourUUID() throws {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let sender = NotificationRelayMessage.randomSender()
            let uuid = try #require(UUID(uuidString: sender))
            // The spelling `UUID().uuidString` gives: upper case, hyphens at 8, 13, 18 and 23.
            #expect(uuid.uuidString == sender)
            let bytes = uuid.uuid
            #expect(bytes.6 >> 4 == 4)
            #expect(bytes.8 >> 6 == 0b10)
            seen.insert(sender)
        }
        #expect(seen.count == 1_000)
    }
}
