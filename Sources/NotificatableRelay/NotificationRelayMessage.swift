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
    /// The payload as plain keys, as `UserInfoEncoder` writes it, or `nil` for a notification without payload.
    public var payload: [String: Any]?

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
        let body = try Self.unsequencedBody(
            version: version,
            name: name,
            sender: sender,
            payload: payload.map { dictionary in
                var hashable = [AnyHashable: Any](minimumCapacity: dictionary.count)
                for (key, value) in dictionary { hashable[key] = value }
                return hashable
            }
        )
        return body.message(withSequence: sequence)
    }

    /// A message's JSON without its `sequence` field, so that the relay can encode a post outside its lock and add
    /// the sequence number, in order, under it.
    struct UnsequencedBody {
        /// The JSON object, starting with `{`, with every field but `sequence`.
        let json: Data

        /// The size in bytes of the message with `sequence` added.
        func size(withSequence sequence: Int) -> Int {
            // `{"sequence":` replaces `{`, and a comma follows the number.
            json.count + 12 + String(sequence).utf8.count
        }

        /// The message with `sequence` as its first field.
        func message(withSequence sequence: Int) -> Data {
            var message = Data()
            message.reserveCapacity(size(withSequence: sequence))
            message.append(contentsOf: "{\"sequence\":\(sequence),".utf8)
            message.append(json.dropFirst())
            return message
        }
    }

    /// Encodes everything but the sequence number.
    ///
    /// - Throws: `EncodingError.invalidValue` at `sender` for a sender longer than ``maximumSenderLength``, and at
    ///   the payload's value for a value that is not a property-list value.
    static func unsequencedBody(
        version: Int = currentVersion,
        name: Notification.Name,
        sender: String,
        payload: [AnyHashable: Any]?
    ) throws -> UnsequencedBody {
        guard sender.utf8.count <= maximumSenderLength else {
            throw EncodingError.invalidValue(
                sender, .init(codingPath: [WireKey(Field.sender)], debugDescription: senderTooLong(sender)))
        }
        var writer = WireJSONWriter()
        if let payload {
            let path: [any CodingKey] = [WireKey(Field.payload)]
            let written = try WireValue.write(topLevel: payload, path: path)
            try writer.writeObject(
                [Field.version: version, Field.name: name.rawValue, Field.sender: sender, Field.payload: written],
                path: [])
        } else {
            try writer.writeObject([Field.version: version, Field.name: name.rawValue, Field.sender: sender], path: [])
        }
        return UnsequencedBody(json: Data(writer.bytes))
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

/// The mapping between property-list values and JSON values with `$` tags.
enum WireValue {
    static let date = "$date"
    static let data = "$data"
    static let double = "$double"
    static let escape = "$escape"

    /// The seconds from 1970 to 2001, exactly: `Date`'s reference date.
    private static let referenceOffset: Double = 978_307_200
    private static let referenceOffsetSeconds = 978_307_200

    private static let booleanType = type(of: NSNumber(value: true))

    static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == booleanType
    }

    /// The exact integer that a non-boolean `number` holds, as an `Int` if it fits (`value`) and as text either way;
    /// `nil` if it is not integral. An integer `NSNumber` is read as one, never through `Double`.
    static func integer(_ number: NSNumber) -> (value: Int?, text: String)? {
        switch number.objCType.pointee {
        case CChar(UInt8(ascii: "q")), CChar(UInt8(ascii: "l")), CChar(UInt8(ascii: "i")), CChar(UInt8(ascii: "s")),
            CChar(UInt8(ascii: "c")):
            let integer = number.int64Value
            return (Int(exactly: integer), String(integer))
        case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")), CChar(UInt8(ascii: "S")),
            CChar(UInt8(ascii: "C")):
            let integer = number.uint64Value
            return (Int(exactly: integer), String(integer))
        default:
            let double = number.doubleValue
            guard double.isFinite, double.rounded(.towardZero) == double else { return nil }
            return (Int(exactly: double), "\(double)")
        }
    }

    // MARK: - Writing

    static func write(topLevel dictionary: [AnyHashable: Any], path: [any CodingKey]) throws -> Any {
        var strings = [String: Any](minimumCapacity: dictionary.count)
        for (key, value) in dictionary {
            guard let key = key.base as? String else {
                throw EncodingError.invalidValue(
                    dictionary,
                    .init(codingPath: path, debugDescription: "A dictionary key \(key) is not a string.")
                )
            }
            strings[key] = value
        }
        return try write(dictionary: strings, path: path)
    }

    static func write(dictionary: [String: Any], path: [any CodingKey]) throws -> Any {
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            result[key] = try write(value, path: path + [WireKey(key)])
        }
        if result.count == 1, let key = result.keys.first, key.hasPrefix("$") {
            return [escape: result]
        }
        return result
    }

    /// `path` is made only when needed (an error, or a nested value): an array per value costs an allocation.
    static func write(_ value: Any, path: @autoclosure () -> [any CodingKey]) throws -> Any {
        // The common numbers first, by their exact type: each failed cast below costs a run-time cast, and `is NSNull`
        // of a Swift number bridges it to an `NSNumber`.
        let dynamicType = ObjectIdentifier(Swift.type(of: value))
        if dynamicType == ObjectIdentifier(Int.self) || dynamicType == ObjectIdentifier(Double.self),
            let number = number(value)
        {
            return number
        }
        switch value {
        case let string as String:
            return string
        case let bool as Bool where type(of: value) == Bool.self:
            return bool
        case let date as Date:
            // Exactly the interval's shortest digits plus the offset, so that the reader gets the same Date back
            // (see WireDecimal); an interval that is not finite is refused by the JSON writer.
            let interval = date.timeIntervalSinceReferenceDate
            guard interval.isFinite,
                let text = WireDecimal.plainText(of: interval.description, adding: referenceOffsetSeconds)
            else {
                return [WireValue.date: interval + referenceOffset]
            }
            let seconds = WireDateSeconds(text: text, number: NSNumber(value: interval + referenceOffset))
            return [WireValue.date: seconds]
        case let data as Data:
            return [WireValue.data: data.base64EncodedString()]
        case let array as [Any]:
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try write(element, path: path() + [WireKey(index: index)]))
            }
            return result
        case let dictionary as [String: Any]:
            return try write(dictionary: dictionary, path: path())
        case let dictionary as [AnyHashable: Any]:
            return try write(topLevel: dictionary, path: path())
        default:
            if let number = number(value) { return number }
            // After the numbers: `is NSNull` of a Swift number bridges it to an `NSNumber` first.
            if value is NSNull { return NSNull() }
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: path(),
                    debugDescription: "\(type(of: value)) is not a property-list value, so it cannot be relayed."
                )
            )
        }
    }

    /// A number as JSON can hold it: an integer as its exact value (`Int64`, or `UInt64` above `Int64.max`), a finite
    /// double itself (an integral one in an `NSNumber` as the integer), or a `$double` tag.
    ///
    /// Swift's own integer types come first: on Linux every one of them also casts `as NSNumber`, and an `NSNumber` is
    /// read by its `objCType`, never through `Double` (which rounds integers beyond 2⁵³).
    private static func number(_ value: Any) -> Any? {
        switch value {
        case let int as Int: return int
        case let double as Double: return double.isFinite ? double : [WireValue.double: nonFinite(double)]
        case let int as Int64: return int
        case let int as UInt64: return int
        case let int as UInt: return UInt64(int)
        case let int as Int32: return Int64(int)
        case let int as UInt32: return Int64(int)
        case let int as Int16: return Int64(int)
        case let int as UInt16: return Int64(int)
        case let int as Int8: return Int64(int)
        case let int as UInt8: return Int64(int)
        case let float as Float: return number(Double(float))
        case let number as NSNumber:
            if isBoolean(number) { return number.boolValue }
            switch number.objCType.pointee {
            case CChar(UInt8(ascii: "q")), CChar(UInt8(ascii: "l")), CChar(UInt8(ascii: "i")),
                CChar(UInt8(ascii: "s")), CChar(UInt8(ascii: "c")):
                return number.int64Value
            case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")),
                CChar(UInt8(ascii: "S")), CChar(UInt8(ascii: "C")):
                return number.uint64Value
            default:
                let double = number.doubleValue
                if let integer = Int64(exactly: double) { return integer }
                return double.isFinite ? double : [WireValue.double: nonFinite(double)]
            }
        default: return nil
        }
    }

    private static func nonFinite(_ double: Double) -> String {
        double.isNaN ? "nan" : double > 0 ? "inf" : "-inf"
    }

    // MARK: - Reading

    private static func read(dictionary: [String: Any], path: [any CodingKey]) throws(DecodingError) -> [String: Any] {
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            if key == date, let seconds = value as? WireDateSeconds {
                // A `$date` key among others, or escaped: the user's own number.
                result[key] = seconds.number
                continue
            }
            result[key] = try read(value, path: path + [WireKey(key)])
        }
        return result
    }

    /// `path` is made only for a nested value: an array per value costs an allocation.
    static func read(_ value: Any, path: @autoclosure () -> [any CodingKey]) throws(DecodingError) -> Any {
        // The reader makes containers of exactly these two types; anything else is a leaf, told by its type alone
        // (a failing `as? [Any]` on a leaf tries every bridging conversion, the larger part of a message's reading).
        let type = type(of: value)
        guard type == [Any].self || type == [String: Any].self else { return value }
        switch value {
        case let array as [Any]:
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try read(element, path: path() + [WireKey(index: index)]))
            }
            return result
        case let dictionary as [String: Any]:
            return try read(object: dictionary, path: path())
        default:
            return value
        }
    }

    /// A JSON object as the value it stands for, at every level (the payload's top level included): a one-key object
    /// whose key starts with `$` is a tag (its value, or the object under `$escape`), any other is a dictionary.
    static func read(object: [String: Any], path: [any CodingKey]) throws(DecodingError) -> Any {
        guard object.count == 1, let (tag, tagged) = object.first, tag.hasPrefix("$") else {
            return try read(dictionary: object, path: path)
        }
        return try readTagged(tag, tagged, path: path)
    }

    private static func readTagged(_ tag: String, _ value: Any, path: [any CodingKey]) throws(DecodingError) -> Any {
        switch tag {
        case date:
            if let seconds = value as? WireDateSeconds {
                if let interval = WireDecimal.double(of: seconds.text, adding: -referenceOffsetSeconds),
                    interval.isFinite
                {
                    return Date(timeIntervalSinceReferenceDate: interval)
                }
                let double = seconds.number.doubleValue - referenceOffset
                if double.isFinite { return Date(timeIntervalSinceReferenceDate: double) }
            }
            if let number = value as? NSNumber, !isBoolean(number), number.doubleValue.isFinite {
                return Date(timeIntervalSinceReferenceDate: number.doubleValue - referenceOffset)
            }
            throw mismatch(Date.self, "a number of seconds since 1970 under \"$date\"", value, path)
        case data:
            if let string = value as? String, let data = Data(base64Encoded: string) { return data }
            throw mismatch(Data.self, "a Base64 string under \"$data\"", value, path)
        case double:
            switch value as? String {
            case "nan": return Double.nan
            case "inf": return Double.infinity
            case "-inf": return -Double.infinity
            default: throw mismatch(Double.self, "\"nan\", \"inf\" or \"-inf\" under \"$double\"", value, path)
            }
        case escape:
            guard let dictionary = value as? [String: Any] else {
                throw mismatch([String: Any].self, "an object under \"$escape\"", value, path)
            }
            return try read(dictionary: dictionary, path: path)
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path,
                    debugDescription: "Unknown tag \"\(tag)\": a one-key object whose key starts with $ is reserved; "
                        + "wrap a dictionary of your own in {\"$escape\": …}."
                )
            )
        }
    }

    private static func mismatch(_ type: Any.Type, _ expected: String, _ value: Any, _ path: [any CodingKey])
        -> DecodingError
    {
        .typeMismatch(
            type,
            .init(codingPath: path, debugDescription: "Expected \(expected) but found \(kind(of: value)).")
        )
    }

    /// A JSON-ish name for what was found, for error messages.
    static func kind(of value: Any) -> String {
        switch value {
        case is String: "a string"
        case is WireDateSeconds: "a number"
        case is Date: "a date"
        case is Data: "data"
        case is Double: "a number"
        case let number as NSNumber: isBoolean(number) ? "a boolean" : "a number"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is NSNull: "null"
        default: "\(type(of: value))"
        }
    }
}
