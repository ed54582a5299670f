import Foundation
import Notificatable
import Testing

// Issue 33 item 6: Combine's habits work. A `Disposable` goes in a `Set` with `store(in: &set)` (and in an array),
// `cancel()` is a compile error whose fix-it writes `dispose()`, and next to RxSwift, whose `DisposeBag` makes the short
// name ambiguous, `NotificatableDisposeBag` and `Notificatable::DisposeBag` name ours.

@Suite("Combine's shapes")
struct CombineShapesTests {
    @Test func disposablesGoInASetAndAnArray() {
        let center = NotificationCenter()
        let count = Notificatable<Int>.name(uniqueName())
        let received = ValueRecorder<Int>()
        var subscriptions = Set<Disposable>()
        let first = count.subscribe(center: center) { note in received.append(note.userInfo) }
        first.store(in: &subscriptions)
        count.subscribe(center: center) { note in received.append(note.userInfo * 10) }.store(in: &subscriptions)
        first.store(in: &subscriptions)  // the same object once
        #expect(subscriptions.count == 2)
        #expect(subscriptions.contains(first))
        count.post(1, center: center)
        #expect(received.values.sorted() == [1, 10])

        var list: [Disposable] = []
        first.store(in: &list)
        #expect(list.count == 1 && list[0] == first)

        // A set ends nothing by itself: its members are disposed by hand.
        subscriptions.forEach { $0.dispose() }
        count.post(2, center: center)
        #expect(received.values.sorted() == [1, 10])
        #expect(Disposable {} != Disposable {})
    }

    @Test func cancelIsACompileErrorThatNamesDispose() throws {
        let diagnostics = try typecheck(
            """
            import Notificatable

            func misuse(subscription: Disposable) {
                subscription.cancel()  // MISUSE
            }

            """)
        #expect(
            diagnostics.firstError(onLine: 4) == "'cancel()' has been renamed to 'dispose()'", "\(diagnostics.text)")
    }

    @Test func nextToRxSwiftOurBagHasNamesThatAreNotAmbiguous() throws {
        let diagnostics = try typecheck(
            """
            import Notificatable
            import RxSwift

            let ours = NotificatableDisposeBag()
            let qualified = Notificatable::DisposeBag()
            let theirs = RxSwift::DisposeBag()
            let ambiguous = DisposeBag()  // MISUSE

            func keep(_ subscription: Disposable) {
                subscription.store(in: ours)
                subscription.store(in: qualified)
            }

            """,
            stub: ("RxSwift", "public final class DisposeBag { public init() {} }"))
        #expect(diagnostics.errorLines == [7], "\(diagnostics.text)")
    }

    // MARK: - Type-checking a client

    struct Diagnostics {
        let text: String
        let file: URL

        /// The error lines of the client, by line number, each with the text after `error: `.
        var errors: [(line: Int, message: String)] {
            text.components(separatedBy: "\n").compactMap { line in
                guard line.hasPrefix(file.path + ":"), let range = line.range(of: ": error: ") else { return nil }
                guard let number = Int(line.dropFirst(file.path.count + 1).prefix { $0.isNumber }) else { return nil }
                return (number, String(line[range.upperBound...]))
            }
        }

        var errorLines: Set<Int> { Set(errors.map(\.line)) }

        func firstError(onLine line: Int) -> String? { errors.first { $0.line == line }?.message }
    }

    /// Type-checks `client` against the built modules, with a `stub` module of the given name and source if any.
    func typecheck(_ client: String, stub: (name: String, source: String)? = nil) throws -> Diagnostics {
        let modules = try #require(
            NoPayloadMisuseTests.modulesFolder(),
            "no Modules/Notificatable.swiftmodule above \(CommandLine.arguments[0])")
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-combine-shapes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var includes = [modules.path]
        if let stub {
            let source = folder.appendingPathComponent("\(stub.name).swift")
            try stub.source.write(to: source, atomically: true, encoding: .utf8)
            let output = try NoPayloadMisuseTests.run([
                "swiftc", "-emit-module", "-parse-as-library", "-module-name", stub.name, "-emit-module-path",
                folder.appendingPathComponent("\(stub.name).swiftmodule").path, source.path,
            ])
            #expect(output.isEmpty, "\(output)")
            includes.append(folder.path)
        }
        let file = folder.appendingPathComponent("client.swift")
        try client.write(to: file, atomically: true, encoding: .utf8)
        let text = try NoPayloadMisuseTests.run(
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-module-cache-path",
                folder.appendingPathComponent("cache").path,
            ]
                + includes.flatMap { ["-I", $0] } + [file.path])
        return Diagnostics(text: text, file: file)
    }
}
