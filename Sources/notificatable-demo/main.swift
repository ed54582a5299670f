// notificatable-demo: the main job of the package, on built-in data.
//
// Legacy, string-keyed `userInfo` dictionaries, shaped exactly like the ones the system posts (NSValue rects,
// NSNumber durations and curves), are turned into typed Swift values. Bad payloads are reported with the precise
// error and its coding path. The dictionaries come from the fixture files in `Fixtures/`.

import Foundation
import Notificatable
import NotificatableTesting

// MARK: - Payload types

struct KeyboardInfo: Codable, Equatable, Sendable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var centerBegin: CGPoint?
    var centerEnd: CGPoint?
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool?
}

struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var isAdmin: Bool
}

// MARK: - Output helpers

func heading(_ text: String) {
    print("\n\(text)\n" + String(repeating: "─", count: text.count))
}

func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    func path(_ keys: [any CodingKey]) -> String {
        guard !keys.isEmpty else { return "<top level>" }
        return keys.enumerated().map { index, key in
            if let int = key.intValue, key.stringValue.hasPrefix("Index") { return "[\(int)]" }
            return index == 0 ? key.stringValue : "." + key.stringValue
        }.joined()
    }
    switch error {
    case .typeMismatch(_, let context):
        return "typeMismatch at \(path(context.codingPath)): \(context.debugDescription)"
    case .valueNotFound(_, let context):
        return "valueNotFound at \(path(context.codingPath)): \(context.debugDescription)"
    case .keyNotFound(let key, let context):
        return "keyNotFound \"\(key.stringValue)\" at \(path(context.codingPath)): \(context.debugDescription)"
    case .dataCorrupted(let context): return "dataCorrupted at \(path(context.codingPath)): \(context.debugDescription)"
    @unknown default: return "\(error)"
    }
}

func fixturesDirectory() -> URL {
    // The package root, found from this source file, so the demo runs from any working directory.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let candidate = root.appendingPathComponent("Fixtures")
    if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fixtures")
}

// MARK: - 1. System-shaped userInfo → typed values

let keyboardDecoder = UserInfoDecoder()
keyboardDecoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")

let directory = fixturesDirectory()
func loadFixture(_ name: String) -> UserInfoFixture? {
    do {
        return try UserInfoFixture(contentsOf: directory.appendingPathComponent(name + ".plist"))
    } catch {
        print("  cannot load \(name): \(error)")
        return nil
    }
}

heading("1. Keyboard notifications as the system posts them, decoded into KeyboardInfo")
for name in ["system-keyboard-will-show", "system-keyboard-will-hide", "system-keyboard-will-change-frame"] {
    guard let fixture = loadFixture(name) else { continue }
    let userInfo = fixture.userInfo
    let frameEnd = userInfo["UIKeyboardFrameEndUserInfoKey"].map { "\(type(of: $0))" } ?? "missing"
    print("• \(name).plist  (\(userInfo.count) keys; the end frame is boxed in \(frameEnd))")
    do {
        let info = try keyboardDecoder.decode(KeyboardInfo.self, from: userInfo)
        print("  frameEnd \(info.frameEnd), duration \(info.animationDuration) s, curve \(info.animationCurve)")
    } catch {
        print("  ✗ \(describe(error))")
    }
}

// MARK: - 2. Bad payloads → precise errors

heading("2. Malformed payloads give an error with its coding path; nothing traps")
for name in [
    "system-keyboard-end-frame-is-point-value", "system-keyboard-duration-as-string",
    "system-keyboard-will-show-missing-end-frame",
] {
    guard let fixture = loadFixture(name) else { continue }
    print("• \(name).plist: \(fixture.summary)")
    do {
        _ = try keyboardDecoder.decode(KeyboardInfo.self, from: fixture.userInfo)
        print("  decoded (unexpected)")
    } catch {
        print("  ✗ \(describe(error))")
    }
}
let nested: [AnyHashable: Any] = [
    "users": [["id": 1, "name": "Ada", "isAdmin": false], ["id": 300, "name": "Bob", "isAdmin": 2]]
]
struct Team: Decodable { var users: [User] }
do {
    _ = try UserInfoDecoder().decode(Team.self, from: nested)
} catch {
    print("• a nested array with a bad element\n  ✗ \(describe(error))")
}

// MARK: - 3. Typed handles over NotificationCenter

let center = NotificationCenter()
let bag = DisposeBag()

heading("3. A legacy poster reaches a typed subscriber")
let keyboardWillShow = Notification.Name("UIKeyboardWillShowNotification")
    .notificatable(userInfoType: KeyboardInfo.self, decoder: keyboardDecoder)
keyboardWillShow.subscribe(center: center) { note in
    print("  typed subscriber got frameEnd \(note.userInfo.frameEnd)")
}.dispose(by: bag)
if let fixture = loadFixture("system-keyboard-will-show") {
    center.post(name: keyboardWillShow.name, object: nil, userInfo: fixture.userInfo)
}

heading("4. A typed poster reaches a legacy observer (plain keys)")
let userDidLogin = Notificatable<User>.name("UserDidLogin").postingPlainKeys()
let legacy = center.addObserver(forName: userDidLogin.name, object: nil, queue: nil) { note in
    let name = note.userInfo?["name"] as? String ?? "?"
    print("  legacy observer read userInfo[\"name\"] = \(name)")
}
userDidLogin.subscribe(center: center) { note in
    print("  typed subscriber got \(note.userInfo)")
}.dispose(by: bag)
userDidLogin.post(User(id: 7, name: "Ada", isAdmin: true), center: center)
center.removeObserver(legacy)

heading("5. A handle without payload")
let didLogout = Notificatable.name("UserDidLogout")
didLogout.subscribe(center: center) { object in
    print("  didLogout fired, object: \(object.map { "\($0)" } ?? "nil")")
}.dispose(by: bag)
didLogout.post(center: center)

heading("6. A bad payload is reported, not delivered, and other subscribers are served")
userDidLogin.subscribe(
    center: center,
    onFailure: { failure in
        print("  reported: \(failure.kind) for \(failure.payloadTypeName) — \(describe(failure.error))")
    }
) { note in
    print("  delivered \(note.userInfo)")
}.dispose(by: bag)
center.post(name: userDidLogin.name, object: nil, userInfo: ["id": 8, "name": "Eve", "isAdmin": 2])

heading("7. A dispose bag ends its subscriptions")
/// Counts deliveries from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
let pings = Counter()
let ping = Notification.Name("Ping").notificatable()
do {
    let pingBag = DisposeBag()
    ping.subscribe(center: center) { _ in pings.increment() }.dispose(by: pingBag)
    ping.post(center: center)
    print("  while the bag lives: \(pings.count) delivery")
}
ping.post(center: center)
print("  after the bag is gone: still \(pings.count) delivery")
bag.dispose()

runRelayDemo()
print("\nDone.")
