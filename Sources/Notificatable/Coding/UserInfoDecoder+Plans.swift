import Foundation

/// What one decoder configuration has learned about decoding one top-level type: how the type itself is read, the
/// dictionary key of each Swift key under ``UserInfoDecoder/KeyDecodingStrategy/affixed(prefix:suffix:)``, and how
/// the types met inside it are read.
///
/// A decode fetches its plan once, under one lock, and then looks everything up in it without locking or hashing:
/// the tables are short and in the order of first use, and the Swift keys of a synthesized `CodingKeys` are the same
/// string each time, which compares equal at once. What a decode finds missing is computed, kept for the rest of
/// that decode by the decoder (``UserInfoDecoderImpl``), and published as a new plan, so the second decode of a type
/// builds nothing. Immutable, so that it can be shared between threads; `@unchecked Sendable` because it holds
/// metatypes.
final class DecodingPlan: @unchecked Sendable {
    /// The top-level type.
    let type: ObjectIdentifier
    /// How the top-level type is read.
    let reader: UserInfoDecodableTypes.Reader
    /// Swift keys and their dictionary keys under `.affixed(prefix:suffix:)`, in the same order.
    let swiftKeys: [String]
    let dictionaryKeys: [String]
    /// Types met while decoding, and how each is read, in the same order.
    let nestedTypes: [ObjectIdentifier]
    let nestedReaders: [UserInfoDecodableTypes.Reader]

    /// The most keys and nested types a plan keeps; a type that uses more (a custom `init(from:)` that makes keys
    /// from data, say) has the rest computed on each decode, so a plan never grows without bound.
    static let maximumKeys = KeyAffixes.maximumCachedKeys
    static let maximumTypes = 64

    init(
        type: ObjectIdentifier, reader: UserInfoDecodableTypes.Reader, swiftKeys: [String] = [],
        dictionaryKeys: [String] = [], nestedTypes: [ObjectIdentifier] = [],
        nestedReaders: [UserInfoDecodableTypes.Reader] = []
    ) {
        self.type = type
        self.reader = reader
        self.swiftKeys = swiftKeys
        self.dictionaryKeys = dictionaryKeys
        self.nestedTypes = nestedTypes
        self.nestedReaders = nestedReaders
    }

    /// The index of `swiftKey` in ``swiftKeys``.
    @inline(__always)
    func keyIndex(of swiftKey: String) -> Int? {
        var index = 0
        while index < swiftKeys.count {
            if swiftKeys[index] == swiftKey { return index }
            index += 1
        }
        return nil
    }

    /// How the nested type `id` is read, if the plan knows it.
    @inline(__always)
    func nestedReader(for id: ObjectIdentifier) -> UserInfoDecodableTypes.Reader? {
        var index = 0
        while index < nestedTypes.count {
            if nestedTypes[index] == id { return nestedReaders[index] }
            index += 1
        }
        return nil
    }

    /// A copy that also knows the dictionary key of `swiftKey`, or `nil` if there is no room or it knows it already.
    func adding(swiftKey: String, dictionaryKey: String) -> DecodingPlan? {
        guard swiftKeys.count < Self.maximumKeys, keyIndex(of: swiftKey) == nil else { return nil }
        return DecodingPlan(
            type: type, reader: reader, swiftKeys: swiftKeys + [swiftKey],
            dictionaryKeys: dictionaryKeys + [dictionaryKey], nestedTypes: nestedTypes, nestedReaders: nestedReaders
        )
    }

    /// A copy that also knows how `id` is read, or `nil` if there is no room or it knows it already.
    func adding(type id: ObjectIdentifier, reader: UserInfoDecodableTypes.Reader) -> DecodingPlan? {
        guard nestedTypes.count < Self.maximumTypes, nestedReader(for: id) == nil else { return nil }
        return DecodingPlan(
            type: type, reader: self.reader, swiftKeys: swiftKeys, dictionaryKeys: dictionaryKeys,
            nestedTypes: nestedTypes + [id], nestedReaders: nestedReaders + [reader]
        )
    }
}

/// The plans of one decoder configuration, by top-level type. Options that differ only in their date or data
/// strategy or their `userInfo` share one, since a plan depends only on the key strategy.
final class DecodingPlans: @unchecked Sendable {
    private let lock = NSLock()
    /// Every plan, by top-level type. It holds at most one plan per type of the program that is decoded.
    private var plans: [ObjectIdentifier: DecodingPlan] = [:]
    /// The plan asked for last, which a handle decoding one type over and over asks for again, without hashing.
    private var last: DecodingPlan?

    init() {}

    /// The plan for `type`, made on first use.
    func plan(for type: Any.Type) -> DecodingPlan {
        let id = ObjectIdentifier(type)
        lock.lock()
        if let last, last.type == id {
            lock.unlock()
            return last
        }
        if let plan = plans[id] {
            let previous = last
            last = plan
            lock.unlock()
            withExtendedLifetime(previous) {}
            return plan
        }
        lock.unlock()
        // The conformance checks run outside the lock; two threads may both make a plan, and the first one kept wins.
        let made = DecodingPlan(type: id, reader: UserInfoDecodableTypes.reader(for: type))
        return replacing(id) { $0 ?? made } ?? made
    }

    /// Records what a decode of the top-level type `id` learned: `change` gets the current plan (or `nil`) and
    /// returns the plan to keep, or `nil` to keep the current one. Returns the plan kept.
    @discardableResult
    func replacing(_ id: ObjectIdentifier, _ change: (DecodingPlan?) -> DecodingPlan?) -> DecodingPlan? {
        lock.lock()
        let current = plans[id]
        guard let replacement = change(current) else {
            lock.unlock()
            return current
        }
        plans[id] = replacement
        let previous = last
        last = replacement
        lock.unlock()
        // The replaced plans are released here, outside the lock.
        withExtendedLifetime((current, previous)) {}
        return replacement
    }
}

/// What one decode found missing from its plan, so that it is computed once per decode, not once per value.
/// Only the decoder that does the work touches it, on one thread.
final class PlanOverlay {
    var swiftKeys: [String] = []
    var dictionaryKeys: [String] = []
    var types: [ObjectIdentifier] = []
    var readers: [UserInfoDecodableTypes.Reader] = []

    func dictionaryKey(for swiftKey: String) -> String? {
        swiftKeys.firstIndex(of: swiftKey).map { dictionaryKeys[$0] }
    }

    func reader(for id: ObjectIdentifier) -> UserInfoDecodableTypes.Reader? {
        types.firstIndex(of: id).map { readers[$0] }
    }
}
