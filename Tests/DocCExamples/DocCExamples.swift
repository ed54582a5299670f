// DocC examples, compiled.
//
// Every ```swift block of the DocC articles (the three catalogs under Sources/*/Documentation.docc) appears verbatim
// in this target, the way README.md's blocks appear in Tests/NotificatableTests/ReadmeExamples.swift:
// - this target is built by `swift build` / `swift test`, warnings as errors, so every article's code compiles;
// - `DocCExamplesTests.everyDocCBlockIsCompiled` (in NotificatableTests) reads each article and fails, naming the
//   article and the block, if a ```swift block is not found as a contiguous run of lines in one of this target's
//   files, or in ReadmeExamples.swift for a block that the README shows too. `import` lines are ignored, a block may
//   be indented as a whole (blocks of statements sit inside a function), and blank lines match blank lines.
// - a few examples also run, in `DocCExampleRunTests`, and the fixture tests of *Testing with Fixtures* run as
//   they are written.
//
// The articles' code lives in a module of its own, so the names an article declares (`User`, `KeyboardInfo`…)
// cannot clash with the test target's. What an article uses without declaring it (a `center`, a `session`, the
// `logger`) is declared in this file, below, or is a parameter of the function that holds the block.
//
// Blocks that need UIKit (*Notificatable and Foundation's Typed Messages*) sit under `#if canImport(UIKit)` in
// FoundationTypedMessagesArticle.swift: they are type-checked where UIKit exists, and only parsed on Linux.
//
// To change an example: edit it in the article, paste the block here unchanged, and run
// `swift test --filter DocC`. `swift format` must accept the block as it is, since the lint covers this target.

import Foundation
import Notificatable
import NotificatableTesting

// MARK: - What the articles use without declaring

/// A stand-in for `os.Logger`, which *Getting Started* logs failures with.
struct DocsLogger: Sendable {
    func error(_ message: String) {}
}

let logger = DocsLogger()

/// The session object that *Getting Started* posts with.
final class Session: Sendable {}

/// What *Bridging Legacy and System Notifications* animates to.
func animate(to frame: CGRect, duration: Double) {}

/// The keyboard payload and handle of *Bridging Legacy and System Notifications*, at file scope, for the articles
/// that use them (the article's own block declares them inside a function here).
struct KeyboardInfo: Decodable, Sendable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool?
}

let keyboardWillChangeFrame = Notification.Name("UIKeyboardWillChangeFrameNotification")
    .notificatable(userInfoType: KeyboardInfo.self, decoder: keyboardDecoder)

let keyboardDecoder: UserInfoDecoder = {
    let decoder = UserInfoDecoder()
    decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    return decoder
}()

/// *Threading, Delivery and Disposal* uses a handle whose payload is the user's name.
let userDidLogin = Notificatable<String>.name("UserDidLogin")

/// What *Testing with Fixtures*'s recorder example records beside `userDidLogin`: a handle without payload.
let userDidLogout = Notificatable.withoutPayload("UserDidLogout")  // Notificatable<Never>

/// What *Threading, Delivery and Disposal* posts with a priority.
struct CatalogSummary: Sendable {
    var itemCount: Int
}

final class CatalogStore: Sendable {}

let catalogDidSync = Notificatable<CatalogSummary>.name("CatalogDidSync")

/// The package's top-level Fixtures/ folder, found as the README's example finds it.
let fixturesFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // Tests/DocCExamples
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // the package
    .appendingPathComponent("Fixtures")

/// The subset of PackageDescription that the articles' manifest snippets use, so they compile as Swift here.
struct DocsPackage {
    enum Dependency: ExpressibleByStringLiteral {
        case target(String)
        case product(name: String, package: String)

        init(stringLiteral value: String) { self = .target(value) }
    }

    struct Target {
        var name: String
        var isTest: Bool
        var dependencies: [Dependency]

        static func target(name: String, dependencies: [Dependency] = []) -> Target {
            Target(name: name, isTest: false, dependencies: dependencies)
        }

        static func testTarget(name: String, dependencies: [Dependency] = []) -> Target {
            Target(name: name, isTest: true, dependencies: dependencies)
        }
    }

    struct PackageDependency {
        var url: String
        var version: String

        static func package(url: String, from version: String) -> PackageDependency {
            PackageDependency(url: url, version: version)
        }

        static func package(path: String) -> PackageDependency {
            PackageDependency(url: path, version: "")
        }
    }

    var name: String
    var dependencies: [PackageDependency]
    var targets: [Target]
}

/// A list of targets, for a snippet that shows one target alone.
func docsTargets(_ targets: DocsPackage.Target...) -> [DocsPackage.Target] { targets }
