import Foundation

#if canImport(UIKit)  // apple-check: an import; the check build's UIKit shim is in Notificatable
import UIKit
#endif

/// A parsed, `Sendable` description of one value in a fixture's `userInfo`.
///
/// The fixture keeps this tree rather than the `[AnyHashable: Any]` itself, because `Any` is not `Sendable` and
/// Swift Testing needs `Sendable` arguments. ``makeValue()`` builds fresh Foundation objects on every call, so no
/// two tests share a mutable object. The tag convention that produces each case is documented on
/// ``UserInfoFixture``.
indirect enum FixtureValue: Sendable {
    /// A plain `<integer>`, `<real>`, `<true/>` or `<false/>`: an `NSNumber`, as the system boxes numbers.
    case number(PlainNumber)
    /// A `$int`, `$double`, `$bool`… tag: a Swift value of exactly that type.
    case swiftNumber(SwiftNumber)
    case decimal(Decimal)
    case string(String)
    case nsString(String)
    case date(Date)
    case data(Data)
    case null
    case url(URL)
    case nsURL(URL)
    case geometry(Geometry)
    case array([FixtureValue], bridged: Bool)
    case dictionary([StringEntry], bridged: Bool)
    case integerKeyedDictionary([IntegerEntry])
    /// A `$uuid` or `$nsuuid` tag: a Swift `UUID` or an `NSUUID`.
    case uuid(UUID, bridged: Bool)
    /// A `$entries` tag: an `[AnyHashable: Any]` whose keys are neither all strings nor all integers.
    case entries([AnyEntry])
    /// A `$placeholder` tag: a value that a capture could not write, kept as a marked stand-in object.
    case placeholder(typeName: String, description: String)

    enum PlainNumber: Sendable {
        case integer(Int64)
        case unsigned(UInt64)
        case real(Double)
        case bool(Bool)
    }

    enum SwiftNumber: Sendable {
        case int(Int), int8(Int8), int16(Int16), int32(Int32), int64(Int64)
        case uint(UInt), uint8(UInt8), uint16(UInt16), uint32(UInt32), uint64(UInt64)
        case double(Double), float(Float), cgFloat(Double), bool(Bool)
    }

    enum Geometry: Sendable {
        case rect(x: Double, y: Double, width: Double, height: Double)
        case point(x: Double, y: Double)
        case size(width: Double, height: Double)
        case range(location: Int, length: Int)
    }

    struct StringEntry: Sendable {
        var key: String
        var value: FixtureValue
    }

    struct IntegerEntry: Sendable {
        var key: Int
        var value: FixtureValue
    }

    struct AnyEntry: Sendable {
        var key: FixtureValue
        var value: FixtureValue
    }
}

// MARK: - Building Foundation values

extension FixtureValue {
    /// Builds the value a notification would carry: `NSNumber`, `NSValue`, `URL`, `NSNull`, Swift collections…
    ///
    /// It builds children before their parents in a loop, without recursion, so that a value nested
    /// ``UserInfoFixture/maximumDepth`` levels deep is built on a secondary thread's small stack too.
    func makeValue() -> Any {
        var stack: [BuildFrame] = []
        var current = self
        while true {
            var result: Any
            if let children = current.children {
                guard children.isEmpty else {
                    stack.append(BuildFrame(value: current, children: children, built: []))
                    current = children[0]
                    continue
                }
                result = current.assemble([])
            } else {
                result = current.makeScalar()
            }
            // Hand the finished value to its parent; finish every parent that now has all its children.
            while true {
                guard var frame = stack.popLast() else { return result }
                frame.built.append(result)
                if frame.built.count < frame.children.count {
                    current = frame.children[frame.built.count]
                    stack.append(frame)
                    break
                }
                result = frame.value.assemble(frame.built)
            }
        }
    }

    /// A container being built by ``makeValue()``: its children, and those built so far.
    private struct BuildFrame {
        let value: FixtureValue
        let children: [FixtureValue]
        var built: [Any]
    }

    /// The values a container holds, in order (for `$entries`, the values; their keys are scalars); `nil` for a
    /// scalar.
    var children: [FixtureValue]? {
        switch self {
        case .array(let elements, _): elements
        case .dictionary(let entries, _): entries.map(\.value)
        case .integerKeyedDictionary(let entries): entries.map(\.value)
        case .entries(let entries): entries.map(\.value)
        default: nil
        }
    }

    /// A container made from its children, built in the order of ``children``.
    private func assemble(_ built: [Any]) -> Any {
        switch self {
        case .array(_, let bridged):
            return bridged ? NSArray(array: built) : built
        case .dictionary(let entries, let bridged):
            if bridged {
                var dictionary: [AnyHashable: Any] = [:]
                for (entry, value) in zip(entries, built) { dictionary[AnyHashable(entry.key)] = value }
                return NSDictionary(dictionary: dictionary)
            }
            var dictionary: [String: Any] = [:]
            for (entry, value) in zip(entries, built) { dictionary[entry.key] = value }
            return dictionary
        case .integerKeyedDictionary(let entries):
            var dictionary: [AnyHashable: Any] = [:]
            for (entry, value) in zip(entries, built) { dictionary[AnyHashable(entry.key)] = value }
            return dictionary
        case .entries(let entries):
            var dictionary: [AnyHashable: Any] = [:]
            for (entry, value) in zip(entries, built) {
                // The reader accepts only hashable scalars as keys, so this cast succeeds for every read entry.
                if let key = entry.key.makeScalar() as? AnyHashable { dictionary[key] = value }
            }
            return dictionary
        default:
            return makeScalar()
        }
    }

    /// Builds a value that holds no other fixture value.
    private func makeScalar() -> Any {
        switch self {
        case .number(let number):
            switch number {
            case .integer(let value): return NSNumber(value: value)
            case .unsigned(let value): return NSNumber(value: value)
            case .real(let value): return NSNumber(value: value)
            case .bool(let value): return NSNumber(value: value)
            }
        case .swiftNumber(let number):
            switch number {
            case .int(let value): return value
            case .int8(let value): return value
            case .int16(let value): return value
            case .int32(let value): return value
            case .int64(let value): return value
            case .uint(let value): return value
            case .uint8(let value): return value
            case .uint16(let value): return value
            case .uint32(let value): return value
            case .uint64(let value): return value
            case .double(let value): return value
            case .float(let value): return value
            case .cgFloat(let value): return CGFloat(value)
            case .bool(let value): return value
            }
        case .decimal(let value): return value
        case .string(let value): return value
        case .nsString(let value): return NSString(string: value)
        case .date(let value): return value
        case .data(let value): return value
        case .null: return NSNull()
        case .url(let value): return value
        case .nsURL(let value): return NSURL(string: value.absoluteString) ?? value
        case .geometry(let geometry): return geometry.makeValue()
        case .uuid(let value, let bridged):
            return bridged ? NSUUID(uuidString: value.uuidString) ?? NSUUID() : value
        case .placeholder(let typeName, let description):
            return FixturePlaceholder(typeName: typeName, capturedDescription: description)
        case .array, .dictionary, .integerKeyedDictionary, .entries:
            return makeValue()
        }
    }

    /// Builds the top-level `userInfo`; the reader only accepts dictionaries there.
    func makeUserInfo() -> [AnyHashable: Any] {
        switch self {
        case .dictionary(let entries, _):
            var dictionary: [AnyHashable: Any] = [:]
            for entry in entries { dictionary[AnyHashable(entry.key)] = entry.value.makeValue() }
            return dictionary
        case .integerKeyedDictionary(let entries):
            var dictionary: [AnyHashable: Any] = [:]
            for entry in entries { dictionary[AnyHashable(entry.key)] = entry.value.makeValue() }
            return dictionary
        case .entries(let entries):
            return Self.makeDictionary(entries)
        default:
            return [:]
        }
    }
}

extension FixtureValue.Geometry {
    /// Boxes the geometry the way the system does: `NSValue(cgRect:)` under UIKit, `NSValue(rect:)` elsewhere.
    ///
    /// The UIKit branch is compiled and run on Linux by the Apple-branch check (`scripts/apple-check.sh`).
    func makeValue() -> NSValue {
        switch self {
        case .rect(let x, let y, let width, let height):
            let rect = CGRect(x: x, y: y, width: width, height: height)
            #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
            return NSValue(cgRect: rect)
            #else
            return NSValue(rect: rect)
            #endif
        case .point(let x, let y):
            let point = CGPoint(x: x, y: y)
            #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
            return NSValue(cgPoint: point)
            #else
            return NSValue(point: point)
            #endif
        case .size(let width, let height):
            let size = CGSize(width: width, height: height)
            #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
            return NSValue(cgSize: size)
            #else
            return NSValue(size: size)
            #endif
        case .range(let location, let length):
            return NSValue(range: NSRange(location: location, length: length))
        }
    }
}
