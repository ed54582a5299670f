import Foundation

/// A value being encoded. Containers are reference boxes, so a nested container can be filled after its parent
/// has stored it; everything is turned into plain dictionaries and arrays once, at the end.
enum EncodedValue {
    case value(Any)
    case dictionary(EncodedDictionary)
    case array(EncodedArray)
    /// A `superEncoder()`, resolved when the tree is finalized.
    case deferred(UserInfoEncoderImpl)

    func finalized(topLevel: Bool = false) -> Any {
        switch self {
        case .value(let value): return value
        case .dictionary(let box): return topLevel ? box.finalizedTopLevel() : box.finalized()
        case .array(let box): return box.elements.map { $0.finalized() }
        case .deferred(let encoder): return (encoder.storage ?? .dictionary(EncodedDictionary())).finalized()
        }
    }
}

/// Not `final`: an encoder frame is a dictionary too (``UserInfoEncoderImpl``), so that a struct costs one object for
/// its encoder and the dictionary its keyed container fills.
class EncodedDictionary {
    /// Whether this is the top level of a `userInfo`, which is `[AnyHashable: Any]`; nested dictionaries are
    /// `[String: Any]`, as property lists want.
    let isTopLevel: Bool
    /// Everything that changes, in one stored property. Its exclusivity is not checked at run time (a dynamic check
    /// costs about 100 instructions per write): only this class touches it, no user code runs during an access,
    /// and a write hands back what it displaced, so that the release of a replaced value, which can run a
    /// `deinit`, happens after the access ends.
    @exclusivity(unchecked) private var contents: Contents

    private struct Contents {
        /// Finished values. Most entries land here directly, so a flat payload is built in one pass.
        var strings: [String: Any]
        var hashables: [AnyHashable: Any]
        /// Containers that may still be filled after they were stored; finished at the end.
        var pending: [(key: String, value: EncodedValue)] = []

        /// How many entries the last nested dictionary taken from here held (0: none yet). A frame used again (see
        /// ``UserInfoEncoderImpl``'s spare frames) mostly encodes the same type as before, so its next dictionary is
        /// allocated at that size at its first write, instead of growing to it (1, 3, 6 entries: a resize each).
        var nestedCapacity = 0

        /// Returns what the write displaced, for the caller to release after its access ends.
        mutating func set(finished value: consuming Any, for key: consuming String, topLevel: Bool) -> Any? {
            let removed = pending.isEmpty ? nil : removePending(key)
            if !topLevel, nestedCapacity > 1, strings.capacity == 0 {
                strings = EncodedDictionary.emptyStorage(capacity: nestedCapacity)
            }
            let replaced =
                topLevel
                ? hashables.updateValue(value, forKey: AnyHashable(key)) : strings.updateValue(value, forKey: key)
            guard let removed else { return replaced }
            return (replaced, removed)
        }

        /// The pending containers stored for `key`, taken out.
        private mutating func removePending(_ key: String) -> [(key: String, value: EncodedValue)] {
            let removed = pending.filter { $0.key == key }
            if !removed.isEmpty { pending.removeAll { $0.key == key } }
            return removed
        }

        /// The entries of a nested dictionary, moved out, when no container is pending.
        mutating func takeStringsIfFinished() -> [String: Any]? {
            guard pending.isEmpty else { return nil }
            var taken: [String: Any] = [:]
            swap(&taken, &strings)
            nestedCapacity = taken.count
            return taken
        }

        /// The top-level entries, moved out, when no container is pending.
        mutating func takeHashablesIfFinished() -> [AnyHashable: Any]? {
            guard pending.isEmpty else { return nil }
            var taken: [AnyHashable: Any] = [:]
            swap(&taken, &hashables)
            return taken
        }

        /// Returns what the write displaced, for the caller to release after its access ends.
        mutating func set(pending value: EncodedValue, for key: String, topLevel: Bool) -> Any? {
            let removed = pending.isEmpty ? [] : removePending(key)
            var replaced: Any?
            if topLevel {
                if !hashables.isEmpty { replaced = hashables.removeValue(forKey: key) }
            } else if !strings.isEmpty {
                replaced = strings.removeValue(forKey: key)
            }
            pending.append((key, value))
            return (replaced, removed)
        }
    }

    /// `capacity` is the number of entries a top-level dictionary is allocated for at once, so that it does not
    /// grow key by key; nested dictionaries are built at the end, at their size.
    init(topLevel: Bool = false, capacity: Int = 8) {
        isTopLevel = topLevel
        contents = Contents(strings: Dictionary(), hashables: topLevel ? Self.topLevelStorage(capacity) : Dictionary())
    }

    /// An empty top-level dictionary allocated for `capacity` entries.
    ///
    /// Not `Dictionary(minimumCapacity:)` nor `reserveCapacity(_:)`, which the standard library does not inline: their
    /// unspecialized code looks up the storage's generic metadata on every call (about 340 instructions, half the
    /// allocation's cost; `reserveCapacity` about 1,100 in all). This initializer is emitted into this module and
    /// specialized; it initializes no element.
    private static func topLevelStorage(_ capacity: Int) -> [AnyHashable: Any] {
        emptyStorage(capacity: capacity)
    }

    /// An empty dictionary allocated for `capacity` entries, made as ``topLevelStorage(_:)`` explains.
    fileprivate static func emptyStorage<Key: Hashable>(capacity: Int) -> [Key: Any] {
        Dictionary(_unsafeUninitializedCapacity: capacity, allowingDuplicates: false) { _, _ in 0 }
    }

    /// Empties this dictionary, for its frame to be used again; the size hint stays. What it held is released after
    /// the access ends.
    func empty() {
        guard !contents.strings.isEmpty || !contents.hashables.isEmpty || !contents.pending.isEmpty else { return }
        var emptied = Contents(strings: Dictionary(), hashables: Dictionary())
        emptied.nestedCapacity = contents.nestedCapacity
        swap(&emptied, &contents)
    }

    /// Allocates the empty top-level dictionary of a frame used again, for `capacity` entries.
    func allocateTopLevel(capacity: Int) {
        var storage = Self.topLevelStorage(capacity)
        swap(&storage, &contents.hashables)
    }

    /// The capacity to allocate a top-level dictionary at when the same type wrote `count` entries last time: room
    /// for twice the entries of a small `userInfo`. A `Dictionary` insert compares the new key with the key of
    /// every occupied bucket on its probe path, and comparing two `AnyHashable` strings costs two run-time metadata
    /// lookups (about 2,200 instructions, and retains of both strings); at half the load, writing the 7 keyboard
    /// keys compares 0.6–0.9 keys on average instead of 1.6–2.0 (three runs of 20,000 dictionaries), and a
    /// subscriber's lookups compare fewer too. The price is the storage: 32 buckets instead of 16 for those 7
    /// entries, about 1.1 KB more while the `userInfo` lives. Past 64 entries the exact count is asked for. When the
    /// count is not known (the first encode of a type, a post's plain keys), the default of 8 stays as it was.
    static func roomyCapacity(_ count: Int) -> Int { count <= 64 ? count * 2 : count }

    /// Stores a finished value; a later value for the same key replaces an earlier one, as in `JSONEncoder`.
    func set(finished value: consuming Any, for key: consuming String) {
        let displaced = contents.set(finished: value, for: key, topLevel: isTopLevel)
        withExtendedLifetime(displaced) {}
    }

    /// Stores a value; a later value for the same key replaces an earlier one, as in `JSONEncoder`.
    func set(_ value: EncodedValue, for key: String) {
        let displaced =
            if case .value(let finished) = value {
                contents.set(finished: finished, for: key, topLevel: isTopLevel)
            } else {
                contents.set(pending: value, for: key, topLevel: isTopLevel)
            }
        withExtendedLifetime(displaced) {}
    }

    /// Whether a container that may still be filled (a nested container, a super encoder) is stored here.
    var hasPendingContainers: Bool { !contents.pending.isEmpty }

    /// The container stored for `key` that may still be filled: a nested container's box or a super encoder.
    func pendingValue(for key: String) -> EncodedValue? {
        contents.pending.last { $0.key == key }?.value
    }

    /// The dictionary that an earlier nested container or super encoder for `key` writes, to be shared.
    func existingDictionary(for key: String) -> EncodedDictionary? {
        switch pendingValue(for: key) {
        case .dictionary(let existing): existing
        case .deferred(let superEncoder): superEncoder.dictionaryForMerging()
        default: nil
        }
    }

    /// The array that an earlier nested container or super encoder for `key` writes, to be shared.
    func existingArray(for key: String) -> EncodedArray? {
        switch pendingValue(for: key) {
        case .array(let existing): existing
        case .deferred(let superEncoder): superEncoder.arrayForMerging()
        default: nil
        }
    }

    func finalized() -> [String: Any] {
        var result = contents.strings
        if isTopLevel {
            for (key, value) in contents.hashables { if let key = key.base as? String { result[key] = value } }
        }
        for entry in contents.pending { result[entry.key] = entry.value.finalized() }
        return result
    }

    /// The finished top level, taken out of this object when it is a top-level dictionary without pending
    /// containers, so that it is handed over without another reference to release later.
    func takeFinalizedTopLevel() -> [AnyHashable: Any] {
        if isTopLevel, let taken = contents.takeHashablesIfFinished() { return taken }
        return finalizedTopLevel()
    }

    /// The finished entries of a nested dictionary, taken out of this object, when no container is pending in it;
    /// `nil` otherwise, and for a top level.
    func takeFinishedNested() -> [String: Any]? {
        isTopLevel ? nil : contents.takeStringsIfFinished()
    }

    func finalizedTopLevel() -> [AnyHashable: Any] {
        var result = contents.hashables
        if !isTopLevel {
            for (key, value) in contents.strings { result[key] = value }
        }
        for entry in contents.pending { result[entry.key] = entry.value.finalized() }
        return result
    }
}

/// The elements of an unkeyed container. While every element is a finished value, the common case (an array of
/// scalars, strings or structs, each finished when its `encode(to:)` returns), they are kept as the plain array the
/// container becomes, so that it is handed over as it is, without a copy; the first element that may still be
/// filled (a nested container, a super encoder) moves them all to `pending`, to be finished at the end.
///
/// Exclusivity unchecked at run time, as ``EncodedDictionary``'s contents are: only this class touches the two
/// properties, and no user code runs during an access (a value appended was made before it starts, and a buffer
/// given up holds only elements that the new one retains too).
final class EncodedArray {
    @exclusivity(unchecked) private var values: [Any] = []
    @exclusivity(unchecked) private var pending: [EncodedValue]?

    var count: Int { pending?.count ?? values.count }

    /// Every element, for the array to be finished at the end.
    var elements: [EncodedValue] { pending ?? values.map { .value($0) } }

    func append(_ element: EncodedValue) {
        if case .value(let value) = element, pending == nil {
            // Room for a few at once: the small arrays of a payload then allocate once instead of growing.
            if values.capacity == 0 { values.reserveCapacity(4) }
            values.append(value)
            return
        }
        var all = pending ?? values.map { .value($0) }
        pending = nil
        all.append(element)
        pending = all
        if !values.isEmpty { values = [] }
    }

    /// The elements as plain values, taken out of this object, when every one is finished; `nil` otherwise.
    func takeFinished() -> [Any]? {
        guard pending == nil else { return nil }
        var taken: [Any] = []
        swap(&taken, &values)
        return taken
    }
}

/// A type the encoder writes directly, without asking it to encode itself through containers.
protocol UserInfoEncodable {
    /// The value written for this one, or `nil` when a `.custom` date or data strategy writes it through an encoder
    /// instead (``UserInfoEncoderImpl/box(_:at:)`` does that).
    func plainValue(options: UserInfoEncoder.Options) -> Any?
}

extension UserInfoEncodable {
    /// The value written for `value` when it is a `Self`; `nil` otherwise, and for a `.custom` strategy.
    static func plainValue<T>(of value: T, options: UserInfoEncoder.Options) -> Any? {
        // No `Optional<Self>` here: in unspecialized generic code, naming it costs a runtime metadata lookup.
        guard T.self == Self.self else { return nil }
        return unsafeBitCast(value, to: Self.self).plainValue(options: options)
    }
}

/// Finds the direct writer of a type: the types that conform to ``UserInfoEncodable`` are exactly these, so
/// comparing metatypes, most common first, is cheaper than hashing one and needs no lock.
enum UserInfoEncodableTypes {
    static func lookup(_ type: Any.Type) -> (any UserInfoEncodable.Type)? {
        let id = ObjectIdentifier(type)
        if id == ObjectIdentifier(CGRect.self) { return CGRect.self }
        if id == ObjectIdentifier(CGPoint.self) { return CGPoint.self }
        if id == ObjectIdentifier(CGSize.self) { return CGSize.self }
        if id == ObjectIdentifier(Date.self) { return Date.self }
        if id == ObjectIdentifier(URL.self) { return URL.self }
        if id == ObjectIdentifier(Data.self) { return Data.self }
        if id == ObjectIdentifier(UUID.self) { return UUID.self }
        if id == ObjectIdentifier(Decimal.self) { return Decimal.self }
        if id == ObjectIdentifier(CGFloat.self) { return CGFloat.self }
        return nil
    }

    static func isDirect(_ type: Any.Type) -> Bool { lookup(type) != nil }
}
