// notificatable-demo: the main job of the package, on built-in data.
//
// Legacy, string-keyed `userInfo` dictionaries, shaped exactly like the ones the system posts (NSValue rects,
// NSNumber durations and curves), are turned into typed Swift values. Bad payloads are reported with the precise
// error and its coding path. The dictionaries come from the fixture files in `Fixtures/`.
//
// Each section runs on a center of its own and shows what its title says; everything goes to standard output.
// `DemoOutputTests` in the test target runs this program and pins what each section prints.

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

/// A lenient reader of the same notification: it needs only the name.
struct UserName: Codable, Equatable, Sendable {
    var name: String
}

// MARK: - Output helpers

func heading(_ text: String) {
    print("\n\(text)\n" + String(repeating: "─", count: text.count))
}

/// A rectangle as `(x, y, width, height)`, the same on every platform.
func format(_ rect: CGRect) -> String {
    func number(_ value: CGFloat) -> String {
        value == value.rounded() ? String(Int(value)) : String(describing: Double(value))
    }
    return "(\(number(rect.minX)), \(number(rect.minY)), \(number(rect.width)), \(number(rect.height)))"
}

/// A value as a notification carries it, named by what it is rather than by Foundation's private subclasses.
func kind(of value: Any?) -> String {
    switch value {
    case nil: return "missing"
    case is NSValue where !(value is NSNumber): return "an NSValue"
    case is NSNumber: return "an NSNumber"
    case is String: return "a String"
    case let value?: return "a \(type(of: value))"
    }
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

func loadFixture(_ name: String) -> UserInfoFixture? {
    do {
        return try UserInfoFixture(contentsOf: fixturesDirectory().appendingPathComponent(name + ".plist"))
    } catch {
        print("  cannot load \(name): \(error)")
        return nil
    }
}

/// Collects what handlers see, so a section prints it in a fixed order after the post: Foundation on Linux calls
/// a plain observer and the typed subscribers of one name in no fixed order relative to each other.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

let keyboardDecoder: UserInfoDecoder = {
    let decoder = UserInfoDecoder()
    decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    return decoder
}()

// MARK: - The sections

func systemShapedUserInfo() {
    heading("1. Keyboard notifications as the system posts them, decoded into KeyboardInfo")
    for name in ["system-keyboard-will-show", "system-keyboard-will-hide", "system-keyboard-will-change-frame"] {
        guard let fixture = loadFixture(name) else { continue }
        let userInfo = fixture.userInfo
        let frameEnd = kind(of: userInfo["UIKeyboardFrameEndUserInfoKey"])
        print("• \(name).plist  (\(userInfo.count) keys; the end frame is \(frameEnd), as UIKit boxes it)")
        do {
            let info = try keyboardDecoder.decode(KeyboardInfo.self, from: userInfo)
            print(
                "  frameEnd \(format(info.frameEnd)), duration \(info.animationDuration) s, curve \(info.animationCurve)"
            )
        } catch {
            print("  ✗ \(describe(error))")
        }
    }
}

func malformedPayloads() {
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
    struct Team: Decodable { var users: [User] }
    let nested: [AnyHashable: Any] = [
        "users": [["id": 1, "name": "Ada", "isAdmin": false], ["id": 300, "name": "Bob", "isAdmin": 2]]
    ]
    do {
        _ = try UserInfoDecoder().decode(Team.self, from: nested)
    } catch {
        print("• a nested array with a bad element\n  ✗ \(describe(error))")
    }
}

func legacyPosterTypedSubscriber() {
    heading("3. A legacy poster reaches a typed subscriber")
    let center = NotificationCenter()
    let keyboardWillShow = Notification.Name("UIKeyboardWillShowNotification")
        .notificatable(userInfoType: KeyboardInfo.self, decoder: keyboardDecoder)
    let subscription = keyboardWillShow.subscribe(center: center) { note in
        print(
            "  typed subscriber got frameEnd \(format(note.userInfo.frameEnd)), curve \(note.userInfo.animationCurve)")
    }
    if let fixture = loadFixture("system-keyboard-will-show") {
        print("  posting the raw userInfo of system-keyboard-will-show.plist with center.post(name:object:userInfo:)")
        center.post(name: keyboardWillShow.name, object: nil, userInfo: fixture.userInfo)
    }
    subscription.dispose()
}

func typedPosterLegacyObserver() {
    heading("4. A typed poster reaches a legacy observer (plain keys)")
    let center = NotificationCenter()
    let userDidLogin = Notificatable<User>.name("UserDidLogin").postingPlainKeys()
    let log = Log()
    let legacy = center.addObserver(forName: userDidLogin.name, object: nil, queue: nil) { note in
        let name = note.userInfo?["name"] as? String ?? "?"
        log.add("  legacy observer read userInfo[\"name\"] = \(name)")
    }
    let typed = userDidLogin.subscribe(center: center) { note in
        log.add("  typed subscriber got \(note.userInfo)")
    }
    userDidLogin.post(User(id: 7, name: "Ada", isAdmin: true), center: center)
    log.all.sorted().forEach { print($0) }
    center.removeObserver(legacy)
    typed.dispose()
}

func handleWithoutPayload() {
    heading("5. A handle without payload")
    final class Session: CustomStringConvertible, Sendable {
        var description: String { "the session of Ada" }
    }
    let center = NotificationCenter()
    let session = Session()
    let didLogout = Notificatable.withoutPayload("UserDidLogout")  // Notificatable<Never>
    let subscription = didLogout.subscribe(center: center) { object in
        print("  didLogout fired, object: \(object.map { "\($0)" } ?? "nil")")
    }
    didLogout.post(object: session, center: center)
    didLogout.post(center: center)
    subscription.dispose()
}

func badPayloadOtherSubscribersServed() {
    heading("6. A bad payload is reported, not delivered, and other subscribers are served")
    let center = NotificationCenter()
    let name = Notification.Name("UserDidLogin")
    let strict = name.notificatable(userInfoType: User.self)
    let lenient = name.notificatable(userInfoType: UserName.self)
    let log = Log()
    let bag = DisposeBag()
    strict.subscribe(
        center: center,
        onFailure: { failure in
            log.add("  1. User subscriber: not called; its onFailure got \(describe(failure.error))")
        }
    ) { note in
        log.add("  1. User subscriber: called with \(note.userInfo) (unexpected)")
    }.store(in: bag)
    lenient.subscribe(center: center) { note in
        log.add("  2. UserName subscriber, same name: served, got name \"\(note.userInfo.name)\"")
    }.store(in: bag)
    let legacy = center.addObserver(forName: name, object: nil, queue: nil) { note in
        let name = note.userInfo?["name"] as? String ?? "?"
        log.add("  3. plain Foundation observer: served, read userInfo[\"name\"] = \(name)")
    }
    print("  posting [\"id\": 8, \"name\": \"Eve\", \"isAdmin\": 2] (2 is not a Bool)")
    center.post(name: name, object: nil, userInfo: ["id": 8, "name": "Eve", "isAdmin": 2])
    log.all.sorted().forEach { print($0) }
    center.removeObserver(legacy)
    bag.dispose()
}

func disposeBagEndsSubscriptions() {
    heading("7. A dispose bag ends its subscriptions")
    let center = NotificationCenter()
    let log = Log()
    let ping = Notification.Name("Ping").notificatable()
    do {
        let pingBag = DisposeBag()
        ping.subscribe(center: center) { _ in log.add("ping") }.store(in: pingBag)
        ping.post(center: center)
        print("  while the bag lives: \(log.all.count) delivery")
    }
    ping.post(center: center)
    print("  after the bag is gone: still \(log.all.count) delivery")
}

// MARK: - Run

systemShapedUserInfo()
malformedPayloads()
legacyPosterTypedSubscriber()
typedPosterLegacyObserver()
handleWithoutPayload()
badPayloadOtherSubscribersServed()
disposeBagEndsSubscriptions()
runRelayDemo()
print("\nDone.")
