import Foundation
import NotificatableSystem
import NotificatableTesting

// The Swift types that the fixtures in Fixtures/ decode into. A fixture names one in its `type` field; the registry
// at the bottom maps those names to these types. They live in the `FixtureTypes` namespace so that they never collide
// with types in other test files; a registry name is the unqualified type name. Every type is Equatable, so a decoded
// value can be compared with the expected one, and the ones with value expectations are read by PropertyListDecoder.

/// The types fixtures decode into.
enum FixtureTypes {
    // MARK: - System notification shapes

    /// `UIViewAnimationCurve` as the keyboard reports it. A struct, not an enum, because the keyboard posts the
    /// undocumented value 7, and a payload type must not fail on it.
    struct KeyboardAnimationCurve: RawRepresentable, Codable, Equatable {
        var rawValue: Int
    }

    /// The keyboard notifications' userInfo, read with `.affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")`.
    struct KeyboardInfo: Codable, Equatable {
        var frameBegin: CGRect
        var frameEnd: CGRect
        var animationDuration: Double
        var animationCurve: KeyboardAnimationCurve
        var isLocal: Bool?
        var centerBegin: CGPoint?
        var centerEnd: CGPoint?
    }

    /// `UIViewAnimationCurve` as a strict enum, to show that an unknown raw value is reported, not trapped on.
    enum StrictAnimationCurve: Int, Codable, Equatable {
        case easeInOut, easeIn, easeOut, linear
    }

    /// A keyboard payload that only accepts the four documented curves.
    struct StrictKeyboardCurve: Codable, Equatable {
        var animationCurve: StrictAnimationCurve
    }

    /// `AVAudioSession.interruptionNotification`, read with `.affixed(prefix: "AVAudioSessionInterruption", suffix: "Key")`.
    struct AudioInterruption: Codable, Equatable {
        /// `AVAudioSession.InterruptionType`.
        enum Kind: UInt, Codable, Equatable {
            case ended = 0
            case began = 1
        }

        /// `AVAudioSession.InterruptionReason`.
        enum Reason: UInt, Codable, Equatable {
            case `default` = 0
            case appWasSuspended = 1
            case builtInMicMuted = 2
            case routeDisconnected = 4
        }

        /// `AVAudioSession.InterruptionOptions`.
        struct Options: OptionSet, Codable, Equatable {
            var rawValue: UInt
            static let shouldResume = Options(rawValue: 1)
        }

        var type: Kind
        var option: Options?
        var wasSuspended: Bool?
        var reason: Reason?
    }

    /// `AVAudioSession.routeChangeNotification`, read with `.affixed(prefix: "AVAudioSessionRouteChange", suffix: "Key")`.
    struct AudioRouteChange: Codable, Equatable {
        /// `AVAudioSession.RouteChangeReason`.
        enum Reason: UInt, Codable, Equatable {
            case unknown = 0
            case newDeviceAvailable = 1
            case oldDeviceUnavailable = 2
            case categoryChange = 3
            case override = 4
            case wakeFromSleep = 6
            case noSuitableRouteForCategory = 7
            case routeConfigurationChange = 8
        }

        var reason: Reason
    }

    /// `AVAudioSession.silenceSecondaryAudioHintNotification`.
    struct AudioSilenceSecondaryHint: Codable, Equatable {
        /// `AVAudioSession.SilenceSecondaryAudioHintType`.
        enum Kind: UInt, Codable, Equatable {
            case end = 0
            case begin = 1
        }

        var type: Kind
    }

    /// `UIAccessibility.announcementDidFinishNotification`, with explicit keys.
    struct AccessibilityAnnouncement: Codable, Equatable {
        var announcement: String
        var wasSuccessful: Bool

        enum CodingKeys: String, CodingKey {
            case announcement = "UIAccessibilityAnnouncementKeyStringValue"
            case wasSuccessful = "UIAccessibilityAnnouncementKeyWasSuccessful"
        }
    }

    /// `NSUbiquitousKeyValueStore.didChangeExternallyNotification`, read with
    /// `.affixed(prefix: "NSUbiquitousKeyValueStore", suffix: "Key")`.
    struct UbiquitousStoreChange: Codable, Equatable {
        enum Reason: Int, Codable, Equatable {
            case serverChange = 0
            case initialSyncChange = 1
            case quotaViolationChange = 2
            case accountChange = 3
        }

        var changeReason: Reason
        var changedKeys: [String]?
    }

    /// `UIContentSizeCategory.didChangeNotification`, read with `.affixed(prefix: "UIContentSizeCategory", suffix: "Key")`.
    struct ContentSizeCategoryChange: Codable, Equatable {
        var newValue: String
    }

    /// `NSWorkspace.didMountNotification` and `didRenameVolumeNotification`, with explicit keys.
    struct WorkspaceVolume: Codable, Equatable {
        var localizedName: String
        var url: URL
        var oldLocalizedName: String?
        var oldURL: URL?

        enum CodingKeys: String, CodingKey {
            case localizedName = "NSWorkspaceVolumeLocalizedNameKey"
            case url = "NSWorkspaceVolumeURLKey"
            case oldLocalizedName = "NSWorkspaceVolumeOldLocalizedNameKey"
            case oldURL = "NSWorkspaceVolumeOldURLKey"
        }
    }

    /// `FileHandle.readCompletionNotification`, with explicit keys.
    struct FileHandleRead: Codable, Equatable {
        var data: Data?
        var error: Int?

        enum CodingKeys: String, CodingKey {
            case data = "NSFileHandleNotificationDataItem"
            case error = "NSFileHandleError"
        }
    }

    /// `UIApplication.willChangeStatusBarFrameNotification`, read with
    /// `.affixed(prefix: "UIApplicationStatusBar", suffix: "UserInfoKey")`.
    struct StatusBarFrameChange: Codable, Equatable {
        var frame: CGRect
    }

    /// `UIApplication.willChangeStatusBarOrientationNotification`, read with
    /// `.affixed(prefix: "UIApplicationStatusBar", suffix: "UserInfoKey")`.
    struct StatusBarOrientationChange: Codable, Equatable {
        /// `UIInterfaceOrientation`.
        enum Orientation: Int, Codable, Equatable {
            case unknown = 0, portrait = 1, portraitUpsideDown = 2, landscapeLeft = 4, landscapeRight = 3
        }

        var orientation: Orientation
    }

    // MARK: - Numbers

    /// One value of each integer width, so a fixture can aim at any of them.
    struct IntegerWidths: Codable, Equatable {
        var int: Int?
        var int8: Int8?
        var int16: Int16?
        var int32: Int32?
        var int64: Int64?
        var uint: UInt?
        var uint8: UInt8?
        var uint16: UInt16?
        var uint32: UInt32?
        var uint64: UInt64?
    }

    /// Floating-point targets.
    struct FloatingPointValues: Codable, Equatable {
        var double: Double?
        var float: Float?
        var cgFloat: CGFloat?
    }

    /// Boolean targets.
    struct Flags: Codable, Equatable {
        var flags: [Bool]
    }

    /// A single required `Int`.
    struct IntValue: Codable, Equatable {
        var value: Int
    }

    /// A single required `Bool`.
    struct BoolValue: Codable, Equatable {
        var value: Bool
    }

    /// A single required `String`.
    struct StringValue: Codable, Equatable {
        var value: String
    }

    /// A single required `Float`.
    struct FloatValue: Codable, Equatable {
        var value: Float
    }

    // MARK: - Keys, optionals and nesting

    /// Snake-case keys.
    struct UserProfile: Codable, Equatable {
        var userID: Int
        var displayName: String
        var isAdmin: Bool
        var lastSeenAt: Date?

        enum CodingKeys: String, CodingKey {
            case userID = "userId"
            case displayName, isAdmin, lastSeenAt
        }
    }

    /// A dictionary with integer keys inside a struct.
    struct IntegerKeyedNames: Codable, Equatable {
        var names: [Int: String]
    }

    /// Optionals that are missing, `NSNull`, or present.
    struct OptionalFields: Codable, Equatable {
        var missing: Int?
        var null: String?
        var present: Double?
        var nullArray: [Int]?
        var nestedNull: Inner?

        struct Inner: Codable, Equatable {
            var value: Int?
        }
    }

    /// Nested arrays of dictionaries.
    struct Order: Codable, Equatable {
        struct Item: Codable, Equatable {
            var sku: String
            var count: Int
            var tags: [String]
        }

        struct Section: Codable, Equatable {
            var title: String
            var items: [Item]
        }

        var id: UUID
        var sections: [Section]
    }

    /// A three-level nested dictionary.
    struct Outer: Codable, Equatable {
        struct Middle: Codable, Equatable {
            struct Inner: Codable, Equatable {
                var value: Int
            }

            var inner: Inner
        }

        var middle: Middle
    }

    /// An array of required integers.
    struct IntegerList: Codable, Equatable {
        var values: [Int]
    }

    /// A class hierarchy that decodes its superclass part with `superDecoder()` (the key `super`) and a payload with
    /// `superDecoder(forKey:)`.
    struct Envelope: Codable, Equatable {
        struct Header: Codable, Equatable {
            var name: String
            var version: Int
        }

        struct Payload: Codable, Equatable {
            var body: String
        }

        var header: Header
        var payload: Payload
        var kind: String

        enum CodingKeys: String, CodingKey {
            case payload, kind
        }

        init(header: Header, payload: Payload, kind: String) {
            self.header = header
            self.payload = payload
            self.kind = kind
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            header = try Header(from: container.superDecoder())
            payload = try Payload(from: container.superDecoder(forKey: .payload))
            kind = try container.decode(String.self, forKey: .kind)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try header.encode(to: container.superEncoder())
            try payload.encode(to: container.superEncoder(forKey: .payload))
            try container.encode(kind, forKey: .kind)
        }
    }

    /// A chain of dictionaries `{next: {next: …}}`, to reach the decoder's depth cap.
    indirect enum Chain: Decodable, Equatable {
        case end
        case link(Chain)

        enum CodingKeys: String, CodingKey {
            case next
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let next = try container.decodeIfPresent(Chain.self, forKey: .next) {
                self = .link(next)
            } else {
                self = .end
            }
        }
    }

    /// Containers given as Foundation objects rather than Swift collections.
    struct BridgedContainers: Codable, Equatable {
        var array: [Int]
        var dictionary: [String: String]
        var string: String
    }

    // MARK: - Strategies and system values

    /// Dates read with the fixture's date strategy.
    struct Timestamps: Codable, Equatable {
        var created: Date
        var updated: Date?
    }

    /// Data read with the fixture's data strategy.
    struct Blob: Codable, Equatable {
        var payload: Data
    }

    /// URLs and UUIDs.
    struct Link: Codable, Equatable {
        var url: URL
        var id: UUID?
    }

    /// Enums with String and Int raw values.
    struct Ticket: Codable, Equatable {
        enum Priority: Int, Codable, Equatable {
            case low = 0, normal = 1, high = 2
        }

        enum Status: String, Codable, Equatable {
            case open, closed, inProgress = "in-progress"
        }

        var priority: Priority
        var status: Status
        var history: [Status]
    }

    /// Geometry in every form the decoder reads.
    struct Geometry: Codable, Equatable {
        var rect: CGRect?
        var point: CGPoint?
        var size: CGSize?
        var range: NSRange?
    }

    /// A rect only, for the geometry failure cases.
    /// Values a plain property list cannot hold as an expected value: the `expect-…` fixtures write them with tags.
    struct Invoice: Codable, Equatable {
        var total: Decimal
        var receipt: URL
        var issuedAt: Date
        var frame: CGRect
        var note: String?
        var lineTotals: [Decimal]
    }

    /// A `Decimal` alone, expected as a plain `<real>`, which `PropertyListDecoder` cannot read as a `Decimal`.
    struct Price: Codable, Equatable {
        var amount: Decimal
    }

    struct RectValue: Codable, Equatable {
        var frame: CGRect
    }
}

// MARK: - The registry

/// Every type the fixtures name. Adding a type for a new fixture means one line here.
let fixtureRegistry: UserInfoFixtureRegistry = {
    var registry = UserInfoFixtureRegistry()
    registry.register(FixtureTypes.KeyboardInfo.self)
    registry.register(FixtureTypes.StrictKeyboardCurve.self)
    registry.register(FixtureTypes.AudioInterruption.self)
    registry.register(FixtureTypes.AudioRouteChange.self)
    registry.register(FixtureTypes.AudioSilenceSecondaryHint.self)
    registry.register(FixtureTypes.AccessibilityAnnouncement.self)
    registry.register(FixtureTypes.UbiquitousStoreChange.self)
    registry.register(FixtureTypes.ContentSizeCategoryChange.self)
    registry.register(FixtureTypes.WorkspaceVolume.self)
    registry.register(FixtureTypes.FileHandleRead.self)
    registry.register(FixtureTypes.StatusBarFrameChange.self)
    registry.register(FixtureTypes.StatusBarOrientationChange.self)
    registry.register(FixtureTypes.IntegerWidths.self)
    registry.register(FixtureTypes.FloatingPointValues.self)
    registry.register(FixtureTypes.Flags.self)
    registry.register(FixtureTypes.IntValue.self)
    registry.register(FixtureTypes.BoolValue.self)
    registry.register(FixtureTypes.StringValue.self)
    registry.register(FixtureTypes.FloatValue.self)
    registry.register(FixtureTypes.UserProfile.self)
    registry.register([Int: String].self, named: "IntKeyedStrings")
    registry.register(FixtureTypes.IntegerKeyedNames.self)
    registry.register(FixtureTypes.OptionalFields.self)
    registry.register(FixtureTypes.Order.self)
    registry.register(FixtureTypes.Outer.self)
    registry.register(FixtureTypes.IntegerList.self)
    registry.register(FixtureTypes.Envelope.self)
    registry.register(FixtureTypes.Chain.self)
    registry.register(FixtureTypes.BridgedContainers.self)
    registry.register(FixtureTypes.Timestamps.self)
    registry.register(FixtureTypes.Blob.self)
    registry.register(FixtureTypes.Link.self)
    registry.register(FixtureTypes.Ticket.self)
    registry.register(FixtureTypes.Geometry.self)
    registry.register(FixtureTypes.RectValue.self)
    registry.register(FixtureTypes.Invoice.self)
    registry.register(FixtureTypes.Price.self)
    // The public payload types of NotificatableSystem, for the `catalogue-…` fixtures.
    registry.register(KeyboardNotificationInfo.self)
    registry.register(AudioSessionInterruptionInfo.self)
    registry.register(AudioSessionRouteChangeInfo.self)
    registry.register(AudioSessionSilenceSecondaryAudioHintInfo.self)
    registry.register(AccessibilityAnnouncementInfo.self)
    registry.register(UbiquitousKeyValueStoreChangeInfo.self)
    registry.register(ContentSizeCategoryChangeInfo.self)
    return registry
}()
