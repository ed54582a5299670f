import Foundation
import Notificatable
import Testing

// What the compiler says about subscriptions (issue 41): a compile diagnostic cannot be tested from inside the test
// target, so, as NoPayloadMisuseTests does, this suite type-checks a small client of the built module with
// `swiftc -typecheck` and reads the diagnostics line by line. Each marked line must have its diagnostic; every other
// line must have none.
//
// - `// DROPPED`: a subscription whose result is not kept warns ("result of call to 'subscribe(…)' is unused"), so
//   that a subscription for the life of the process is never written by accident; the fix, `.store(in: bag)`, is
//   in the control lines.
// - `// NOT SENDABLE`: a weak target handed to a queue must be `Sendable`.
// - `// MAIN ACTOR`: a main-actor handler given to a queue form names `subscribeOnMainActor`.
// - `// ISOLATION`: an unmarked closure that touches main-actor state: the compiler's own isolation error, which no
//   declaration can replace (Sources/Notificatable/Subscriptions/Notificatable+MainActorMisuse.swift says why).

@Suite("What the compiler says about subscriptions")
struct SubscriptionCompileCheckTests {
    static let client = """
        import Dispatch
        import Foundation
        import Notificatable

        let userDidLogin = Notificatable<String>.name("UserDidLogin")
        let didLogout = Notificatable.withoutPayload("DidLogout")
        final class Plain { var name = "" }
        final class Guarded: Sendable {}
        func requireSendable<T: Sendable>(_ value: T) {}

        func dropped(center: NotificationCenter, owner: Guarded) {
            userDidLogin.subscribe(center: center) { note in print(note.userInfo) }  // DROPPED
            userDidLogin.subscribe(center: center, queue: .main) { note in print(note.userInfo) }  // DROPPED
            userDidLogin.subscribe(center: center, queue: DispatchQueue.main) { note in print(note.userInfo) }  // DROPPED
            userDidLogin.subscribe(object: owner, center: center) { name in print(name) }  // DROPPED
            userDidLogin.subscribe(object: owner, center: center, queue: .main) { name in print(name) }  // DROPPED
            userDidLogin.subscribe(object: owner, queue: DispatchQueue.main) { name in print(name) }  // DROPPED
            userDidLogin.subscribeOnMainActor(center: center) { name in print(name) }  // DROPPED
            didLogout.subscribe(center: center) { object in print(object as Any) }  // DROPPED
            didLogout.subscribe(center: center, queue: DispatchQueue.main) { _ in }  // DROPPED
            didLogout.subscribe(object: owner, center: center) { print("out") }  // DROPPED
            didLogout.subscribe(object: owner, queue: DispatchQueue.main) { print("out") }  // DROPPED
            didLogout.subscribeOnMainActor(center: center) { print("out") }  // DROPPED
        }

        func kept(center: NotificationCenter, bag: DisposeBag) -> Disposable {
            userDidLogin.subscribe(center: center) { note in print(note.userInfo) }.store(in: bag)
            didLogout.subscribeOnMainActor(center: center) { print("out") }.store(in: bag)
            bag.insert(didLogout.subscribe(center: center) { _ in })
            var set = Set<Disposable>()
            userDidLogin.subscribe(center: center) { _ in }.store(in: &set)
            set.forEach { $0.dispose() }
            return userDidLogin.subscribe(center: center) { _ in }
        }

        func weakTargets(center: NotificationCenter, plain: Plain, guarded: Guarded) {
            userDidLogin.subscribe(plain, center: center) { plain, name in plain.name = name }
            didLogout.subscribe(plain, center: center) { plain in plain.name = "" }
            userDidLogin.subscribe(guarded, center: center, queue: .main) { _, _ in }
            userDidLogin.subscribe(guarded, queue: DispatchQueue.main) { _, _ in }
            didLogout.subscribe(guarded, center: center, queue: .main) { _ in }
            didLogout.subscribe(guarded, queue: DispatchQueue.main) { _ in }
            userDidLogin.subscribe(plain, center: center, queue: .main) { plain, name in plain.name = name }  // NOT SENDABLE
            userDidLogin.subscribe(plain, queue: DispatchQueue.main) { plain, name in plain.name = name }  // NOT SENDABLE
            didLogout.subscribe(plain, center: center, queue: .main) { plain in plain.name = "" }  // NOT SENDABLE
            didLogout.subscribe(plain, queue: DispatchQueue.main) { plain in plain.name = "" }  // NOT SENDABLE
        }

        func typedNotifications(center: NotificationCenter, bag: DisposeBag) {
            userDidLogin.subscribe(center: center) { note in requireSendable(note) }.store(in: bag)
            requireSendable(TypedNotification(name: userDidLogin.name, userInfo: "Ada"))
        }

        @MainActor final class Screen {
            var name = ""
            let bag = DisposeBag()
            func show(_ note: TypedNotification<String>) { name = note.userInfo }

            func wrong(center: NotificationCenter, owner: Guarded) {
                userDidLogin.subscribe(center: center, queue: .main) { @MainActor note in self.name = note.userInfo }.store(in: bag)  // MAIN ACTOR
                userDidLogin.subscribe(center: center, queue: DispatchQueue.main) { @MainActor note in self.show(note) }.store(in: bag)  // MAIN ACTOR
                userDidLogin.subscribe(center: center, queue: .main, show).store(in: bag)  // MAIN ACTOR
                userDidLogin.subscribe(object: owner, center: center, queue: .main) { @MainActor name in self.name = name }.store(in: bag)  // MAIN ACTOR
                userDidLogin.subscribe(center: center, queue: .main) { note in self.name = note.userInfo }.store(in: bag)  // ISOLATION
            }

            func right(center: NotificationCenter) {
                userDidLogin.subscribeOnMainActor(center: center) { [weak self] name in self?.name = name }.store(in: bag)
                userDidLogin.subscribe(center: center, queue: .main) { note in print(note.userInfo) }.store(in: bag)
                userDidLogin.subscribe(center: center, queue: DispatchQueue.main) { note in print(note.userInfo) }.store(in: bag)
            }
        }

        """

    @Test func eachMarkedLineHasItsDiagnosticAndNoOtherLineHasOne() throws {
        let modules = try #require(
            NoPayloadMisuseTests.modulesFolder(),
            "no Modules/Notificatable.swiftmodule above \(CommandLine.arguments[0])"
        )
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notificatable-subscription-checks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("client.swift")
        try Self.client.write(to: file, atomically: true, encoding: .utf8)
        let diagnostics = try NoPayloadMisuseTests.typecheck(
            file, modules: modules, cache: folder.appendingPathComponent("cache"))

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
        func all(_ number: Int) -> [(severity: String, message: String)] {
            printed.filter { $0.line == number }.map { ($0.severity, $0.message) }
        }

        for (index, line) in Self.client.components(separatedBy: "\n").enumerated() {
            let found = all(index + 1)
            let report = "\(line)\n\(found.map { "\($0.severity): \($0.message)" }.joined(separator: "\n"))"
            if line.hasSuffix("// DROPPED") {
                #expect(found.count == 1, "\(report)")
                #expect(found.first?.severity == "warning", "\(report)")
                #expect(found.first?.message.contains("is unused") == true, "\(report)")
            } else if line.hasSuffix("// NOT SENDABLE") {
                #expect(found.contains { $0.severity == "error" && $0.message.contains("Sendable") }, "\(report)")
            } else if line.hasSuffix("// MAIN ACTOR") {
                #expect(
                    found.first?.message.contains(
                        "is deprecated: A main-actor handler: use subscribeOnMainActor(object:center:onFailure:) { … }")
                        == true, "\(report)")
                #expect(found.contains { $0.severity == "error" }, "\(report)")
            } else if line.hasSuffix("// ISOLATION") {
                #expect(
                    found.contains { $0.severity == "error" && $0.message.contains("main actor-isolated") }, "\(report)"
                )
            } else {
                #expect(found.isEmpty, "does not compile cleanly: \(report)\n\(diagnostics)")
            }
        }
    }

    /// The fix the warning points to: an owner that stores its subscriptions in its own bag, capturing itself weakly,
    /// is released when its last reference goes, and its subscriptions end with it (their handlers are let go).
    @Test func theDocumentedFixEndsTheSubscriptionWithItsOwner() {
        final class Token: Sendable {}
        final class Owner: Sendable {
            let bag = DisposeBag()
            let received = Counter()
            init(_ handle: Notificatable<String>, center: NotificationCenter, token: Token) {
                handle.subscribe(center: center) { [weak self] _ in
                    withExtendedLifetime(token) { self?.received.increment() }
                }.store(in: bag)
            }
        }
        let center = NotificationCenter()
        let handle = Notificatable<String>.name(uniqueName())
        var token: Token? = Token()
        weak let capturedToken = token
        var owner: Owner? = Owner(handle, center: center, token: token ?? Token())
        token = nil
        weak let released = owner
        handle.post("one", center: center)
        #expect(owner?.received.count == 1)
        owner = nil
        #expect(released == nil, "the owner is kept alive by its own subscription")
        #expect(capturedToken == nil, "the subscription's handler was not let go with its bag")
    }
}
