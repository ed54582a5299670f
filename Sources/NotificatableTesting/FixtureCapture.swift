import Foundation
import Notificatable

#if !canImport(Darwin)  // apple-check: follows the collection readers below
import CoreFoundation
#endif

/// A fixture file made from a live notification: its `userInfo` exactly as it was boxed, its name and a description
/// of its object, and, when you know them, the payload type and the expected outcome.
///
/// Capture a notification where it really happens, such as in a debug build on a device, and write it out:
///
/// ```swift
/// let observer = NotificationCenter.default.addObserver(
///     forName: UIResponder.keyboardWillShowNotification, object: nil, queue: nil
/// ) { notification in
///     let capture = FixtureCapture(notification)
///     try? capture.write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "keyboard-will-show.plist"))
///     for note in capture.notes { print(note) }   // values a fixture cannot hold
/// }
/// ```
///
/// The file is a fixture in the format described on ``UserInfoFixture``, and loading it gives the same `userInfo`:
/// each `NSNumber` keeps its kind (boolean, integer or floating point), each `NSValue` its geometry kind, a Swift
/// `Int` or `Double` stays a Swift value, `Date`, `Data`, `URL`, `UUID` and `NSNull` stay what they are,
/// `NSString`, `NSArray` and `NSDictionary` keep their Foundation class, and keys that are not strings are kept.
/// A value that no fixture can hold, such as an `AVAudioSessionRouteDescription`, is written as a marked
/// `$placeholder` and listed in ``notes``; it is never dropped.
///
/// Until ``typeName`` and ``expectation`` are set, the file is a capture rather than a test: `notificatable-fixtures
/// check` names the missing fields, and `notificatable-fixtures scaffold` writes a payload type for it. Set them
/// before writing to get a complete fixture:
///
/// ```swift
/// var capture = FixtureCapture(notification)
/// capture.typeName = "KeyboardFrameChange"
/// capture.decoderConfiguration.keyStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
/// try capture.expect(KeyboardFrameChange(frameEnd: frame, animationDuration: 0.25))
/// ```
///
/// To capture every notification of some names into a folder, use ``FixtureRecorder``.
public struct FixtureCapture: Sendable {
    /// Something a capture could not keep exactly, with its place in the file.
    public struct Note: Sendable, Equatable, CustomStringConvertible {
        /// Where the value is, in the notation of ``UserInfoFixtureError/location``, such as
        /// `userInfo.AVAudioSessionRouteChangePreviousRouteKey`.
        public let location: String
        /// What was written instead, and why.
        public let message: String
        /// Whether the value was written as a `$placeholder`, which a test cannot decode.
        public let isPlaceholder: Bool

        /// The location and the message on one line.
        public var description: String { "\(location): \(message)" }
    }

    /// The fixture's `description`: what the case shows. Empty by default.
    public var summary: String
    /// The notification's name, written as the `name` field; `nil` for a bare `userInfo`.
    public var notificationName: String?
    /// A description of the notification's object, written as the `object` field; `nil` when it had none.
    public var objectDescription: String?
    /// The name of the payload type, written as the `type` field. Until it is set, the file is not yet a fixture
    /// test.
    public var typeName: String?
    /// The decoder strategies, written as the `decoder` field when they are not the defaults.
    public var decoderConfiguration: UserInfoFixture.DecoderConfiguration
    /// The expected outcome, written as the `expect` field. Until it is set, the file is not yet a fixture test;
    /// ``expect(_:)`` sets it from a value.
    public var expectation: UserInfoFixture.Expectation?
    /// The values that were not written exactly: placeholders for values no fixture can hold, and values written
    /// in a nearby form. Empty when the capture is exact.
    public let notes: [Note]
    /// The captured `userInfo`.
    let root: FixtureValue

    /// The captured dictionary, built anew from the capture, exactly as loading the written file builds it.
    public var userInfo: [AnyHashable: Any] { root.makeUserInfo() }

    /// Captures a `userInfo` dictionary.
    ///
    /// - Parameters:
    ///   - userInfo: The dictionary as it was posted; `nil` captures an empty one.
    ///   - name: The notification's name, if there is one.
    ///   - object: The notification's object, if any; only its description is kept.
    public init(userInfo: [AnyHashable: Any]?, name: Notification.Name? = nil, object: Any? = nil) {
        var capturer = ValueCapturer()
        root = capturer.dictionary(userInfo ?? [:], ["userInfo"], depth: 0, bridged: false)
        notes = capturer.notes
        summary = ""
        notificationName = name?.rawValue
        objectDescription = object.map(Self.describe(object:))
        typeName = nil
        decoderConfiguration = UserInfoFixture.DecoderConfiguration()
        expectation = nil
    }

    /// Captures a notification: its `userInfo`, its name and a description of its object.
    ///
    /// - Parameter notification: The notification as an observer received it.
    public init(_ notification: Notification) {
        self.init(userInfo: notification.userInfo, name: notification.name, object: notification.object)
    }

    init(
        root: FixtureValue, summary: String, notificationName: String?, objectDescription: String?,
        typeName: String?, decoderConfiguration: UserInfoFixture.DecoderConfiguration,
        expectation: UserInfoFixture.Expectation?
    ) {
        self.root = root
        self.notes = []
        self.summary = summary
        self.notificationName = notificationName
        self.objectDescription = objectDescription
        self.typeName = typeName
        self.decoderConfiguration = decoderConfiguration
        self.expectation = expectation
    }

    /// Sets ``expectation`` to a value, encoded with Foundation's `PropertyListEncoder` into the form that a fixture's
    /// `expect.value` holds.
    ///
    /// - Parameter value: The value that decoding the `userInfo` must give.
    /// - Throws: The encoder's error when the value cannot be stored in a property list.
    public mutating func expect<T: Encodable>(_ value: T) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        expectation = .value(try encoder.encode(value))
    }

    /// Sets ``expectation`` to an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of `DecodingError`.
    ///   - codingPath: Its coding path, such as `["items", 0, "name"]`.
    public mutating func expectError(
        _ kind: UserInfoFixture.DecodingErrorKind, at codingPath: [UserInfoFixture.CodingPathElement]
    ) {
        expectation = .error(UserInfoFixture.ExpectedError(kind: kind, codingPath: codingPath))
    }

    /// A description of a notification's object that fits on one line: its type and, when short, its description.
    static func describe(object: Any) -> String {
        let typeName = String(describing: type(of: object))
        let description = String(describing: object).replacingOccurrences(of: "\n", with: " ")
        if description == typeName || description.isEmpty { return typeName }
        let limit = 200
        let shortened = description.count > limit ? description.prefix(limit) + "…" : Substring(description)
        return shortened.hasPrefix("<\(typeName)") ? String(shortened) : "\(typeName): \(shortened)"
    }
}

// MARK: - Reading a capture back

extension FixtureCapture {
    /// Reads a fixture file, or a capture whose `type` and `expect` are not filled in yet.
    ///
    /// Everything else is checked as ``UserInfoFixture/init(contentsOf:)`` checks it.
    ///
    /// - Parameter url: A file URL of a property list.
    /// - Throws: ``UserInfoFixtureError`` naming the file, the place inside it and the problem.
    public init(contentsOf url: URL) throws {
        let reader = FixtureReader(file: url)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw UserInfoFixtureError(
                .unreadableFile, file: url, message: "cannot read the file: \(error.localizedDescription)")
        }
        try reader.measure(data)
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            let nsError = error as NSError
            let message = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
            throw reader.error(.invalidPropertyList, [], "is not a valid property list: \(message)")
        }
        guard case .dictionary(let fields)? = FixtureReader.classify(plist) else {
            throw reader.error(.invalidPropertyList, [], "the top level must be a dictionary")
        }
        try reader.checkKeys(
            fields, allowed: ["description", "name", "object", "type", "decoder", "userInfo", "expect"], [],
            code: .unexpectedField)
        guard let rawUserInfo = fields["userInfo"] else {
            throw reader.error(.missingField, ["userInfo"], "is missing; expected the userInfo dictionary")
        }
        self.init(
            root: try reader.userInfo(rawUserInfo),
            summary: try fields["description"].map { try reader.string($0, ["description"]) } ?? "",
            notificationName: try fields["name"].map { try reader.string($0, ["name"]) },
            objectDescription: try fields["object"].map { try reader.string($0, ["object"]) },
            typeName: try fields["type"].map { try reader.string($0, ["type"]) },
            decoderConfiguration: try fields["decoder"].map {
                try UserInfoFixture.DecoderConfiguration(reading: $0, with: reader)
            } ?? UserInfoFixture.DecoderConfiguration(),
            expectation: try fields["expect"].map { try UserInfoFixture.Expectation(reading: $0, with: reader) })
    }
}

// MARK: - Classifying live values

/// Turns live `userInfo` values into the fixture's description of them, by dynamic type first, so that no value is
/// bridged into another kind on the way.
struct ValueCapturer {
    var notes: [Note] = []
    /// The values captured so far, the `userInfo` dictionary being the first (see
    /// ``UserInfoFixture/maximumValueCount``).
    var valueCount = 1
    typealias Note = FixtureCapture.Note

    /// Deeper than this, a value is written as a placeholder: a self-containing `NSDictionary` must not recurse
    /// for ever, nor exhaust a secondary thread's small stack, and the file must stay within
    /// ``UserInfoFixture/maximumPropertyListDepth`` (a `$entries` level is three levels of the file). Long chains of
    /// single-key dictionaries or single-element arrays, which are how deep values usually look, are followed in a
    /// loop instead, written as `$nest`, and do not count.
    static let depthLimit = UserInfoFixture.maximumPropertyListDepth / 3
    /// Chains at least this long are followed in a loop.
    static let chainThreshold = 16

    private static let booleanNumberClass: AnyClass = type(of: NSNumber(value: true))
    #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
    private static let specialValueClass: AnyClass = type(of: NSValue(point: .zero))
    #endif

    mutating func note(_ location: [String], _ message: String, placeholder: Bool = false) {
        notes.append(Note(location: FixtureReader.format(location), message: message, isPlaceholder: placeholder))
    }

    mutating func placeholder(_ value: Any, _ location: [String], reason: String) -> FixtureValue {
        let typeName = String(describing: type(of: value))
        // A collection is not described: one that contains itself would describe itself for ever. Nor is an `NSValue`
        // of unknown kind: its `description` asks for the `objCType` it cannot give.
        // Only an object is asked whether it is an NSValue: on Linux, asking a Swift collection bridges all of it.
        let isObject = type(of: value) is AnyClass
        let description: String
        if isObject, let boxed = value as? NSValue, !nsValueAnswersObjCType(boxed) {
            description = typeName
        } else if isObject, let collection = value as? NSDictionary {
            description = "\(collection.count) entries"
        } else if isObject, let collection = value as? NSArray {
            description = "\(collection.count) elements"
        } else if let collection = value as? any Collection {
            description = "\(collection.count) elements"
        } else {
            description = FixtureCapture.describe(object: value)
        }
        note(location, "a \(typeName) \(reason); written as a $placeholder", placeholder: true)
        return .placeholder(typeName: typeName, description: description)
    }

    /// Whether `count` more values fit in the ``UserInfoFixture/maximumValueCount`` a fixture holds. A collection
    /// counts its elements when it is captured, before it captures them, so an element that holds more than fits
    /// becomes a placeholder, which counts as the one value it was given.
    func fits(_ count: Int) -> Bool { valueCount + count <= UserInfoFixture.maximumValueCount }

    /// The placeholder for a collection whose elements do not fit in the values a fixture holds.
    mutating func tooMany(_ value: Any, _ location: [String]) -> FixtureValue {
        placeholder(value, location, reason: "is past the \(UserInfoFixture.maximumValueCount) values a fixture holds")
    }

    mutating func capture(_ value: Any, _ location: [String], depth: Int) -> FixtureValue {
        guard depth < Self.depthLimit else {
            return placeholder(value, location, reason: "is nested deeper than \(Self.depthLimit) levels")
        }
        let valueType = type(of: value)
        if valueType is AnyClass { return captureObject(value, location, depth: depth) }
        if let chain = Self.chain(value) {
            // The userInfo is at depth 0 here, and at depth 1 for the reader.
            guard depth + 1 + chain.depth <= UserInfoFixture.maximumDepth, fits(chain.depth) else {
                return placeholder(
                    value, location,
                    reason: "is a chain \(chain.depth) levels deep, past the \(UserInfoFixture.maximumDepth) levels or "
                        + "\(UserInfoFixture.maximumValueCount) values a fixture holds")
            }
            valueCount += chain.depth
            let step = chain.key ?? "[0]"
            var result = capture(chain.leaf, location + ["\(step) (\(chain.depth) times)"], depth: depth + 1)
            for _ in 0..<chain.depth {
                if let key = chain.key {
                    result = .dictionary([FixtureValue.StringEntry(key: key, value: result)], bridged: false)
                } else {
                    result = .array([result], bridged: false)
                }
            }
            return result
        }
        if let scalar = Self.swiftScalar(value) { return scalar }
        if let optional = value as? any CapturedOptional {
            guard let wrapped = optional.wrappedValue else {
                note(location, "an Optional holding nil; written as NSNull")
                return .null
            }
            return capture(wrapped, location, depth: depth)
        }
        if let array = value as? [Any] {
            guard fits(array.count) else { return tooMany(value, location) }
            valueCount += array.count
            if valueType != [Any].self {
                note(location, "a \(valueType); written as an [Any] of its elements, as a fixture's arrays are")
            }
            return .array(
                array.enumerated().map { capture($1, location + ["[\($0)]"], depth: depth + 1) }, bridged: false)
        }
        if let dictionary = value as? [AnyHashable: Any] {
            if valueType != [String: Any].self && valueType != [AnyHashable: Any].self {
                note(location, "a \(valueType); written as a dictionary of Any, as a fixture's dictionaries are")
            }
            return self.dictionary(dictionary, location, depth: depth, bridged: false)
        }
        return placeholder(value, location, reason: "has no fixture form")
    }

    /// A chain of Swift `[String: Any]` dictionaries with one entry under the same key, or of Swift `[Any]` arrays
    /// with one element, at least ``chainThreshold`` long: its length, its key and the value at its end.
    static func chain(_ value: Any) -> (depth: Int, key: String?, leaf: Any)? {
        var depth = 0
        var current = value
        var key: String?
        while true {
            if type(of: current) == [String: Any].self, let dictionary = current as? [String: Any],
                dictionary.count == 1, let entry = dictionary.first, (key == nil && depth == 0) || key == entry.key
            {
                key = entry.key
                current = entry.value
            } else if key == nil, type(of: current) == [Any].self, let array = current as? [Any], array.count == 1,
                let element = array.first
            {
                current = element
            } else {
                break
            }
            depth += 1
        }
        return depth >= chainThreshold ? (depth, key, current) : nil
    }

    /// Swift values of the kinds a fixture holds, or `nil`. Each is matched by its exact type: a cast alone would
    /// bridge an `Int` into a `Bool` or a `Double` on some platforms.
    static func swiftScalar(_ value: Any) -> FixtureValue? {
        func exactly<T>(_ type: T.Type) -> T? {
            Swift.type(of: value) == T.self ? value as? T : nil
        }
        if let value = exactly(String.self) { return .string(value) }
        if let value = exactly(Bool.self) { return .swiftNumber(.bool(value)) }
        if let value = exactly(Int.self) { return .swiftNumber(.int(value)) }
        if let value = exactly(Int8.self) { return .swiftNumber(.int8(value)) }
        if let value = exactly(Int16.self) { return .swiftNumber(.int16(value)) }
        if let value = exactly(Int32.self) { return .swiftNumber(.int32(value)) }
        if let value = exactly(Int64.self) { return .swiftNumber(.int64(value)) }
        if let value = exactly(UInt.self) { return .swiftNumber(.uint(value)) }
        if let value = exactly(UInt8.self) { return .swiftNumber(.uint8(value)) }
        if let value = exactly(UInt16.self) { return .swiftNumber(.uint16(value)) }
        if let value = exactly(UInt32.self) { return .swiftNumber(.uint32(value)) }
        if let value = exactly(UInt64.self) { return .swiftNumber(.uint64(value)) }
        if let value = exactly(Double.self) { return .swiftNumber(.double(value)) }
        if let value = exactly(Float.self) { return .swiftNumber(.float(value)) }
        if let value = exactly(CGFloat.self) { return .swiftNumber(.cgFloat(Double(value))) }
        if let value = exactly(Decimal.self) { return .decimal(value) }
        if let value = exactly(Date.self) { return .date(value) }
        if let value = exactly(Data.self) { return .data(value) }
        if let value = exactly(URL.self) { return .url(value) }
        if let value = exactly(UUID.self) { return .uuid(value, bridged: false) }
        return nil
    }

    private mutating func captureObject(_ value: Any, _ location: [String], depth: Int) -> FixtureValue {
        let valueType = type(of: value)
        if valueType == NSNull.self { return .null }
        if let boxed = value as? NSValue, valueType is NSValue.Type, !nsValueAnswersObjCType(boxed) {
            // A plain `NSValue()`, or a subclass that does not implement `objCType` and `getValue(_:)`: asking would
            // trap. The decoder's guard decides, so that capture and decoding agree on what has a kind.
            return placeholder(value, location, reason: "has no encoding (objCType), so its kind is unknown")
        }
        if let number = value as? NSNumber, valueType is NSNumber.Type {
            return captureNumber(number, location)
        }
        if let string = value as? NSString, valueType is NSString.Type { return .nsString(string as String) }
        if let boxed = value as? NSValue, valueType is NSValue.Type {
            if let geometry = Self.geometry(boxed) { return .geometry(geometry) }
            return placeholder(value, location, reason: "holds a value that is not a rect, point, size or range")
        }
        if let date = value as? Date, valueType is NSDate.Type { return .date(date) }
        if let data = value as? Data, valueType is NSData.Type { return .data(data) }
        if let url = value as? URL, valueType is NSURL.Type { return .nsURL(url) }
        if let uuid = value as? UUID, valueType is NSUUID.Type { return .uuid(uuid, bridged: true) }
        if let array = value as? NSArray, valueType is NSArray.Type {
            guard fits(array.count) else { return tooMany(value, location) }
            valueCount += array.count
            var elements: [FixtureValue] = []
            for index in 0..<array.count {
                elements.append(
                    capture(Self.element(of: array, at: index), location + ["[\(index)]"], depth: depth + 1))
            }
            return .array(elements, bridged: true)
        }
        if let dictionary = value as? NSDictionary, valueType is NSDictionary.Type {
            var copy: [AnyHashable: Any] = [:]
            for key in dictionary.allKeys {
                guard let hashable = key as? AnyHashable, let element = Self.value(in: dictionary, forKey: key) else {
                    continue
                }
                copy[hashable] = element
            }
            return self.dictionary(copy, location, depth: depth, bridged: true)
        }
        return placeholder(value, location, reason: "has no fixture form")
    }

    // Foundation on Linux bridges every element it hands out through Swift's casts, and bridging a collection that
    // contains itself never ends. Nested collections are therefore read as the objects they are.

    private static func value(in dictionary: NSDictionary, forKey key: Any) -> Any? {
        // apple-check: Apple's bridging is lazy, Linux's is not (see FoundationCollection); the check build keeps this
        #if !canImport(Darwin)
        let keyObject = key as AnyObject
        if let raw = CFDictionaryGetValue(
            unsafeBitCast(dictionary, to: CFDictionary.self), Unmanaged.passUnretained(keyObject).toOpaque())
        {
            let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
            if object is NSDictionary || object is NSArray { return object }
        }
        #endif
        return dictionary.object(forKey: key)
    }

    private static func element(of array: NSArray, at index: Int) -> Any {
        #if !canImport(Darwin)  // apple-check: as in value(in:forKey:)
        if let raw = CFArrayGetValueAtIndex(unsafeBitCast(array, to: CFArray.self), index) {
            let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
            if object is NSDictionary || object is NSArray { return object }
        }
        #endif
        return array.object(at: index)
    }

    private mutating func captureNumber(_ number: NSNumber, _ location: [String]) -> FixtureValue {
        if type(of: number) == Self.booleanNumberClass { return .number(.bool(number.boolValue)) }
        if number is NSDecimalNumber {
            note(location, "an NSDecimalNumber; written as $decimal, which is a Swift Decimal")
            return .decimal(number.decimalValue)
        }
        switch String(cString: number.objCType) {
        case "d", "f": return .number(.real(number.doubleValue))
        case "Q", "L", "I", "S", "C":
            let unsigned = number.uint64Value
            if let signed = Int64(exactly: unsigned) { return .number(.integer(signed)) }
            return .number(.unsigned(unsigned))
        default:
            return .number(.integer(number.int64Value))
        }
    }

    /// The geometry in an `NSValue`, by its exact kind, or `nil` for any other content. It never traps: Linux's
    /// typed accessors do on the wrong kind, so the kind is read first, and only of a value that can tell it.
    static func geometry(_ value: NSValue) -> FixtureValue.Geometry? {
        #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
        if type(of: value) == specialValueClass {
            // `objCType` of these values leaks on Linux; reflection tells the boxed struct exactly.
            switch Mirror(reflecting: value).children.first(where: { $0.label == "_value" })?.value {
            case let rect as CGRect: return Self.geometry(rect: rect)
            case let point as CGPoint: return .point(x: Double(point.x), y: Double(point.y))
            case let size as CGSize: return .size(width: Double(size.width), height: Double(size.height))
            case let range as NSRange: return .range(location: range.location, length: range.length)
            default: return nil
            }
        }
        #endif
        guard nsValueAnswersObjCType(value) else { return nil }
        let encoding = String(cString: value.objCType)
        let float = MemoryLayout<CGFloat>.size == 8 ? "d" : "f"
        let point = "=\(float)\(float)}"
        switch encoding {
        case "{CGRect={CGPoint\(point){CGSize\(point)}", "{_NSRect={_NSPoint\(point){_NSSize\(point)}":
            return geometry(rect: read(value, as: CGRect.self))
        case "{CGPoint\(point)", "{_NSPoint\(point)":
            let point = read(value, as: CGPoint.self)
            return .point(x: Double(point.x), y: Double(point.y))
        case "{CGSize\(point)", "{_NSSize\(point)":
            let size = read(value, as: CGSize.self)
            return .size(width: Double(size.width), height: Double(size.height))
        case "{_NSRange=QQ}", "{_NSRange=II}":
            let range = read(value, as: NSRange.self)
            return .range(location: range.location, length: range.length)
        default:
            return nil
        }
    }

    private static func geometry(rect: CGRect) -> FixtureValue.Geometry {
        .rect(
            x: Double(rect.origin.x), y: Double(rect.origin.y), width: Double(rect.size.width),
            height: Double(rect.size.height))
    }

    /// Reads the struct inside an `NSValue` whose encoding was checked to be `T`'s.
    private static func read<T>(_ value: NSValue, as type: T.Type) -> T {
        var buffer: (Double, Double, Double, Double) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { bytes in
            guard let base = bytes.baseAddress else { return }
            #if canImport(Darwin) || NOTIFICATABLE_APPLE_CHECK
            // `getValue(_:)` is deprecated on Apple platforms; the encoding was checked, so the size is `T`'s.
            value.getValue(base, size: MemoryLayout<T>.size)
            #else
            value.getValue(base)
            #endif
        }
        return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
    }

    mutating func dictionary(_ dictionary: [AnyHashable: Any], _ location: [String], depth: Int, bridged: Bool)
        -> FixtureValue
    {
        // Keys are visited in a fixed order, so that the notes and the file come out the same every time. Values are
        // looked up with the original keys: a String and an NSString key are different keys in `AnyHashable`.
        let pairs = dictionary.map { (key: $0.key, value: $0.value) }
        let stringKeys = pairs.allSatisfy({ $0.key.base is String })
        let integerKeys = !stringKeys && pairs.allSatisfy({ type(of: $0.key.base) == Int.self })
        // Keys that are not all strings or all integers are values of their own.
        let count = stringKeys || integerKeys ? pairs.count : pairs.count * 2
        guard fits(count) else { return tooMany(dictionary, location) }
        valueCount += count
        if stringKeys {
            let entries = pairs.compactMap { pair -> (String, Any)? in
                (pair.key.base as? String).map { ($0, pair.value) }
            }
            .sorted { $0.0 < $1.0 }
            .map { key, value in
                FixtureValue.StringEntry(key: key, value: capture(value, location + [key], depth: depth + 1))
            }
            return .dictionary(entries, bridged: bridged)
        }
        if bridged {
            note(location, "an NSDictionary whose keys are not all strings; written as a Swift dictionary")
        }
        if integerKeys {
            let entries = pairs.compactMap { pair -> (Int, Any)? in
                (pair.key.base as? Int).map { ($0, pair.value) }
            }
            .sorted { $0.0 < $1.0 }
            .map { key, value in
                FixtureValue.IntegerEntry(key: key, value: capture(value, location + ["\(key)"], depth: depth + 1))
            }
            return .integerKeyedDictionary(entries)
        }
        let entries = pairs.sorted { "\($0.key.base)" < "\($1.key.base)" }
            .map { pair in
                FixtureValue.AnyEntry(
                    key: capture(pair.key.base, location + ["key \(pair.key.base)"], depth: depth + 1),
                    value: capture(pair.value, location + ["\(pair.key.base)"], depth: depth + 1))
            }
        return .entries(entries)
    }
}

/// Lets the capturer see through an `Optional` stored in an `Any`.
protocol CapturedOptional {
    var wrappedValue: Any? { get }
}

extension Optional: CapturedOptional {
    var wrappedValue: Any? {
        switch self {
        case .none: nil
        case .some(let wrapped): wrapped
        }
    }
}
