import Foundation
import Notificatable

/// One message of a ``NotificationRelay`` on the wire: a notification's name and payload, who sent it, and its
/// place in the sender's sequence.
///
/// The relay builds and reads these for you. Use the type directly to write or read messages in a test, or to
/// check what a service in another language sends. The format, version 1, is a UTF-8 JSON object:
///
/// ```json
/// {"version":1,"name":"OrderShipped","sender":"5A0C…","sequence":42,
///  "payload":{"orderID":"A-17","weight":2.5,"shippedAt":{"$date":1764000000.25}}}
/// ```
///
/// `payload` is the plain-key dictionary that `UserInfoEncoder` writes, with the values that JSON lacks written
/// as one-key objects: `{"$date": seconds since 1970}`, `{"$data": "Base64"}`, `{"$double": "nan" | "inf" |
/// "-inf"}`, and `{"$escape": {…}}` around any dictionary that has exactly one key starting with `$`, the payload
/// itself included. Integers of every width travel as their exact digits. An object that holds a key twice (spelled
/// the same, or canonically equivalent, as Swift's `String` compares them) is malformed, and `sender` has at most
/// ``maximumSenderLength`` bytes. <doc:AcrossProcesses> describes every field.
///
/// ```swift
/// let message = NotificationRelayMessage(name: "OrderShipped", sender: "test", sequence: 1, payload: ["orderID": "A-17"])
/// let bytes = try message.encoded()
/// let read = try NotificationRelayMessage(decoding: bytes)
/// ```
///
/// `@unchecked Sendable`: the payload holds only property-list values (strings, numbers, dates, data, arrays and
/// dictionaries of them), which are immutable.
public struct NotificationRelayMessage: @unchecked Sendable {
    /// The format version that this library writes and reads: `1`.
    public static let currentVersion = 1

    /// The longest ``sender`` a message may have, in UTF-8 bytes: 128. A relay's id is a 36-byte UUID string; a
    /// longer sender is refused when a message is written or read, so that the table of remote senders a relay keeps
    /// stays small (at most 128 bytes for each of its ``NotificationRelay/maximumTrackedSenders`` senders).
    public static let maximumSenderLength = 128

    /// The format version of the message.
    public var version: Int
    /// The notification's name, in full (the channel may be a shortened form of it).
    public var name: Notification.Name
    /// The sending relay's ``NotificationRelay/id``.
    public var sender: String
    /// The sender's sequence number: 1 for its first message, one more for each message after.
    public var sequence: Int
    /// Metadata that travels with the message, apart from its payload: the trace context of the post (a W3C
    /// `traceparent`, or whatever keys the sender's tracing instrument injects), empty for none. Written as the
    /// optional `headers` field, an object of strings, only when not empty: readers of this format before the field
    /// existed ignore it, and a message without it reads as empty. At most ``maximumHeaderCount`` entries and
    /// ``maximumHeadersLength`` bytes of UTF-8 in keys and values together; a message over either limit is refused
    /// when written or read, as is a `headers` field that is not an object of strings.
    ///
    /// ```swift
    /// var message = NotificationRelayMessage(name: "OrderShipped", sender: "test", sequence: 1, payload: nil)
    /// message.headers = ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]
    /// ```
    public var headers: [String: String] = [:]

    /// The most entries ``headers`` may hold: 32.
    public static let maximumHeaderCount = 32
    /// The most bytes of UTF-8 the keys and values of ``headers`` may hold together: 4,096 (a `traceparent` is 55
    /// bytes, a `tracestate` at most 512).
    public static let maximumHeadersLength = 4_096

    /// Why `headers` cannot travel, or `nil` when it can.
    static func headersProblem(_ headers: [String: String]) -> String? {
        if headers.count > maximumHeaderCount {
            return "A message holds at most \(maximumHeaderCount) headers; this one holds \(headers.count)."
        }
        var length = 0
        for (key, value) in headers { length += key.utf8.count + value.utf8.count }
        if length > maximumHeadersLength {
            return
                "A message's headers hold at most \(maximumHeadersLength) bytes of UTF-8; these hold \(length) bytes."
        }
        return nil
    }
    /// The payload as plain keys, as `UserInfoEncoder` writes it, or `nil` for a notification without payload.
    public var payload: [String: Any]? {
        get {
            switch storedPayload {
            case nil: nil
            case .strings(let dictionary): dictionary
            case .userInfo(let userInfo): Self.stringKeyed(userInfo)
            }
        }
        set { storedPayload = newValue.map { .strings($0) } }
    }

    /// The payload in the form it was made or read in: a received message's as the `[AnyHashable: Any]` its re-post
    /// carries (see ``WireJSONReader/readMessage(_:)``), so that receiving builds it once.
    private var storedPayload: StoredPayload?

    private enum StoredPayload {
        case strings([String: Any])
        case userInfo([AnyHashable: Any])
    }

    /// The payload as a notification's `userInfo`, or `nil` for a message without payload.
    ///
    /// A received message's payload is read into this form, with room for a few more keys, so that posting it costs
    /// no copy; ``payload`` converts it to `String` keys each time it is read.
    ///
    /// ```swift
    /// let message = try NotificationRelayMessage(decoding: bytes)
    /// let order = try orderShipped.payload(from: Notification(name: message.name, userInfo: message.payloadUserInfo))
    /// ```
    public var payloadUserInfo: [AnyHashable: Any]? {
        switch storedPayload {
        case nil: return nil
        case .userInfo(let userInfo): return userInfo
        case .strings(let dictionary):
            // Twice the room the keys need, and two more: a re-post adds two.
            var userInfo = [AnyHashable: Any](minimumCapacity: 2 * (dictionary.count + 2))
            for (key, value) in dictionary { userInfo[key] = value }
            return userInfo
        }
    }

    /// `userInfo`'s entries under `String` keys; a reader's dictionary has no other keys.
    private static func stringKeyed(_ userInfo: [AnyHashable: Any]) -> [String: Any] {
        var dictionary = [String: Any](minimumCapacity: userInfo.count)
        for (key, value) in userInfo {
            if let key = key.base as? String { dictionary[key] = value }
        }
        return dictionary
    }

    /// Creates a message of the current version.
    ///
    /// - Parameters:
    ///   - name: The notification name.
    ///   - sender: The sending relay's id.
    ///   - sequence: The sender's sequence number.
    ///   - payload: The plain-key payload, or `nil` for none.
    public init(name: Notification.Name, sender: String, sequence: Int, payload: [String: Any]?) {
        self.version = Self.currentVersion
        self.name = name
        self.sender = sender
        self.sequence = sequence
        self.payload = payload
    }

    /// Encodes the message as UTF-8 JSON.
    ///
    /// - Returns: The message's bytes.
    /// - Throws: `EncodingError.invalidValue`, with the coding path from `payload`, for a value that is not a
    ///   property-list value (an `NSValue`, say), and at `sender` for a sender longer than
    ///   ``maximumSenderLength`` bytes.
    public func encoded() throws -> Data {
        try Self.messageBytes(
            version: version, name: name, sender: sender, sequence: sequence, payload: payloadUserInfo,
            headers: headers)
    }

    /// A message's JSON without its `sequence` field, so that the relay can encode a post outside its lock and add
    /// the sequence number, in order, under it.
    struct UnsequencedBody {
        /// The JSON object, starting with `{`, with every field but `sequence`.
        let json: [UInt8]

        /// The size in bytes of the message with `sequence` added.
        func size(withSequence sequence: Int) -> Int {
            // `{"sequence":` replaces `{`, and a comma follows the number.
            json.count + 12 + String(sequence).utf8.count
        }

        /// The message with `sequence` as its first field, in one copy of the body.
        func message(withSequence sequence: Int) -> Data {
            var message = Data(capacity: size(withSequence: sequence))
            message.append(contentsOf: "{\"sequence\":\(sequence),".utf8)
            json.withUnsafeBufferPointer { body in
                message.append(UnsafeBufferPointer(rebasing: body.dropFirst()))
            }
            return message
        }
    }

    /// Encodes everything but the sequence number.
    ///
    /// - Throws: `EncodingError.invalidValue` at `sender` for a sender longer than ``maximumSenderLength``, at
    ///   the payload's value for a value that is not a property-list value, and at `headers` for headers over
    ///   ``maximumHeaderCount`` or ``maximumHeadersLength``.
    static func unsequencedBody(
        version: Int = currentVersion,
        name: Notification.Name,
        sender: String,
        payload: [AnyHashable: Any]?,
        headers: [String: String] = [:]
    ) throws -> UnsequencedBody {
        UnsequencedBody(
            json: try written(
                sequence: nil, version: version, name: name, sender: sender, payload: payload, headers: headers))
    }

    /// Encodes a whole message, its sequence number first, in one pass: the bytes of
    /// `unsequencedBody(…).message(withSequence: sequence)`, without the second copy.
    ///
    /// - Throws: The errors of ``unsequencedBody(version:name:sender:payload:headers:)``.
    static func messageBytes(
        version: Int = currentVersion,
        name: Notification.Name,
        sender: String,
        sequence: Int,
        payload: [AnyHashable: Any]?,
        headers: [String: String] = [:]
    ) throws -> Data {
        Data(
            try written(
                sequence: sequence, version: version, name: name, sender: sender, payload: payload, headers: headers))
    }

    /// The checked envelope and the message's bytes, with `sequence` first, or without it for `nil`.
    private static func written(
        sequence: Int?, version: Int, name: Notification.Name, sender: String, payload: [AnyHashable: Any]?,
        headers: [String: String]
    ) throws -> [UInt8] {
        try checkEnvelope(sender: sender, headers: headers)
        var writer = WireJSONWriter()
        try writer.writeMessage(
            sequence: sequence, version: version, name: name.rawValue, sender: sender, payload: payload,
            headers: headers)
        return writer.bytes
    }

    /// Refuses a sender longer than ``maximumSenderLength`` and headers over their limits.
    private static func checkEnvelope(sender: String, headers: [String: String]) throws {
        guard sender.utf8.count <= maximumSenderLength else {
            throw EncodingError.invalidValue(
                sender, .init(codingPath: [WireKey(Field.sender)], debugDescription: senderTooLong(sender)))
        }
        if !headers.isEmpty, let problem = headersProblem(headers) {
            throw EncodingError.invalidValue(
                headers, .init(codingPath: [WireKey(Field.headers)], debugDescription: problem))
        }
    }

    /// Reads a message.
    ///
    /// - Parameter data: The message's bytes.
    /// - Throws: `DecodingError.dataCorrupted` at the empty path if the bytes are not a JSON object, and at
    ///   `version` for a version other than ``currentVersion``; `DecodingError.keyNotFound` or `typeMismatch` at
    ///   the field that is missing or of the wrong type; `dataCorrupted` at `sender` for a sender longer than
    ///   ``maximumSenderLength`` bytes; `dataCorrupted` at a key that an object holds twice, exactly or in a
    ///   canonically equivalent spelling (such as `payload.é`: Swift's `String` would merge the two, losing a
    ///   value); and the error at the payload's value, such as `payload.shippedAt`, for a malformed tagged value.
    public init(decoding data: Data) throws(DecodingError) {
        if let fields = WireJSONReader.readMessage(data) {
            self.init(fields)
        } else {
            try self.init(referenceDecoding: data)
        }
    }

    private init(_ fields: WireMessageFields) {
        version = Self.currentVersion
        name = Notification.Name(fields.name)
        sender = fields.sender
        sequence = fields.sequence
        storedPayload = fields.payload.map { .userInfo($0) }
        headers = fields.headers
    }

    /// Reads a message in passes: the JSON text into dictionaries, then its fields, then the payload's tags. It reads
    /// every message ``WireJSONReader/readMessage(_:)`` declines, and makes the errors of ``init(decoding:)``.
    init(referenceDecoding data: Data) throws(DecodingError) {
        let parsed: Any
        do {
            parsed = try WireJSONReader.read(data)
        } catch {
            if let path = error.pathOfDuplicateKey {
                // JSON, but not a message: our writer never writes a key twice, and reading one would drop a value.
                throw DecodingError.dataCorrupted(
                    .init(codingPath: path, debugDescription: Self.sentence(describing: error).capitalizedFirst))
            }
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "The message is not JSON: \(Self.sentence(describing: error))",
                    underlyingError: error)
            )
        }
        guard let object = parsed as? [String: Any] else {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                .init(codingPath: [], debugDescription: "Expected a JSON object but found \(type(of: parsed)).")
            )
        }
        let version = try Self.integerField(
            Field.version, in: object, allowed: Self.currentVersion...Self.currentVersion
        ) {
            "Unsupported message version \($0); this library reads version \(Self.currentVersion)."
        }
        self.version = version
        self.name = Notification.Name(try Self.field(Field.name, in: object) as String)
        let sender: String = try Self.field(Field.sender, in: object)
        guard sender.utf8.count <= Self.maximumSenderLength else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [WireKey(Field.sender)], debugDescription: Self.senderTooLong(sender)))
        }
        self.sender = sender
        self.sequence = try Self.integerField(Field.sequence, in: object, allowed: 1...Int.max) {
            "A sequence number is an integer from 1 to \(Int.max); found \($0)."
        }
        self.headers = try Self.headersField(in: object)
        switch object[Field.payload] {
        case nil:
            self.payload = nil
        case let value?:
            // Read as any other object is, tags and `$escape` included (the writer escapes the payload's top level
            // like any dictionary), then required to be a dictionary. The dictionary is tried before `NSNull`: `is
            // NSNull` on a Swift dictionary bridges it to an `NSDictionary`, value by value, on every message.
            let path = [WireKey(Field.payload)]
            var read = value
            if let object = value as? [String: Any] {
                read = try WireValue.read(object: object, path: path)
            } else if value is NSNull {
                self.payload = nil
                return
            }
            guard let dictionary = read as? [String: Any] else {
                throw DecodingError.typeMismatch(
                    [String: Any].self,
                    .init(
                        codingPath: path, debugDescription: "Expected an object but found \(WireValue.kind(of: read))."
                    )
                )
            }
            self.payload = dictionary
        }
    }

    /// Reads the name of a message without checking the rest, for reports about a message that cannot be read.
    static func name(in data: Data) -> Notification.Name? {
        guard let object = try? WireJSONReader.read(data) as? [String: Any],
            let name = object[Field.name] as? String
        else { return nil }
        return Notification.Name(name)
    }

    private static func field<T>(_ key: String, in object: [String: Any]) throws(DecodingError) -> T {
        let value = try Self.value(key, in: object)
        if let result = value as? T { return result }
        throw DecodingError.typeMismatch(
            T.self,
            .init(
                codingPath: [WireKey(key)],
                debugDescription: "Expected \(T.self) but found \(WireValue.kind(of: value)).")
        )
    }

    private static func value(_ key: String, in object: [String: Any]) throws(DecodingError) -> Any {
        guard let value = object[key] else {
            throw DecodingError.keyNotFound(
                WireKey(key),
                .init(codingPath: [], debugDescription: "The message has no \"\(key)\" field.")
            )
        }
        return value
    }

    /// An integer field, read exactly (never through `Double`, which would round numbers beyond 2⁵³).
    ///
    /// - Throws: `typeMismatch` at the field for anything but an integral number, and `dataCorrupted` with the
    ///   sentence `outOfRange` makes of the number for an integer outside `allowed`.
    private static func integerField(
        _ key: String, in object: [String: Any], allowed: ClosedRange<Int>, outOfRange: (String) -> String
    ) throws(DecodingError) -> Int {
        let value = try Self.value(key, in: object)
        guard let number = value as? NSNumber, !WireValue.isBoolean(number), let exact = WireValue.integer(number)
        else {
            throw DecodingError.typeMismatch(
                Int.self,
                .init(
                    codingPath: [WireKey(key)],
                    debugDescription: "Expected an integer but found \(WireValue.kind(of: value)).")
            )
        }
        if let integer = exact.value, allowed.contains(integer) { return integer }
        throw DecodingError.dataCorrupted(
            .init(codingPath: [WireKey(key)], debugDescription: outOfRange(exact.text))
        )
    }

    /// The optional `headers` field: an object of strings within the limits, or empty when absent.
    ///
    /// - Throws: `typeMismatch` at `headers` for anything but an object, and at `headers.KEY` for a value that is not
    ///   a string; `dataCorrupted` at `headers` for headers over ``maximumHeaderCount`` or ``maximumHeadersLength``.
    private static func headersField(in object: [String: Any]) throws(DecodingError) -> [String: String] {
        guard let value = object[Field.headers] else { return [:] }
        guard let fields = value as? [String: Any] else {
            throw DecodingError.typeMismatch(
                [String: String].self,
                .init(
                    codingPath: [WireKey(Field.headers)],
                    debugDescription: "Expected an object of strings but found \(WireValue.kind(of: value))."))
        }
        var headers = [String: String](minimumCapacity: fields.count)
        for (key, field) in fields {
            guard let string = field as? String else {
                throw DecodingError.typeMismatch(
                    String.self,
                    .init(
                        codingPath: [WireKey(Field.headers), WireKey(key)],
                        debugDescription: "Expected a string but found \(WireValue.kind(of: field))."))
            }
            headers[key] = string
        }
        if let problem = headersProblem(headers) {
            throw DecodingError.dataCorrupted(.init(codingPath: [WireKey(Field.headers)], debugDescription: problem))
        }
        return headers
    }

    private static func senderTooLong(_ sender: String) -> String {
        "A sender id is at most \(maximumSenderLength) bytes of UTF-8; this one is \(sender.utf8.count) bytes."
    }

    /// One sentence for a parser's error, without the `NSError` dump: its debug description (such as "Too many nested
    /// arrays or dictionaries around character 581."), starting in lower case and ending with one period.
    static func sentence(describing error: any Error) -> String {
        if let failure = error as? WireJSONReader.Failure { return failure.description + "." }
        let error = error as NSError
        var text = (error.userInfo["NSDebugDescription"] as? String) ?? error.localizedDescription
        while let last = text.last, last == "." || last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        if let first = text.first, first.isUppercase, text.dropFirst().first?.isUppercase != true {
            text = first.lowercased() + text.dropFirst()
        }
        return (text.isEmpty ? "it cannot be read" : text) + "."
    }

    /// The envelope's field names.
    enum Field {
        static let version = "version"
        static let name = "name"
        static let sender = "sender"
        static let sequence = "sequence"
        static let payload = "payload"
        static let headers = "headers"
    }
}

extension String {
    /// The string with its first character in upper case, for a sentence made from a parser's clause.
    fileprivate var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}

/// A coding key for a wire field, a payload key, or an array index.
struct WireKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) { self.init(index: intValue) }
}
