import Foundation

// The tags that capture needs beyond the hand-written ones: UUIDs, dates with fractions of a second, dictionaries
// whose keys are neither all strings nor all integers, and the placeholder for a value no fixture can hold. They are
// documented with the others on `UserInfoFixture` and in Fixtures/README.md.

extension FixtureReader {
    /// The capture tags, with a short description of each payload, for error messages.
    static let captureTags: [String: String] = [
        "$uuid": "a UUID string", "$nsuuid": "a UUID string",
        "$date": "the seconds since 2001-01-01T00:00:00Z as a number",
        "$entries": "an array of dictionaries with key and value",
        "$placeholder": "a dictionary with type and description",
    ]

    /// Reads a capture tag, or returns `nil` when `tag` is not one of them.
    func capturedTag(_ tag: String, _ payload: Any, _ location: [String], depth: Int) throws -> FixtureValue? {
        switch tag {
        case "$uuid", "$nsuuid":
            let string = try self.string(payload, location, code: .invalidTag)
            guard let uuid = UUID(uuidString: string) else {
                throw error(.invalidTag, location, "\(tag) needs a UUID string, found \"\(string)\"")
            }
            return .uuid(uuid, bridged: tag == "$nsuuid")
        case "$date":
            switch Self.classify(payload) {
            case .number(.real(let seconds))?: return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .number(.integer(let seconds))?:
                return .date(Date(timeIntervalSinceReferenceDate: TimeInterval(seconds)))
            default:
                throw error(
                    .invalidTag, location,
                    "$date needs the seconds since 2001-01-01T00:00:00Z as a number, found \(describe(payload))")
            }
        case "$entries":
            return .entries(try anyKeyed(payload, location, depth: depth))
        case "$placeholder":
            let fields = try dictionary(payload, location, code: .invalidTag)
            try checkKeys(fields, allowed: ["type", "description"], location, code: .invalidTag)
            let typeName = try string(fields["type"], location + ["type"], code: .invalidTag)
            let description = try fields["description"].map {
                try string($0, location + ["description"], code: .invalidTag)
            }
            return .placeholder(typeName: typeName, description: description ?? "")
        default:
            return nil
        }
    }

    /// `{"$entries": [{key: …, value: …}, …]}`: a dictionary with keys of any hashable kind, such as `NSNumber` keys
    /// or a mix of strings and integers.
    private func anyKeyed(_ payload: Any, _ location: [String], depth: Int) throws -> [FixtureValue.AnyEntry] {
        guard case .array(let array)? = Self.classify(payload) else {
            throw error(.invalidTag, location, "$entries needs an array of dictionaries with key and value")
        }
        var entries: [FixtureValue.AnyEntry] = []
        var seen = Set<AnyHashable>()
        for (index, element) in array.enumerated() {
            let elementLocation = location + ["[\(index)]"]
            let fields = try dictionary(element, elementLocation, code: .invalidTag)
            try checkKeys(fields, allowed: ["key", "value"], elementLocation, code: .invalidTag)
            guard let rawKey = fields["key"], let rawValue = fields["value"] else {
                throw error(.invalidTag, elementLocation, "an entry of $entries needs both key and value")
            }
            let key = try value(rawKey, elementLocation + ["key"], depth: depth + 1)
            guard key.isHashableScalar, let hashable = key.makeValue() as? AnyHashable else {
                throw error(
                    .invalidTag, elementLocation + ["key"],
                    "a key of $entries must be a string, a number, a date, data, a URL, a UUID or NSNull")
            }
            guard seen.insert(hashable).inserted else {
                throw error(.invalidTag, elementLocation + ["key"], "this key appears twice in $entries")
            }
            entries.append(
                FixtureValue.AnyEntry(
                    key: key, value: try value(rawValue, elementLocation + ["value"], depth: depth + 1)))
        }
        return entries
    }
}

extension FixtureValue {
    /// Whether the value is a scalar that can be a dictionary key.
    var isHashableScalar: Bool {
        switch self {
        case .number, .swiftNumber, .decimal, .string, .nsString, .date, .data, .null, .url, .nsURL, .geometry, .uuid:
            true
        case .array, .dictionary, .integerKeyedDictionary, .entries, .placeholder:
            false
        }
    }

    static func makeDictionary(_ entries: [AnyEntry]) -> [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = [:]
        for entry in entries {
            // The reader accepts only hashable scalars as keys, so this cast succeeds for every read entry.
            if let key = entry.key.makeValue() as? AnyHashable { dictionary[key] = entry.value.makeValue() }
        }
        return dictionary
    }
}

/// What a fixture's `{"$placeholder": {type: …, description: …}}` becomes: an object of no type a decoder reads, which
/// stands where a capture met a value that a fixture cannot hold, such as an `AVAudioSessionRouteDescription`.
///
/// Decoding it into anything gives a `typeMismatch`, as the original object would; a payload type that does not read
/// that key decodes as before.
final class FixturePlaceholder: NSObject, @unchecked Sendable {
    /// The type name of the value the capture met.
    let typeName: String
    /// The description of the value the capture met.
    let capturedDescription: String

    init(typeName: String, capturedDescription: String) {
        self.typeName = typeName
        self.capturedDescription = capturedDescription
    }

    override var description: String { "placeholder for a \(typeName): \(capturedDescription)" }
}
