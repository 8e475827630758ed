// swift-tools-version: 6.2
// 6.2 is the first toolchain with `nonisolated(nonsending)`, which lets `update` run a caller's
// non-Sendable transform on the caller's own executor.

import PackageDescription

/// Upcoming language features we opt into, each on purpose.
let strictness: [SwiftSetting] = [
    // Spell existential types `any P`, so their cost and meaning are visible at every use.
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless marked `public`, so our dependencies never leak into users' code.
    .enableUpcomingFeature("InternalImportsByDefault"),
    // A member is visible only where its module is imported, so every file states what it uses.
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "ValueStore",
    // `Synchronization.Mutex` sets the floor: iOS 18, macOS 15 and their siblings.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ValueStore", targets: ["ValueStore"]),
        .library(name: "ValueStoreTesting", targets: ["ValueStoreTesting"]),
        .executable(name: "ValueStoreDemo", targets: ["ValueStoreDemo"]),
    ],
    targets: [
        .target(name: "ValueStore", swiftSettings: strictness),
        .target(name: "ValueStoreTesting", dependencies: ["ValueStore"], swiftSettings: strictness),
        .executableTarget(name: "ValueStoreDemo", dependencies: ["ValueStore"], swiftSettings: strictness),
        // Writes and updates files from separate processes for the crash and multi-process tests;
        // the test target depends on it so `swift test` builds it.
        .executableTarget(name: "ValueStoreTestHelper", dependencies: ["ValueStore"], swiftSettings: strictness),
        .testTarget(
            name: "ValueStoreTests",
            dependencies: ["ValueStore", "ValueStoreTesting", "ValueStoreTestHelper"],
            swiftSettings: strictness
        ),
    ],
    swiftLanguageModes: [.v6]
)
