import Foundation
import Notificatable

// Sources cited in this file (from /work/research/system-notifications.md §5):
// - H-UICSC: xybp888/iOS-SDKs iPhoneOS10.3.sdk/System/Library/Frameworks/UIKit.framework/Headers/
//   UIContentSizeCategory.h: the symbols, not their values.
// - IOS26-DEC: EthanArbuckle/iPhone18-3_26.1_23B85_Restore, decompiled iOS 26.1 UIKit (find_string id 10685612935):
//   `v14[0] = @"UIContentSizeCategoryNewValueKey"; ... postNotificationName:
//   UIContentSizeCategoryDidChangeNotification`.
// - APPS: shipping apps read `userInfo["UIContentSizeCategoryNewValueKey"]` (find_string ids 31328838465,
//   19193643284).
// - RN-MAC: a React Native macOS "UIKitCompat" shim defining the constants as literals equal to their names; and a
//   UIKit reimplementation at find_string id 70071842172.
// - DOC-CSC: theAppLaunchers/apple-docs-for-rag UIKit/md/uikit-uicontentsizecategory-newvalueuserinfokey.md
//   ("an NSString object that reflects the new value of preferredContentSizeCategory").

// MARK: - Handles

extension SystemNotifications {
    /// `UIContentSizeCategory.didChangeNotification` (iOS 7+): the user changed the preferred text size.
    ///
    /// ```swift
    /// SystemNotifications.contentSizeCategoryDidChange.subscribe(queue: .main) { note in
    ///     apply(UIContentSizeCategory(rawValue: note.userInfo.newValue))
    /// }
    /// ```
    public static let contentSizeCategoryDidChange = Notification.Name(
        "UIContentSizeCategoryDidChangeNotification"  // value stated (reimpl.) x2: RN-MAC, id 70071842172; H-UICSC
    ).notificatable(userInfoType: ContentSizeCategoryChangeInfo.self)
}

// MARK: - Payload

/// The `userInfo` of ``SystemNotifications/contentSizeCategoryDidChange``.
public struct ContentSizeCategoryChangeInfo: Codable, Equatable, Sendable {
    /// The new category's raw value, for `UIContentSizeCategory(rawValue:)`.
    ///
    /// The raw values are not the symbols' names: `UIContentSizeCategoryAccessibilityExtraExtraExtraLarge` is
    /// `"UICTContentSizeCategoryAccessibilityXXXL"`, for example. Compare with `UIContentSizeCategory` constants,
    /// never with hand-written strings.
    public var newValue: String

    /// Creates a change payload, for example to post a fake one in a test.
    public init(newValue: String) {
        self.newValue = newValue
    }

    /// The raw `userInfo` key.
    enum CodingKeys: String, CodingKey {
        // runtime-observed: IOS26-DEC (UIKit builds the dictionary from this literal); APPS; DOC-CSC
        case newValue = "UIContentSizeCategoryNewValueKey"
    }
}
