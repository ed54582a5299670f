// swift-tools-version:6.2
import PackageDescription

// CI-only: type-checks and exercises the Combine adapter that ships in Sources/Notificatable/Adapters, against
// OpenCombine, on platforms without Combine. Run it with scripts/check-combine.sh. The root package does not depend
// on OpenCombine; only this package does.
//
// Sources/NotificatableCombine holds a symlink to the shipped adapter file, so the very same source is compiled.
// NOTIFICATABLE_OPENCOMBINE_CHECK makes that file import OpenCombine and the Notificatable module.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "CombineCheck",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    dependencies: [
        .package(name: "Notificatable", path: "../.."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
    ],
    targets: [
        .target(
            name: "NotificatableCombine",
            dependencies: [
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: strict + [.define("NOTIFICATABLE_OPENCOMBINE_CHECK")]
        ),
        .testTarget(
            name: "NotificatableCombineCheckTests",
            dependencies: [
                "NotificatableCombine",
                .product(name: "Notificatable", package: "Notificatable"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: strict + [.define("NOTIFICATABLE_OPENCOMBINE_CHECK")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
