import Foundation

/// The encoder that does the work; it is also the single-value container, and the dictionary its keyed container
/// fills, so that a flat struct costs one object here (plus the standard library's container box).
final class UserInfoEncoderImpl: EncodedDictionary, Encoder, SingleValueEncodingContainer {
    let options: UserInfoEncoder.Options
    /// Where this frame's value is. A `var`, as ``encodedType`` is, for a frame used again for the next value (see
    /// ``spareChild``); neither changes while a value is encoded. Exclusivity unchecked for the reason given on
    /// ``state``.
    @exclusivity(unchecked) private(set) var node: CodingPathNode
    /// The type whose `encode(to:)` this frame runs, if any. When it is a `[String: V]`, the frame's keyed container
    /// writes the dictionary's keys as they are under every key strategy, as `JSONEncoder` does, because they are
    /// data, not property names.
    @exclusivity(unchecked) private(set) var encodedType: Any.Type?
    /// How many `encode(to:)` frames are running, this encoder's included, counted as ``UserInfoDecoder`` counts
    /// the frames of `init(from:)`: a value encoded through its own `encode(to:)` and a super encoder each add one,
    /// a nested container adds none. The cap is the decoder's, so the decoder reads back everything written.
    let depth: Int
    /// Everything that changes, in one stored property, its exclusivity unchecked at run time as
    /// ``EncodedDictionary``'s contents are, for the same reasons: only this class touches it, no user code runs
    /// during an access, and a replaced value is released after the access ends.
    @exclusivity(unchecked) private var state = FrameState()
    /// A child frame whose value is finished and that nothing else holds, kept to encode this frame's next nested
    /// value instead of allocating a frame for it: the lines of an order, one after the other, use one frame; and as
    /// the top-level frame is kept by ``UserInfoEncoder`` between calls, so is the chain of spares below it, one
    /// per level of nesting. A spare holds nothing of the values it encoded (``prepareForReuse()``).
    @exclusivity(unchecked) private var spareChild: UserInfoEncoderImpl?
    /// The keyed container this frame made for its own dictionary, kept for its next values: a struct's
    /// `container(keyedBy:)` then costs no allocation and no generic metadata lookups for the container and the
    /// standard library's box (about 700 instructions each time). It is the standard library's box of a
    /// `KeyedEncodingContainer`, its only stored property; see ``container(keyedBy:)``.
    @exclusivity(unchecked) private var keptBox: AnyObject?
    /// What ``keptBox`` was made for, and the anchor through which it holds this frame.
    @exclusivity(unchecked) private var kept: KeptKeyedContainer?
    /// Whether a value's `encode(to:)` that ``box(_:at:finishing:)`` or the top level runs, and ends with
    /// ``endUse()``, is running in this frame: only then is a keyed container kept.
    @exclusivity(unchecked) var keepsContainer = false

    /// What a kept keyed container was made for.
    private struct KeptKeyedContainer {
        let anchor: KeyedContainerAnchor
        let keyType: ObjectIdentifier
        /// The frame's ``encodedType`` when it was made, which decides how it writes keys.
        let valueType: ObjectIdentifier?
    }

    private struct FrameState {
        /// What this frame wrote.
        var written = Written.nothing
        /// What only super encoders and the frames that make them use; `nil` for every other frame.
        var superLinks: SuperLinks?

        /// The dictionary a keyed container fills, `nil` for the frame's own: a dictionary written already, one an
        /// earlier super encoder for the same key shares, or, unless it was given up, the frame's own.
        mutating func keyedBox(topLevel: Bool) -> EncodedDictionary? {
            switch written {
            case .ownDictionary:
                return nil
            case .other(.dictionary(let existing)), .otherAfterOwnDictionary(.dictionary(let existing)):
                return existing
            case .nothing:
                if let shared = superLinks?.predecessor?.dictionaryForMerging() {
                    written = .other(.dictionary(shared))
                    return shared
                }
                written = .ownDictionary
                return nil
            case .other:
                // The own dictionary was never used, so it is still empty.
                written = .ownDictionary
                return nil
            case .otherAfterOwnDictionary:
                let box = EncodedDictionary(topLevel: topLevel)
                written = .otherAfterOwnDictionary(.dictionary(box))
                return box
            }
        }

        /// The dictionary a later container for the same key shares (`.some(nil)` for the frame's own), made now
        /// if nothing was written yet; `nil` if the frame wrote something else.
        mutating func dictionaryForMerging() -> EncodedDictionary?? {
            switch written {
            case .ownDictionary:
                return .some(nil)
            case .other(.dictionary(let box)), .otherAfterOwnDictionary(.dictionary(let box)):
                return box
            case .nothing:
                if let shared = superLinks?.predecessor?.dictionaryForMerging() {
                    written = .other(.dictionary(shared))
                    return shared
                }
                written = .ownDictionary
                return .some(nil)
            case .other, .otherAfterOwnDictionary:
                return nil
            }
        }
    }

    /// What a frame wrote. Its own dictionary is not stored as `.dictionary(self)`, which would keep it alive forever.
    private enum Written {
        case nothing
        /// The entries of this object's own dictionary.
        case ownDictionary
        /// Anything else: a single value, an array, or a dictionary shared with an earlier super encoder.
        case other(EncodedValue)
        /// Anything else, after the own dictionary was used and replaced: it is not used again, so that a container
        /// still held for it cannot write into a later dictionary.
        case otherAfterOwnDictionary(EncodedValue)

        /// Returns the value replaced, for the caller to release after its access ends.
        mutating func replace(with value: EncodedValue) -> Written {
            let old = self
            switch self {
            case .nothing, .other: self = .other(value)
            case .ownDictionary, .otherAfterOwnDictionary: self = .otherAfterOwnDictionary(value)
            }
            return old
        }
    }

    /// The links of super encoders, apart so that an ordinary frame carries only an empty reference.
    private final class SuperLinks {
        /// For a super encoder made for a key that already had one: the earlier one, whose container this one
        /// shares.
        var predecessor: UserInfoEncoderImpl?
        /// For a super encoder: the encoder whose frame created it, which takes its deferred failures.
        weak var frameOwner: UserInfoEncoderImpl?
        /// A failure found where no error can be thrown (`superEncoder()` past the depth cap), thrown by
        /// ``UserInfoEncoderImpl/box(_:at:)`` when the frame that met it returns.
        var deferredError: EncodingError?
    }

    init(
        options: UserInfoEncoder.Options, node: CodingPathNode, topLevel: Bool = false, capacity: Int = 8,
        depth: Int = 0, encodedType: Any.Type? = nil
    ) {
        self.options = options
        self.node = node
        self.depth = depth
        self.encodedType = encodedType
        super.init(topLevel: topLevel, capacity: capacity)
    }

    var codingPath: [any CodingKey] { node.path }
    var userInfo: [CodingUserInfoKey: Any] { options.encoderUserInfo }

    /// What this frame wrote, or `nil` if nothing.
    private(set) var storage: EncodedValue? {
        get {
            switch state.written {
            case .nothing: nil
            case .ownDictionary: .dictionary(self)
            case .other(let value), .otherAfterOwnDictionary(let value): value
            }
        }
        set {
            guard let newValue else { return }
            let replaced = state.written.replace(with: newValue)
            withExtendedLifetime(replaced) {}
        }
    }

    /// The dictionary this encoder wrote, empty if it wrote nothing, or `nil` if it wrote something else.
    func topLevelDictionary() -> [AnyHashable: Any]? {
        switch state.written {
        case .ownDictionary: takeFinalizedTopLevel()
        case .nothing: [:]
        case .other(.dictionary(let box)), .otherAfterOwnDictionary(.dictionary(let box)): box.finalizedTopLevel()
        case .other, .otherAfterOwnDictionary: nil
        }
    }

    /// The value written directly for a type the encoder knows (a date, a rect, …), or `nil`: for other types, and
    /// for a `.custom` date or data strategy.
    func plainValue<T>(of value: T) -> Any? {
        guard let direct = UserInfoEncodableTypes.lookup(T.self) else { return nil }
        return direct.plainValue(of: value, options: options)
    }

    /// Encodes a value at `node`: directly for primitives and system values, otherwise through a child encoder.
    /// `node` is built only when something needs it: a child encoder.
    /// `finishing`: whether what a child frame wrote is finished at once when it can be (``takeFinishedStorage()``);
    /// not for the top level of ``UserInfoEncoder/encodeValue(_:)``, which finishes a dictionary as a `userInfo`.
    func box<T: Encodable>(_ value: T, at node: @autoclosure () -> CodingPathNode, finishing: Bool = true) throws
        -> EncodedValue
    {
        let custom: ((UserInfoEncoderImpl) throws -> Void)?
        if let direct = UserInfoEncodableTypes.lookup(T.self) {
            if let plain = direct.plainValue(of: value, options: options) { return .value(plain) }
            custom = customWriter(for: value)
        } else {
            custom = nil
        }
        var child = try frame(for: value, at: node(), encodedType: custom == nil ? T.self : nil)
        child.keepsContainer = true
        do {
            if let custom { try custom(child) } else { try value.encode(to: child) }
        } catch {
            child.endUse()
            throw error
        }
        child.endUse()
        try child.throwDeferredError()
        if finishing, let finished = child.takeFinishedStorage() {
            keepAsSpare(&child)
            return finished
        }
        return child.storage ?? .dictionary(EncodedDictionary())
    }

    /// Keeps `child`, whose value was finished and handed over, to encode the next nested value, if nothing else
    /// holds it: no container or encoder that the value's `encode(to:)` kept past its return.
    private func keepAsSpare(_ child: inout UserInfoEncoderImpl) {
        guard isKnownUniquelyReferenced(&child), child.prepareForReuse() else { return }
        let replaced = spareChild
        spareChild = child
        withExtendedLifetime(replaced) {}
    }

    /// Empties this frame, which nothing else holds, for its next value, keeping nothing of the value it encoded;
    /// `false`, and the frame is not to be used again, if it made a super encoder or a nested container, whose
    /// encoders may point back at it.
    func prepareForReuse() -> Bool {
        guard state.superLinks == nil, !hasPendingContainers else { return false }
        var written = FrameState()
        swap(&written, &state)
        var path = CodingPathNode.root
        swap(&path, &node)
        encodedType = nil
        empty()
        return true
    }

    /// What this frame wrote, as a finished value, when that is final once its `encode(to:)` has returned: its own
    /// dictionary or an array, with no container pending in them, from a frame that made no super encoder. The
    /// common shapes (a synthesized struct of scalars, strings, dates, arrays and nested structs) are all finished
    /// here, so that the parent stores a plain value in one step, with no container to finish at the end and no
    /// second pass over the top level. `nil` otherwise: the container is finished at the end, as before.
    func takeFinishedStorage() -> EncodedValue? {
        guard state.superLinks == nil else { return nil }
        switch state.written {
        case .ownDictionary:
            return takeFinishedNested().map { .value($0) }
        case .other(.array(let array)):
            return array.takeFinished().map { .value($0) }
        default:
            return nil
        }
    }

    /// The `.custom` date or data strategy's closure for `value`, or `nil` when there is none.
    private func customWriter<T>(for value: T) -> ((UserInfoEncoderImpl) throws -> Void)? {
        if let date = value as? Date, case .custom(let write) = options.dateStrategy {
            return { try write(date, $0) }
        }
        if let data = value as? Data, case .custom(let write) = options.dataStrategy {
            return { try write(data, $0) }
        }
        return nil
    }

    // MARK: - Depth

    /// A child encoder one frame deeper, for `value` at `node`, or `invalidValue` with the path past the cap.
    func frame<Value>(for value: Value, at node: CodingPathNode, encodedType: Any.Type? = nil) throws
        -> UserInfoEncoderImpl
    {
        guard depth < UserInfoDecoder.Options.maximumDepth else { throw Self.tooDeep(value, at: node) }
        if let spare = spareChild {
            spareChild = nil
            spare.node = node
            spare.encodedType = encodedType
            return spare
        }
        return UserInfoEncoderImpl(options: options, node: node, depth: depth + 1, encodedType: encodedType)
    }

    /// Prepares this top-level frame, kept by ``UserInfoEncoder`` from an earlier call and emptied then, to encode a
    /// `type` into a dictionary allocated for `capacity` entries.
    func reuseAsTopLevel(capacity: Int, encodedType type: Any.Type) {
        encodedType = type
        allocateTopLevel(capacity: capacity)
    }

    static func tooDeep(_ value: Any, at node: CodingPathNode) -> EncodingError {
        EncodingError.invalidValue(
            value,
            .init(
                codingPath: node.path,
                debugDescription: "The value is nested more than \(UserInfoDecoder.Options.maximumDepth) levels deep, "
                    + "deeper than UserInfoDecoder reads."
            )
        )
    }

    /// Throws the failure met in this encoder's frame, or in a super encoder it made.
    func throwDeferredError() throws {
        if let superLinks = state.superLinks, let deferredError = superLinks.deferredError { throw deferredError }
    }

    /// The links of this encoder, made on first use.
    private var links: SuperLinks {
        if let superLinks = state.superLinks { return superLinks }
        let links = SuperLinks()
        state.superLinks = links
        return links
    }

    /// The encoder that `superEncoder()` returns for `node`: a frame deeper, or, past the cap, an encoder that
    /// throws on every write, with the failure kept for this frame to throw when it returns.
    func superFrame(at node: CodingPathNode) -> UserInfoEncoderImpl? {
        guard depth < UserInfoDecoder.Options.maximumDepth else {
            let owner = state.superLinks?.frameOwner ?? self
            if owner.links.deferredError == nil { owner.links.deferredError = Self.tooDeep((), at: node) }
            return nil
        }
        let child = UserInfoEncoderImpl(options: options, node: node, depth: depth + 1)
        // `links` made for this frame too, if it had none, marks it as one that made a super encoder: one that
        // ``prepareForReuse()`` refuses, since the super encoder points back at it.
        child.links.frameOwner = links.frameOwner ?? self
        return child
    }

    func storePassthrough(_ value: Any) { storage = .value(value) }

    // MARK: - Encoder

    /// The frame's own container, for its own dictionary, is kept for the frame's next values while a value runs in
    /// it (``keepsContainer``): handed out again when its key type and the encoded type are the same. The kept
    /// container holds the frame through a ``KeyedContainerAnchor``, set while it can be reached; ``endUse()``
    /// clears it, or, if the value kept the container, gives the container up to it.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box = state.keyedBox(topLevel: isTopLevel)
        // The kept container is the standard library's box, as `KeyedEncodingContainer` stores it; any other layout
        // takes the ordinary path.
        guard box == nil, keepsContainer,
            MemoryLayout<KeyedEncodingContainer<Key>>.size == MemoryLayout<AnyObject>.size
        else {
            return KeyedEncodingContainer(
                UserInfoKeyedEncodingContainer<Key>(encoder: self, box: box, node: nil, ownContainer: true)
            )
        }
        let keyType = ObjectIdentifier(Key.self)
        let valueType = encodedType.map { ObjectIdentifier($0) }
        // A kept container is held by nothing but this frame, or by the value now running (``endUse()`` gives up
        // one that a value kept): either way it writes into this frame's dictionary, as a second container would.
        // Fields read in place, and the box cast from the stored reference: copies would cost a retain and a release.
        if kept?.keyType == keyType, kept?.valueType == valueType, keptBox != nil {
            kept?.anchor.frame = self
            return unsafeBitCast(keptBox, to: KeyedEncodingContainer<Key>.self)
        }
        let anchor = KeyedContainerAnchor(frame: self)
        let container = KeyedEncodingContainer(
            UserInfoKeyedEncodingContainer<Key>(
                encoder: self, keepAlive: anchor, box: nil, node: nil, ownContainer: true
            )
        )
        var replaced: AnyObject? = unsafeBitCast(container, to: AnyObject.self)
        swap(&replaced, &keptBox)
        let replacedKept = kept
        kept = KeptKeyedContainer(anchor: anchor, keyType: keyType, valueType: valueType)
        withExtendedLifetime((replaced, replacedKept)) {}
        return container
    }

    /// Ends the value's `encode(to:)` in this frame, whether it returned or threw: the kept container no longer
    /// holds the frame, so that the frame is uniquely referenced again if nothing else holds it; or, if the value
    /// kept the container past its `encode(to:)`, the frame gives the container up, and the container's anchor keeps
    /// holding the frame for it.
    func endUse() {
        keepsContainer = false
        guard keptBox != nil else { return }
        if isKnownUniquelyReferenced(&keptBox) {
            kept?.anchor.frame = nil
        } else {
            let givenUp = (keptBox, kept)
            keptBox = nil
            kept = nil
            withExtendedLifetime(givenUp) {}
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: EncodedArray
        if case .array(let existing) = storage {
            box = existing
        } else if case .none = storage, let shared = state.superLinks?.predecessor?.arrayForMerging() {
            box = shared
            storage = .array(shared)
        } else {
            box = EncodedArray()
            storage = .array(box)
        }
        return UserInfoUnkeyedEncodingContainer(encoder: self, box: box, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: - Merging containers for one key

    /// The dictionary this encoder writes, made now if nothing was written yet, for a nested container or super
    /// encoder that a keyed container makes later for the same key; `nil` if it writes something else.
    func dictionaryForMerging() -> EncodedDictionary? {
        guard let box = state.dictionaryForMerging() else { return nil }
        return box ?? self
    }

    /// The array this encoder writes, as ``dictionaryForMerging()`` does for a dictionary.
    func arrayForMerging() -> EncodedArray? {
        switch storage {
        case .array(let box): return box
        case .none:
            if let shared = state.superLinks?.predecessor?.arrayForMerging() {
                storage = .array(shared)
                return shared
            }
            let box = EncodedArray()
            storage = .array(box)
            return box
        default: return nil
        }
    }

    /// A super encoder for `key` of `box` that shares what an earlier nested container or super encoder for the
    /// same key writes, as two nested containers for one key do in `JSONEncoder`.
    func superEncoder(for key: String, in box: EncodedDictionary, at node: CodingPathNode) -> any Encoder {
        guard let child = superFrame(at: node) else { return TooDeepEncoder(node: node, userInfo: userInfo) }
        switch box.pendingValue(for: key) {
        case .dictionary(let existing): child.storage = .dictionary(existing)
        case .array(let existing): child.storage = .array(existing)
        case .deferred(let earlier): child.links.predecessor = earlier
        case .value, .none: break
        }
        box.set(.deferred(child), for: key)
        return child
    }

    // MARK: - SingleValueEncodingContainer

    /// A `nil` written on its own (in an array, or as a single value) becomes `NSNull`, so that the decoder reads it
    /// back as `nil`. A `nil` property is left out of its dictionary instead.
    func encodeNil() { storage = .value(NSNull()) }
    func encode(_ value: Bool) { storeNumber(value) }
    func encode(_ value: String) { storage = .value(value) }
    func encode(_ value: Double) { storeNumber(value) }
    func encode(_ value: Float) { storeNumber(value) }
    func encode(_ value: Int) { storeNumber(value) }
    func encode(_ value: Int8) { storeNumber(value) }
    func encode(_ value: Int16) { storeNumber(value) }
    func encode(_ value: Int32) { storeNumber(value) }
    func encode(_ value: Int64) { storeNumber(value) }
    func encode(_ value: UInt) { storeNumber(value) }
    func encode(_ value: UInt8) { storeNumber(value) }
    func encode(_ value: UInt16) { storeNumber(value) }
    func encode(_ value: UInt32) { storeNumber(value) }
    func encode(_ value: UInt64) { storeNumber(value) }
    func encode<T: Encodable>(_ value: T) throws { storage = try box(value, at: node) }

    /// Stores a number or a boolean, as an `NSNumber` when the options say so.
    private func storeNumber<N: LegacyNumber>(_ value: N) {
        storage = .value(options.numbersAsNSNumber ? value.legacyNumber : value)
    }

    // MARK: - Keys

    /// The dictionary key for a coding key under the `.custom` key strategy, which receives the coding path ending
    /// in the key; `container` is the path of the container that writes it (a nested container's path is deeper than
    /// this encoder's). Integer keys, such as those of `[Int: V]`, are written as their decimal string.
    func customDictionaryKey(for key: some CodingKey, in container: CodingPathNode) -> String {
        if let int = key.intValue, key.stringValue == String(int) { return key.stringValue }
        guard case .custom(let convert) = options.keyStrategy else { return key.stringValue }
        return convert(container.path + [key]).stringValue
    }
}
