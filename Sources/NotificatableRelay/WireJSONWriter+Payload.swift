import Foundation

// One pass from a payload's property-list values to the message's bytes (issue 43). Before, `WireValue.write` built
// a second tree of `Any` (tags as one-key dictionaries, every number re-boxed), which the writer then classified again
// with a chain of failing dynamic casts: about 6 µs of a small message's 10 µs. Here each value is told by its exact
// dynamic type, once, and written straight to bytes; a value of any other type (an `NSNumber`, an `NSString`, a
// `[String: Int]`) goes through the two-step path as before, so every value is written as it was, byte for byte.

extension WireJSONWriter {
    /// Appends a whole message: `{`, `"sequence":N,` when `sequence` is given, then `version`, `name`, `sender`,
    /// `payload` (when not `nil`) and `headers` (when not empty), in that order, then `}`.
    ///
    /// The caller has checked the sender's length and the headers' limits.
    ///
    /// - Throws: `EncodingError.invalidValue` at the payload's value for a value that is not a property-list value,
    ///   and at the payload for a key that is not a string.
    mutating func writeMessage(
        sequence: Int?, version: Int, name: String, sender: String, payload: [AnyHashable: Any]?,
        headers: [String: String]
    ) throws {
        bytes.append(UInt8(ascii: "{"))
        if let sequence {
            bytes.append(contentsOf: Self.sequenceField)
            writeInteger(sequence)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(contentsOf: Self.versionField)
        writeInteger(version)
        bytes.append(contentsOf: Self.nameField)
        writeString(name)
        bytes.append(contentsOf: Self.senderField)
        writeString(sender)
        if let payload {
            bytes.append(contentsOf: Self.payloadField)
            try writePayload(payload)
        }
        if !headers.isEmpty {
            bytes.append(contentsOf: Self.headersField)
            writeHeaders(headers)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends a payload as ``WireValue/write(topLevel:path:)`` and ``write(_:path:)`` together write it.
    mutating func writePayload(_ payload: [AnyHashable: Any]) throws {
        try writeDictionary(payload, path: Self.payloadPath)
    }

    /// Appends the headers: an object of strings, keys sorted, no `$escape` (headers are not payload values).
    private mutating func writeHeaders(_ headers: [String: String]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in headers.count < 2 ? Array(headers) : headers.sorted(by: { $0.key < $1.key }) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
            writeString(value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends one payload value, told by its exact dynamic type.
    ///
    /// `path` is made only for an error or a nested value: an array per value costs an allocation.
    private mutating func writeWireValue(_ value: Any, path: () -> [any CodingKey]) throws {
        let type = ObjectIdentifier(Swift.type(of: value))
        // Each cast below is to the value's own type, which succeeds at once; it is the failing casts (which try
        // every bridging conversion) that made the two-step path slow.
        if type == Self.stringType, let string = value as? String {
            writeString(string)
        } else if type == Self.intType, let int = value as? Int {
            writeInteger(int)
        } else if type == Self.doubleType, let double = value as? Double {
            writeDouble(double)
        } else if type == Self.boolType, let bool = value as? Bool {
            bytes.append(contentsOf: bool ? Self.trueBytes : Self.falseBytes)
        } else if type == Self.stringDictionaryType, let dictionary = value as? [String: Any] {
            try writeDictionary(dictionary, path: path())
        } else if type == Self.arrayType, let array = value as? [Any] {
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try writeWireValue(element) { path() + [WireKey(index: index)] }
            }
            bytes.append(UInt8(ascii: "]"))
        } else if type == Self.dateType, let date = value as? Date, let text = WireValue.dateText(of: date) {
            bytes.append(contentsOf: Self.dateTag)
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "}"))
        } else if type == Self.dataType, let data = value as? Data {
            bytes.append(contentsOf: Self.dataTag)
            writeString(data.base64EncodedString())
            bytes.append(UInt8(ascii: "}"))
        } else if type == Self.uint64Type, let int = value as? UInt64 {
            bytes.append(contentsOf: String(int).utf8)
        } else if type == Self.int64Type, let int = value as? Int64 {
            bytes.append(contentsOf: String(int).utf8)
        } else if type == Self.anyHashableDictionaryType, let dictionary = value as? [AnyHashable: Any] {
            try writeDictionary(dictionary, path: path())
        } else if type == Self.nullType {
            bytes.append(contentsOf: Self.nullBytes)
        } else {
            // Every other type, as before: an `NSNumber` (read by its `objCType`), a bridged string or collection,
            // an integer of another width, a date beyond the plain decimals.
            let path = path()
            try write(WireValue.write(value, path: path), path: path)
        }
    }

    /// Appends the payload's top level, or a nested `[AnyHashable: Any]`.
    ///
    /// - Throws: `EncodingError.invalidValue` at `path` for a key that is not a string, as
    ///   ``WireValue/write(topLevel:path:)`` does.
    private mutating func writeDictionary(_ dictionary: [AnyHashable: Any], path: [any CodingKey]) throws {
        var members: [(key: String, value: Any)] = []
        members.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            guard let key = key.base as? String else {
                throw EncodingError.invalidValue(
                    dictionary, .init(codingPath: path, debugDescription: "A dictionary key \(key) is not a string."))
            }
            members.append((key, value))
        }
        if members.count > 1 {
            members.sort { $0.key < $1.key }
            // Two keys that are one `String` (an `NSString` and a `String`, say): the two-step path keeps one of the
            // values, as a `[String: Any]` does.
            for index in members.indices.dropFirst() where members[index - 1].key == members[index].key {
                try write(WireValue.write(topLevel: dictionary, path: path), path: path)
                return
            }
        }
        try writeMembers(sorted: members, path: path)
    }

    /// Appends a `[String: Any]`.
    private mutating func writeDictionary(_ dictionary: [String: Any], path: [any CodingKey]) throws {
        var members: [(key: String, value: Any)] = []
        members.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { members.append((key, value)) }
        if members.count > 1 { members.sort { $0.key < $1.key } }
        try writeMembers(sorted: members, path: path)
    }

    /// Appends an object of `members`, sorted by key: one key starting with `$` is escaped (`{"$escape":{…}}`), so
    /// that it is not read as a tag.
    private mutating func writeMembers(sorted members: [(key: String, value: Any)], path: [any CodingKey]) throws {
        let escaped = members.count == 1 && members[0].key.hasPrefix("$")
        if escaped { bytes.append(contentsOf: Self.escapeTag) }
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeString(member.key)
            bytes.append(UInt8(ascii: ":"))
            try writeWireValue(member.value) { path + [WireKey(member.key)] }
        }
        bytes.append(UInt8(ascii: "}"))
        if escaped { bytes.append(UInt8(ascii: "}")) }
    }

    /// Appends `integer`'s decimal digits.
    private mutating func writeInteger(_ integer: Int) {
        if integer >= 0 && integer < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(integer))
        } else {
            bytes.append(contentsOf: String(integer).utf8)
        }
    }

    /// Appends a finite double in Swift's shortest form that reads back exactly, or its `$double` tag.
    private mutating func writeDouble(_ double: Double) {
        if double.isFinite {
            bytes.append(contentsOf: double.description.utf8)
        } else {
            bytes.append(contentsOf: Self.doubleTag)
            writeString(double.isNaN ? "nan" : double > 0 ? "inf" : "-inf")
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let payloadPath: [any CodingKey] = [WireKey(NotificationRelayMessage.Field.payload)]

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let doubleType = ObjectIdentifier(Double.self)
    private static let boolType = ObjectIdentifier(Bool.self)
    private static let int64Type = ObjectIdentifier(Int64.self)
    private static let uint64Type = ObjectIdentifier(UInt64.self)
    private static let dateType = ObjectIdentifier(Date.self)
    private static let dataType = ObjectIdentifier(Data.self)
    private static let stringDictionaryType = ObjectIdentifier([String: Any].self)
    private static let anyHashableDictionaryType = ObjectIdentifier([AnyHashable: Any].self)
    private static let arrayType = ObjectIdentifier([Any].self)
    private static let nullType = ObjectIdentifier(NSNull.self)

    private static let sequenceField = Array(#""sequence":"#.utf8)
    private static let versionField = Array(#""version":"#.utf8)
    private static let nameField = Array(#","name":"#.utf8)
    private static let senderField = Array(#","sender":"#.utf8)
    private static let payloadField = Array(#","payload":"#.utf8)
    private static let headersField = Array(#","headers":"#.utf8)
    private static let dateTag = Array(#"{"$date":"#.utf8)
    private static let dataTag = Array(#"{"$data":"#.utf8)
    private static let doubleTag = Array(#"{"$double":"#.utf8)
    private static let escapeTag = Array(#"{"$escape":"#.utf8)
}
