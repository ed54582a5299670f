import Foundation
import Notificatable
import NotificatableCombine
import OpenCombine
import Testing

// The publisher forms of a `Notificatable<Never>`, as NoPayloadMisuseTests in the root package checks the `subscribe`
// forms: a form that could never publish must not compile (the twins in Notificatable+Combine.swift), and the right
// form must. Linux has no Combine, so the root package's module has no publisher; this build, against OpenCombine, is
// the one that can type-check the client, with `swiftc -typecheck` against the modules it built.

@Suite("A Never handle rejects the publisher that could never publish")
struct PublisherMisuseTests {
    static let client = """
        import Foundation
        import Notificatable
        import NotificatableCombine
        import OpenCombine

        let didExpire = Notificatable.withoutPayload("DidExpire")
        let userDidLogin = Notificatable<String>.name("UserDidLogin")
        final class Owner: Sendable {}

        func misuse(center: NotificationCenter, owner: Owner) {
            _ = didExpire.publisher(center: center, onFailure: { print($0) })  // MISUSE
            _ = didExpire.publisher(object: owner, center: center, onFailure: nil)  // MISUSE
            let never: AnyPublisher<Never, Never> = didExpire.publisher(center: center)  // MISUSE
            _ = never
        }

        func rightForms(center: NotificationCenter, owner: Owner) {
            _ = didExpire.publisher(center: center).sink { print("expired") }
            _ = didExpire.publisher().sink { _ in print("expired") }
            _ = didExpire.publisher(object: owner, center: center).sink { print("expired") }
            let void: AnyPublisher<Void, Never> = didExpire.publisher(center: center)
            _ = void
            _ = userDidLogin.publisher(center: center).sink { name in print(name) }
            _ = userDidLogin.publisher(object: owner, center: center, onFailure: { print($0) }).sink { print($0) }
        }
        """

    @Test func eachMisuseIsACompileErrorAndEachRightFormCompiles() throws {
        let build = try #require(
            Self.buildFolder(), "no Modules/NotificatableCombine.swiftmodule above the test bundle")
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-publisher-misuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("client.swift")
        try Self.client.write(to: file, atomically: true, encoding: .utf8)

        let diagnostics = try Self.typecheck(file, build: build, cache: folder.appendingPathComponent("cache"))
        let errorLines = Set(
            diagnostics.components(separatedBy: "\n").compactMap { line -> Int? in
                guard line.hasPrefix(file.path + ":"), line.contains(": error: ") else { return nil }
                return Int(line.dropFirst(file.path.count + 1).prefix { $0.isNumber })
            }
        )
        // Some error must be about the client, not about loading the modules.
        #expect(!errorLines.isEmpty, "\(diagnostics)")
        for (index, line) in Self.client.components(separatedBy: "\n").enumerated() {
            if line.hasSuffix("// MISUSE") {
                #expect(errorLines.contains(index + 1), "compiles, but never publishes: \(line)\n\(diagnostics)")
            } else {
                #expect(!errorLines.contains(index + 1), "does not compile: \(line)\n\(diagnostics)")
            }
        }
        #expect(diagnostics.contains("ambiguous use of 'publisher'"), "\(diagnostics)")
        // The notes lead to the twins, whose labels and comment name the right form.
        #expect(diagnostics.contains("Notificatable+Combine.swift"), "\(diagnostics)")
    }

    /// Reached anyway, with their label spelled out, the twins behave as the general form does: every post is
    /// reported as a `noConversion` failure, and nothing is published.
    @Test func eachTwinReportsEveryPostWhenCalledByItsLabel() {
        let center = NotificationCenter()
        let didExpire = Notificatable.withoutPayload(combineCheckName())
        let failures = CombineCheckRecorder<NotificationDecodingFailure>()
        let report: NotificationDecodingFailure.Handler = { failures.append($0) }
        let subscribers = [
            CombineCheckSubscriber<Never>(initialDemand: .unlimited),
            CombineCheckSubscriber<Never>(initialDemand: .unlimited),
        ]
        didExpire.publisher(center: center, onFailure: report, thisHandleHasNoPayload: ()).subscribe(subscribers[0])
        didExpire.publisher(center: center, onFailure: report, soThisFormNeverDelivers: ()).subscribe(subscribers[1])
        didExpire.post(center: center)
        #expect(failures.values.count == 2)
        #expect(failures.values.allSatisfy { $0.kind == .noConversion })
        #expect(subscribers.allSatisfy { $0.completionCount == 0 })
        subscribers.forEach { $0.subscription?.cancel() }
    }

    /// The build folder of this package: the one whose `Modules/` holds the module under test.
    static func buildFolder() -> URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<6 {
            let modules = folder.appendingPathComponent("Modules")
            if FileManager.default.fileExists(
                atPath: modules.appendingPathComponent("NotificatableCombine.swiftmodule").path)
            {
                return folder
            }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `swiftc -typecheck` on `file` against the modules of `build`, with the module maps of its C targets;
    /// returns what it printed.
    static func typecheck(_ file: URL, build: URL, cache: URL) throws -> String {
        var arguments = [
            "swiftc", "-typecheck", "-swift-version", "6", "-I", build.appendingPathComponent("Modules").path,
            "-module-cache-path", cache.path,
        ]
        // OpenCombine's C helpers: SwiftPM hands their module maps to the compiler, so this does too.
        if let files = FileManager.default.enumerator(at: build, includingPropertiesForKeys: nil) {
            for case let url as URL in files where url.lastPathComponent == "module.modulemap" {
                arguments += ["-Xcc", "-fmodule-map-file=\(url.path)"]
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments + [file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
