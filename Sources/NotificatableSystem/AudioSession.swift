import Foundation
import Notificatable

// Sources cited in this file (from /work/research/system-notifications.md §2):
// - H-AVS: xybp888/iOS-SDKs @3e4e03a5
//   iPhoneOS17.0.sdk/System/Library/Frameworks/AVFAudio.framework/Headers/AVAudioSession.h,
//   `#pragma mark-- Names for NSNotifications --` and `#pragma mark-- Keys for NSNotification userInfo dictionaries --`.
//   Proves each symbol and its documented boxed type, not its value.
// - H-AVST: xybp888/iOS-SDKs @17a406ea
//   iPhoneOS17.0.sdk/System/Library/Frameworks/AVFAudio.framework/Headers/AVAudioSessionTypes.h: the enums, with
//   explicit values (`AVAudioSessionInterruptionTypeBegan = 1`, `...Ended = 0`, ...).
// - LOG-KR: a Korean blog's log stored as a repository file (find_string id 9046181906; repository not
//   resolvable): `name = AVAudioSessionInterruptionNotification, ... userInfo =
//   Optional([AnyHashable("AVAudioSessionInterruptionTypeKey"): 1])`.
// - LOG-2: a Swift file's comment (find_string id 35739101989): `Optional([AnyHashable("AVAudioSessionInterruptionOptionKey"): 0,
//   AnyHashable("AVAudioSessionInterruptionTypeKey"): 0])`.
// - SK-28: tumtumtum/StreamingKit issue #28 (https://github.com/tumtumtum/StreamingKit/issues/28) reads
//   `[dict objectForKey:@"AVAudioSessionInterruptionTypeKey"]`.
// - TX: Tencent TXLiteAV-style demo code reading `@"AVAudioSessionInterruptionWasSuspendedKey"` in three copies
//   (find_string ids 33403858533, 10291061839, 26352047531).
// Xamarin and RoboVM bindings name these symbols too, but they look symbols up by name, so they are no evidence of
// the values and are not cited.

// MARK: - Handles

extension SystemNotifications {
    /// `AVAudioSession.interruptionNotification`: another audio session interrupted this app's audio, or the
    /// interruption ended. The object is the `AVAudioSession`.
    ///
    /// ```swift
    /// SystemNotifications.audioSessionInterruption.subscribe { note in
    ///     let interruption = note.userInfo
    ///     if interruption.type == .ended, interruption.options.contains(.shouldResume) { player.play() }
    /// }
    /// ```
    public static let audioSessionInterruption = Notification.Name(
        "AVAudioSessionInterruptionNotification"  // runtime-observed: LOG-KR prints `name = ` this; symbol: H-AVS
    ).notificatable(userInfoType: AudioSessionInterruptionInfo.self)

    /// `AVAudioSession.routeChangeNotification`: the audio route changed, for example headphones were plugged in
    /// or unplugged. The object is the `AVAudioSession`.
    public static let audioSessionRouteChange = Notification.Name(
        "AVAudioSessionRouteChangeNotification"  // convention only (unconfirmed): symbol in H-AVS
    ).notificatable(userInfoType: AudioSessionRouteChangeInfo.self)

    /// `AVAudioSession.silenceSecondaryAudioHintNotification` (iOS 8+): another app's primary audio started or
    /// stopped, so secondary audio such as a game's soundtrack should be silenced or may resume.
    public static let audioSessionSilenceSecondaryAudioHint = Notification.Name(
        "AVAudioSessionSilenceSecondaryAudioHintNotification"  // convention only (unconfirmed): symbol in H-AVS
    ).notificatable(userInfoType: AudioSessionSilenceSecondaryAudioHintInfo.self)
}

// MARK: - Interruption

/// The `userInfo` of ``SystemNotifications/audioSessionInterruption``.
///
/// ```swift
/// switch note.userInfo.type {
/// case .began: pause()
/// case .ended where note.userInfo.options.contains(.shouldResume): resume()
/// default: break
/// }
/// ```
public struct AudioSessionInterruptionInfo: Codable, Equatable, Sendable {
    /// Whether the interruption began or ended.
    public var type: AudioSessionInterruptionType
    /// What to do after an interruption ended; empty when the key is absent, as it is for began events.
    public var options: AudioSessionInterruptionOptions
    /// Why the interruption began (iOS 14.5+, began events only); `nil` when the key is absent.
    public var reason: AudioSessionInterruptionReason?
    /// Whether the interruption began because the app was suspended (iOS 10.3 to 14.4, deprecated; later systems
    /// send ``reason`` instead); `nil` when the key is absent.
    public var wasSuspended: Bool?

    /// Creates an interruption payload, for example to post a fake one in a test.
    public init(
        type: AudioSessionInterruptionType,
        options: AudioSessionInterruptionOptions = [],
        reason: AudioSessionInterruptionReason? = nil,
        wasSuspended: Bool? = nil
    ) {
        self.type = type
        self.options = options
        self.reason = reason
        self.wasSuspended = wasSuspended
    }

    /// The raw `userInfo` keys.
    enum CodingKeys: String, CodingKey {
        // runtime-observed: LOG-KR, LOG-2; SK-28 reads the literal; H-AVS "Value is an NSNumber representing an
        // AVAudioSessionInterruptionType"
        case type = "AVAudioSessionInterruptionTypeKey"
        // runtime-observed: LOG-2 (and LOG-KR for the ended event); H-AVS "Only present for end interruption events."
        case options = "AVAudioSessionInterruptionOptionKey"
        // convention only (unconfirmed): H-AVS (iOS 14.5+) "Only present in begin interruption events."
        case reason = "AVAudioSessionInterruptionReasonKey"
        // runtime-tested: TX (shipping code reads the literal); H-AVS;
        // https://developer.apple.com/documentation/avfoundation/avaudiosession/1616596-interruptionnotification
        case wasSuspended = "AVAudioSessionInterruptionWasSuspendedKey"
    }

    /// Reads the interruption's `userInfo`. Only the type is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(AudioSessionInterruptionType.self, forKey: .type)
        options = try container.decodeIfPresent(AudioSessionInterruptionOptions.self, forKey: .options) ?? []
        reason = try container.decodeIfPresent(AudioSessionInterruptionReason.self, forKey: .reason)
        wasSuspended = try container.decodeIfPresent(Bool.self, forKey: .wasSuspended)
    }

    /// Writes the raw keys; empty options and absent values are left out, as the system leaves them out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        if !options.isEmpty { try container.encode(options, forKey: .options) }
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(wasSuspended, forKey: .wasSuspended)
    }
}

/// `AVAudioSession.InterruptionType`, keeping values it does not know.
public struct AudioSessionInterruptionType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The `AVAudioSessionInterruptionType` raw value.
    public var rawValue: UInt

    /// Wraps any raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `AVAudioSessionInterruptionTypeBegan = 1` (H-AVST): the system interrupted the audio session.
    public static let began = AudioSessionInterruptionType(rawValue: 1)
    /// `AVAudioSessionInterruptionTypeEnded = 0` (H-AVST): the interruption ended.
    public static let ended = AudioSessionInterruptionType(rawValue: 0)

    /// `began`, `ended`, or `AudioSessionInterruptionType(rawValue: n)`.
    public var description: String {
        switch rawValue {
        case 1: "began"
        case 0: "ended"
        default: "AudioSessionInterruptionType(rawValue: \(rawValue))"
        }
    }

    /// Reads the raw number; any unsigned integer is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// `AVAudioSession.InterruptionOptions`.
public struct AudioSessionInterruptionOptions: OptionSet, Codable, Hashable, Sendable {
    /// The `AVAudioSessionInterruptionOptions` raw value.
    public var rawValue: UInt

    /// Wraps any raw value; unknown bits are kept.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `AVAudioSessionInterruptionOptionShouldResume = 1` (H-AVST): the app may resume playback.
    public static let shouldResume = AudioSessionInterruptionOptions(rawValue: 1)

    /// Reads the raw number.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// `AVAudioSession.InterruptionReason`, keeping values it does not know.
public struct AudioSessionInterruptionReason: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The `AVAudioSessionInterruptionReason` raw value.
    public var rawValue: UInt

    /// Wraps any raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    // Values: H-AVST, explicit.

    /// `AVAudioSessionInterruptionReasonDefault = 0`: another session, such as a phone call, took the audio.
    public static let `default` = AudioSessionInterruptionReason(rawValue: 0)
    /// `AVAudioSessionInterruptionReasonAppWasSuspended = 1` (deprecated; not sent from iOS 16 on).
    public static let appWasSuspended = AudioSessionInterruptionReason(rawValue: 1)
    /// `AVAudioSessionInterruptionReasonBuiltInMicMuted = 2`: the built-in microphone was muted.
    public static let builtInMicMuted = AudioSessionInterruptionReason(rawValue: 2)
    /// `AVAudioSessionInterruptionReasonSceneWasBackgrounded = 3` (visionOS only).
    public static let sceneWasBackgrounded = AudioSessionInterruptionReason(rawValue: 3)
    /// `AVAudioSessionInterruptionReasonRouteDisconnected = 4` (iOS 17+): the route was disconnected.
    public static let routeDisconnected = AudioSessionInterruptionReason(rawValue: 4)

    /// The reason's name, or `AudioSessionInterruptionReason(rawValue: n)`.
    public var description: String {
        switch rawValue {
        case 0: "default"
        case 1: "appWasSuspended"
        case 2: "builtInMicMuted"
        case 3: "sceneWasBackgrounded"
        case 4: "routeDisconnected"
        default: "AudioSessionInterruptionReason(rawValue: \(rawValue))"
        }
    }

    /// Reads the raw number; any unsigned integer is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

// MARK: - Route change

/// The `userInfo` of ``SystemNotifications/audioSessionRouteChange``.
///
/// ```swift
/// SystemNotifications.audioSessionRouteChange.subscribe { note in
///     if note.userInfo.reason == .oldDeviceUnavailable { player.pause() }   // headphones unplugged
/// }
/// ```
///
/// The type is `@unchecked Sendable` because of ``previousRoute``: the system stores an immutable
/// `AVAudioSessionRouteDescription` there and hands the same object to every observer.
public struct AudioSessionRouteChangeInfo: Codable, Equatable, @unchecked Sendable {
    /// Why the route changed.
    public var reason: AudioSessionRouteChangeReason
    /// The route before the change: an `AVAudioSessionRouteDescription` on Apple platforms, passed through as
    /// it is; `nil` when the key is absent. Cast it with `as? AVAudioSessionRouteDescription`.
    ///
    /// Only `UserInfoDecoder` and `UserInfoEncoder` can read and write it; other coders throw when it is set.
    public var previousRoute: NSObject?

    /// Creates a route-change payload, for example to post a fake one in a test.
    public init(reason: AudioSessionRouteChangeReason, previousRoute: NSObject? = nil) {
        self.reason = reason
        self.previousRoute = previousRoute
    }

    /// The raw `userInfo` keys.
    enum CodingKeys: String, CodingKey {
        // convention only (unconfirmed): H-AVS "value is an NSNumber representing an AVAudioSessionRouteChangeReason"
        case reason = "AVAudioSessionRouteChangeReasonKey"
        // convention only (unconfirmed): H-AVS "value is AVAudioSessionRouteDescription *"
        case previousRoute = "AVAudioSessionRouteChangePreviousRouteKey"
    }

    /// Reads the route change's `userInfo`. Only the reason is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decode(AudioSessionRouteChangeReason.self, forKey: .reason)
        previousRoute = try container.decodeIfPresent(UserInfoPassthrough<NSObject>.self, forKey: .previousRoute)?
            .wrappedValue
    }

    /// Writes the raw keys; the previous route is written as it is, and only by `UserInfoEncoder`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason, forKey: .reason)
        if let previousRoute {
            try container.encode(UserInfoPassthrough(wrappedValue: previousRoute), forKey: .previousRoute)
        }
    }

    /// Equal when the reasons are equal and the previous routes are both absent or `isEqual(_:)`.
    public static func == (lhs: AudioSessionRouteChangeInfo, rhs: AudioSessionRouteChangeInfo) -> Bool {
        lhs.reason == rhs.reason && lhs.previousRoute == rhs.previousRoute
    }
}

/// `AVAudioSession.RouteChangeReason`, keeping values it does not know.
public struct AudioSessionRouteChangeReason: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The `AVAudioSessionRouteChangeReason` raw value.
    public var rawValue: UInt

    /// Wraps any raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    // Values: H-AVST, explicit. The header has no 5.

    /// `…ReasonUnknown = 0`.
    public static let unknown = AudioSessionRouteChangeReason(rawValue: 0)
    /// `…ReasonNewDeviceAvailable = 1`: for example, headphones were plugged in.
    public static let newDeviceAvailable = AudioSessionRouteChangeReason(rawValue: 1)
    /// `…ReasonOldDeviceUnavailable = 2`: for example, headphones were unplugged.
    public static let oldDeviceUnavailable = AudioSessionRouteChangeReason(rawValue: 2)
    /// `…ReasonCategoryChange = 3`: the session's category changed.
    public static let categoryChange = AudioSessionRouteChangeReason(rawValue: 3)
    /// `…ReasonOverride = 4`: the route was overridden.
    public static let override = AudioSessionRouteChangeReason(rawValue: 4)
    /// `…ReasonWakeFromSleep = 6`: the device woke from sleep.
    public static let wakeFromSleep = AudioSessionRouteChangeReason(rawValue: 6)
    /// `…ReasonNoSuitableRouteForCategory = 7`: no route suits the current category.
    public static let noSuitableRouteForCategory = AudioSessionRouteChangeReason(rawValue: 7)
    /// `…ReasonRouteConfigurationChange = 8`: the set of inputs and outputs did not change, but their
    /// configuration did.
    public static let routeConfigurationChange = AudioSessionRouteChangeReason(rawValue: 8)

    /// The reason's name, or `AudioSessionRouteChangeReason(rawValue: n)`.
    public var description: String {
        switch rawValue {
        case 0: "unknown"
        case 1: "newDeviceAvailable"
        case 2: "oldDeviceUnavailable"
        case 3: "categoryChange"
        case 4: "override"
        case 6: "wakeFromSleep"
        case 7: "noSuitableRouteForCategory"
        case 8: "routeConfigurationChange"
        default: "AudioSessionRouteChangeReason(rawValue: \(rawValue))"
        }
    }

    /// Reads the raw number; any unsigned integer is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

// MARK: - Silence secondary audio hint

/// The `userInfo` of ``SystemNotifications/audioSessionSilenceSecondaryAudioHint``.
public struct AudioSessionSilenceSecondaryAudioHintInfo: Codable, Equatable, Sendable {
    /// Whether secondary audio should be silenced (``AudioSessionSilenceSecondaryAudioHintType/begin``) or may
    /// resume (``AudioSessionSilenceSecondaryAudioHintType/end``).
    public var type: AudioSessionSilenceSecondaryAudioHintType

    /// Creates a hint payload, for example to post a fake one in a test.
    public init(type: AudioSessionSilenceSecondaryAudioHintType) {
        self.type = type
    }

    /// The raw `userInfo` key.
    enum CodingKeys: String, CodingKey {
        // convention only (unconfirmed): H-AVS "value is an NSNumber representing an
        // AVAudioSessionSilenceSecondaryAudioHintType"
        case type = "AVAudioSessionSilenceSecondaryAudioHintTypeKey"
    }
}

/// `AVAudioSession.SilenceSecondaryAudioHintType`, keeping values it does not know.
public struct AudioSessionSilenceSecondaryAudioHintType: RawRepresentable, Codable, Hashable, Sendable,
    CustomStringConvertible
{
    /// The `AVAudioSessionSilenceSecondaryAudioHintType` raw value.
    public var rawValue: UInt

    /// Wraps any raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `AVAudioSessionSilenceSecondaryAudioHintTypeBegin = 1` (H-AVST): another app's primary audio started.
    public static let begin = AudioSessionSilenceSecondaryAudioHintType(rawValue: 1)
    /// `AVAudioSessionSilenceSecondaryAudioHintTypeEnd = 0` (H-AVST): another app's primary audio stopped.
    public static let end = AudioSessionSilenceSecondaryAudioHintType(rawValue: 0)

    /// `begin`, `end`, or `AudioSessionSilenceSecondaryAudioHintType(rawValue: n)`.
    public var description: String {
        switch rawValue {
        case 1: "begin"
        case 0: "end"
        default: "AudioSessionSilenceSecondaryAudioHintType(rawValue: \(rawValue))"
        }
    }

    /// Reads the raw number; any unsigned integer is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt.self)
    }

    /// Writes the raw number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
