// swift-tools-version: 6.0
// entryd: a local form-entry daemon (see README.md).
// No outside Swift packages: C libraries come from Debian through system library targets.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "entryd",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "EntryCore", targets: ["EntryCore"]),
        .executable(name: "entryd", targets: ["entryd"]),
        .executable(name: "entryctl", targets: ["entryctl"]),
        .executable(name: "entryd-bench", targets: ["entryd-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CInih", path: "Sources/CInih", pkgConfig: "inih",
            providers: [.apt(["libinih-dev"])]),
        .target(name: "CSystem", path: "Sources/CSystem"),
        // A fault-injecting SQLite VFS: linked into the tests only, never into the binaries.
        .target(name: "CSQLiteFaults", path: "Sources/CSQLiteFaults", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "EntryCore", dependencies: ["CSQLite", "CInih", "CSystem"],
            path: "Sources/EntryCore", swiftSettings: swiftSettings,
            linkerSettings: [.linkedLibrary("m")]),
        .executableTarget(
            name: "entryd", dependencies: ["EntryCore", "CSystem"],
            path: "Sources/entryd", swiftSettings: swiftSettings),
        .executableTarget(
            name: "entryctl", dependencies: ["EntryCore", "CSystem"],
            path: "Sources/entryctl", swiftSettings: swiftSettings),
        // The benchmark of issue 6 (BENCHMARKS.md): drives the built entryd, measures raw SQLite and PostgreSQL.
        .executableTarget(
            name: "entryd-bench", dependencies: ["EntryCore", "CSQLite"],
            path: "Sources/entryd-bench", swiftSettings: swiftSettings),
        .testTarget(
            name: "EntryCoreTests", dependencies: ["EntryCore", "CSQLiteFaults"],
            path: "Tests/EntryCoreTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests", dependencies: ["EntryCore"],
            path: "Tests/EndToEndTests", swiftSettings: swiftSettings),
    ]
)
