import Dispatch
import Foundation
import Notificatable
import Testing

// A `Notificatable<Never>` has no payload, and every call form that would subscribe a handler it can never call must
// fail to compile (Sources/Notificatable/Subscriptions/Notificatable+NoPayloadMisuse.swift says how). A compile error
// cannot be tested from inside the test target, so this test type-checks a small client of the built module with
// `swiftc -typecheck`, and reads the diagnostics line by line: each misuse line must have its error, and the control
// lines (the right forms, and the general forms of a handle with a payload) must have none.

@Suite("A Never handle rejects the forms that could never deliver")
struct NoPayloadMisuseTests {
    static let client = subscribeClient + combineClient

    static let subscribeClient = """
        import Dispatch
        import Foundation
        import Notificatable

        let didExpire = Notificatable.name("DidExpire")
        let userDidLogin = Notificatable<String>.name("UserDidLogin")
        final class Owner: Sendable {}

        func misuse(center: NotificationCenter, owner: Owner) {
            didExpire.subscribe(center: center) { note in print(note.object as Any) }  // MISUSE
            didExpire.subscribe(center: center, onFailure: { print($0) }) { note in print(note.name) }  // MISUSE
            didExpire.subscribe(center: center, queue: .main) { note in print(note.name) }  // MISUSE
            didExpire.subscribe(center: center, queue: DispatchQueue.main) { note in print(note.name) }  // MISUSE
            didExpire.subscribe(object: owner, center: center) { _ in print("expired") }  // MISUSE
            didExpire.subscribe(object: owner, center: center, queue: .main) { _ in print("expired") }  // MISUSE
            didExpire.subscribe(object: owner, queue: DispatchQueue.main) { _ in print("expired") }  // MISUSE
            didExpire.subscribe(owner, center: center) { owner, _ in print(owner) }  // MISUSE
            didExpire.subscribe(owner, center: center, queue: .main) { owner, _ in print(owner) }  // MISUSE
            didExpire.subscribe(owner, queue: DispatchQueue.main) { owner, _ in print(owner) }  // MISUSE
            didExpire.subscribeOnMainActor(center: center) { _ in print("expired") }  // MISUSE
            _ = didExpire.payloads(center: center)  // MISUSE
        }

        func rightForms(center: NotificationCenter, owner: Owner) {
            didExpire.subscribe(center: center) { object in print(object as Any) }
            didExpire.subscribe { object in print(object as Any) }
            didExpire.subscribe(center: center, queue: .main) { object in print(object as Any) }
            didExpire.subscribe(center: center, queue: DispatchQueue.main) { _ in print("expired") }
            didExpire.subscribe(object: owner, center: center) { print("expired") }
            didExpire.subscribe(object: owner, center: center, queue: .main) { print("expired") }
            didExpire.subscribe(owner, center: center) { owner in print(owner) }
            didExpire.subscribe(owner, queue: DispatchQueue.main) { owner in print(owner) }
            didExpire.subscribeOnMainActor(center: center) { print("expired") }
            _ = didExpire.notifications(center: center)
            userDidLogin.subscribe(center: center) { note in print(note.userInfo, note.object as Any) }
            userDidLogin.subscribe(center: center, queue: .main) { note in print(note.userInfo) }
            userDidLogin.subscribe(object: owner, center: center) { name in print(name) }
            userDidLogin.subscribe(owner, queue: DispatchQueue.main) { owner, name in print(owner, name) }
            userDidLogin.subscribeOnMainActor(center: center) { name in print(name) }
            _ = userDidLogin.payloads(center: center)
        }

        """

    // The Combine publisher's forms, where the module has them. Linux has no Combine: there, PublisherMisuseTests in
    // Tests/CombineCheck (scripts/check-combine.sh) type-checks the same lines against the adapter built with
    // OpenCombine.
    // apple-check: the module has a publisher only where Combine exists; the check build has no Combine to import
    #if canImport(Combine)
    static let combineClient = """
        import Combine

        func publisherMisuse(center: NotificationCenter, owner: Owner) {
            _ = didExpire.publisher(center: center, onFailure: { print($0) })  // MISUSE
            _ = didExpire.publisher(object: owner, center: center, onFailure: nil)  // MISUSE
            let never: AnyPublisher<Never, Never> = didExpire.publisher(center: center)  // MISUSE
            _ = never
        }

        func publisherRightForms(center: NotificationCenter, owner: Owner) {
            _ = didExpire.publisher(center: center).sink { print("expired") }
            _ = didExpire.publisher(object: owner, center: center).sink { print("expired") }
            let void: AnyPublisher<Void, Never> = didExpire.publisher(center: center)
            _ = void
            _ = userDidLogin.publisher(center: center, onFailure: { print($0) }).sink { name in print(name) }
        }
        """
    #else
    static let combineClient = ""
    #endif

    @Test func eachMisuseIsACompileErrorAndEachRightFormCompiles() throws {
        let modules = try #require(
            Self.modulesFolder(), "no Modules/Notificatable.swiftmodule above \(CommandLine.arguments[0])"
        )
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-no-payload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("client.swift")
        try Self.client.write(to: file, atomically: true, encoding: .utf8)

        let diagnostics = try Self.typecheck(file, modules: modules, cache: folder.appendingPathComponent("cache"))
        let lines = Self.client.components(separatedBy: "\n")
        let errorLines = Set(
            diagnostics.components(separatedBy: "\n").compactMap { line -> Int? in
                // client.swift:12:23: error: ambiguous use of 'subscribe'
                guard line.hasPrefix(file.path + ":"), line.contains(": error: ") else { return nil }
                return Int(line.dropFirst(file.path.count + 1).prefix { $0.isNumber })
            }
        )
        for (index, line) in lines.enumerated() {
            let number = index + 1
            if line.hasSuffix("// MISUSE") {
                #expect(errorLines.contains(number), "compiles, but never delivers: \(line)\n\(diagnostics)")
            } else {
                #expect(!errorLines.contains(number), "does not compile: \(line)\n\(diagnostics)")
            }
        }
        #expect(diagnostics.contains("ambiguous use of"), "\(diagnostics)")
        // The notes lead to the twins, whose labels and comment name the right form.
        #expect(diagnostics.contains("Notificatable+NoPayloadMisuse.swift"), "\(diagnostics)")
    }

    /// Reached anyway, with their label spelled out, the twins behave as the general forms do: every post is
    /// reported as a `noConversion` failure, never delivered, never a crash.
    @Test func eachTwinReportsEveryPostWhenCalledByItsLabel() {
        final class Owner: Sendable {}
        let center = NotificationCenter()
        let didExpire = Notificatable.name(uniqueName())
        let owner = Owner()
        let failures = FailureRecorder()
        let report = failures.handler
        let operations = OperationQueue()
        let dispatch = DispatchQueue(label: "twins")
        let subscriptions: [Disposable] = [
            didExpire.subscribe(center: center, onFailure: report, thisHandleHasNoPayload: ()) { _ in },
            didExpire.subscribe(center: center, onFailure: report, soThisFormNeverDelivers: ()) { _ in },
            didExpire.subscribe(center: center, queue: operations, onFailure: report, thisHandleHasNoPayload: ()) { _ in
            },
            didExpire.subscribe(center: center, queue: operations, onFailure: report, soThisFormNeverDelivers: ()) {
                _ in
            },
            didExpire.subscribe(center: center, queue: dispatch, onFailure: report, thisHandleHasNoPayload: ()) { _ in
            },
            didExpire.subscribe(center: center, queue: dispatch, onFailure: report, soThisFormNeverDelivers: ()) { _ in
            },
            didExpire.subscribe(object: owner, center: center, onFailure: report, thisHandleHasNoPayload: ()) { _ in },
            didExpire.subscribe(object: owner, center: center, onFailure: report, soThisFormNeverDelivers: ()) { _ in },
            didExpire.subscribe(
                object: owner, center: center, queue: operations, onFailure: report, thisHandleHasNoPayload: ()
            ) { _ in },
            didExpire.subscribe(
                object: owner, center: center, queue: operations, onFailure: report, soThisFormNeverDelivers: ()
            ) { _ in },
            didExpire.subscribe(
                object: owner, center: center, queue: dispatch, onFailure: report, thisHandleHasNoPayload: ()
            ) { _ in },
            didExpire.subscribe(
                object: owner, center: center, queue: dispatch, onFailure: report, soThisFormNeverDelivers: ()
            ) { _ in },
            didExpire.subscribe(owner, center: center, onFailure: report, thisHandleHasNoPayload: ()) { _, _ in },
            didExpire.subscribe(owner, center: center, onFailure: report, soThisFormNeverDelivers: ()) { _, _ in },
            didExpire.subscribe(
                owner, center: center, queue: operations, onFailure: report, thisHandleHasNoPayload: ()
            ) { _, _ in },
            didExpire.subscribe(
                owner, center: center, queue: operations, onFailure: report, soThisFormNeverDelivers: ()
            ) { _, _ in },
            didExpire.subscribe(owner, center: center, queue: dispatch, onFailure: report, thisHandleHasNoPayload: ()) {
                _, _ in
            },
            didExpire.subscribe(owner, center: center, queue: dispatch, onFailure: report, soThisFormNeverDelivers: ())
            {
                _, _ in
            },
            didExpire.subscribeOnMainActor(center: center, onFailure: report, thisHandleHasNoPayload: ()) { _ in },
            didExpire.subscribeOnMainActor(center: center, onFailure: report, soThisFormNeverDelivers: ()) { _ in },
        ]
        didExpire.post(object: owner, center: center)
        #expect(failures.values.count == subscriptions.count)
        #expect(failures.values.allSatisfy { $0.kind == .noConversion })
        subscriptions.forEach { $0.dispose() }

        // Each iterator of a sequence is a subscription of its own.
        let iterators = [
            didExpire.payloads(center: center, onFailure: report, thisHandleHasNoPayload: ()).makeAsyncIterator(),
            didExpire.payloads(center: center, onFailure: report, soThisFormNeverDelivers: ()).makeAsyncIterator(),
        ]
        didExpire.post(center: center)
        #expect(failures.values.count == subscriptions.count + iterators.count)
        #expect(failures.values.allSatisfy { $0.kind == .noConversion })
        withExtendedLifetime((owner, iterators)) {}
    }

    /// The folder of the built modules: `Modules/` next to the test bundle, in the build folder SwiftPM used.
    static func modulesFolder() -> URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<6 {
            let modules = folder.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("Notificatable.swiftmodule").path)
            {
                return modules
            }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `swiftc -typecheck` on `file` against `modules`; returns what it printed.
    static func typecheck(_ file: URL, modules: URL, cache: URL) throws -> String {
        try run([
            "swiftc", "-typecheck", "-swift-version", "6", "-I", modules.path, "-module-cache-path", cache.path,
            file.path,
        ])
    }

    /// Runs a command found on the `PATH`; returns what it printed, standard output and error together.
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
