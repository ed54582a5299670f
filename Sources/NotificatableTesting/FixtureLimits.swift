import Foundation

extension UserInfoFixture {
    /// The deepest a fixture's `userInfo` nests: 1,000 levels, the `userInfo` dictionary itself being the first.
    ///
    /// A `$nest` counts its `depth` levels. It is checked when the file is read (a
    /// ``UserInfoFixtureError/Code/tooLarge`` error names the place), so that loading, ``userInfo``, `check`, `show`
    /// and `scaffold` all finish, even on a secondary thread's 512 KiB stack. It is above the 512 levels at which
    /// `UserInfoDecoder` stops, so a fixture can still show that cap.
    public static let maximumDepth = 1_000

    /// The deepest a fixture file's property list itself nests, counting from the `userInfo` dictionary: 100 levels.
    ///
    /// A tag's dictionary counts as a level, as the file's text nests it (`{"$nsarray": […]}` is two). Deeper values
    /// are written with `$nest`, which nests up to ``maximumDepth`` levels without nesting the file; ``FixtureCapture``
    /// writes long chains that way and a value nested deeper than that as a placeholder.
    public static let maximumPropertyListDepth = 100

    /// The most values a fixture file holds: 100,000, counting each value every time it appears.
    ///
    /// Every level of a `$nest` counts, and so does every place an object of a binary property list appears: such a
    /// file may refer to one array from many places, and a few hundred bytes would otherwise expand into billions of
    /// values. It is checked before anything is expanded, and gives a ``UserInfoFixtureError/Code/tooLarge`` error.
    public static let maximumValueCount = 100_000
}

extension FixtureReader {
    /// Counts the values a reader makes, so that one file cannot make more than ``UserInfoFixture/maximumValueCount``.
    final class Budget {
        var values = 0
    }

    /// Spends `count` values of the budget, or throws when the file would hold more than the limit.
    func spend(_ count: Int, _ location: [String]) throws {
        budget.values += count
        if budget.values > UserInfoFixture.maximumValueCount {
            throw error(
                .tooLarge, location,
                "the fixture holds more than \(UserInfoFixture.maximumValueCount) values, the most a fixture holds "
                    + "(every level of a $nest counts)")
        }
    }

    /// Throws when a value at `depth` (the `userInfo` dictionary being at depth 1) is deeper than the limit, or when
    /// the file itself nests deeper than ``UserInfoFixture/maximumPropertyListDepth`` at `location` (whose first
    /// component is the `userInfo` or the `expect` field, and each further one a level of the file).
    func checkDepth(_ depth: Int, _ location: [String]) throws {
        if location.count > UserInfoFixture.maximumPropertyListDepth + 1 {
            throw error(
                .tooLarge, location,
                "the property list nests deeper than \(UserInfoFixture.maximumPropertyListDepth) levels here, the most "
                    + "a fixture file nests; write a deeper chain with $nest")
        }
        if depth > UserInfoFixture.maximumDepth {
            throw error(
                .tooLarge, location,
                "nests \(depth) levels deep; a fixture nests at most \(UserInfoFixture.maximumDepth) levels "
                    + "(every level of a $nest counts)")
        }
    }

    /// Throws when a fixture file's bytes are a binary property list that expands to more values than the limit.
    ///
    /// Call it before Foundation reads the bytes: a binary property list that refers to the same object from many
    /// places would otherwise expand, inside Foundation, into more values than memory holds.
    func measure(_ data: Data) throws {
        if let count = BinaryPropertyListMeasure.expandedCount(
            of: data, limit: UserInfoFixture.maximumValueCount), count > UserInfoFixture.maximumValueCount
        {
            throw error(
                .tooLarge, [],
                "the binary property list expands to more than \(UserInfoFixture.maximumValueCount) values, the most "
                    + "a fixture holds (an object it refers to from several places counts each time)")
        }
    }
}

/// Measures a binary property list (`bplist00`) without building it: how many objects it holds once every reference
/// is followed, as Foundation's reader expands it.
///
/// It reads only the trailer, the offset table and the containers' reference lists, in time proportional to the
/// file's size, with bounds checks on every read. A file it cannot follow is left to Foundation's reader, which
/// reports it.
enum BinaryPropertyListMeasure {
    /// The number of objects, counting a shared object each time it is referred to, capped at `limit + 1`; `nil`
    /// when `data` is not a binary property list this can follow (Foundation then reads or rejects it).
    static func expandedCount(of data: Data, limit: Int) -> Int? {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist0".utf8)) else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let objectCount = integer(bytes, at: trailer + 8, size: 8),
            let top = integer(bytes, at: trailer + 16, size: 8),
            let tableOffset = integer(bytes, at: trailer + 24, size: 8),
            objectCount > 0, objectCount <= bytes.count, top < objectCount,
            tableOffset <= trailer, objectCount <= (trailer - tableOffset) / offsetSize
        else { return nil }
        var offsets: [Int] = []
        offsets.reserveCapacity(objectCount)
        for index in 0..<objectCount {
            guard let offset = integer(bytes, at: tableOffset + index * offsetSize, size: offsetSize),
                offset < tableOffset
            else { return nil }
            offsets.append(offset)
        }
        // Depth-first, without recursion: each object's expanded count is one plus its children's, found once.
        var counts = [Int](repeating: -1, count: objectCount)  // -1: not seen, -2: on the path (a cycle)
        var stack: [(object: Int, children: [Int], next: Int, sum: Int)] = []
        func enter(_ object: Int) -> Bool {
            guard let children = references(bytes, at: offsets[object], size: referenceSize),
                children.allSatisfy({ $0 < objectCount })
            else { return false }
            counts[object] = -2
            stack.append((object, children, 0, 1))
            return true
        }
        guard enter(top) else { return nil }
        while var frame = stack.popLast() {
            if frame.next < frame.children.count {
                let child = frame.children[frame.next]
                frame.next += 1
                switch counts[child] {
                case -2: return nil  // a cycle: Foundation's reader refuses it
                case -1:
                    stack.append(frame)
                    guard enter(child) else { return nil }
                default:
                    frame.sum = min(frame.sum + counts[child], limit + 1)
                    stack.append(frame)
                }
            } else {
                counts[frame.object] = frame.sum
                if stack.isEmpty { return frame.sum }
                stack[stack.count - 1].sum = min(stack[stack.count - 1].sum + frame.sum, limit + 1)
            }
        }
        return nil
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, or `nil` past the end or above `Int.max`.
    static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, size <= 8, offset <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return Int(exactly: value)
    }

    /// The objects a container at `offset` refers to (for a dictionary, its keys and values); empty for a scalar.
    static func references(_ bytes: [UInt8], at offset: Int, size: Int) -> [Int]? {
        guard offset < bytes.count else { return nil }
        let marker = bytes[offset]
        let kind = marker >> 4
        // Arrays (0xA), sets (0xB, 0xC) and dictionaries (0xD) refer to other objects; nothing else does.
        guard kind >= 0xA && kind <= 0xD else { return [] }
        var start = offset + 1
        var count = Int(marker & 0x0F)
        if count == 0x0F {
            guard start < bytes.count, bytes[start] >> 4 == 0x1 else { return nil }
            let width = 1 << Int(bytes[start] & 0x0F)
            guard width <= 8, let wide = integer(bytes, at: start + 1, size: width) else { return nil }
            count = wide
            start += 1 + width
        }
        // A count above the bytes left cannot be right, and is refused before it is doubled for a dictionary.
        guard count <= bytes.count else { return nil }
        let total = kind == 0xD ? count * 2 : count
        guard start <= bytes.count, total <= (bytes.count - start) / size else { return nil }
        var children: [Int] = []
        children.reserveCapacity(total)
        for index in 0..<total {
            guard let child = integer(bytes, at: start + index * size, size: size) else { return nil }
            children.append(child)
        }
        return children
    }
}
