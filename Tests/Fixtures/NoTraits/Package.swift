// swift-tools-version: 6.2
// A package that depends on ValueStore and enables none of its traits: PackageTraitTests resolves
// it and checks that nothing beyond swift-crypto (and its swift-asn1) comes along. With
// VALUESTORE_FIXTURE_TRAITS (comma-separated) it enables those traits instead, so the test can
// see that a trait does bring its packages.

import Foundation
import PackageDescription

/// The library: `VALUESTORE_FIXTURE_LIBRARY` names its folder when the test resolves a copy of
/// this package elsewhere; otherwise it is three folders up, where the fixture is kept.
let libraryPath =
    ProcessInfo.processInfo.environment["VALUESTORE_FIXTURE_LIBRARY"]
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// A path dependency is identified by its folder's name, which depends on where the repository
/// was cloned; read it rather than assume it.
let library = URL(fileURLWithPath: libraryPath).lastPathComponent

/// The traits to enable: none unless the test asks.
let traits = Set(
    (ProcessInfo.processInfo.environment["VALUESTORE_FIXTURE_TRAITS"] ?? "").split(separator: ",").map {
        PackageDescription.Package.Dependency.Trait(name: String($0))
    })

let package = Package(
    name: "NoTraits",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(path: libraryPath, traits: traits)],
    targets: [
        .target(
            name: "NoTraits",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "ValueStorePostgres", package: library),
                .product(name: "ValueStoreConfiguration", package: library),
                .product(name: "ValueStoreObservability", package: library),
            ]
        )
    ]
)
