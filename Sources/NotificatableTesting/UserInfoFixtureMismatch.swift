import Foundation

/// The error ``UserInfoFixtureRegistry/verify(_:)`` and ``UserInfoFixture/verify(_:using:)`` throw when decoding a
/// fixture does not give what it expects.
///
/// Its ``description`` is the whole explanation, so a test that calls `try registry.verify(fixture)` reports it
/// as the failure's message, in Swift Testing (`Caught error: …`) and in XCTest alike, without this library depending
/// on either. When a value was decoded but differs from the expected one, the message lists each field that differs,
/// with its path in the form `items[1].quantity`, before the two whole values:
///
/// ```text
/// order-shipped.plist: the decoded value differs from expect.value in 1 field:
///   items[1].quantity: decoded 3, expected 2
///   decoded:  Order(id: 42, items: [Item(sku: "A", quantity: 1), Item(sku: "B", quantity: 3)])
///   expected: Order(id: 42, items: [Item(sku: "A", quantity: 1), Item(sku: "B", quantity: 2)])
/// ```
public struct UserInfoFixtureMismatch: Error, Sendable, Equatable, CustomStringConvertible {
    /// One field whose decoded value differs from the expected one.
    public struct FieldDifference: Sendable, Equatable, CustomStringConvertible {
        /// Where the field is, from the decoded type's top level: `items[1].quantity`, or an empty string when the
        /// value itself is a single value that differs.
        public let path: String
        /// The decoded field, described; `(absent)` when the decoded collection has no such element or key.
        public let decoded: String
        /// The expected field, described; `(absent)` when the expected collection has no such element or key.
        public let expected: String

        /// Creates a difference.
        ///
        /// - Parameters:
        ///   - path: Where the field is, such as `items[1].quantity`.
        ///   - decoded: The decoded field, described.
        ///   - expected: The expected field, described.
        public init(path: String, decoded: String, expected: String) {
            self.path = path
            self.decoded = decoded
            self.expected = expected
        }

        /// The difference on one line: `items[1].quantity: decoded 3, expected 2`.
        public var description: String {
            "\(path.isEmpty ? "the value" : path): decoded \(decoded), expected \(expected)"
        }
    }

    /// The fixture file.
    public let file: URL
    /// The fields that differ, when a value was decoded and compared with the expected one; empty when decoding
    /// threw instead of giving a value, or the other way round.
    public let differences: [FieldDifference]
    /// The whole explanation, starting with the file's name: the same text ``UserInfoFixture/check(_:using:)``
    /// returns.
    public let message: String

    /// Creates a mismatch. Tools built on the loader can use it to report their own comparisons the same way.
    ///
    /// - Parameters:
    ///   - file: The fixture file.
    ///   - differences: The fields that differ, if a value was compared.
    ///   - message: The whole explanation.
    public init(file: URL, differences: [FieldDifference] = [], message: String) {
        self.file = file
        self.differences = differences
        self.message = message
    }

    /// The whole explanation, as a test report shows it.
    public var description: String { message }
}

// MARK: - Comparing two values field by field

/// Lists the leaves where two values of the same type differ, by walking both with `Mirror`.
///
/// Values that describe themselves (`CustomStringConvertible`: numbers, strings, `Decimal`, `Date`, `URL`…) are
/// compared as a whole, so the diff never descends into a Foundation type's private storage. Structs, classes,
/// tuples, collections and dictionaries are walked; an enum is one leaf.
enum FieldDiff {
    /// At most this many differences are listed; a whole-array mismatch would otherwise flood the report.
    static let limit = 20

    static func differences(_ decoded: Any, _ expected: Any) -> [UserInfoFixtureMismatch.FieldDifference] {
        var result: [UserInfoFixtureMismatch.FieldDifference] = []
        walk(decoded, expected, path: "", depth: 0, into: &result)
        return result
    }

    private static func walk(
        _ decoded: Any, _ expected: Any, path: String, depth: Int,
        into result: inout [UserInfoFixtureMismatch.FieldDifference]
    ) {
        guard result.count < limit else { return }
        if equal(decoded, expected) == true { return }
        let decodedValue = unwrap(decoded)
        let expectedValue = unwrap(expected)
        guard let decodedValue, let expectedValue else {
            if decodedValue != nil || expectedValue != nil {
                result.append(.init(path: path, decoded: describe(decodedValue), expected: describe(expectedValue)))
            }
            return
        }
        let decodedMirror = Mirror(reflecting: decodedValue)
        let expectedMirror = Mirror(reflecting: expectedValue)
        guard depth < 64, type(of: decodedValue) == type(of: expectedValue), !isLeaf(decodedValue, decodedMirror)
        else {
            if equal(decodedValue, expectedValue) != true {
                result.append(.init(path: path, decoded: describe(decodedValue), expected: describe(expectedValue)))
            }
            return
        }
        switch decodedMirror.displayStyle {
        case .collection?, .set?:
            let decodedElements = decodedMirror.children.map(\.value)
            let expectedElements = expectedMirror.children.map(\.value)
            if decodedMirror.displayStyle == .set {
                if describe(decodedValue) != describe(expectedValue) || equal(decodedValue, expectedValue) == false {
                    result.append(.init(path: path, decoded: describe(decodedValue), expected: describe(expectedValue)))
                }
                return
            }
            for index in 0..<max(decodedElements.count, expectedElements.count) {
                let elementPath = "\(path)[\(index)]"
                if index < decodedElements.count, index < expectedElements.count {
                    walk(
                        decodedElements[index], expectedElements[index], path: elementPath, depth: depth + 1,
                        into: &result)
                } else if result.count < limit {
                    result.append(
                        .init(
                            path: elementPath,
                            decoded: index < decodedElements.count ? describe(decodedElements[index]) : "(absent)",
                            expected: index < expectedElements.count ? describe(expectedElements[index]) : "(absent)"))
                }
            }
        case .dictionary?:
            let decodedEntries = entries(decodedMirror)
            let expectedEntries = entries(expectedMirror)
            for key in Set(decodedEntries.keys).union(expectedEntries.keys).sorted() {
                let entryPath = key.isInteger ? "\(path)[\(key.text)]" : join(path, key.text)
                switch (decodedEntries[key], expectedEntries[key]) {
                case (let decodedEntry?, let expectedEntry?):
                    walk(decodedEntry, expectedEntry, path: entryPath, depth: depth + 1, into: &result)
                case (let decodedEntry, let expectedEntry):
                    guard result.count < limit else { return }
                    result.append(
                        .init(
                            path: entryPath, decoded: decodedEntry.map(describe) ?? "(absent)",
                            expected: expectedEntry.map(describe) ?? "(absent)"))
                }
            }
        default:
            let expectedChildren = Array(expectedMirror.children)
            for (offset, child) in decodedMirror.children.enumerated() where offset < expectedChildren.count {
                let label = child.label ?? "\(offset)"
                walk(
                    child.value, expectedChildren[offset].value, path: join(path, label), depth: depth + 1,
                    into: &result)
            }
        }
    }

    /// A dictionary's entries by their key's description, and whether that key is an integer (shown in brackets).
    private struct EntryKey: Hashable, Comparable {
        var text: String
        var isInteger: Bool
        static func < (lhs: Self, rhs: Self) -> Bool {
            if lhs.isInteger, rhs.isInteger, let left = Int(lhs.text), let right = Int(rhs.text) { return left < right }
            return lhs.text < rhs.text
        }
    }

    private static func entries(_ mirror: Mirror) -> [EntryKey: Any] {
        var result: [EntryKey: Any] = [:]
        for child in mirror.children {
            let pair = Array(Mirror(reflecting: child.value).children)
            guard pair.count == 2 else { continue }
            let key = pair[0].value
            let isInteger = key is any BinaryInteger
            result[EntryKey(text: "\(key)", isInteger: isInteger)] = pair[1].value
        }
        return result
    }

    private static func join(_ path: String, _ component: String) -> String {
        path.isEmpty ? component : "\(path).\(component)"
    }

    /// A value is compared whole when it describes itself, has nothing inside, or is an enum.
    private static func isLeaf(_ value: Any, _ mirror: Mirror) -> Bool {
        switch mirror.displayStyle {
        case .collection?, .dictionary?, .set?: return false
        case .enum?: return true
        default: return mirror.children.isEmpty || value is any CustomStringConvertible
        }
    }

    /// The wrapped value of an optional (recursively), or `nil` for `nil`; any other value as it is.
    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let wrapped = mirror.children.first?.value else { return nil }
        return unwrap(wrapped)
    }

    /// `==` when the value is `Equatable` and both have the same type; `nil` when it cannot tell.
    private static func equal(_ left: Any, _ right: Any) -> Bool? {
        guard let left = left as? any Equatable else { return nil }
        return left.isEqual(to: right)
    }

    /// A leaf as the diff shows it: exactly, so that two values that differ never look alike. Numbers print in
    /// Swift's shortest form that reads back to the same value (`0.30000000000000004`), and a date with its
    /// fraction of a second and its exact interval, where `Date`'s own description shows whole seconds only.
    static func describe(_ value: Any?) -> String {
        guard let value = value.flatMap(unwrap) else { return "nil" }
        if let string = value as? String { return String(reflecting: string) }
        if let date = value as? Date { return describe(date) }
        return String(describing: value)
    }

    /// `2026-11-26T12:32:08.125Z (785852328.125 s after 2001-01-01)`: the ISO 8601 form to the millisecond, then the
    /// exact `timeIntervalSinceReferenceDate`, whose shortest form differs for any two different dates. A date far
    /// outside the calendar's range (which Foundation cannot format on Linux) shows its interval alone.
    static func describe(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e11 else {
            return "Date(timeIntervalSinceReferenceDate: \(interval))"
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return "\(formatter.string(from: date)) (\(interval) s after 2001-01-01)"
    }
}

extension Equatable {
    /// Whether `other` has this type and equals this value.
    fileprivate func isEqual(to other: Any) -> Bool? {
        guard let other = other as? Self else { return nil }
        return self == other
    }
}
