import Dispatch
import Foundation
import Notificatable
import Testing

// A `Notificatable<Never>` has no payload, and every call form that would subscribe a handler it can never call must
// fail to compile (Sources/Notificatable/Subscriptions/Notificatable+NoPayloadMisuse.swift says how), with the right
// call named in the first line the compiler prints for it (issue 33 item 3). A handle declared without its payload
// type is deprecated, so it is not silently a `Notificatable<Never>`, and posting a value on one names the fix. A
// compile error cannot be tested from inside the test target, so this test type-checks a small client of the built
// module with `swiftc -typecheck`, and reads the diagnostics line by line: each misuse line must have an error and a
// first diagnostic that names the right call, and the control lines (the right forms, and the general forms of a
// handle with a payload) must have none.

@Suite("A Never handle rejects the forms that could never deliver")
struct NoPayloadMisuseTests {
    static let client = subscribeClient + combineClient

    static let subscribeClient = """
        import Dispatch
        import Foundation
        import Notificatable

        let didExpire = Notificatable.withoutPayload("DidExpire")
        let userDidLogin = Notificatable<String>.name("UserDidLogin")
        struct Login {}
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
            didExpire.post(Login(), center: center)  // MISUSE
        }

        func typeLeftOut(center: NotificationCenter) {
            let userDidLogIn = Notificatable.name("UserDidLogIn")  // DEPRECATED
            userDidLogIn.post(object: nil, center: center)
        }

        func rightForms(center: NotificationCenter, owner: Owner, bag: DisposeBag) {
            didExpire.subscribe(center: center) { object in print(object as Any) }.store(in: bag)
            didExpire.subscribe { object in print(object as Any) }.store(in: bag)
            didExpire.subscribe(center: center, queue: .main) { object in print(object as Any) }.store(in: bag)
            didExpire.subscribe(center: center, queue: DispatchQueue.main) { _ in print("expired") }.store(in: bag)
            didExpire.subscribe(object: owner, center: center) { print("expired") }.store(in: bag)
            didExpire.subscribe(object: owner, center: center, queue: .main) { print("expired") }.store(in: bag)
            didExpire.subscribe(owner, center: center) { owner in print(owner) }
            didExpire.subscribe(owner, queue: DispatchQueue.main) { owner in print(owner) }
            didExpire.subscribeOnMainActor(center: center) { print("expired") }.store(in: bag)
            _ = didExpire.notifications(center: center)
            didExpire.post(center: center)
            let explicit = Notificatable<Never>.name("DidExpire")
            explicit.post(object: owner, center: center)
            userDidLogin.subscribe(center: center) { note in print(note.userInfo, note.object as Any) }.store(in: bag)
            userDidLogin.subscribe(center: center, queue: .main) { note in print(note.userInfo) }.store(in: bag)
            userDidLogin.subscribe(object: owner, center: center) { name in print(name) }.store(in: bag)
            userDidLogin.subscribe(owner, queue: DispatchQueue.main) { owner, name in print(owner, name) }
            userDidLogin.subscribeOnMainActor(center: center) { name in print(name) }.store(in: bag)
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

    @Test func eachMisuseIsACompileErrorWhoseFirstLineNamesTheRightCall() throws {
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
        // Each diagnostic of the client, in the order the compiler printed it:
        // client.swift:12:23: warning: 'subscribe(…)' is deprecated: A Notificatable<Never> has no payload: use …
        var printed: [(line: Int, severity: String, message: String)] = []
        for line in diagnostics.components(separatedBy: "\n") where line.hasPrefix(file.path + ":") {
            let rest = line.dropFirst(file.path.count + 1)
            guard let number = Int(rest.prefix { $0.isNumber }) else { continue }
            for severity in ["error", "warning"] {
                if let range = rest.range(of: ": \(severity): ") {
                    printed.append((number, severity, String(rest[range.upperBound...])))
                }
            }
        }
        func first(_ number: Int) -> String? { printed.first { $0.line == number }?.message }
        func firstError(_ number: Int) -> String? {
            printed.first { $0.line == number && $0.severity == "error" }?.message
        }

        for (index, line) in Self.client.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            if line.hasSuffix("// MISUSE") {
                #expect(firstError(number) != nil, "compiles, but never delivers: \(line)\n\(diagnostics)")
                let message = first(number) ?? ""
                if line.contains("publisher(") {
                    continue  // Combine's twins, where the module has them, keep their ambiguity
                } else if line.contains(".post(") {
                    #expect(
                        message.hasPrefix(
                            "'post(_:object:center:)' is unavailable: A Notificatable<Never> has no payload: post("),
                        "\(line)\n\(message)")
                } else {
                    // The first line names the right form; the error names the global actor and a label that say
                    // the same.
                    let right =
                        line.contains("payloads(")
                        ? "notifications(object:center:bufferingPolicy:)"
                        : line.contains("subscribeOnMainActor(")
                            ? "subscribeOnMainActor(object:center:) { … }"
                            : line.contains("object: owner")
                                ? "subscribe(object:center:queue:) { … }"
                                : line.contains("(owner,")
                                    ? "subscribe(_:object:center:queue:) { target in … }"
                                    : "subscribe(center:queue:) { object in … }"
                    #expect(
                        message.contains("is deprecated: A Notificatable<Never> has no payload: use \(right)"),
                        "\(line)\n\(message)")
                    let error = firstError(number) ?? ""
                    #expect(error.contains("global actor 'ThisHandleHasNoPayload'-isolated"), "\(line)\n\(error)")
                }
            } else if line.hasSuffix("// DEPRECATED") {
                #expect(firstError(number) == nil, "\(line)\n\(diagnostics)")
                #expect(
                    first(number)?.hasPrefix(
                        "'name' is deprecated: without a payload type, this is a Notificatable<Never>, which carries "
                            + "no payload") == true, "\(line)\n\(diagnostics)")
            } else {
                #expect(first(number) == nil, "does not compile cleanly: \(line)\n\(diagnostics)")
            }
        }
        // The deprecation offers the rename as a fix-it.
        #expect(diagnostics.contains("withoutPayload"), "\(diagnostics)")
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
