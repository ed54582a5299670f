import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

// Issue 40: a message carries optional `headers` (a post's trace context), an object of strings. Old messages have
// none; old readers ignore the field; both readers agree; hostile headers are refused with their path, never trap.

/// A transport that records what it publishes and gives every post fixed headers.
private final class HeaderTransport: NotificationTransport, @unchecked Sendable {
    let limits = NotificationTransportLimits.unlimited
    let headers: [String: String]
    private let lock = NSLock()
    private var published: [Data] = []

    init(headers: [String: String]) { self.headers = headers }

    var messages: [Data] { lock.withLock { published } }
    func start(handler: NotificationTransportHandler) {}
    func listen(to channel: String) {}
    func unlisten(from channel: String) {}
    func publish(_ message: Data, on channel: String) { lock.withLock { published.append(message) } }
    func stop() {}
    func headers(forPostOf name: Notification.Name, on channel: String) -> [String: String] { headers }
}

private struct HeaderOrder: Codable, Equatable, Sendable {
    var id: String
}

@Suite("Relay wire format: headers")
struct RelayWireHeadersTests {
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    private func message(_ json: String) -> Data { Data(json.utf8) }

    @Test func headersRoundTripAndAreWrittenOnlyWhenPresent() throws {
        var message = NotificationRelayMessage(name: .init("A"), sender: "s", sequence: 1, payload: ["k": 1])
        let plain = try message.encoded()
        #expect(!String(decoding: plain, as: UTF8.self).contains("headers"))
        #expect(try NotificationRelayMessage(decoding: plain).headers.isEmpty)
        message.headers = ["traceparent": traceparent, "tracestate": "a=b"]
        let bytes = try message.encoded()
        #expect(
            String(decoding: bytes, as: UTF8.self).hasSuffix(
                #""headers":{"traceparent":"\#(traceparent)","tracestate":"a=b"}}"#))
        let read = try NotificationRelayMessage(decoding: bytes)
        #expect(read.headers == message.headers)
        #expect(read.payload?["k"] as? Int == 1)
        #expect(try NotificationRelayMessage(referenceDecoding: bytes).headers == message.headers)
        // Without payload too.
        var bare = NotificationRelayMessage(name: .init("B"), sender: "s", sequence: 2, payload: nil)
        bare.headers = ["traceparent": traceparent]
        #expect(try NotificationRelayMessage(decoding: bare.encoded()).headers == bare.headers)
    }

    @Test func aMessageFromAnOlderSenderHasNoHeadersAndBothReadersAgree() throws {
        let old = message(#"{"sequence":3,"version":1,"name":"A","sender":"s","payload":{"x":"y"}}"#)
        let fast = try NotificationRelayMessage(decoding: old)
        let reference = try NotificationRelayMessage(referenceDecoding: old)
        #expect(fast.headers.isEmpty && reference.headers.isEmpty)
        let new = message(#"{"sequence":3,"version":1,"name":"A","sender":"s","headers":{"k":"v","é":"ü"}}"#)
        #expect(try NotificationRelayMessage(decoding: new).headers == ["k": "v", "é": "ü"])
        #expect(try NotificationRelayMessage(referenceDecoding: new).headers == ["k": "v", "é": "ü"])
    }

    @Test(arguments: [
        (#""headers":[]"#, "headers", "Expected an object of strings but found an array."),
        (#""headers":"x""#, "headers", "Expected an object of strings but found a string."),
        (#""headers":{"a":1}"#, "headers.a", "Expected a string but found a number."),
        (#""headers":{"a":{"b":"c"}}"#, "headers.a", "Expected a string but found an object."),
        (#""headers":{"$date":1}"#, "headers.$date", "Expected a string but found"),
        (#""headers":null"#, "headers", "Expected an object of strings but found null."),
    ])
    func hostileHeadersAreRefusedWithTheirPath(field: String, path: String, sentence: String) {
        let data = message(#"{"sequence":1,"version":1,"name":"A","sender":"s",\#(field)}"#)
        let readers: [() throws -> NotificationRelayMessage] = [
            { try NotificationRelayMessage(decoding: data) }, { try NotificationRelayMessage(referenceDecoding: data) },
        ]
        for read in readers {
            do {
                _ = try read()
                Issue.record("\(field) was accepted")
            } catch let error as DecodingError {
                guard case .typeMismatch(_, let context) = error else {
                    Issue.record("\(field): \(error)")
                    continue
                }
                #expect(context.codingPath.map(\.stringValue).joined(separator: ".") == path)
                #expect(context.debugDescription.hasPrefix(sentence), "\(context.debugDescription)")
            } catch {
                Issue.record("\(field): \(error)")
            }
        }
    }

    @Test func headersOverTheLimitsAreRefusedWrittenAndRead() throws {
        let many = Dictionary(
            uniqueKeysWithValues: (0...NotificationRelayMessage.maximumHeaderCount).map { ("k\($0)", "v") })
        let long = ["k": String(repeating: "x", count: NotificationRelayMessage.maximumHeadersLength)]
        let fits = ["k": String(repeating: "x", count: NotificationRelayMessage.maximumHeadersLength - 1)]
        for headers in [many, long] {
            var over = NotificationRelayMessage(name: .init("A"), sender: "s", sequence: 1, payload: nil)
            over.headers = headers
            #expect(throws: EncodingError.self) { try over.encoded() }
            let fields = headers.map { #""\#($0.key)":"\#($0.value)""# }.joined(separator: ",")
            let data = message(#"{"sequence":1,"version":1,"name":"A","sender":"s","headers":{\#(fields)}}"#)
            do {
                _ = try NotificationRelayMessage(decoding: data)
                Issue.record("headers over the limits were read")
            } catch {
                guard case .dataCorrupted(let context) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(context.codingPath.map(\.stringValue) == ["headers"])
            }
        }
        var fitting = NotificationRelayMessage(name: .init("A"), sender: "s", sequence: 1, payload: nil)
        fitting.headers = fits
        #expect(try NotificationRelayMessage(decoding: fitting.encoded()).headers == fits)
    }

    @Test func aDuplicateHeaderKeyIsRefused() {
        let data = message(#"{"sequence":1,"version":1,"name":"A","sender":"s","headers":{"a":"1","a":"2"}}"#)
        #expect(throws: DecodingError.self) { try NotificationRelayMessage(decoding: data) }
        let twice = message(#"{"sequence":1,"version":1,"name":"A","sender":"s","headers":{},"headers":{}}"#)
        #expect(throws: DecodingError.self) { try NotificationRelayMessage(decoding: twice) }
    }

    /// Truncations and byte flips of a message with headers: an error or a message, never a trap.
    @Test func mangledMessagesWithHeadersNeverTrap() throws {
        var message = NotificationRelayMessage(name: .init("A"), sender: "s", sequence: 1, payload: ["k": "v"])
        message.headers = ["traceparent": traceparent]
        let bytes = try message.encoded()
        for end in 0..<bytes.count { _ = try? NotificationRelayMessage(decoding: bytes.prefix(end)) }
        for index in bytes.indices {
            for byte: UInt8 in [0, 0x22, 0x5C, 0x7B, 0xFF] {
                var copy = bytes
                copy[index] = byte
                _ = try? NotificationRelayMessage(decoding: copy)
            }
        }
    }

    @Test func aRelayAsksItsTransportForHeadersOnEveryPost() throws {
        let transport = HeaderTransport(headers: ["traceparent": traceparent])
        let center = NotificationCenter()
        let relay = NotificationRelay(transport: transport, center: center)
        defer { relay.stop() }
        let handle = Notificatable<HeaderOrder>.name("RelayWireHeadersTests.HeaderOrder")
        relay.forward(handle)
        handle.post(HeaderOrder(id: "A-1"), center: center)
        let sent = try #require(transport.messages.first)
        #expect(try NotificationRelayMessage(decoding: sent).headers == ["traceparent": traceparent])
        let bare = try NotificationRelayMessage.encoded(HeaderOrder(id: "A-1"), for: handle, sender: "s", sequence: 1)
        #expect(try NotificationRelayMessage(decoding: bare).headers.isEmpty)
    }

    @Test func headersOverTheLimitsFailThePostWithAnEvent() {
        let many = Dictionary(
            uniqueKeysWithValues: (0...NotificationRelayMessage.maximumHeaderCount).map { ("k\($0)", "v") })
        let transport = HeaderTransport(headers: many)
        let center = NotificationCenter()
        let events = EventBox()
        let relay = NotificationRelay(transport: transport, center: center, onEvent: { events.add($0) })
        defer { relay.stop() }
        let handle = Notificatable<HeaderOrder>.name("RelayWireHeadersTests.TooMany")
        relay.forward(handle)
        handle.post(HeaderOrder(id: "A-1"), center: center)
        #expect(transport.messages.isEmpty)
        #expect(events.kinds.contains(.encodingFailed))
    }
}

private final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [NotificationTransportEvent] = []
    func add(_ event: NotificationTransportEvent) { lock.withLock { events.append(event) } }
    var kinds: [NotificationTransportEvent.Kind] { lock.withLock { events.map(\.kind) } }
}
