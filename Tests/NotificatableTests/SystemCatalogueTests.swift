import Foundation
import Notificatable
import NotificatableSystem
import NotificatableTesting
import Testing

// Tests of NotificatableSystem. Nothing here can post the real system notifications, so each test posts a
// dictionary shaped like the system's (NSValue rects, NSNumber numbers, boolean NSNumbers) on a private center,
// under the raw name written out again as a literal, and reads it through the catalogue handle.

/// The catalogue's fixtures: `Fixtures/catalogue-…`, decoding into the public payload types.
private func systemCatalogueFixtures() throws -> [UserInfoFixture] {
    try fixtures(in: fixturesDirectory).filter { $0.name.hasPrefix("catalogue-") }
}

/// An `NSValue` holding a rect, boxed as the system boxes it on this platform.
private func systemRectValue(_ rect: CGRect) -> NSValue {
    #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
    NSValue(cgRect: rect)
    #else
    NSValue(rect: rect)
    #endif
}

/// An `NSValue` holding a point, boxed as the system boxes it on this platform.
private func systemPointValue(_ point: CGPoint) -> NSValue {
    #if canImport(UIKit) || NOTIFICATABLE_APPLE_CHECK
    NSValue(cgPoint: point)
    #else
    NSValue(point: point)
    #endif
}

/// The keyboard's userInfo as iOS posts it: rects and centers in NSValue, the curve 7 and the duration in NSNumber,
/// is-local as a boolean NSNumber.
private func systemKeyboardUserInfo() -> [AnyHashable: Any] {
    [
        "UIKeyboardFrameBeginUserInfoKey": systemRectValue(CGRect(x: 0, y: 844, width: 390, height: 336)),
        "UIKeyboardFrameEndUserInfoKey": systemRectValue(CGRect(x: 0, y: 508, width: 390, height: 336)),
        "UIKeyboardCenterBeginUserInfoKey": systemPointValue(CGPoint(x: 195, y: 1012)),
        "UIKeyboardCenterEndUserInfoKey": systemPointValue(CGPoint(x: 195, y: 676)),
        "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
        "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7 as UInt),
        "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
    ]
}

/// A failure's coding path as strings (string keys as they are, integer keys as their number), ending in the
/// missing key for `keyNotFound`, as fixtures write it. `NotificationDecodingFailure.codingPath` follows Foundation
/// and stops at the container for `keyNotFound`; the missing key is the error's own associated value.
private func systemPath(_ failure: NotificationDecodingFailure) -> [String] {
    var path = failure.codingPath
    if case .keyNotFound(let key, _)? = failure.error as? DecodingError { path.append(key) }
    return path.map { $0.intValue.map(String.init) ?? $0.stringValue }
}

/// The kind of a failure's underlying `DecodingError`, or nil if it is not one.
private func systemDecodingErrorKind(_ failure: NotificationDecodingFailure) -> UserInfoFixture.DecodingErrorKind? {
    (failure.error as? DecodingError).map(UserInfoFixture.DecodingErrorKind.init)
}

/// A stand-in for `AVAudioSessionRouteDescription`, which does not exist on Linux.
private final class SystemFakeRouteDescription: NSObject, @unchecked Sendable {}

@Suite("System catalogue: handles")
struct SystemCatalogueHandleTests {
    @Test("Each handle's name is the documented raw string, and no two handles share a name")
    func namesAreTheRawStrings() {
        // A second, independent spelling of each raw name: a typo in the catalogue fails here.
        let expected: [(Notification.Name, String)] = [
            (SystemNotifications.keyboardWillShow.name, "UIKeyboardWillShowNotification"),
            (SystemNotifications.keyboardDidShow.name, "UIKeyboardDidShowNotification"),
            (SystemNotifications.keyboardWillHide.name, "UIKeyboardWillHideNotification"),
            (SystemNotifications.keyboardDidHide.name, "UIKeyboardDidHideNotification"),
            (SystemNotifications.keyboardWillChangeFrame.name, "UIKeyboardWillChangeFrameNotification"),
            (SystemNotifications.keyboardDidChangeFrame.name, "UIKeyboardDidChangeFrameNotification"),
            (SystemNotifications.audioSessionInterruption.name, "AVAudioSessionInterruptionNotification"),
            (SystemNotifications.audioSessionRouteChange.name, "AVAudioSessionRouteChangeNotification"),
            (
                SystemNotifications.audioSessionSilenceSecondaryAudioHint.name,
                "AVAudioSessionSilenceSecondaryAudioHintNotification"
            ),
            (
                SystemNotifications.accessibilityAnnouncementDidFinish.name,
                "UIAccessibilityAnnouncementDidFinishNotification"
            ),
            (
                SystemNotifications.ubiquitousKeyValueStoreDidChangeExternally.name,
                "NSUbiquitousKeyValueStoreDidChangeExternallyNotification"
            ),
            (SystemNotifications.contentSizeCategoryDidChange.name, "UIContentSizeCategoryDidChangeNotification"),
        ]
        for (name, raw) in expected {
            #expect(name.rawValue == raw)
        }
        #expect(Set(expected.map(\.0)).count == expected.count)
    }

    @Test(
        "A keyboard dictionary posted under each raw keyboard name reaches that handle's subscriber as Swift values",
        arguments: [
            ("UIKeyboardWillShowNotification", SystemNotifications.keyboardWillShow),
            ("UIKeyboardDidShowNotification", SystemNotifications.keyboardDidShow),
            ("UIKeyboardWillHideNotification", SystemNotifications.keyboardWillHide),
            ("UIKeyboardDidHideNotification", SystemNotifications.keyboardDidHide),
            ("UIKeyboardWillChangeFrameNotification", SystemNotifications.keyboardWillChangeFrame),
            ("UIKeyboardDidChangeFrameNotification", SystemNotifications.keyboardDidChangeFrame),
        ])
    func keyboardLegacyPost(rawName: String, handle: Notificatable<KeyboardNotificationInfo>) throws {
        let center = NotificationCenter()
        let received = ValueRecorder<KeyboardNotificationInfo>()
        let failures = FailureRecorder()
        let subscription = handle.subscribe(center: center, onFailure: failures.handler) { note in
            received.append(note.userInfo)
        }
        defer { subscription.dispose() }

        center.post(name: Notification.Name(rawName), object: nil, userInfo: systemKeyboardUserInfo())

        #expect(failures.values.isEmpty)
        let info = try #require(received.values.systemOnly)
        #expect(info.frameBegin == CGRect(x: 0, y: 844, width: 390, height: 336))
        #expect(info.frameEnd == CGRect(x: 0, y: 508, width: 390, height: 336))
        #expect(info.animationDuration == 0.25)
        #expect(info.animationCurve.rawValue == 7)
        #expect(info.isLocal == true)
        #expect(info.centerBegin == CGPoint(x: 195, y: 1012))
        #expect(info.centerEnd == CGPoint(x: 195, y: 676))
    }

    @Test("A keyboard handle does not receive the other keyboard names")
    func keyboardNamesAreSeparate() {
        let center = NotificationCenter()
        let willShow = ValueRecorder<CGRect>()
        let subscription = SystemNotifications.keyboardWillShow.subscribe(center: center) { note in
            willShow.append(note.userInfo.frameEnd)
        }
        defer { subscription.dispose() }
        center.post(
            name: Notification.Name("UIKeyboardDidShowNotification"), object: nil,
            userInfo: systemKeyboardUserInfo())
        center.post(
            name: Notification.Name("UIKeyboardWillHideNotification"), object: nil,
            userInfo: systemKeyboardUserInfo())
        #expect(willShow.count == 0)
        center.post(
            name: Notification.Name("UIKeyboardWillShowNotification"), object: nil,
            userInfo: systemKeyboardUserInfo())
        #expect(willShow.values == [CGRect(x: 0, y: 508, width: 390, height: 336)])
    }

    @Test("A keyboard notification without animation keys reads as no animation")
    func keyboardWithoutAnimation() throws {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center, recording: SystemNotifications.keyboardDidChangeFrame)
        center.post(
            name: Notification.Name("UIKeyboardDidChangeFrameNotification"), object: nil,
            userInfo: [
                "UIKeyboardFrameBeginUserInfoKey": systemRectValue(CGRect(x: 0, y: 508, width: 390, height: 336)),
                "UIKeyboardFrameEndUserInfoKey": systemRectValue(CGRect(x: 0, y: 472, width: 390, height: 372)),
            ])
        let info = try #require(recorder.payloads(of: SystemNotifications.keyboardDidChangeFrame).systemOnly)
        #expect(info.animationDuration == 0)
        #expect(info.animationCurve == .easeInOut)
        #expect(info.isLocal == nil)
        #expect(info.centerBegin == nil && info.centerEnd == nil)
    }

    @Test("A malformed keyboard notification is reported through onFailure with its kind and coding path")
    func keyboardMalformed() throws {
        let center = NotificationCenter()
        let received = ValueRecorder<KeyboardNotificationInfo>()
        let failures = FailureRecorder()
        let subscription = SystemNotifications.keyboardWillShow.subscribe(center: center, onFailure: failures.handler) {
            note in received.append(note.userInfo)
        }
        defer { subscription.dispose() }

        // The end frame holds a point instead of a rect.
        var userInfo = systemKeyboardUserInfo()
        userInfo["UIKeyboardFrameEndUserInfoKey"] = systemPointValue(CGPoint(x: 0, y: 508))
        center.post(name: Notification.Name("UIKeyboardWillShowNotification"), object: nil, userInfo: userInfo)
        // No userInfo at all, as a careless test or a third-party poster might send.
        center.post(name: Notification.Name("UIKeyboardWillShowNotification"), object: nil, userInfo: nil)
        // The curve as a string.
        userInfo = systemKeyboardUserInfo()
        userInfo["UIKeyboardAnimationCurveUserInfoKey"] = "7"
        center.post(name: Notification.Name("UIKeyboardWillShowNotification"), object: nil, userInfo: userInfo)

        #expect(received.count == 0)
        let reported = failures.values
        try #require(reported.count == 3)
        #expect(reported.allSatisfy { $0.kind == .decodingFailed })
        #expect(reported.allSatisfy { $0.name.rawValue == "UIKeyboardWillShowNotification" })
        #expect(systemDecodingErrorKind(reported[0]) == .typeMismatch)
        #expect(systemPath(reported[0]) == ["UIKeyboardFrameEndUserInfoKey"])
        #expect(systemDecodingErrorKind(reported[1]) == .keyNotFound)
        #expect(systemPath(reported[1]) == ["UIKeyboardFrameBeginUserInfoKey"])
        #expect(reported[1].codingPath.isEmpty)  // the missing key sits in the top-level dictionary
        #expect(systemDecodingErrorKind(reported[2]) == .typeMismatch)
        #expect(systemPath(reported[2]) == ["UIKeyboardAnimationCurveUserInfoKey"])
    }

    @Test("An audio interruption dictionary reaches the typed subscriber; unknown types are kept")
    func audioInterruption() throws {
        let center = NotificationCenter()
        let handle = SystemNotifications.audioSessionInterruption
        let recorder = NotificationRecorder(center: center, recording: handle)
        let session = SystemFakeRouteDescription()  // any object stands in for the AVAudioSession
        let name = Notification.Name("AVAudioSessionInterruptionNotification")
        center.post(
            name: name, object: session,
            userInfo: [
                "AVAudioSessionInterruptionTypeKey": NSNumber(value: 1 as UInt),
                "AVAudioSessionInterruptionReasonKey": NSNumber(value: 2 as UInt),
            ])
        center.post(
            name: name, object: session,
            userInfo: [
                "AVAudioSessionInterruptionTypeKey": NSNumber(value: 0 as UInt),
                "AVAudioSessionInterruptionOptionKey": NSNumber(value: 1 as UInt),
            ])
        center.post(
            name: name, object: session,
            userInfo: [
                "AVAudioSessionInterruptionTypeKey": NSNumber(value: 1 as UInt),
                "AVAudioSessionInterruptionWasSuspendedKey": NSNumber(value: true),
            ])
        center.post(name: name, object: session, userInfo: ["AVAudioSessionInterruptionTypeKey": NSNumber(value: 9)])

        #expect(recorder.failures.isEmpty)
        #expect(
            recorder.payloads(of: handle) == [
                AudioSessionInterruptionInfo(type: .began, reason: .builtInMicMuted),
                AudioSessionInterruptionInfo(type: .ended, options: .shouldResume),
                AudioSessionInterruptionInfo(type: .began, wasSuspended: true),
                AudioSessionInterruptionInfo(type: AudioSessionInterruptionType(rawValue: 9)),
            ])
        #expect(recorder.objects(of: handle).allSatisfy { ($0 as AnyObject?) === session })
        let unknown = try #require(recorder.payloads(of: handle).last)
        #expect(unknown.type != .began && unknown.type != .ended)
        #expect(unknown.type.description == "AudioSessionInterruptionType(rawValue: 9)")
        #expect(unknown.options.isEmpty)
    }

    @Test("A malformed audio interruption is reported with kind and coding path")
    func audioInterruptionMalformed() throws {
        let center = NotificationCenter()
        let handle = SystemNotifications.audioSessionInterruption
        let recorder = NotificationRecorder(center: center, recording: handle)
        let name = Notification.Name("AVAudioSessionInterruptionNotification")
        center.post(name: name, object: nil, userInfo: ["AVAudioSessionInterruptionOptionKey": NSNumber(value: 1)])
        center.post(name: name, object: nil, userInfo: ["AVAudioSessionInterruptionTypeKey": "began"])

        #expect(recorder.count(of: handle) == 0)
        let failures = recorder.failures(of: handle)
        try #require(failures.count == 2)
        #expect(failures.allSatisfy { $0.kind == .decodingFailed })
        #expect(systemDecodingErrorKind(failures[0]) == .keyNotFound)
        #expect(systemPath(failures[0]) == ["AVAudioSessionInterruptionTypeKey"])
        #expect(systemDecodingErrorKind(failures[1]) == .typeMismatch)
        #expect(systemPath(failures[1]) == ["AVAudioSessionInterruptionTypeKey"])
    }

    @Test("A route change carries its reason and passes the previous route object through as it is")
    func audioRouteChange() throws {
        let center = NotificationCenter()
        let handle = SystemNotifications.audioSessionRouteChange
        let recorder = NotificationRecorder(center: center, recording: handle)
        let previous = SystemFakeRouteDescription()
        let name = Notification.Name("AVAudioSessionRouteChangeNotification")
        center.post(
            name: name, object: nil,
            userInfo: [
                "AVAudioSessionRouteChangeReasonKey": NSNumber(value: 2 as UInt),
                "AVAudioSessionRouteChangePreviousRouteKey": previous,
            ])
        center.post(name: name, object: nil, userInfo: ["AVAudioSessionRouteChangeReasonKey": NSNumber(value: 5)])

        #expect(recorder.failures.isEmpty)
        let changes = recorder.payloads(of: handle)
        try #require(changes.count == 2)
        #expect(changes[0].reason == .oldDeviceUnavailable)
        #expect(changes[0].previousRoute === previous)
        #expect(changes[1].reason == AudioSessionRouteChangeReason(rawValue: 5))
        #expect(changes[1].reason.description == "AudioSessionRouteChangeReason(rawValue: 5)")
        #expect(changes[1].previousRoute == nil)
    }

    @Test("Accessibility, iCloud key-value store and content size dictionaries reach their typed subscribers")
    func otherAreas() throws {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(
            center: center,
            recording: SystemNotifications.accessibilityAnnouncementDidFinish,
            SystemNotifications.ubiquitousKeyValueStoreDidChangeExternally,
            SystemNotifications.contentSizeCategoryDidChange,
            SystemNotifications.audioSessionSilenceSecondaryAudioHint)

        center.post(
            name: Notification.Name("UIAccessibilityAnnouncementDidFinishNotification"), object: nil,
            userInfo: [
                "UIAccessibilityAnnouncementKeyStringValue": NSString(string: "Upload complete"),
                "UIAccessibilityAnnouncementKeyWasSuccessful": NSNumber(value: false),
            ])
        center.post(
            name: Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification"), object: nil,
            userInfo: [
                "NSUbiquitousKeyValueStoreChangeReasonKey": NSNumber(value: 2),
                "NSUbiquitousKeyValueStoreChangedKeysKey": NSArray(array: ["theme", "fontSize"]),
            ])
        center.post(
            name: Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification"), object: nil,
            userInfo: [:])
        center.post(
            name: Notification.Name("UIContentSizeCategoryDidChangeNotification"), object: nil,
            userInfo: [
                "UIContentSizeCategoryNewValueKey": NSString(string: "UICTContentSizeCategoryAccessibilityXXXL")
            ])
        center.post(
            name: Notification.Name("AVAudioSessionSilenceSecondaryAudioHintNotification"), object: nil,
            userInfo: ["AVAudioSessionSilenceSecondaryAudioHintTypeKey": NSNumber(value: 1 as UInt)])

        #expect(recorder.failures.isEmpty)
        #expect(
            recorder.payloads(of: SystemNotifications.accessibilityAnnouncementDidFinish)
                == [AccessibilityAnnouncementInfo(announcement: "Upload complete", wasSuccessful: false)])
        #expect(
            recorder.payloads(of: SystemNotifications.ubiquitousKeyValueStoreDidChangeExternally) == [
                UbiquitousKeyValueStoreChangeInfo(reason: .quotaViolationChange, changedKeys: ["theme", "fontSize"]),
                UbiquitousKeyValueStoreChangeInfo(reason: nil, changedKeys: []),
            ])
        #expect(
            recorder.payloads(of: SystemNotifications.contentSizeCategoryDidChange)
                == [ContentSizeCategoryChangeInfo(newValue: "UICTContentSizeCategoryAccessibilityXXXL")])
        #expect(
            recorder.payloads(of: SystemNotifications.audioSessionSilenceSecondaryAudioHint)
                == [AudioSessionSilenceSecondaryAudioHintInfo(type: .begin)])
    }

    @Test("A payload encoded with UserInfoEncoder is shaped like the system's and decodes back to the same value")
    func encodedPayloadsRoundTrip() throws {
        let encoder = UserInfoEncoder()
        encoder.encodesGeometryAsNSValue = true
        let keyboard = KeyboardNotificationInfo(
            frameBegin: CGRect(x: 0, y: 844, width: 390, height: 336),
            frameEnd: CGRect(x: 0, y: 508, width: 390, height: 336),
            animationDuration: 0.25, animationCurve: KeyboardAnimationCurve(rawValue: 7), isLocal: true)
        let userInfo = try encoder.encode(keyboard)
        #expect(
            Set(userInfo.keys.compactMap { $0.base as? String }) == [
                "UIKeyboardFrameBeginUserInfoKey", "UIKeyboardFrameEndUserInfoKey",
                "UIKeyboardAnimationDurationUserInfoKey", "UIKeyboardAnimationCurveUserInfoKey",
                "UIKeyboardIsLocalUserInfoKey",
            ])
        #expect(userInfo["UIKeyboardFrameEndUserInfoKey"] is NSValue)

        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center, recording: SystemNotifications.keyboardWillShow)
        center.post(name: SystemNotifications.keyboardWillShow.name, object: nil, userInfo: userInfo)
        #expect(recorder.payloads(of: SystemNotifications.keyboardWillShow) == [keyboard])

        let interruption = AudioSessionInterruptionInfo(type: .ended, options: .shouldResume)
        let interruptionUserInfo = try encoder.encode(interruption)
        #expect(
            Set(interruptionUserInfo.keys.compactMap { $0.base as? String })
                == ["AVAudioSessionInterruptionTypeKey", "AVAudioSessionInterruptionOptionKey"])
        #expect(
            try UserInfoDecoder().decode(AudioSessionInterruptionInfo.self, from: interruptionUserInfo)
                == interruption)

        let route = AudioSessionRouteChangeInfo(
            reason: .newDeviceAvailable, previousRoute: SystemFakeRouteDescription())
        let routeUserInfo = try encoder.encode(route)
        #expect(routeUserInfo["AVAudioSessionRouteChangePreviousRouteKey"] as AnyObject? === route.previousRoute)
        #expect(try UserInfoDecoder().decode(AudioSessionRouteChangeInfo.self, from: routeUserInfo) == route)
    }

    @Test("A typed post through a catalogue handle reaches its subscribers, for faking system events in tests")
    func typedPost() {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center, recording: SystemNotifications.contentSizeCategoryDidChange)
        SystemNotifications.contentSizeCategoryDidChange.post(
            ContentSizeCategoryChangeInfo(newValue: "UICTContentSizeCategoryL"), center: center)
        #expect(
            recorder.payloads(of: SystemNotifications.contentSizeCategoryDidChange)
                == [ContentSizeCategoryChangeInfo(newValue: "UICTContentSizeCategoryL")])
    }
}

@Suite("System catalogue: raw-value types")
struct SystemRawValueTypeTests {
    @Test("KeyboardAnimationCurve keeps unknown raw values such as the keyboard's 7")
    func keyboardCurve() throws {
        let seven = try UserInfoDecoder().decode(KeyboardAnimationCurve.self, fromValue: NSNumber(value: 7 as UInt))
        #expect(seven.rawValue == 7)
        #expect(!seven.isDocumented)
        #expect(seven != .easeInOut && seven != .easeIn && seven != .easeOut && seven != .linear)
        #expect(seven.description == "KeyboardAnimationCurve(rawValue: 7)")
        #expect(seven.animationOptionsRawValue == 7 << 16)

        let curves: [KeyboardAnimationCurve] = [.easeInOut, .easeIn, .easeOut, .linear]
        #expect(curves.map(\.rawValue) == [0, 1, 2, 3])
        #expect(curves.allSatisfy { $0.isDocumented })
        #expect(curves.map(\.description) == ["easeInOut", "easeIn", "easeOut", "linear"])
        // UIViewAnimationOptionCurveEaseIn = 1 << 16 … CurveLinear = 3 << 16.
        #expect(curves.map(\.animationOptionsRawValue) == [0, 0x1_0000, 0x2_0000, 0x3_0000])
        #expect(try UserInfoDecoder().decode(KeyboardAnimationCurve.self, fromValue: NSNumber(value: 2)) == .easeOut)
        #expect(KeyboardAnimationCurve(rawValue: -1).animationOptionsRawValue == UInt.max << 16)
    }

    @Test("The enum-like types match the SDK headers' raw values")
    func headerValues() {
        #expect(AudioSessionInterruptionType.began.rawValue == 1)
        #expect(AudioSessionInterruptionType.ended.rawValue == 0)
        #expect(AudioSessionInterruptionOptions.shouldResume.rawValue == 1)
        #expect(
            [
                AudioSessionInterruptionReason.default, .appWasSuspended, .builtInMicMuted, .sceneWasBackgrounded,
                .routeDisconnected,
            ].map(\.rawValue) == [0, 1, 2, 3, 4])
        #expect(
            [
                AudioSessionRouteChangeReason.unknown, .newDeviceAvailable, .oldDeviceUnavailable, .categoryChange,
                .override, .wakeFromSleep, .noSuitableRouteForCategory, .routeConfigurationChange,
            ].map(\.rawValue)
                == [0, 1, 2, 3, 4, 6, 7, 8])
        #expect(AudioSessionSilenceSecondaryAudioHintType.begin.rawValue == 1)
        #expect(AudioSessionSilenceSecondaryAudioHintType.end.rawValue == 0)
        #expect(
            [
                UbiquitousKeyValueStoreChangeReason.serverChange, .initialSyncChange, .quotaViolationChange,
                .accountChange,
            ].map(\.rawValue) == [0, 1, 2, 3])
        #expect(
            UbiquitousKeyValueStoreChangeReason(rawValue: 9).description
                == "UbiquitousKeyValueStoreChangeReason(rawValue: 9)")
        #expect(UbiquitousKeyValueStoreChangeReason.accountChange.description == "accountChange")
    }

    @Test("A negative number into an unsigned reason is reported, not trapped on")
    func negativeReason() throws {
        #expect {
            _ = try UserInfoDecoder().decode(AudioSessionRouteChangeReason.self, fromValue: NSNumber(value: -1))
        } throws: { error in
            guard let error = error as? DecodingError else { return false }
            return UserInfoFixture.DecodingErrorKind(error) == .dataCorrupted
        }
    }
}

@Suite("System catalogue: fixtures")
struct SystemCatalogueFixtureTests {
    @Test(
        "Each catalogue fixture, posted under every name of its type, reaches the handle's subscribers as expected",
        arguments: try systemCatalogueFixtures())
    func fixtureThroughHandles(_ fixture: UserInfoFixture) throws {
        switch fixture.typeName {
        case "KeyboardNotificationInfo":
            for handle in [
                SystemNotifications.keyboardWillShow, SystemNotifications.keyboardDidShow,
                SystemNotifications.keyboardWillHide, SystemNotifications.keyboardDidHide,
                SystemNotifications.keyboardWillChangeFrame, SystemNotifications.keyboardDidChangeFrame,
            ] {
                try systemDeliver(fixture, through: handle)
            }
        case "AudioSessionInterruptionInfo":
            try systemDeliver(fixture, through: SystemNotifications.audioSessionInterruption)
        case "AudioSessionRouteChangeInfo":
            try systemDeliver(fixture, through: SystemNotifications.audioSessionRouteChange)
        case "AudioSessionSilenceSecondaryAudioHintInfo":
            try systemDeliver(fixture, through: SystemNotifications.audioSessionSilenceSecondaryAudioHint)
        case "AccessibilityAnnouncementInfo":
            try systemDeliver(fixture, through: SystemNotifications.accessibilityAnnouncementDidFinish)
        case "UbiquitousKeyValueStoreChangeInfo":
            try systemDeliver(fixture, through: SystemNotifications.ubiquitousKeyValueStoreDidChangeExternally)
        case "ContentSizeCategoryChangeInfo":
            try systemDeliver(fixture, through: SystemNotifications.contentSizeCategoryDidChange)
        default:
            Issue.record("\(fixture.id) names \(fixture.typeName), which is no catalogue payload type")
        }
    }

    @Test("Every catalogue payload type has fixtures of its documented shape and malformed ones")
    func coverage() throws {
        let all = try systemCatalogueFixtures()
        var values: [String: Int] = [:]
        var errors: [String: Int] = [:]
        for fixture in all {
            #expect(
                fixture.decoderConfiguration == UserInfoFixture.DecoderConfiguration(),
                "\(fixture.id): catalogue types need no decoder strategy")
            switch fixture.expectation {
            case .value: values[fixture.typeName, default: 0] += 1
            case .error: errors[fixture.typeName, default: 0] += 1
            }
        }
        let types = [
            "KeyboardNotificationInfo", "AudioSessionInterruptionInfo", "AudioSessionRouteChangeInfo",
            "AudioSessionSilenceSecondaryAudioHintInfo", "AccessibilityAnnouncementInfo",
            "UbiquitousKeyValueStoreChangeInfo", "ContentSizeCategoryChangeInfo",
        ]
        for type in types {
            #expect(values[type, default: 0] >= 1, "\(type) has no fixture of its documented shape")
            #expect(errors[type, default: 0] >= 1, "\(type) has no malformed fixture")
        }
        #expect(Set(values.keys).union(errors.keys) == Set(types))
        #expect(all.count >= 30)
    }

    /// Posts the fixture's dictionary under the handle's name on a private center, and checks that a subscriber
    /// receives the expected value, or that `onFailure:` receives the expected error kind and coding path.
    private func systemDeliver<Info: Decodable & Equatable>(
        _ fixture: UserInfoFixture,
        through handle: Notificatable<Info>
    ) throws {
        let center = NotificationCenter()
        let recorder = NotificationRecorder(center: center, recording: handle)
        center.post(name: handle.name, object: nil, userInfo: fixture.userInfo)
        switch fixture.expectation {
        case .value:
            #expect(recorder.failures.isEmpty, "\(handle.name.rawValue): \(recorder.failures)")
            #expect(
                recorder.payloads(of: handle) == [try fixture.expectedValue(as: Info.self)],
                "\(handle.name.rawValue)")
        case .error(let expected):
            #expect(recorder.count(of: handle) == 0)
            let failure = try #require(recorder.failures(of: handle).systemOnly, "\(handle.name.rawValue)")
            #expect(failure.kind == .decodingFailed)
            #expect(failure.name == handle.name)
            #expect(expected.matches(failure.error), "\(handle.name.rawValue): \(failure)")
            // A fixture writes a missing key's path as the failure reports it, JSONDecoder's way: the dictionary's
            // path, with the key apart (issue 33 item 4).
            #expect(
                failure.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
                    == expected.codingPath.map(\.systemSpelling))
            if let key = expected.key, case .keyNotFound(let missing, _)? = failure.error as? DecodingError {
                #expect(missing.stringValue == key)
            }
        }
    }
}

extension UserInfoFixture.CodingPathElement {
    /// The element as ``systemPath(_:)`` spells a coding key.
    fileprivate var systemSpelling: String {
        switch self {
        case .string(let string): string
        case .int(let int): String(int)
        }
    }
}

extension Array {
    /// The only element, or nil when there are none or several.
    fileprivate var systemOnly: Element? { count == 1 ? first : nil }
}
