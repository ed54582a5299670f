import Foundation
import Notificatable
import Testing

// `store(in:)` is the one spelling that keeps a subscription in a bag: Combine's word for the same act, which reads
// as "keep it in" where `dispose(by:)` read like "dispose now". The spellings a newcomer brings from RxSwift
// (`disposed(by:)`) and the old one (`dispose(by:)`) must not compile, and the error must carry the rename, so the
// compiler's fix-it writes the right form. As in NoPayloadMisuseTests, a small client of the built module is
// type-checked with `swiftc -typecheck`, line by line.

@Suite("A disposable is kept in a bag with store(in:)")
struct DisposableSpellingTests {
    static let client = """
        import Foundation
        import Notificatable

        func misuse(subscription: Disposable, bag: DisposeBag) {
            subscription.dispose(by: bag)  // MISUSE
            subscription.disposed(by: bag)  // MISUSE
        }

        func rightForm(subscription: Disposable, bag: DisposeBag) {
            subscription.store(in: bag)
            Notificatable<Int>.name("Count").subscribe { _ in }.store(in: bag)
        }

        """

    @Test func theOtherSpellingsAreCompileErrorsThatNameStoreIn() throws {
        let modules = try #require(
            NoPayloadMisuseTests.modulesFolder(),
            "no Modules/Notificatable.swiftmodule above \(CommandLine.arguments[0])")
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-store-in-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("client.swift")
        try Self.client.write(to: file, atomically: true, encoding: .utf8)

        let diagnostics = try NoPayloadMisuseTests.typecheck(
            file, modules: modules, cache: folder.appendingPathComponent("cache"))
        let errors: [Int: String] = Dictionary(
            diagnostics.components(separatedBy: "\n").compactMap { line -> (Int, String)? in
                // client.swift:5:18: error: 'dispose(by:)' has been renamed to 'store(in:)'
                guard line.hasPrefix(file.path + ":"), let range = line.range(of: ": error: ") else { return nil }
                guard let number = Int(line.dropFirst(file.path.count + 1).prefix { $0.isNumber }) else { return nil }
                return (number, String(line[range.upperBound...]))
            },
            uniquingKeysWith: { first, _ in first })
        for (index, line) in Self.client.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            if line.hasSuffix("// MISUSE") {
                let spelling = line.contains("disposed(by:") ? "disposed(by:)" : "dispose(by:)"
                #expect(
                    errors[number] == "'\(spelling)' has been renamed to 'store(in:)'",
                    "\(line)\n\(diagnostics)")
            } else {
                #expect(errors[number] == nil, "does not compile: \(line)\n\(diagnostics)")
            }
        }
    }

    @Test func aStoredDisposableEndsWithItsBag() {
        let center = NotificationCenter()
        let count = Notificatable<Int>.name(uniqueName())
        let received = ValueRecorder<Int>()
        var bag: DisposeBag? = DisposeBag()
        let subscription = count.subscribe(center: center) { note in received.append(note.userInfo) }
        if let bag { subscription.store(in: bag) }
        count.post(1, center: center)
        #expect(subscription.isActive)

        bag = nil  // the bag's deinit disposes what it keeps
        count.post(2, center: center)
        #expect(subscription.isDisposed)
        #expect(received.values == [1])

        // Stored in a bag that is already disposed, a disposable is disposed at once.
        let disposedBag = DisposeBag()
        disposedBag.dispose()
        let late = Disposable {}
        late.store(in: disposedBag)
        #expect(late.isDisposed)
    }
}
