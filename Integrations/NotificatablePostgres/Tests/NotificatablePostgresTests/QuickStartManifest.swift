// The manifest lines of the package README's quick start, compiled against a PackageDescription look-alike (below),
// which mirrors only the calls they use: a manifest cannot be compiled in a test target. `DocSnippetTests` checks
// that the README's manifest block appears here line for line (indentation aside); the other quick-start blocks are
// whole files of `Snippets/`, imports included.

func quickStartManifest() -> QuickStartPackage {
    QuickStartPackage(
        dependencies: [
            .package(path: "../Notificatable/Integrations/NotificatablePostgres"),
            .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.32.2"),
            .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
            .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        ],
        targets: [
            .target(
                name: "Billing",
                dependencies: [
                    .product(name: "NotificatablePostgres", package: "NotificatablePostgres"),
                    .product(name: "PostgresNIO", package: "postgres-nio"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    .product(name: "Logging", package: "swift-log"),
                ]
            )
        ]
    )
}

// MARK: - A PackageDescription look-alike for the manifest block

struct QuickStartPackage {
    var dependencies: [QuickStartDependency]
    var targets: [QuickStartTarget]
}

struct QuickStartDependency {
    var location: String
    var version: String?

    static func package(path: String) -> QuickStartDependency { QuickStartDependency(location: path, version: nil) }

    static func package(url: String, from version: String) -> QuickStartDependency {
        QuickStartDependency(location: url, version: version)
    }
}

struct QuickStartTarget {
    var name: String
    var dependencies: [QuickStartProduct]

    static func target(name: String, dependencies: [QuickStartProduct]) -> QuickStartTarget {
        QuickStartTarget(name: name, dependencies: dependencies)
    }
}

struct QuickStartProduct {
    var name: String
    var package: String

    static func product(name: String, package: String) -> QuickStartProduct {
        QuickStartProduct(name: name, package: package)
    }
}
