import Foundation
import Notificatable
import Testing

@testable import NotificatableTesting

/// Runs `body` on a thread with a 512 KiB stack, the default size of a secondary thread on Apple platforms, and
/// waits for it.
func onSmallStack(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    done.wait()
}

/// What a test on another thread found, read after the thread has finished.
final class FoundOnThread: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []

    func add(_ text: String) {
        lock.lock()
        texts.append(text)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return texts
    }
}

/// A binary property list (`bplist00`) whose `userInfo.a` is an array that holds the next array twice, `levels` times
/// over, and then the integer 1: a few hundred bytes that expand to 2^(levels + 1) - 1 values.
func sharedArraysBinaryPropertyList(levels: Int) -> Data {
    // Objects: 0 the top dictionary, 1 "userInfo", 2 the userInfo, 3 "a", 4… the arrays, then the integer 1.
    var objects: [[UInt8]] = []
    let integer = 4 + levels
    objects.append([0xD1, 0x00, 0x01, 0x00, 0x02])  // {1: 2}, with 2-byte references
    objects.append([0x58] + Array("userInfo".utf8))
    objects.append([0xD1, 0x00, 0x03, 0x00, 0x04])  // {3: 4}
    objects.append([0x51] + Array("a".utf8))
    for index in 4..<integer {
        let next = UInt8(index + 1)
        objects.append([0xA2, 0x00, next, 0x00, next])
    }
    objects.append([0x10, 0x01])
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(bytes.count)
        bytes += object
    }
    let tableOffset = bytes.count
    for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
    func bigEndian(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) } }
    bytes += [0, 0, 0, 0, 0, 0, 2, 2] + bigEndian(objects.count) + bigEndian(0) + bigEndian(tableOffset)
    return Data(bytes)
}

@Suite("Fixture limits: depth and size")
struct FixtureLimitsTests {
    /// `{"$nest": …}` under `userInfo.next`, whose leaf is `leaf`, nested `depth` levels.
    static func nestBody(depth: Int, leaf: String) -> String {
        """
        <key>type</key><string>Chain</string>
        <key>userInfo</key><dict><key>next</key><dict><key>$nest</key><dict>
        <key>depth</key><integer>\(depth)</integer><key>key</key><string>next</string><key>leaf</key>\(leaf)
        </dict></dict></dict>
        <key>expect</key><dict><key>error</key><dict><key>kind</key><string>dataCorrupted</string>
        <key>codingPath</key><array/></dict></dict>
        """
    }

    /// A value `height` levels high that is not a chain, and nests the file twice as deep: an `NSDictionary` of two
    /// keys and an `NSArray` of two elements, in turn, and a placeholder at the bottom.
    static func branchingLeaf(height: Int) -> String {
        var text =
            "<dict><key>end</key><true/><key>$$cash</key><dict><key>$placeholder</key><dict>"
            + "<key>type</key><string>AVAudioSessionRouteDescription</string></dict></dict></dict>"
        for level in 1..<height {
            text =
                level.isMultiple(of: 2)
                ? "<dict><key>$nsdictionary</key><dict><key>deeper</key>\(text)<key>type</key><integer>\(level)</integer>"
                    + "</dict></dict>"
                : "<dict><key>$nsarray</key><array>\(text)<string>\(level)</string></array></dict>"
        }
        return text
    }

    @Test("Every step handles a fixture nested to the limit on a 512 KiB stack")
    func everyStepSurvivesTheDepthLimit() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        // userInfo is level 1, its `next` level 2 and the nest's first level; the leaf is 49 levels high, and nests the
        // file 97 levels deep, close to the most a file nests.
        let height = 49
        let url = try folder.write(
            "deep.plist",
            dictionaryBody: Self.nestBody(
                depth: UserInfoFixture.maximumDepth - 2 - height, leaf: Self.branchingLeaf(height: height)))
        let chain = try folder.write(
            "chain.plist", dictionaryBody: Self.nestBody(depth: UserInfoFixture.maximumDepth - 2, leaf: "<dict/>"))
        let found = FoundOnThread()
        onSmallStack {
            for file in [url, chain] {
                do {
                    let capture = try FixtureCapture(contentsOf: file)
                    found.add("capture \(capture.userInfo.count) \(capture.placeholderNotes.count)")
                    found.add("show \(capture.inspection.split(separator: "\n").count)")
                    found.add("scaffold \(capture.scaffold().contains("struct Chain"))")
                    found.add("write \(capture.propertyList.contains("$nest"))")
                    let fixture = try UserInfoFixture(contentsOf: file)
                    found.add("fixture \(fixture.userInfo.count)")
                } catch {
                    found.add("error \(error)")
                }
                for command in ["check", "show", "scaffold"] {
                    found.add("\(command) \(ToolRun(command, file.path).status)")
                }
            }
        }
        #expect(
            found.all == [
                "capture 1 1", "show 1051", "scaffold true", "write true", "fixture 1", "check 0", "show 0",
                "scaffold 0", "capture 1 0", "show 1002", "scaffold true", "write true", "fixture 1", "check 0",
                "show 0", "scaffold 0",
            ])
    }

    @Test("A $nest that reaches deeper than the limit is refused when the file is read")
    func nestPastTheDepthLimitIsRefused() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let url = try folder.write(
            "too-deep.plist",
            dictionaryBody: Self.nestBody(depth: UserInfoFixture.maximumDepth - 1, leaf: "<dict/>"))
        for load in [{ _ = try FixtureCapture(contentsOf: url) }, { _ = try UserInfoFixture(contentsOf: url) }] {
            let error = try #require(throws: UserInfoFixtureError.self, performing: load)
            #expect(error.code == .tooLarge)
            #expect(error.location == "userInfo.next.$nest.depth")
            #expect(error.message.contains("deeper than 1000 levels"))
        }
        let run = ToolRun("show", url.path)
        #expect(run.status == FixtureCommandLine.failure)
        #expect(run.errorOutput.contains("userInfo.next.$nest.depth: a $nest of depth 999 here nests its leaf deeper"))
        // A huge depth is refused the same way, without arithmetic that overflows.
        let huge = try folder.write(
            "huge.plist", dictionaryBody: Self.nestBody(depth: Int(Int64.max), leaf: "<dict/>"))
        let error = try #require(throws: UserInfoFixtureError.self) { try FixtureCapture(contentsOf: huge) }
        #expect(error.code == .tooLarge)
    }

    @Test("Many $nest values together are refused past the value limit")
    func manyNestsAreRefused() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        let nest =
            "<dict><key>$nest</key><dict><key>depth</key><integer>900</integer><key>leaf</key><true/></dict></dict>"
        let url = try folder.write(
            "wide.plist",
            dictionaryBody: "<key>userInfo</key><dict><key>many</key><array>"
                + String(repeating: nest, count: 200) + "</array></dict>")
        let error = try #require(throws: UserInfoFixtureError.self) { try FixtureCapture(contentsOf: url) }
        #expect(error.code == .tooLarge)
        #expect(error.location == "userInfo.many[110].$nest.depth")
        #expect(error.message.contains("more than 100000 values"))
    }

    @Test("A binary property list of shared arrays is refused before it is expanded")
    func sharedBinaryArraysAreRefused() throws {
        let folder = try TemporaryFixtures()
        defer { folder.remove() }
        // 2^6 - 1 values: read as before.
        let small = folder.directory.appendingPathComponent("small.plist")
        try sharedArraysBinaryPropertyList(levels: 5).write(to: small)
        let capture = try FixtureCapture(contentsOf: small)
        #expect(capture.inspection.split(separator: "\n").filter { $0.contains("NSNumber (integer) 1") }.count == 32)
        // 2^18 - 1 values from 228 bytes, and 2^61 - 1 values from 400 bytes.
        for levels in [17, 60] {
            let url = folder.directory.appendingPathComponent("shared-\(levels).plist")
            try sharedArraysBinaryPropertyList(levels: levels).write(to: url)
            for load in [{ _ = try FixtureCapture(contentsOf: url) }, { _ = try UserInfoFixture(contentsOf: url) }] {
                let error = try #require(throws: UserInfoFixtureError.self, performing: load)
                #expect(error.code == .tooLarge)
                #expect(error.message.contains("expands to more than 100000 values"))
            }
            for command in ["check", "show", "scaffold"] {
                let run = ToolRun(command, url.path)
                #expect(run.status == FixtureCommandLine.failure)
                // check reports on standard output, as every file's problem; show and scaffold on standard error.
                let report = command == "check" ? run.output : run.errorOutput
                #expect(report.contains("expands to more than 100000 values"))
            }
        }
    }

    @Test("A capture stops at the limits: a long chain and shared arrays become placeholders")
    func captureStopsAtTheLimits() throws {
        var chain: Any = 1
        for _ in 0..<3_000 { chain = ["next": chain] }
        let deep = FixtureCapture(userInfo: ["chain": chain])
        #expect(deep.notes.map(\.location) == ["userInfo.chain"])
        #expect(deep.notes.first?.message.contains("3000 levels deep") == true)
        var shared: [Any] = [1]
        for _ in 0..<17 { shared = [shared, shared] }
        let wide = FixtureCapture(userInfo: ["shared": shared])
        #expect(wide.notes.contains { $0.isPlaceholder && $0.message.contains("past the 100000 values") })
        let folder = try CaptureFolder()
        defer { folder.remove() }
        for (name, capture) in [("deep", deep), ("wide", wide)] {
            let url = folder.file("\(name).plist")
            try capture.write(to: url)
            _ = try FixtureCapture(contentsOf: url)
        }
    }
}
