import Foundation

/// A relay message's fields, read in one pass over its text by ``WireJSONReader/readMessage(_:)``.
struct WireMessageFields {
    let name: String
    let sender: String
    let sequence: Int
    /// The payload as the `userInfo` it becomes, its `$` tags read; `nil` for a message without one.
    let payload: [AnyHashable: Any]?
    /// The `headers` field, empty when absent.
    let headers: [String: String]
}

// The receive path's reader. `NotificationRelayMessage(decoding:)` used to read a message in three passes: the JSON
// text into `[String: Any]` (the envelope and the payload each a dictionary), the payload again to read its `$` tags
// into a second dictionary, and that into the `[AnyHashable: Any]` of the re-post: four dictionaries, each key hashed
// three times. This reads the envelope's fields without a dictionary and the payload straight into the re-post's
// dictionary, reading tags as it goes.
//
// It reads only messages of the usual shape, and declines (`nil`) anything else: any JSON error, a duplicate key, a
// tag at the payload's top level, an unknown or malformed tag, an envelope field of another type or out of range, a
// version other than the current one. The caller then reads the message the reference way, which finds the same
// message invalid with the same error as before, or reads the unusual shape. Every value this reader accepts is the
// one the reference reading makes (`RelayWireFastPathTests` compares the two on every shape the writer makes).
extension WireJSONReader {
    /// The bail-out of the one-pass reader: never reported, the caller reads the message the reference way.
    private static var declined: Failure { Failure(description: "") }

    /// The fields of `data` when it is a current-version message of the usual shape; `nil` otherwise.
    static func readMessage(_ data: Data) -> WireMessageFields? {
        data.withUnsafeBytes { raw -> WireMessageFields? in
            var reader = WireJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            return try? reader.readEnvelope()
        }
    }

    private mutating func readEnvelope() throws(Failure) -> WireMessageFields {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw Self.declined }
        index += 1
        skipWhitespace()
        var version: Int?
        var name: String?
        var sender: String?
        var sequence: Int?
        var payload: [AnyHashable: Any]??
        var headers: [String: String]?
        var otherKeys: [String] = []
        var more = !(index < bytes.count && bytes[index] == UInt8(ascii: "}"))
        if !more { index += 1 }
        while more {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Self.declined }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "")
            skipWhitespace()
            // `String` equality, as the reference reader's dictionary compares keys.
            switch key {
            case NotificationRelayMessage.Field.sequence where sequence == nil:
                sequence = try readEnvelopeInteger()
            case NotificationRelayMessage.Field.version where version == nil:
                version = try readEnvelopeInteger()
            case NotificationRelayMessage.Field.name where name == nil:
                name = try readEnvelopeString()
            case NotificationRelayMessage.Field.sender where sender == nil:
                sender = try readEnvelopeString()
            case NotificationRelayMessage.Field.payload where payload == nil:
                guard index < bytes.count else { throw Self.declined }
                if bytes[index] == UInt8(ascii: "n") {
                    _ = try readLiteral("null", NSNull())
                    payload = .some(nil)
                } else {
                    payload = .some(try readTopLevelPayload())
                }
            case NotificationRelayMessage.Field.headers where headers == nil:
                headers = try readHeaders()
            case NotificationRelayMessage.Field.sequence, NotificationRelayMessage.Field.version,
                NotificationRelayMessage.Field.name, NotificationRelayMessage.Field.sender,
                NotificationRelayMessage.Field.payload, NotificationRelayMessage.Field.headers:
                throw Self.declined
            default:
                // A field this version does not know: read, checked for JSON, and left, as the reference reading does.
                guard !otherKeys.contains(key) else { throw Self.declined }
                otherKeys.append(key)
                _ = try readValue(depth: 1)
            }
            more = try readSeparator(closing: UInt8(ascii: "}"), in: "")
        }
        skipWhitespace()
        guard index == bytes.count, version == NotificationRelayMessage.currentVersion, let name, let sender,
            sender.utf8.count <= NotificationRelayMessage.maximumSenderLength, let sequence, sequence >= 1
        else { throw Self.declined }
        return WireMessageFields(
            name: name, sender: sender, sequence: sequence, payload: payload ?? nil, headers: headers ?? [:])
    }

    /// The `headers` field when it is an object of strings within the limits; declined otherwise (the reference
    /// reading then makes the error).
    private mutating func readHeaders() throws(Failure) -> [String: String] {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{"),
            let object = try readValue(depth: 1) as? [String: Any]
        else { throw Self.declined }
        var headers = [String: String](minimumCapacity: object.count)
        for (key, value) in object {
            guard let string = value as? String else { throw Self.declined }
            headers[key] = string
        }
        guard NotificationRelayMessage.headersProblem(headers) == nil else { throw Self.declined }
        return headers
    }

    /// An integer of at most 18 digits, without fraction or exponent.
    private mutating func readEnvelopeInteger() throws(Failure) -> Int {
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var value = 0
        while index < bytes.count, isDigit(bytes[index]), index - start < 18 {
            value = value * 10 + Int(bytes[index] &- 48)
            index += 1
        }
        guard index > start, !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else { throw Self.declined }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                throw Self.declined
            default: break
            }
        }
        return negative ? -value : value
    }

    private mutating func readEnvelopeString() throws(Failure) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Self.declined }
        return try readString()
    }

    // MARK: - The payload

    /// The payload's top-level object, into the dictionary the re-post carries, allocated for 14 entries before its
    /// size is known: twice the keys of a payload of up to five and the two the relay adds (fewer probes that compare
    /// `AnyHashable`s); a larger payload grows the dictionary as it is read.
    private mutating func readTopLevelPayload() throws(Failure) -> [AnyHashable: Any] {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw Self.declined }
        var payload = [AnyHashable: Any](minimumCapacity: 14)
        // A tag at the top level (an escaped payload) is rare: the reference reading takes it.
        guard try readMembers(into: &payload, depth: 2, key: { AnyHashable($0) }) == nil else { throw Self.declined }
        return payload
    }

    /// A payload value: containers read with their tags, leaves as ``readValue(depth:)`` reads them.
    private mutating func readPayloadValue(depth: Int) throws(Failure) -> Any {
        guard index < bytes.count else { throw Self.declined }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readPayloadObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readPayloadArray(depth: depth + 1)
        default: return try readValue(depth: depth)
        }
    }

    private mutating func readPayloadArray(depth: Int) throws(Failure) -> [Any] {
        guard depth <= Self.maximumDepth else { throw Self.declined }
        index += 1
        var array: [Any] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return array
        }
        repeat {
            array.append(try readPayloadValue(depth: depth))
        } while try readSeparator(closing: UInt8(ascii: "]"), in: "")
        return array
    }

    /// An object in the payload: the value of its tag when it is a one-key object whose key starts with `$`, else a
    /// dictionary of its members.
    private mutating func readPayloadObject(depth: Int) throws(Failure) -> Any {
        var object: [String: Any] = [:]
        if let tag = try readMembers(into: &object, depth: depth, key: { $0 }) {
            return tag
        }
        return object
    }

    /// Reads an object's members into `object`; returns the value of the object's tag instead when the object is a
    /// tag (a one-key object whose key starts with `$`), and `nil` otherwise.
    private mutating func readMembers<Key: Hashable>(
        into object: inout [Key: Any], depth: Int, key makeKey: (String) -> Key
    ) throws(Failure) -> Any? {
        guard depth <= Self.maximumDepth else { throw Self.declined }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return nil
        }
        var first = true
        repeat {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Self.declined }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "")
            skipWhitespace()
            let value: Any
            if first, key.hasPrefix("$") {
                // Read as the reference reader reads it, then, as the only member, the tag's value, or else the first
                // member of a dictionary.
                let raw: Any
                if key == WireValue.date, index < bytes.count,
                    bytes[index] == UInt8(ascii: "-") || isDigit(bytes[index])
                {
                    let (number, text) = try readNumber(keepingText: true)
                    raw = WireDateSeconds(text: text, number: number)
                } else {
                    raw = try readValue(depth: depth)
                }
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    do {
                        return try WireValue.readTagged(key, raw, path: [])
                    } catch {
                        throw Self.declined
                    }
                }
                if let seconds = raw as? WireDateSeconds {
                    value = seconds.number
                } else {
                    do {
                        value = try WireValue.read(raw, path: [])
                    } catch {
                        throw Self.declined
                    }
                }
            } else {
                // A `$date` key that is not a tag holds the user's own number, which reads the same either way.
                value = try readPayloadValue(depth: depth)
            }
            first = false
            guard object.updateValue(value, forKey: makeKey(key)) == nil else { throw Self.declined }
        } while try readSeparator(closing: UInt8(ascii: "}"), in: "")
        return nil
    }
}
