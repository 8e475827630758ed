// swift-tools-version: 6.2
// 6.2 is the first toolchain with `nonisolated(nonsending)`, which lets `update` run a caller's
// non-Sendable transform on the caller's own executor.

import Foundation
import PackageDescription

/// Upcoming language features we opt into, each on purpose.
var strictness: [SwiftSetting] = [
    // Spell existential types `any P`, so their cost and meaning are visible at every use.
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless marked `public`, so our dependencies never leak into users' code.
    .enableUpcomingFeature("InternalImportsByDefault"),
    // A member is visible only where its module is imported, so every file states what it uses.
    .enableUpcomingFeature("MemberImportVisibility"),
    // Async functions and closures run on their caller's executor unless marked `@concurrent`, so
    // a load from the main actor never hops, and every hop to blocking work is spelled out.
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

/// The same features for the migration example, which calls the deprecated names of the
/// original library on purpose: its deprecation warnings must never fail the build.
let strictnessAllowingDeprecations = strictness

// `.ci/run` sets this so warnings fail the build of our own targets only, never of swift-crypto
// and never of a package that depends on ValueStore (which never sets it): Xcode builds a
// dependency with `-suppress-warnings`, which conflicts with the setting.
if ProcessInfo.processInfo.environment["VALUESTORE_WARNINGS_AS_ERRORS"] == "1" {
    strictness.append(.treatAllWarnings(as: .error))
}

/// Platforms without CryptoKit get Apple's open-source implementation of the same API,
/// swift-crypto: the library's only dependency, and only there.
let withoutCryptoKit: [Platform] = [.linux, .android, .windows, .wasi, .openbsd]

/// A product of another package, used only when `trait` is on.
func product(_ name: String, of package: String, with trait: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: [trait]))
}

/// What the provider's tests use, in memory and over PostgreSQL: their code is inside
/// `#if Configuration`.
let configurationTesting: [Target.Dependency] = [
    .target(name: "ValueStoreConfiguration", condition: .when(traits: ["Configuration"])),
    product("Configuration", of: "swift-configuration", with: "Configuration"),
    product("ConfigurationTesting", of: "swift-configuration", with: "Configuration"),
    product("ServiceLifecycle", of: "swift-service-lifecycle", with: "Configuration"),
    product("Logging", of: "swift-log", with: "Configuration"),
    product("InMemoryLogging", of: "swift-log", with: "Configuration"),
    product("MetricsTestKit", of: "swift-metrics", with: "Configuration"),
]

/// What the instrumented stores' tests use, in memory and over PostgreSQL: their code is inside
/// `#if Observability`.
let observabilityTesting: [Target.Dependency] = [
    .target(name: "ValueStoreObservability", condition: .when(traits: ["Observability"])),
    product("Logging", of: "swift-log", with: "Observability"),
    product("InMemoryLogging", of: "swift-log", with: "Observability"),
    product("Metrics", of: "swift-metrics", with: "Observability"),
    product("MetricsTestKit", of: "swift-metrics", with: "Observability"),
    product("Tracing", of: "swift-distributed-tracing", with: "Observability"),
    product("InMemoryTracing", of: "swift-distributed-tracing", with: "Observability"),
]

let package = Package(
    name: "ValueStore",
    // `Synchronization.Mutex` sets the floor: iOS 18, macOS 15 and their siblings.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ValueStore", targets: ["ValueStore"]),
        .library(name: "ValueStoreTesting", targets: ["ValueStoreTesting"]),
        // PostgreSQL: compiles to an empty module unless the `PostgreSQL` trait is on.
        .library(name: "ValueStorePostgres", targets: ["ValueStorePostgres"]),
        // A swift-configuration provider over any store: empty unless the `Configuration` trait is on.
        .library(name: "ValueStoreConfiguration", targets: ["ValueStoreConfiguration"]),
        // Logs, metrics and traces of any store: empty unless the `Observability` trait is on.
        .library(name: "ValueStoreObservability", targets: ["ValueStoreObservability"]),
        // Local-first sync of one user's values across devices, with a reference server.
        .library(name: "ValueStoreSync", targets: ["ValueStoreSync"]),
        // Sync over HTTP: the client remote and a framework-neutral service; Foundation only.
        .library(name: "ValueStoreSyncHTTP", targets: ["ValueStoreSyncHTTP"]),
        // The service's routes for a Hummingbird app: empty unless the `Hummingbird` trait is on.
        .library(name: "ValueStoreSyncHTTPServer", targets: ["ValueStoreSyncHTTPServer"]),
        // The deployable sync server: needs the `PostgreSQL`, `Configuration` and `Hummingbird` traits.
        .executable(name: "valuestore-sync-server", targets: ["ValueStoreSyncServer"]),
    ],
    // Optional integrations, each off by default so the default graph stays small.
    traits: [
        .trait(
            name: "PostgreSQL",
            description: "Stores shared across machines in a PostgreSQL table (ValueStorePostgres), "
                + "through vapor/postgres-nio."
        ),
        .trait(
            name: "Configuration",
            description: "A swift-configuration provider over any store (ValueStoreConfiguration), "
                + "through apple/swift-configuration and swift-service-lifecycle."
        ),
        .trait(
            name: "Observability",
            description: "Logs, metrics and traces of every operation of a store (ValueStoreObservability), "
                + "through swift-log, swift-metrics and swift-distributed-tracing."
        ),
        .trait(
            name: "Hummingbird",
            description: "Sync over HTTP in a Hummingbird app (ValueStoreSyncHTTPServer), and the deployable "
                + "valuestore-sync-server with JWT verification, through hummingbird 2 and vapor/jwt-kit."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        // Resolved only by a dependent that enables the `PostgreSQL` trait.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        // postgres-nio's own dependency, named for the lock its client keeps its pool's state
        // behind, which the store reads to learn why the pool cannot connect.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // Resolved only by a dependent that enables the `Configuration` trait.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.8.0"),
        // Resolved only by a dependent that enables `Observability` (or `Configuration`, whose
        // provider logs and counts what it cannot throw, as swift-configuration's own providers do).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.7.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.0"),
        // Resolved only by a dependent that enables the `Hummingbird` trait.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.0"),
        // hummingbird's own dependency, named for the header names (`HTTPField.Name`) the routes
        // write the service's headers under.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "ValueStore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: withoutCryptoKit)),
                // PBKDF2, which CryptoKit leaves to CommonCrypto on Apple platforms.
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(platforms: withoutCryptoKit)),
            ],
            swiftSettings: strictness
        ),
        .target(name: "ValueStoreTesting", dependencies: ["ValueStore"], swiftSettings: strictness),
        // Local-first sync: a replica per account on the device, over a SettingsFile, and the
        // in-memory reference server; no package dependency beyond the core.
        .target(name: "ValueStoreSync", dependencies: ["ValueStore"], swiftSettings: strictness),
        // Sync over HTTP: the client remote (URLSession) and the service every server adapter
        // calls; Foundation only (FoundationNetworking on Linux).
        .target(name: "ValueStoreSyncHTTP", dependencies: ["ValueStore", "ValueStoreSync"], swiftSettings: strictness),
        // The service's routes for a Hummingbird 2 app: code inside `#if Hummingbird`.
        .target(
            name: "ValueStoreSyncHTTPServer",
            dependencies: [
                "ValueStoreSync", "ValueStoreSyncHTTP",
                product("Hummingbird", of: "hummingbird", with: "Hummingbird"),
                // The request body's `collect(upTo:)` and the error it throws past its limit.
                product("NIOCore", of: "swift-nio", with: "Hummingbird"),
                product("HTTPTypes", of: "swift-http-types", with: "Hummingbird"),
            ],
            swiftSettings: strictness
        ),
        // valuestore-sync-server: the routes over PostgresSyncTable, configured by environment;
        // its code is inside `#if PostgreSQL && Configuration && Hummingbird`.
        .executableTarget(
            name: "ValueStoreSyncServer",
            dependencies: [
                "ValueStore", "ValueStoreSync", "ValueStoreSyncHTTP",
                .target(name: "ValueStoreSyncHTTPServer", condition: .when(traits: ["Hummingbird"])),
                product("Hummingbird", of: "hummingbird", with: "Hummingbird"),
                // The HTTP/1 channel's configuration: its idle timeout.
                product("HummingbirdCore", of: "hummingbird", with: "Hummingbird"),
                product("JWTKit", of: "jwt-kit", with: "Hummingbird"),
                product("NIOCore", of: "swift-nio", with: "Hummingbird"),
                product("HTTPTypes", of: "swift-http-types", with: "Hummingbird"),
                product("ServiceLifecycle", of: "swift-service-lifecycle", with: "Hummingbird"),
                product("UnixSignals", of: "swift-service-lifecycle", with: "Hummingbird"),
                product("Logging", of: "swift-log", with: "Hummingbird"),
                .target(name: "ValueStorePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                product("Configuration", of: "swift-configuration", with: "Configuration"),
            ],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "ValueStoreDemo", dependencies: ["ValueStore", "ValueStoreSync"], swiftSettings: strictness),
        // PostgreSQL-backed stores: code inside `#if PostgreSQL`, postgres-nio only under the trait.
        .target(
            name: "ValueStorePostgres",
            dependencies: [
                // Its sync server (PostgresSyncTable) serves ValueStoreSync, which needs nothing more.
                "ValueStore", "ValueStoreSync",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                product("NIOConcurrencyHelpers", of: "swift-nio", with: "PostgreSQL"),
            ],
            swiftSettings: strictness
        ),
        // A swift-configuration provider over any store: code inside `#if Configuration`.
        .target(
            name: "ValueStoreConfiguration",
            dependencies: [
                "ValueStore",
                product("Configuration", of: "swift-configuration", with: "Configuration"),
                product("ServiceLifecycle", of: "swift-service-lifecycle", with: "Configuration"),
                product("Logging", of: "swift-log", with: "Configuration"),
                product("Metrics", of: "swift-metrics", with: "Configuration"),
            ],
            swiftSettings: strictness
        ),
        // Spans, metrics and logs of every operation: code inside `#if Observability`.
        .target(
            name: "ValueStoreObservability",
            dependencies: [
                "ValueStore",
                product("Logging", of: "swift-log", with: "Observability"),
                product("Metrics", of: "swift-metrics", with: "Observability"),
                product("Tracing", of: "swift-distributed-tracing", with: "Observability"),
            ],
            swiftSettings: strictness
        ),
        // Two processes sharing a value through PostgreSQL (README, "Sharing values across machines").
        .executableTarget(
            name: "ValueStorePostgresDemo",
            dependencies: [
                "ValueStore", "ValueStoreSync",
                .target(name: "ValueStorePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                // Its live flag, read through a ConfigReader in a second process, with `Configuration`.
                .target(name: "ValueStoreConfiguration", condition: .when(traits: ["Configuration"])),
                product("Configuration", of: "swift-configuration", with: "Configuration"),
            ],
            swiftSettings: strictness
        ),
        // Writes and updates files from separate processes for the crash and multi-process tests;
        // the test target depends on it so `swift test` builds it.
        .executableTarget(
            name: "ValueStoreTestHelper",
            dependencies: [
                "ValueStore",
                // Its `sync-save-loop` mode, for the sync replica's crash test, and its
                // `sync-device` mode, a device of the PostgreSQL chaos test, which speaks the
                // chaos checker's types; its `sync-acknowledge-and-wait` mode pushes over HTTP.
                "ValueStoreSync", "ValueStoreSyncHTTP", "ValueStoreTestSupport",
                // Its `postgres` modes, for the PostgreSQL tests.
                .target(name: "ValueStorePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                // Its device mode logs to standard error: standard output carries its answers.
                product("Logging", of: "swift-log", with: "PostgreSQL"),
            ],
            swiftSettings: strictness
        ),
        // What the test targets use to run ValueStoreTestHelper in a process of its own, the
        // sync chaos tests' model and checker, which the helper's device processes share, and the
        // loopback HTTP server the sync-over-HTTP tests serve from.
        // With `Hummingbird`, it also starts valuestore-sync-server processes and signs their
        // tokens (HS256, with swift-crypto where CryptoKit is missing), for the server's tests
        // and the PostgreSQL chaos test's HTTP mode.
        .target(
            name: "ValueStoreTestSupport",
            dependencies: [
                "ValueStore", "ValueStoreSync", "ValueStoreSyncHTTP",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: withoutCryptoKit)),
            ],
            path: "Tests/Support",
            swiftSettings: strictness),
        .testTarget(
            name: "ValueStoreTests",
            dependencies: ["ValueStore", "ValueStoreTesting", "ValueStoreTestHelper", "ValueStoreTestSupport"],
            // What each shipped schema version stored, read through `Bundle.module` by the
            // versioning tests; see Documentation/Versioning.md.
            resources: [.copy("Versioning/Fixtures")],
            swiftSettings: strictness
        ),
        // The sync replica and the reference server, with the chaos test; a device process that
        // pushes over HTTP to the test's server (DurabilityTests).
        .testTarget(
            name: "ValueStoreSyncTests",
            dependencies: [
                "ValueStore", "ValueStoreSync", "ValueStoreSyncHTTP", "ValueStoreTestHelper", "ValueStoreTestSupport",
            ],
            swiftSettings: strictness
        ),
        // The HTTP client against a loopback server of the tests' own, and the service's rules.
        .testTarget(
            name: "ValueStoreSyncHTTPTests",
            dependencies: ["ValueStore", "ValueStoreSync", "ValueStoreSyncHTTP", "ValueStoreTestSupport"],
            // The v1 wire's bodies, frozen: every release decodes them (WireFixtureTests).
            resources: [.copy("Fixtures")],
            swiftSettings: strictness
        ),
        // The Hummingbird routes and the deployable server; compiles to nothing without `Hummingbird`.
        .testTarget(
            name: "ValueStoreSyncHTTPServerTests",
            dependencies: [
                "ValueStore", "ValueStoreSync", "ValueStoreSyncHTTP", "ValueStoreTestSupport",
                .target(name: "ValueStoreSyncHTTPServer", condition: .when(traits: ["Hummingbird"])),
                product("Hummingbird", of: "hummingbird", with: "Hummingbird"),
                product("HummingbirdTesting", of: "hummingbird", with: "Hummingbird"),
                // The deployable server, which its tests start as a process (built beside them),
                // and the tokens they sign for it.
                .target(name: "ValueStoreSyncServer", condition: .when(traits: ["Hummingbird"])),
                product("JWTKit", of: "jwt-kit", with: "Hummingbird"),
                product("HTTPTypes", of: "swift-http-types", with: "Hummingbird"),
            ],
            swiftSettings: strictness
        ),
        // Runs against a real server, under `pg_virtualenv`, with the `PostgreSQL` trait; compiles
        // to nothing without it.
        .testTarget(
            name: "ValueStorePostgresTests",
            dependencies: [
                "ValueStore", "ValueStoreSync", "ValueStoreTesting", "ValueStoreTestHelper", "ValueStoreTestSupport",
                .target(name: "ValueStorePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                // The chaos test's HTTP mode starts valuestore-sync-server processes (built beside
                // the tests), with `PostgreSQL,Configuration,Hummingbird`.
                .target(name: "ValueStoreSyncServer", condition: .when(traits: ["Hummingbird"])),
                // The provider and the instrumented stores over a real table (Integrations/), with
                // `PostgreSQL,Configuration,Observability`.
            ] + configurationTesting + observabilityTesting,
            swiftSettings: strictness
        ),
        // The provider in memory and its failures; compiles to nothing without `Configuration`.
        .testTarget(
            name: "ValueStoreConfigurationTests",
            dependencies: ["ValueStore", "ValueStoreTesting", "ValueStoreTestSupport"] + configurationTesting,
            swiftSettings: strictness
        ),
        // What the instrumented stores emit, and never emit, over every local backend; compiles to
        // nothing without `Observability`.
        .testTarget(
            name: "ValueStoreObservabilityTests",
            dependencies: ["ValueStore", "ValueStoreTesting"] + observabilityTesting,
            swiftSettings: strictness
        ),
        // Code written against swift-valuestore 0.1's names, which builds with deprecation
        // warnings only; see Documentation/MigratingFromValueStore0.md.
        .testTarget(
            name: "ValueStoreMigrationTests",
            dependencies: ["ValueStore"],
            swiftSettings: strictnessAllowingDeprecations
        ),
    ],
    swiftLanguageModes: [.v6]
)
