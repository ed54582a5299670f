import Foundation

// This is the one file with a platform branch in the coder. Reading the struct inside an `NSValue` safely needs
// platform-specific code: Foundation on Linux traps when `rectValue` is called on an `NSValue` that holds a point,
// and its `objCType` is slow and leaks; Apple platforms read any `NSValue` with `getValue(_:size:)` after an
// `objCType` check. The `#if canImport(Darwin)` branch below is the code that our Linux CI does not compile.

extension NSValue {
    /// The geometry value boxed in this `NSValue`, if it holds exactly a `T` of the given kind; `nil` otherwise.
    /// Never traps, whatever the value holds.
    func geometry<T>(_ type: T.Type, kind: GeometryKind) -> T? {
        guard MemoryLayout<T>.size <= MemoryLayout<GeometryBuffer>.size else { return nil }
        #if canImport(Darwin)
        guard kind.matches(objCType: objCType) else { return nil }
        var buffer = GeometryBuffer()
        withUnsafeMutableBytes(of: &buffer) { bytes in
            if let base = bytes.baseAddress { getValue(base, size: MemoryLayout<T>.size) }
        }
        return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        #else
        guard Swift.type(of: self) == GeometryKind.specialValueClass else {
            // A value made with `NSValue(bytes:objCType:)`: its `objCType` describes its bytes exactly.
            guard kind.matches(objCType: objCType) else { return nil }
            var buffer = GeometryBuffer()
            withUnsafeMutableBytes(of: &buffer) { bytes in
                if let base = bytes.baseAddress { getValue(base) }
            }
            return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        }
        // Every kind Foundation boxes this way is at most 32 bytes, so the copy always fits the buffer. The copy is
        // then confirmed by equality with a freshly boxed value of the expected kind, which compares the boxed types.
        var buffer = GeometryBuffer()
        withUnsafeMutableBytes(of: &buffer) { bytes in
            if let base = bytes.baseAddress { getValue(base) }
        }
        let candidate = withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        if let boxed = kind.box(candidate), isEqual(boxed) { return candidate }
        // Not equal: another kind, or a value with NaN in it. Reflection tells which, slowly but exactly.
        return Mirror(reflecting: self).children.first { $0.label == "_value" }?.value as? T
        #endif
    }
}

/// Room for the largest geometry value Foundation boxes (a rectangle or edge insets: four 8-byte fields).
struct GeometryBuffer {
    var storage: (Double, Double, Double, Double) = (0, 0, 0, 0)
}

extension GeometryKind {
    /// The `@encode` of each kind on this platform.
    var objCTypes: [String] {
        let float = MemoryLayout<CGFloat>.size == 8 ? "d" : "f"
        let unsigned = MemoryLayout<Int>.size == 8 ? "Q" : "I"
        switch self {
        case .rect:
            return [
                "{CGRect={CGPoint=\(float)\(float)}{CGSize=\(float)\(float)}}",
                "{_NSRect={_NSPoint=\(float)\(float)}{_NSSize=\(float)\(float)}}",
            ]
        case .point: return ["{CGPoint=\(float)\(float)}", "{_NSPoint=\(float)\(float)}"]
        case .size: return ["{CGSize=\(float)\(float)}", "{_NSSize=\(float)\(float)}"]
        case .range: return ["{_NSRange=\(unsigned)\(unsigned)}"]
        }
    }

    func matches(objCType: UnsafePointer<CChar>) -> Bool {
        objCTypes.contains(String(cString: objCType))
    }

    /// The kind an `NSValue` holds, for error messages only (it reads `objCType`, which is slow on Linux).
    init?(_ value: NSValue) {
        let encoding = String(cString: value.objCType)
        guard let kind = [GeometryKind.rect, .point, .size, .range].first(where: { $0.objCTypes.contains(encoding) })
        else { return nil }
        self = kind
    }

    #if !canImport(Darwin)
    /// The class Foundation on Linux uses for `NSValue(rect:)`, `NSValue(point:)` and the like.
    static let specialValueClass: AnyClass = Swift.type(of: NSValue(point: .zero))

    func box<T>(_ value: T) -> NSValue? {
        switch self {
        case .rect: (value as? CGRect).map { NSValue(rect: $0) }
        case .point: (value as? CGPoint).map { NSValue(point: $0) }
        case .size: (value as? CGSize).map { NSValue(size: $0) }
        case .range: (value as? NSRange).map { NSValue(range: $0) }
        }
    }
    #endif
}
