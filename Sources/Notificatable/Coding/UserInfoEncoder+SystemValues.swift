import Foundation

// The values the encoder writes directly. Everything here reads back through `UserInfoDecoder` to an equal value
// under the default strategies.

extension Date: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        throws
        -> EncodedValue
    {
        switch options.dateStrategy {
        case .deferredToDate: return .value(self)
        case .secondsSince1970: return .value(timeIntervalSince1970)
        case .millisecondsSince1970: return .value(timeIntervalSince1970 * 1000)
        case .iso8601: return .value(ISO8601.string(from: self))
        case .formatted(let formatter): return .value(formatter.string(from: self))
        case .custom(let write):
            let child = try encoder.frame(for: self, at: node())
            try write(self, child)
            try child.throwDeferredError()
            return child.storage ?? .dictionary(EncodedDictionary())
        }
    }
}

extension Data: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        throws
        -> EncodedValue
    {
        switch options.dataStrategy {
        case .deferredToData: return .value(self)
        case .base64: return .value(base64EncodedString())
        case .custom(let write):
            let child = try encoder.frame(for: self, at: node())
            try write(self, child)
            try child.throwDeferredError()
            return child.storage ?? .dictionary(EncodedDictionary())
        }
    }
}

extension URL: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        .value(absoluteString)
    }
}

extension UUID: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        .value(uuidString)
    }
}

extension Decimal: UserInfoEncodable {
    /// A decimal string: a property-list real is a `Double` and cannot hold every `Decimal` exactly.
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        .value(description)
    }
}

extension CGRect: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        if options.geometryAsNSValue { return .value(NSValue(rect: self)) }
        let origin: [Any] = [Double(origin.x), Double(origin.y)]
        let size: [Any] = [Double(size.width), Double(size.height)]
        return .value([origin, size] as [Any])
    }
}

extension CGPoint: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        if options.geometryAsNSValue { return .value(NSValue(point: self)) }
        return .value([Double(x), Double(y)] as [Any])
    }
}

extension CGSize: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        if options.geometryAsNSValue { return .value(NSValue(size: self)) }
        return .value([Double(width), Double(height)] as [Any])
    }
}

extension CGFloat: UserInfoEncodable {
    func boxed(options: UserInfoEncoder.Options, encoder: UserInfoEncoderImpl, node: @autoclosure () -> CodingPathNode)
        -> EncodedValue
    {
        .value(Double(self))
    }
}
