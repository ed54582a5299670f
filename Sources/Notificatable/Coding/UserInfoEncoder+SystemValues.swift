import Foundation

// The values the encoder writes directly. Everything here reads back through `UserInfoDecoder` to an equal value
// under the default strategies.

extension Date: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        switch options.dateStrategy {
        case .deferredToDate: self
        case .secondsSince1970: timeIntervalSince1970
        case .millisecondsSince1970: timeIntervalSince1970 * 1000
        case .iso8601: ISO8601.string(from: self)
        case .formatted(let formatter): formatter.string(from: self)
        case .custom: nil
        }
    }
}

extension Data: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        switch options.dataStrategy {
        case .deferredToData: self
        case .base64: base64EncodedString()
        case .custom: nil
        }
    }
}

extension URL: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        switch options.urlStrategy {
        case .absoluteString: absoluteString
        case .url: self
        }
    }
}

extension UUID: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? { uuidString }
}

extension Decimal: UserInfoEncodable {
    /// By default a decimal string: a property-list real is a `Double` and cannot hold every `Decimal` exactly.
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        switch options.decimalStrategy {
        case .string: description
        case .decimalNumber: NSDecimalNumber(decimal: self)
        // Through the shortest decimal text, which `Double(_:)` parses correctly rounded; `NSDecimalNumber`'s own
        // `doubleValue` is off by one unit in the last place on Linux (19.990000000000002 for 19.99).
        case .double: NSNumber(value: Double(description) ?? NSDecimalNumber(decimal: self).doubleValue)
        }
    }
}

extension CGRect: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        if options.geometryAsNSValue { return NSValue(rect: self) }
        let origin: [Any] = [Double(origin.x), Double(origin.y)]
        let size: [Any] = [Double(size.width), Double(size.height)]
        return [origin, size] as [Any]
    }
}

extension CGPoint: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        if options.geometryAsNSValue { return NSValue(point: self) }
        return [Double(x), Double(y)] as [Any]
    }
}

extension CGSize: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        if options.geometryAsNSValue { return NSValue(size: self) }
        return [Double(width), Double(height)] as [Any]
    }
}

extension CGFloat: UserInfoEncodable {
    func plainValue(options: UserInfoEncoder.Options) -> Any? {
        options.numbersAsNSNumber ? NSNumber(value: Double(self)) : Double(self)
    }
}

/// A number or a boolean that ``UserInfoEncoder/encodesNumbersAsNSNumber`` writes as the `NSNumber` legacy code
/// would have posted for it: `NSNumber(value:)` of the value in its own type.
protocol LegacyNumber {
    var legacyNumber: NSNumber { get }
}

extension Bool: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Double: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Float: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Int: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Int8: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Int16: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Int32: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension Int64: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension UInt: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension UInt8: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension UInt16: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension UInt32: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
extension UInt64: LegacyNumber { var legacyNumber: NSNumber { NSNumber(value: self) } }
