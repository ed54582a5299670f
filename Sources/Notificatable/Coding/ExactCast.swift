/// Reads a value out of an `Any` when its dynamic type is exactly `T`, without a runtime cast.
///
/// `as?` goes through the runtime's general cast machinery, which for collections and Foundation classes checks
/// bridging and can cost a microsecond. When the dynamic type is already known to be `T`, opening the existential
/// and reinterpreting it is exact and nearly free. Anything else returns `nil`, and the caller falls back to `as?`.
@inlinable @inline(__always)
func exactCast<T>(_ value: Any, to type: T.Type) -> T? {
    func open<V>(_ value: V) -> T? {
        guard V.self == T.self else { return nil }
        return unsafeBitCast(value, to: T.self)
    }
    return open(value)
}

/// Reads an object out of an `Any` when its class is exactly `objectClass`, a subclass of `T`, without a runtime
/// cast. Returns `nil` for any other class, so the caller can fall back to `as?`.
@inline(__always)
func exactObject<T: AnyObject>(_ value: Any, ofClass objectClass: AnyClass, as type: T.Type) -> T? {
    // The existential records the static type it was boxed with, which may be a superclass (an `NSNumber` that is
    // really a boolean), so the dynamic class is checked on the object itself.
    guard ObjectIdentifier(Swift.type(of: value)) == ObjectIdentifier(objectClass) else { return nil }
    func open<V>(_ value: V) -> T? {
        // The dynamic class matched, so the value is an object reference, boxed as its class or as `AnyObject`.
        guard MemoryLayout<V>.size == MemoryLayout<UnsafeRawPointer>.size else { return nil }
        // `V` is the object's class, so the value is one object reference.
        return Unmanaged<T>.fromOpaque(unsafeBitCast(value, to: UnsafeRawPointer.self)).takeUnretainedValue()
    }
    return open(value)
}
