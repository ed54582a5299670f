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
