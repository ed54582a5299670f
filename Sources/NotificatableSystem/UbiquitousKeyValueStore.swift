import Foundation
import Notificatable

// Sources cited in this file (from /work/research/system-notifications.md §4):
// - H-UKVS: MemorySpeaker/iOSSystemFrameworks @24982311
//   Frameworks/Foundation.framework/Headers/NSUbiquitousKeyValueStore.h (a 2015 SDK copy with added comments):
//   the symbols, and `NS_ENUM(NSInteger)` change reasons with implicit values ServerChange, InitialSyncChange,
//   QuotaViolationChange, AccountChange (0...3).
// - AIP: AIProxySwift `Storage` / `AnonymousAccountStorage` read
//   `notification.userInfo?["NSUbiquitousKeyValueStoreChangeReasonKey"] as? NSNumber` (find_string id 316100240).
// - BLINK: AG Projects Blink (PyObjC) reads `notification.userInfo()["NSUbiquitousKeyValueStoreChangeReasonKey"]`
//   and checks `reason == 2` for the quota (find_string id 37886888967).
// - TOUCHHLE: touchHLE defines `HostConstant::NSString("NSUbiquitousKeyValueStoreDidChangeExternall...")`
//   (find_string id 57361198353).
// - CKD: Apple's Security sources, CKDKeyValueStore.m (macOS 10.10.1),
//   https://xref.landonf.org/source/raw/macosx-10.10.1/Security-57031.1.35/Security/sec/SOSCircle/Regressions/CKDKeyValueStore.m ,
//   index `@[@"Server", @"InitialSync", @"QuotaViolation", @"Account"]` by the reason: this confirms 0...3.
// - DOC-UKVS: https://apple-docs.everest.mt/docs/foundation/nsubiquitouskeyvaluestore/didchangeexternallynotification/
// Apple's Unity plugin uses a different, 1-based enum; it is not the Foundation value and is not used here.

// MARK: - Handles

extension SystemNotifications {
    /// `NSUbiquitousKeyValueStore.didChangeExternallyNotification`: values in the iCloud key-value store changed
    /// on another device, or the store was set up or lost its account. The object is the store.
    ///
    /// ```swift
    /// SystemNotifications.ubiquitousKeyValueStoreDidChangeExternally.subscribe { note in
    ///     for key in note.userInfo.changedKeys { reload(key) }
    /// }
    /// ```
    public static let ubiquitousKeyValueStoreDidChangeExternally = Notification.Name(
        // value stated (reimpl.): TOUCHHLE; symbol: H-UKVS `FOUNDATION_EXPORT NSString * const
        // NSUbiquitousKeyValueStoreDidChangeExternallyNotification`
        "NSUbiquitousKeyValueStoreDidChangeExternallyNotification"
    ).notificatable(userInfoType: UbiquitousKeyValueStoreChangeInfo.self)
}

// MARK: - Payload

/// The `userInfo` of ``SystemNotifications/ubiquitousKeyValueStoreDidChangeExternally``.
public struct UbiquitousKeyValueStoreChangeInfo: Codable, Equatable, Sendable {
    /// Why the store changed; `nil` when the key is absent.
    public var reason: UbiquitousKeyValueStoreChangeReason?
    /// The keys whose values changed; empty when the key is absent.
    public var changedKeys: [String]

    /// Creates a change payload, for example to post a fake one in a test.
    public init(reason: UbiquitousKeyValueStoreChangeReason?, changedKeys: [String] = []) {
        self.reason = reason
        self.changedKeys = changedKeys
    }

    /// The raw `userInfo` keys.
    enum CodingKeys: String, CodingKey {
        // runtime-tested: AIP and BLINK read the literal in shipping code; TOUCHHLE; H-UKVS; DOC-UKVS
        // ("The value of this key is an NSNumber")
        case reason = "NSUbiquitousKeyValueStoreChangeReasonKey"
        // runtime-tested: AIP and BLINK; H-UKVS; DOC-UKVS ("its value is an array of strings")
        case changedKeys = "NSUbiquitousKeyValueStoreChangedKeysKey"
    }

    /// Reads the change's `userInfo`; both keys may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decodeIfPresent(UbiquitousKeyValueStoreChangeReason.self, forKey: .reason)
        changedKeys = try container.decodeIfPresent([String].self, forKey: .changedKeys) ?? []
    }

    /// Writes the raw keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(changedKeys, forKey: .changedKeys)
    }
}

/// The change reasons of `NSUbiquitousKeyValueStore` (`NSUbiquitousKeyValueStoreServerChange` and so on), keeping
/// values it does not know.
public struct UbiquitousKeyValueStoreChangeReason: RawRepresentable, Codable, Hashable, Sendable,
    CustomStringConvertible
{
    /// The raw value, an `NSInteger`.
    public var rawValue: Int

    /// Wraps any raw value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    // Values: H-UKVS (implicit 0...3), confirmed by CKD; 2 also by BLINK.

    /// `NSUbiquitousKeyValueStoreServerChange` (0): another device changed values.
    public static let serverChange = UbiquitousKeyValueStoreChangeReason(rawValue: 0)
    /// `NSUbiquitousKeyValueStoreInitialSyncChange` (1): the first download from iCloud.
    public static let initialSyncChange = UbiquitousKeyValueStoreChangeReason(rawValue: 1)
    /// `NSUbiquitousKeyValueStoreQuotaViolationChange` (2): the app's store exceeded its quota.
    public static let quotaViolationChange = UbiquitousKeyValueStoreChangeReason(rawValue: 2)
    /// `NSUbiquitousKeyValueStoreAccountChange` (3): the iCloud account changed.
    public static let accountChange = UbiquitousKeyValueStoreChangeReason(rawValue: 3)

    /// The reason's name, or `UbiquitousKeyValueStoreChangeReason(rawValue: n)`.
    public var description: String {
        switch rawValue {
        case 0: "serverChange"
        case 1: "initialSyncChange"
        case 2: "quotaViolationChange"
        case 3: "accountChange"
        default: "UbiquitousKeyValueStoreChangeReason(rawValue: \(rawValue))"
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
