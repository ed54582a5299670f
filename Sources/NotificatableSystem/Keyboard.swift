import Foundation
import Notificatable

// Sources cited in this file (from /work/research/system-notifications.md §1):
// - H-UIWindow: xybp888/iOS-SDKs @368c9fb2
//   iPhoneOS10.3.sdk/System/Library/Frameworks/UIKit.framework/Headers/UIWindow.h, keyboard block at the end.
//   Proves each symbol and its boxed type ("// NSValue of CGRect"), not its value.
// - H-UIView: same repository and commit, .../UIKit.framework/Headers/UIView.h, first declaration:
//   `typedef NS_ENUM(NSInteger, UIViewAnimationCurve) { EaseInOut, EaseIn, EaseOut, Linear }` (implicit 0...3),
//   and `UIViewAnimationOptionCurveEaseIn = 1 << 16` ... `CurveLinear = 3 << 16`.
// - SO-7: https://stackoverflow.com/questions/19482573 , a printed NSConcreteNotification on iOS 7:
//   `name = UIKeyboardWillChangeFrameNotification; userInfo = { UIKeyboardAnimationCurveUserInfoKey = 7; ... }`.
// - CSDN-KB: https://blog.youkuaiyun.com/SpringJustin/article/details/51909337 and
//   http://bubuko.com/infodetail-1909507.html , a printed keyboard userInfo including
//   `UIKeyboardIsLocalUserInfoKey = 1`.
// - CHAM: BigZaphod/Chameleon @00a4f79d UIKit/Classes/UIWindow.m (UIKit reimplementation), e.g.
//   `NSString *const UIKeyboardWillShowNotification = @"UIKeyboardWillShowNotification";`.
// - RN-MAC: a React Native macOS "UIKitCompat" shim defining the keyboard constants as literals equal to their names
//   (find_string ids 68828293810, 69091173565; repository not resolvable from the ids).

// MARK: - Handles

extension SystemNotifications {
    /// `UIResponder.keyboardWillShowNotification`: the keyboard is about to appear. Posted with `object == nil`.
    ///
    /// ```swift
    /// SystemNotifications.keyboardWillShow.subscribe(queue: .main) { note in
    ///     scrollView.contentInset.bottom = note.userInfo.frameEnd.height
    /// }
    /// ```
    public static let keyboardWillShow = keyboard(
        "UIKeyboardWillShowNotification"  // value stated (reimpl.) x2: CHAM, RN-MAC; symbol: H-UIWindow
    )

    /// `UIResponder.keyboardDidShowNotification`: the keyboard has appeared.
    public static let keyboardDidShow = keyboard(
        "UIKeyboardDidShowNotification"  // value stated (reimpl.) x2: CHAM, RN-MAC; symbol: H-UIWindow
    )

    /// `UIResponder.keyboardWillHideNotification`: the keyboard is about to disappear.
    public static let keyboardWillHide = keyboard(
        "UIKeyboardWillHideNotification"  // value stated (reimpl.) x2: CHAM, RN-MAC; symbol: H-UIWindow
    )

    /// `UIResponder.keyboardDidHideNotification`: the keyboard has disappeared.
    public static let keyboardDidHide = keyboard(
        "UIKeyboardDidHideNotification"  // value stated (reimpl.) x2: CHAM, RN-MAC; symbol: H-UIWindow
    )

    /// `UIResponder.keyboardWillChangeFrameNotification` (iOS 5+): the keyboard's frame is about to change, for any
    /// reason (show, hide, rotation, a hardware keyboard, split or undocked keyboards).
    public static let keyboardWillChangeFrame = keyboard(
        "UIKeyboardWillChangeFrameNotification"  // runtime-observed: SO-7 prints `name = ` this string; also RN-MAC
    )

    /// `UIResponder.keyboardDidChangeFrameNotification` (iOS 5+): the keyboard's frame has changed.
    public static let keyboardDidChangeFrame = keyboard(
        "UIKeyboardDidChangeFrameNotification"  // value stated (reimpl.): RN-MAC; symbol: H-UIWindow
    )

    private static func keyboard(_ name: String) -> Notificatable<KeyboardNotificationInfo> {
        Notification.Name(name).notificatable(userInfoType: KeyboardNotificationInfo.self)
    }
}

// MARK: - Payload

/// The `userInfo` of the keyboard notifications, such as ``SystemNotifications/keyboardWillShow``.
///
/// Frames are in screen coordinates; convert them to your view with `convert(_:from: nil)`. The system boxes them
/// in `NSValue` and the animation values in `NSNumber`; this type reads them as `CGRect`, `TimeInterval` and
/// ``KeyboardAnimationCurve``.
///
/// ```swift
/// SystemNotifications.keyboardWillChangeFrame.subscribe(center: center) { note in
///     let keyboard = note.userInfo
///     print(keyboard.frameEnd, keyboard.animationDuration, keyboard.animationCurve)
/// }
/// ```
///
/// The header documents the animation keys for the "will" notifications only. When a notification has none,
/// ``animationDuration`` is `0` and ``animationCurve`` is ``KeyboardAnimationCurve/easeInOut``: there is no
/// animation to follow.
///
/// The type encodes to the same raw keys, so `UserInfoEncoder` (with `encodesGeometryAsNSValue`) turns a value
/// back into a dictionary shaped like the system's, for tests.
public struct KeyboardNotificationInfo: Codable, Equatable, Sendable {
    /// The keyboard's frame before the change, in screen coordinates.
    public var frameBegin: CGRect
    /// The keyboard's frame after the change, in screen coordinates.
    public var frameEnd: CGRect
    /// How long the keyboard's animation lasts, in seconds; `0` when the notification has no animation.
    public var animationDuration: TimeInterval
    /// The curve of the keyboard's animation. The keyboard usually posts 7, which is not a documented curve.
    public var animationCurve: KeyboardAnimationCurve
    /// Whether the keyboard belongs to this app (iOS 9+; `nil` when the key is absent). With multitasking, the
    /// keyboard notifications reach every app on screen.
    public var isLocal: Bool?
    /// The keyboard's center before the change (deprecated since iOS 3.2 but still posted; `nil` when absent).
    public var centerBegin: CGPoint?
    /// The keyboard's center after the change (deprecated since iOS 3.2 but still posted; `nil` when absent).
    public var centerEnd: CGPoint?

    /// Creates a keyboard payload, for example to post a fake one in a test.
    ///
    /// ```swift
    /// let info = KeyboardNotificationInfo(
    ///     frameBegin: CGRect(x: 0, y: 844, width: 390, height: 336),
    ///     frameEnd: CGRect(x: 0, y: 508, width: 390, height: 336),
    ///     animationDuration: 0.25, animationCurve: KeyboardAnimationCurve(rawValue: 7))
    /// ```
    public init(
        frameBegin: CGRect,
        frameEnd: CGRect,
        animationDuration: TimeInterval = 0,
        animationCurve: KeyboardAnimationCurve = .easeInOut,
        isLocal: Bool? = nil,
        centerBegin: CGPoint? = nil,
        centerEnd: CGPoint? = nil
    ) {
        self.frameBegin = frameBegin
        self.frameEnd = frameEnd
        self.animationDuration = animationDuration
        self.animationCurve = animationCurve
        self.isLocal = isLocal
        self.centerBegin = centerBegin
        self.centerEnd = centerEnd
    }

    /// The raw `userInfo` keys.
    enum CodingKeys: String, CodingKey {
        // runtime-observed: SO-7 `UIKeyboardFrameBeginUserInfoKey = "NSRect: {{0, 480}, {320, 216}}"`; CSDN-KB;
        // H-UIWindow `// NSValue of CGRect`
        case frameBegin = "UIKeyboardFrameBeginUserInfoKey"
        // runtime-observed: SO-7; CSDN-KB; RxSwiftCommunity/RxKeyboard PR #8 reads this literal; H-UIWindow
        case frameEnd = "UIKeyboardFrameEndUserInfoKey"
        // runtime-observed: SO-7 (`= "0.25"`); H-UIWindow `// NSNumber of double`
        case animationDuration = "UIKeyboardAnimationDurationUserInfoKey"
        // runtime-observed: SO-7 (`= 7;`); H-UIWindow `// NSNumber of NSUInteger (UIViewAnimationCurve)`
        case animationCurve = "UIKeyboardAnimationCurveUserInfoKey"
        // runtime-observed: CSDN-KB (`= 1;`); H-UIWindow `// NSNumber of BOOL`;
        // https://developer.apple.com/documentation/uikit/uikeyboardislocaluserinfokey
        case isLocal = "UIKeyboardIsLocalUserInfoKey"
        // runtime-observed: SO-7 `UIKeyboardCenterBeginUserInfoKey = "NSPoint: {160, 588}"`; CHAM
        case centerBegin = "UIKeyboardCenterBeginUserInfoKey"
        // runtime-observed: SO-7; CHAM
        case centerEnd = "UIKeyboardCenterEndUserInfoKey"
    }

    /// Reads the keyboard's `userInfo`. The frames are required; the animation keys default to no animation.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        frameBegin = try container.decode(CGRect.self, forKey: .frameBegin)
        frameEnd = try container.decode(CGRect.self, forKey: .frameEnd)
        animationDuration = try container.decodeIfPresent(TimeInterval.self, forKey: .animationDuration) ?? 0
        animationCurve =
            try container.decodeIfPresent(KeyboardAnimationCurve.self, forKey: .animationCurve)
            ?? .easeInOut
        isLocal = try container.decodeIfPresent(Bool.self, forKey: .isLocal)
        centerBegin = try container.decodeIfPresent(CGPoint.self, forKey: .centerBegin)
        centerEnd = try container.decodeIfPresent(CGPoint.self, forKey: .centerEnd)
    }

    /// Writes the raw keys, leaving out the absent optional ones.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(frameBegin, forKey: .frameBegin)
        try container.encode(frameEnd, forKey: .frameEnd)
        try container.encode(animationDuration, forKey: .animationDuration)
        try container.encode(animationCurve, forKey: .animationCurve)
        try container.encodeIfPresent(isLocal, forKey: .isLocal)
        try container.encodeIfPresent(centerBegin, forKey: .centerBegin)
        try container.encodeIfPresent(centerEnd, forKey: .centerEnd)
    }
}

// MARK: - Animation curve

/// `UIView.AnimationCurve` as the keyboard reports it, keeping values that are not documented curves.
///
/// The keyboard posts the curve **7**, which is none of the four documented cases. A Swift enum would reject it or
/// trap; this type keeps any raw value, so a notification is never lost over its curve.
///
/// ```swift
/// let curve = note.userInfo.animationCurve
/// if curve == .linear { … }
/// // UIKit: UIView.animate(withDuration: d, delay: 0,
/// //                       options: UIView.AnimationOptions(rawValue: curve.animationOptionsRawValue), …)
/// ```
public struct KeyboardAnimationCurve: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The `UIViewAnimationCurve` raw value, such as `0` for ease-in-out or `7` for the keyboard's own curve.
    public var rawValue: Int

    /// Wraps any raw value, including ones that are not documented curves.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    // Values: header H-UIView, `NS_ENUM(NSInteger, UIViewAnimationCurve)` with implicit values 0...3.

    /// `UIViewAnimationCurveEaseInOut` (0): slow at the start and the end.
    public static let easeInOut = KeyboardAnimationCurve(rawValue: 0)
    /// `UIViewAnimationCurveEaseIn` (1): slow at the start.
    public static let easeIn = KeyboardAnimationCurve(rawValue: 1)
    /// `UIViewAnimationCurveEaseOut` (2): slow at the end.
    public static let easeOut = KeyboardAnimationCurve(rawValue: 2)
    /// `UIViewAnimationCurveLinear` (3): constant speed.
    public static let linear = KeyboardAnimationCurve(rawValue: 3)

    /// Whether the value is one of the four documented curves. The keyboard's usual 7 is not.
    public var isDocumented: Bool { (0...3).contains(rawValue) }

    /// The raw value of the matching `UIView.AnimationOptions`: the curve shifted left by 16 bits, as the
    /// `UIViewAnimationOptionCurve…` constants are defined (H-UIView). It carries 7 through as well, which makes a
    /// `UIView` animation follow the keyboard exactly.
    public var animationOptionsRawValue: UInt {
        UInt(truncatingIfNeeded: rawValue) << 16
    }

    /// The curve's name, such as `easeInOut`, or `KeyboardAnimationCurve(rawValue: 7)` for other values.
    public var description: String {
        switch rawValue {
        case 0: "easeInOut"
        case 1: "easeIn"
        case 2: "easeOut"
        case 3: "linear"
        default: "KeyboardAnimationCurve(rawValue: \(rawValue))"
        }
    }

    /// Reads the raw number; any integer is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
