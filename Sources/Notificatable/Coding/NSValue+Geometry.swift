import Foundation

// This is the one file with a platform branch in the coder. Reading the struct inside an `NSValue` safely needs
// platform-specific code: Foundation on Linux traps when `rectValue` is called on an `NSValue` that holds a point,
// and its `objCType` is slow and leaks; Apple platforms read any `NSValue` with `getValue(_:size:)` after an
// `objCType` check. The Apple branch of `geometry` is compiled and run on Linux by `scripts/apple-check.sh`, with a
// shim for `getValue(_:size:)` (AppleCheck/AppleSDKShims.swift); the Apple branch of `answersObjCType` needs the
// Objective-C runtime, and no build of ours compiles it.
//
// `NSValue` itself is abstract: a plain `NSValue()`, or a subclass that does not implement `objCType` and
// `getValue(_:)`, traps (Linux) or raises (Apple platforms) when asked for either. So both are asked only of the
// classes known to implement them (``NSValue/answersObjCType``); any other `NSValue` is a value of unknown kind.

extension NSValue {
    /// Whether this value's class implements `objCType` and `getValue(_:)`, so that asking for them cannot trap.
    ///
    /// On Linux, only Foundation's concrete classes qualify: the classes of `NSValue(rect:)` and its siblings, of
    /// `NSValue(bytes:objCType:)`, and `NSNumber`, which cannot be subclassed there. On Apple platforms, a class
    /// qualifies when it overrides both methods of `NSValue`, as Foundation's concrete classes and a correct
    /// subclass do.
    ///
    /// The Apple-branch check build keeps the Linux answer: the Objective-C runtime it would ask does not exist there.
    var answersObjCType: Bool {
        #if canImport(Darwin)  // apple-check: class_getMethodImplementation needs the Objective-C runtime
        let type: AnyClass = Swift.type(of: self)
        func overrides(_ selector: Selector) -> Bool {
            class_getMethodImplementation(type, selector) != class_getMethodImplementation(NSValue.self, selector)
        }
        // By name: `#selector(NSValue.getValue(_:))` would name a deprecated method, a warning (an error here).
        return overrides(NSSelectorFromString("objCType")) && overrides(NSSelectorFromString("getValue:"))
        #else
        let type = ObjectIdentifier(Swift.type(of: self))
        return type == ObjectIdentifier(GeometryKind.specialValueClass)
            || type == ObjectIdentifier(GeometryKind.concreteValueClass) || self is NSNumber
        #endif
    }

    /// The geometry value boxed in this `NSValue`, if it holds exactly a `T` of the given kind; `nil` otherwise.
    /// Never traps, whatever the value holds.
    func geometry<T>(_ type: T.Type, kind: GeometryKind) -> T? {
        guard MemoryLayout<T>.size <= MemoryLayout<GeometryBuffer>.size else { return nil }
        #if canImport(Darwin) || NOTIFICATABLE_APPLE_CHECK
        guard answersObjCType, kind.matches(objCType: objCType) else { return nil }
        var buffer = GeometryBuffer()
        withUnsafeMutableBytes(of: &buffer) { bytes in
            if let base = bytes.baseAddress { getValue(base, size: MemoryLayout<T>.size) }
        }
        return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        #else
        let layout = SpecialValueLayout.classAndOffset
        guard ObjectIdentifier(Swift.type(of: self)) == layout.valueClass else {
            // A value made with `NSValue(bytes:objCType:)`: its `objCType` describes its bytes exactly. Any other
            // class (a plain `NSValue()`, a subclass) may trap when asked.
            guard Swift.type(of: self) == GeometryKind.concreteValueClass, kind.objCTypes.contains(concreteEncoding)
            else {
                return nil
            }
            var buffer = GeometryBuffer()
            withUnsafeMutableBytes(of: &buffer) { bytes in
                if let base = bytes.baseAddress { getValue(base) }
            }
            return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        }
        if let offset = layout.typeWordOffset {
            // The boxed struct's type, read where the probe found it: exact, and a few instructions.
            guard SpecialValueLayout.word(at: offset, in: self) == UInt(bitPattern: ObjectIdentifier(T.self)) else {
                return nil
            }
            var buffer = GeometryBuffer()
            withUnsafeMutableBytes(of: &buffer) { bytes in
                if let base = bytes.baseAddress { getValue(base) }
            }
            return withUnsafeBytes(of: buffer) { $0.load(as: T.self) }
        }
        // Without the layout, reflection tells the boxed type exactly, at a higher cost.
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
        #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
        // `objCType` of the `NSValue`s that `NSValue(rect:)` and the like make allocates a C string on every call and
        // never frees it, so an error message about one would leak; the layout probe reads their kind exactly.
        if Swift.type(of: value) == GeometryKind.specialValueClass {
            if value.geometry(CGRect.self, kind: .rect) != nil {
                self = .rect
            } else if value.geometry(CGPoint.self, kind: .point) != nil {
                self = .point
            } else if value.geometry(CGSize.self, kind: .size) != nil {
                self = .size
            } else if value.geometry(NSRange.self, kind: .range) != nil {
                self = .range
            } else {
                return nil
            }
            return
        }
        #endif
        guard value.answersObjCType else { return nil }
        #if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
        // `objCType` of `NSValue(bytes:objCType:)` leaks a C string per call too (fuzz finding, LeakSanitizer).
        let encoding =
            Swift.type(of: value) == GeometryKind.concreteValueClass
            ? value.concreteEncoding : String(cString: value.objCType)
        #else
        let encoding = String(cString: value.objCType)
        #endif
        guard let kind = [GeometryKind.rect, .point, .size, .range].first(where: { $0.objCTypes.contains(encoding) })
        else { return nil }
        self = kind
    }

    #if !canImport(Darwin)  // apple-check: serves the Linux branch of answersObjCType, which the check build keeps
    /// The class Foundation on Linux uses for `NSValue(rect:)`, `NSValue(point:)` and the like.
    static let specialValueClass: AnyClass = Swift.type(of: NSValue(point: .zero))

    /// The class Foundation on Linux uses for `NSValue(bytes:objCType:)` of any other type.
    static let concreteValueClass: AnyClass = {
        var sample: Int32 = 0
        return Swift.type(of: NSValue(bytes: &sample, objCType: "i"))
    }()

    #endif
}

#if !canImport(Darwin) && !NOTIFICATABLE_APPLE_CHECK
/// Where Foundation on Linux keeps the type of the struct inside an `NSValue(rect:)` and its siblings.
///
/// Those values store the struct in an existential field, whose type-metadata word tells exactly what is boxed.
/// `objCType` would tell too, but it costs about 600 ns and leaks a string on every call, and the typed accessors
/// trap on the wrong kind. The offset is not hard-coded: a probe at start-up finds the word by boxing one sample
/// of every kind, and accepts an offset only if it identifies all of them. If Foundation's layout ever changes so
/// that no offset fits, the decoder falls back to reflection, which is slower but just as exact.
enum SpecialValueLayout {
    static let typeWordOffset: Int? = {
        let samples: [(NSValue, Any.Type)] = [
            (NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4)), CGRect.self),
            (NSValue(point: CGPoint(x: 5, y: 6)), CGPoint.self),
            (NSValue(size: CGSize(width: 7, height: 8)), CGSize.self),
            (NSValue(range: NSRange(location: 9, length: 10)), NSRange.self),
        ]
        // An `NSValue` subclass with an existential field is at least 16 (header) + 40 bytes, so every word read
        // here lies inside the object.
        for offset in stride(from: 16, through: 48, by: 8)
        where samples.allSatisfy({ word(at: offset, in: $0.0) == UInt(bitPattern: ObjectIdentifier($0.1)) }) {
            return offset
        }
        return nil
    }()

    static func word(at offset: Int, in object: NSValue) -> UInt {
        withExtendedLifetime(object) {
            Unmanaged.passUnretained(object).toOpaque().load(fromByteOffset: offset, as: UInt.self)
        }
    }

    /// The class of `NSValue(rect:)` and its siblings with the probed offset, in one lazy global, so that a read
    /// touches one (each touch of a lazy global is a call).
    static let classAndOffset: (valueClass: ObjectIdentifier, typeWordOffset: Int?) = (
        ObjectIdentifier(GeometryKind.specialValueClass), typeWordOffset
    )
}
#endif

#if !canImport(Darwin)  // apple-check: serves the Linux branches above, which the check build replaces
extension NSValue {
    /// The `@encode` string of a value of ``GeometryKind/concreteValueClass`` (an `NSValue(bytes:objCType:)` of a
    /// type Foundation on Linux has no special class for). Its `objCType` allocates a C string on every call and
    /// never frees it, so the encoding is read by reflection from the value's type information; should Foundation's
    /// layout change, `objCType` is the fallback, correct but leaking.
    var concreteEncoding: String {
        if let info = Mirror(reflecting: self).children.first(where: { $0.label == "_typeInfo" })?.value,
            let name = Mirror(reflecting: info).children.first(where: { $0.label == "name" })?.value as? String
        {
            return name
        }
        return String(cString: objCType)
    }
}
#endif
