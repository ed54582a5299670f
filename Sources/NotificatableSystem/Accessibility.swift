import Foundation
import Notificatable

// Sources cited in this file (from /work/research/system-notifications.md §3):
// - H-UIAX: xybp888/iOS-SDKs @368c9fb2
//   iPhoneOS10.3.sdk/System/Library/Frameworks/UIKit.framework/Headers/UIAccessibilityConstants.h,
//   "Accessibility Notifications" block. Proves the symbols, not their values. (Its comment says
//   "UIAccessibilityAnnouncementKeyString"; that is a typo in Apple's comment, the symbol is ...KeyStringValue.)
// - RN-MAC: a React Native macOS "UIKitCompat" shim (find_string ids 69092222710, 69091173565; repository not
//   resolvable from the ids): `NSString *const UIAccessibilityAnnouncementKeyStringValue =
//   @"UIAccessibilityAnnouncementKeyStringValue";` and likewise for the others below.
// - DOC-AX: Averyy/apple-dev-docs documentation/UIKit/uiaccessibility/announcementwassuccessfuluserinfokey.md
//   ("an NSNumber ... Boolean").
// No runtime printout of these strings was found: every one is "value stated (reimpl.)" only.

// MARK: - Handles

extension SystemNotifications {
    /// `UIAccessibility.announcementDidFinishNotification` (iOS 6+): VoiceOver finished reading an announcement
    /// that the app posted.
    ///
    /// ```swift
    /// SystemNotifications.accessibilityAnnouncementDidFinish.subscribe { note in
    ///     if !note.userInfo.wasSuccessful { announceAgain(note.userInfo.announcement) }
    /// }
    /// ```
    ///
    /// On iOS 26 and later, Apple's own `UIAccessibility.AnnouncementDidFinishMessage` covers the same
    /// notification.
    public static let accessibilityAnnouncementDidFinish = Notification.Name(
        "UIAccessibilityAnnouncementDidFinishNotification"  // value stated (reimpl.): RN-MAC; symbol: H-UIAX
    ).notificatable(userInfoType: AccessibilityAnnouncementInfo.self)
}

// MARK: - Payload

/// The `userInfo` of ``SystemNotifications/accessibilityAnnouncementDidFinish``.
public struct AccessibilityAnnouncementInfo: Codable, Equatable, Sendable {
    /// The text that was announced.
    public var announcement: String
    /// Whether VoiceOver read the whole announcement; `false` when it was interrupted.
    public var wasSuccessful: Bool

    /// Creates an announcement payload, for example to post a fake one in a test.
    public init(announcement: String, wasSuccessful: Bool) {
        self.announcement = announcement
        self.wasSuccessful = wasSuccessful
    }

    /// The raw `userInfo` keys.
    enum CodingKeys: String, CodingKey {
        // value stated (reimpl.): RN-MAC; H-UIAX "The corresponding value is the string that was used for the
        // announcement."
        case announcement = "UIAccessibilityAnnouncementKeyStringValue"
        // value stated (reimpl.): RN-MAC; H-UIAX; DOC-AX (boolean NSNumber)
        case wasSuccessful = "UIAccessibilityAnnouncementKeyWasSuccessful"
    }
}
