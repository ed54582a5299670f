import Foundation

/// The encoder's dictionary keys under a snake-case or affixed key strategy, converted once per `CodingKey` type and
/// encoder configuration and then only looked up.
///
/// A keyed container reads the names of its key type once, under one lock, as an immutable ``Names`` object, and
/// scans it without the lock for every key it writes. A key seen for the first time is converted outside the lock,
/// then published as a new, longer ``Names`` object; no container ever sees a table change under it.
///
/// Bounded: a key type with more than ``KeyAffixes/maximumCachedKeys`` keys, whose keys are data rather than
/// property names (a custom `CodingKey` made from a dictionary's keys, say), is marked as not cached and its
/// keys are converted on each use, so that neither the memory nor the cost of a lookup grows with the keys seen.
final class EncoderKeyNames: @unchecked Sendable {
    /// The dictionary keys of one `CodingKey` type known so far. Synthesized coding keys are few and their names
    /// short, so a linear scan comparing small strings beats hashing them.
    final class Names: Sendable {
        let swiftKeys: [String]
        let dictionaryKeys: [String]
        /// Whether the key type had more keys than a table keeps: its keys are converted on each use.
        let isUncached: Bool

        init(swiftKeys: [String] = [], dictionaryKeys: [String] = [], isUncached: Bool = false) {
            self.swiftKeys = swiftKeys
            self.dictionaryKeys = dictionaryKeys
            self.isUncached = isUncached
        }

        /// The names of a key type whose keys are not cached.
        static let uncached = Names(isUncached: true)

        /// The converted key for `swiftKey`, if it was converted already.
        func dictionaryKey(for swiftKey: String) -> String? {
            index(of: swiftKey, from: 0).map { dictionaryKeys[$0] }
        }

        /// Where `swiftKey` is, looking at `hint` first, and its dictionary key.
        func lookUp(_ swiftKey: String, from hint: Int) -> (index: Int, dictionaryKey: String)? {
            guard let index = index(of: swiftKey, from: hint) else { return nil }
            return (index, dictionaryKeys[index])
        }

        /// Where `swiftKey` is, looking at `hint` first: a type writes its keys in the same order every time, so a
        /// container that looks where the previous key was found, plus one, finds each key at the first comparison
        /// (comparing unequal strings costs a call each).
        func index(of swiftKey: String, from hint: Int) -> Int? {
            if hint < swiftKeys.count, swiftKeys[hint] == swiftKey { return hint }
            var index = 0
            while index < swiftKeys.count {
                if swiftKeys[index] == swiftKey { return index }
                index += 1
            }
            return nil
        }
    }

    let mapping: KeyAffixes.Mapping
    private let lock = NSLock()
    private var tables: [ObjectIdentifier: Names] = [:]
    /// The names asked for last, which an encoder writing one type over and over asks for again, without hashing.
    private var last: (id: ObjectIdentifier, names: Names)?
    /// Whether a type encoded by a frame is a `[String: V]`, whose keys are written as they are: the conformance
    /// check costs more than a whole key lookup, so it runs once per type.
    private var stringKeyedTypes: [ObjectIdentifier: Bool] = [:]
    private var lastValueType: (id: ObjectIdentifier, isStringKeyed: Bool)?

    init(_ mapping: KeyAffixes.Mapping) {
        self.mapping = mapping
    }

    /// The names of `keyType` converted so far.
    func names(for keyType: Any.Type) -> Names {
        lock.withLock { unlockedNames(for: ObjectIdentifier(keyType)) }
    }

    /// The names of `keyType` converted so far, and whether `valueType`, the type whose `encode(to:)` asks for the
    /// container, is a `[String: V]`, whose keys are written as they are; one lock for both.
    func lookUp(keyType: Any.Type, valueType: Any.Type) -> (names: Names, isStringKeyed: Bool) {
        let valueID = ObjectIdentifier(valueType)
        let known: (names: Names, isStringKeyed: Bool?) = lock.withLock {
            let names = unlockedNames(for: ObjectIdentifier(keyType))
            if let lastValueType, lastValueType.id == valueID { return (names, lastValueType.isStringKeyed) }
            let isStringKeyed = stringKeyedTypes[valueID]
            if let isStringKeyed { lastValueType = (valueID, isStringKeyed) }
            return (names, isStringKeyed)
        }
        if let isStringKeyed = known.isStringKeyed { return (known.names, isStringKeyed) }
        let isStringKeyed = valueType is any StringKeyedDictionary.Type
        lock.withLock {
            stringKeyedTypes[valueID] = isStringKeyed
            lastValueType = (valueID, isStringKeyed)
        }
        return (known.names, isStringKeyed)
    }

    private func unlockedNames(for id: ObjectIdentifier) -> Names {
        if let last, last.id == id { return last.names }
        let names = tables[id] ?? Names()
        last = (id, names)
        return names
    }

    /// Converts `swiftKey`, a key of `keyType`, and publishes it; returns the dictionary key and the names that hold
    /// it, for the container to scan from now on.
    func adding(_ swiftKey: String, for keyType: Any.Type) -> (dictionaryKey: String, names: Names) {
        let id = ObjectIdentifier(keyType)
        let converted = KeyAffixes.map(swiftKey, with: mapping)
        lock.lock()
        defer { lock.unlock() }
        let current = tables[id] ?? Names()
        if let known = current.dictionaryKey(for: swiftKey) { return (known, current) }
        guard !current.isUncached, current.swiftKeys.count < KeyAffixes.maximumCachedKeys else {
            tables[id] = .uncached
            last = (id, .uncached)
            return (converted, .uncached)
        }
        let names = Names(
            swiftKeys: current.swiftKeys + [swiftKey], dictionaryKeys: current.dictionaryKeys + [converted]
        )
        tables[id] = names
        last = (id, names)
        return (converted, names)
    }
}
