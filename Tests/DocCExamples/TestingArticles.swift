// The ```swift blocks of *Testing with Fixtures* and of the NotificatableTesting and NotificatableSystem catalogs,
// verbatim (see DocCExamples.swift). The fixture tests run as written, on Fixtures/Keyboard and Fixtures/Examples.

import Foundation
import Notificatable
import NotificatableSystem
import NotificatableTesting
import Testing

// MARK: - TestingWithFixtures.md and NotificatableTesting.md: the test target

let testingManifestTargets = docsTargets(
    .testTarget(
        name: "MyAppTests",
        dependencies: ["MyApp", .product(name: "NotificatableTesting", package: "Notificatable")]
    )
)

// MARK: - TestingWithFixtures.md

struct KeyboardFrame: Decodable, Equatable, Sendable {
    var frameEnd: CGRect
    var animationDuration: Double
}

let registry: UserInfoFixtureRegistry = {
    var registry = UserInfoFixtureRegistry()
    registry.register(KeyboardFrame.self)  // fixtures say <key>type</key><string>KeyboardFrame</string>
    return registry
}()

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Keyboard")))
func keyboardFixturesDecode(_ fixture: UserInfoFixture) throws {
    try registry.verify(fixture)
}

let keyboardWillShow = Notification.Name("UIKeyboardWillShowNotification")
    .notificatable(userInfoType: KeyboardFrame.self, decoder: keyboardDecoder)  // the app's handle

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Keyboard")))
func keyboardWillShowReadsEveryFixture(_ fixture: UserInfoFixture) throws {
    try fixture.verify(through: keyboardWillShow)
}

final class KeyboardAvoider: Sendable {
    private let bag = DisposeBag()
    init(center: NotificationCenter = .default) {
        keyboardWillChangeFrame.subscribe(center: center) { [weak self] note in self?.adjust(note.userInfo) }
            .store(in: bag)
    }
    func adjust(_ info: KeyboardInfo) {}
}

// MARK: - TestingWithFixtures.md and NotificatableTesting.md: the injected center and the recorder

final class LoginService {
    private let center: NotificationCenter

    init(center: NotificationCenter = .default) {
        self.center = center
    }

    func logIn(_ name: String) {
        userDidLogin.post(name, object: self, center: center)
    }
}

@Test func loggingInPostsOnce() {
    let center = NotificationCenter()  // private to this test
    let recorder = NotificationRecorder(center: center, recording: userDidLogin, userDidLogout)
    LoginService(center: center).logIn("ada")
    #expect(recorder.payloads(of: userDidLogin) == ["ada"])
    #expect(recorder.count(of: userDidLogout) == 0)
    #expect(recorder.failures.isEmpty)
}

// MARK: - NotificatableTesting.md

struct DownloadFinished: Codable, Equatable {
    var url: URL
    var byteCount: Int
}

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Examples")))
func downloadFinishedDecodes(_ fixture: UserInfoFixture) throws {
    var registry = UserInfoFixtureRegistry()
    registry.register(DownloadFinished.self)
    try registry.verify(fixture)
}

// MARK: - NotificatableSystem.md

func systemCatalogueExample(center: NotificationCenter) {
    let subscription = SystemNotifications.keyboardWillChangeFrame.subscribe(center: center) { note in
        let keyboard = note.userInfo  // KeyboardNotificationInfo
        print(keyboard.frameEnd, keyboard.animationDuration, keyboard.animationCurve)
    }
    subscription.dispose()
}

// MARK: - FromTheDeviceToATest.md (NotificatableTesting catalog)

#if DEBUG
/// Records the keyboard and audio-session notifications this run receives into the app's temporary folder.
func recordSystemFixtures() throws -> FixtureRecorder {
    try FixtureRecorder(
        names: [
            Notification.Name("UIKeyboardWillShowNotification"),
            Notification.Name("AVAudioSessionInterruptionNotification"),
        ],
        folder: FileManager.default.temporaryDirectory.appendingPathComponent("Fixtures"),
        filePrefix: "system-")
}
#endif

// Scaffolded by notificatable-fixtures from UIKeyboardWillShowNotification: check each type before you rely on it.
// The keys share the prefix "UIKeyboard" and the suffix "UserInfoKey", as UIKit's do. Decoding with
//     decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
// makes the CodingKeys below unnecessary: delete them when you do.

struct KeyboardWillShow: Swift.Codable, Swift.Equatable, Swift.Sendable {
    var animationCurve: Swift.Int
    var animationDuration: Swift.Double
    var centerBegin: Foundation.CGPoint
    var centerEnd: Foundation.CGPoint
    var frameBegin: Foundation.CGRect
    var frameEnd: Foundation.CGRect
    var isLocal: Swift.Bool

    enum CodingKeys: Swift.String, Swift.CodingKey {
        case animationCurve = "UIKeyboardAnimationCurveUserInfoKey"
        case animationDuration = "UIKeyboardAnimationDurationUserInfoKey"
        case centerBegin = "UIKeyboardCenterBeginUserInfoKey"
        case centerEnd = "UIKeyboardCenterEndUserInfoKey"
        case frameBegin = "UIKeyboardFrameBeginUserInfoKey"
        case frameEnd = "UIKeyboardFrameEndUserInfoKey"
        case isLocal = "UIKeyboardIsLocalUserInfoKey"
    }
}

extension Notificatable where Info == KeyboardWillShow {
    static let keyboardWillShow = Notificatable.name("UIKeyboardWillShowNotification")
}

@Test(arguments: try fixtures(in: fixturesFolder.appendingPathComponent("Device")))
func deviceFixturesDecode(_ fixture: UserInfoFixture) throws {
    var registry = UserInfoFixtureRegistry()
    registry.register(KeyboardWillShow.self)
    try registry.verify(fixture)
}
