// swift-tools-version: 6.0
// entryd: a local form-entry daemon (see README.md).
// No outside Swift packages: C libraries come from Debian through system library targets.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // The layers are separate modules; in release builds let the optimizer see
    // across them (inlining, generic specialization), as it did when they were
    // one module: without it the 8-client Add bench lost about 10 %.
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
    // See releaseLinking: modules are built against the static runtime's Foundation too.
    .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
]

// Release builds of the programs link the Swift runtime and Foundation
// statically (every executable: the modules are compiled for it): a process then binds a third of the symbols at start
// (`entryctl --help` 22 → 14 ms, an `entryctl sync` 26 → 18 ms) and entryd's
// idle RSS drops by about 6 MiB (BENCHMARKS.md, issue 20). Debug builds (the
// tests) keep the shared runtime, which links much faster.
let releaseLinking: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(configuration: .release))
]

let package = Package(
    name: "entryd",
    products: [
        .executable(name: "entryd", targets: ["entryd"]),
        .executable(name: "entryctl", targets: ["entryctl"]),
        .executable(name: "entryd-bench", targets: ["entryd-bench"]),
        .executable(name: "entryd-web", targets: ["entryd-web"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CInih", path: "Sources/CInih", pkgConfig: "inih",
            providers: [.apt(["libinih-dev"])]),
        .target(name: "CSystem", path: "Sources/CSystem"),
        // libphonenumber (Debian libphonenumber-dev, C++, no pkg-config file) behind a plain C
        // interface, so Swift never reads its headers (which pull in protobuf and abseil).
        .target(
            name: "CPhoneNumber", path: "Sources/CPhoneNumber",
            linkerSettings: [.linkedLibrary("phonenumber")]),
        // libidn2 (Debian libidn2-dev): IDNA2008 domain names for e-mail addresses.
        .systemLibrary(
            name: "CIDN2", path: "Sources/CIDN2", pkgConfig: "libidn2",
            providers: [.apt(["libidn2-dev"])]),
        // ICU (Debian libicu-dev) behind stable C names, since ICU's own are versioned
        // by macros: Traditional → Simplified folding of match keys, the zh (pinyin) collation.
        .target(
            name: "CICU", path: "Sources/CICU",
            linkerSettings: [.linkedLibrary("icui18n"), .linkedLibrary("icuuc")]),
        // libmicrohttpd (Debian libmicrohttpd-dev, 0.9.75) behind a C shim: its start and
        // connection-info calls are variadic, which Swift cannot call.
        .target(
            name: "CWebServer", path: "Sources/CWebServer",
            linkerSettings: [.linkedLibrary("microhttpd")]),
        // libsodium (Debian libsodium-dev): Argon2id password hashes, random tokens, constant-time compares.
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // libpq (Debian libpq5; headers from libpq-dev, PostgreSQL 15): the PostgreSQL client,
        // for EntryHub, loaded with dlopen when a hub connects (cpostgres.h), never linked.
        .target(name: "CPostgres", path: "Sources/CPostgres"),
        // A fault-injecting SQLite VFS: linked into the tests only, never into the binaries.
        .target(name: "CSQLiteFaults", path: "Sources/CSQLiteFaults", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The one command-line scanner of the four programs, and "did you mean" (the edit
        // distance MatchKey searches with too); no dependencies, so entryd needs no EntryClient.
        .target(name: "EntryArguments", path: "Sources/EntryArguments", swiftSettings: swiftSettings),
        // Files of the repository compiled into the binaries as Swift literals at build time
        // (web/, data/ tables, the built-in form, interfaces/*.varlink; not SwiftPM resources,
        // which break once installed): the Embed plugin runs entryd-embed, which writes them.
        .executableTarget(name: "entryd-embed", path: "Sources/entryd-embed"),
        .plugin(name: "Embed", capability: .buildTool(), dependencies: ["entryd-embed"], path: "Plugins/Embed"),
        // The layers, each a target whose imports the compiler checks (ARCHITECTURE.md):
        // model ← ledger ← sync ← server; model ← protocol ← sync, server, client.
        // Values, forms, reference data, validation and the domain error; no I/O but reading form files.
        .target(
            name: "EntryModel", dependencies: ["EntryArguments", "CInih", "CICU", "CPhoneNumber", "CIDN2"],
            path: "Sources/EntryModel", swiftSettings: swiftSettings,
            linkerSettings: [.linkedLibrary("m")], plugins: ["Embed"]),
        // The store: entries, the change log with its HLC stamps, merge, conflicts, peer checkpoints, on SQLite.
        .target(
            name: "EntryLedger", dependencies: ["EntryModel", "CSQLite", "CICU"],
            path: "Sources/EntryLedger", swiftSettings: swiftSettings),
        // Hubs on PostgreSQL (issue 19): the libpq connection, the schema and its migrations,
        // the change feed that never skips a row.
        .target(
            name: "EntryHub", dependencies: ["EntryModel", "EntryLedger", "CPostgres"],
            path: "Sources/EntryHub", swiftSettings: swiftSettings),
        // The varlink wire: framing, messages, connections, wire error names, exit codes.
        .target(
            name: "EntryProtocol", dependencies: ["EntryModel", "CSystem"],
            path: "Sources/EntryProtocol", swiftSettings: swiftSettings, plugins: ["Embed"]),
        // Sync between nodes: the sync algorithm, peer links and transports, the scheduler.
        .target(
            name: "EntrySync", dependencies: ["EntryLedger", "EntryProtocol", "CSystem"],
            path: "Sources/EntrySync", swiftSettings: swiftSettings),
        // The daemon's logic: configuration, sessions, the service and the one domain → wire error mapping.
        .target(
            name: "EntryServer", dependencies: ["EntryModel", "EntryLedger", "EntryProtocol", "EntrySync", "CSystem"],
            path: "Sources/EntryServer", swiftSettings: swiftSettings),
        // What clients share: entryctl's pieces, CSV in and out, the interactive form.
        .target(
            name: "EntryClient", dependencies: ["EntryArguments", "EntryModel", "EntryProtocol", "CSystem"],
            path: "Sources/EntryClient", swiftSettings: swiftSettings),
        // The HTTP door's logic (entryd-web): users and passwords, sessions, routing, the
        // API's statuses, the OpenAPI description, the embedded page. No sockets: entryd-web wires it.
        .target(
            name: "EntryWeb", dependencies: ["EntryArguments", "EntryModel", "EntryProtocol", "CSodium"],
            path: "Sources/EntryWeb", swiftSettings: swiftSettings, plugins: ["Embed"]),
        .executableTarget(
            name: "entryd",
            dependencies: [
                "EntryArguments", "EntryServer", "EntryHub", "EntryLedger", "EntrySync", "EntryProtocol", "EntryModel",
                "CSystem",
            ],
            path: "Sources/entryd", swiftSettings: swiftSettings, linkerSettings: releaseLinking),
        .executableTarget(
            name: "entryctl",
            dependencies: [
                "EntryArguments", "EntryClient", "EntryProtocol", "EntryModel", "EntryLedger", "EntryWeb", "CSystem",
            ],
            path: "Sources/entryctl", swiftSettings: swiftSettings, linkerSettings: releaseLinking),
        // The benchmark of issue 6 (BENCHMARKS.md): drives the built entryd, measures raw SQLite and PostgreSQL.
        .executableTarget(
            name: "entryd-bench",
            dependencies: ["EntryArguments", "EntryProtocol", "EntryModel", "EntryLedger", "CSQLite"],
            path: "Sources/entryd-bench", swiftSettings: swiftSettings, linkerSettings: releaseLinking),
        // The HTTP door: a client of entryd's socket like entryctl, serving EntryWeb over libmicrohttpd.
        .executableTarget(
            name: "entryd-web",
            dependencies: ["EntryWeb", "EntryClient", "EntryProtocol", "EntryModel", "CWebServer", "CSystem"],
            path: "Sources/entryd-web", swiftSettings: swiftSettings, linkerSettings: releaseLinking),
        // What both test targets use (test targets cannot import each other).
        .target(name: "EntryTestSupport", path: "Tests/Support", swiftSettings: swiftSettings),
        .testTarget(
            name: "UnitTests",
            dependencies: [
                "EntryTestSupport", "EntryArguments", "EntryModel", "EntryLedger", "EntryProtocol", "EntrySync",
                "EntryServer", "EntryClient", "EntryWeb", "EntryHub", "CSQLiteFaults", "CSQLite",
            ],
            path: "Tests/UnitTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "EntryTestSupport", "EntryModel", "EntryLedger", "EntryProtocol", "EntryClient", "EntryServer",
                "EntryWeb",
            ],
            path: "Tests/EndToEndTests", swiftSettings: swiftSettings),
    ],
    cxxLanguageStandard: .cxx17
)
