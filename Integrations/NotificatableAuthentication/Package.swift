// swift-tools-version:6.2
import PackageDescription

/// HMAC-SHA256 authentication of relay messages, for any `NotificationTransport` (the loopback and macOS transports,
/// PostgreSQL, one of your own). A package of its own so that the root package keeps zero dependencies and a user of
/// the loopback or macOS transport gets authentication without postgres-nio in the build graph: it depends on the
/// root package (`NotificatableRelay`) and swift-crypto only. `NotificatablePostgres` depends on it and re-exports it.
/// Every target builds in Swift 6 mode with all warnings treated as errors.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "NotificatableAuthentication",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "NotificatableAuthentication", targets: ["NotificatableAuthentication"])
    ],
    dependencies: [
        .package(name: "Notificatable", path: "../.."),
        // HMAC-SHA256 and a constant-time comparison; the range postgres-nio 1.33.2 also accepts.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.9.0"..<"6.0.0"),
    ],
    targets: [
        .target(
            name: "NotificatableAuthentication",
            dependencies: [
                .product(name: "NotificatableRelay", package: "Notificatable"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotificatableAuthenticationTests",
            dependencies: [
                "NotificatableAuthentication",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "NotificatableRelay", package: "Notificatable"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
