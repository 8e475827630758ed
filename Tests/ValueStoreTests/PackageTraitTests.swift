import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

/// The package's traits keep the default graph small: a dependent that enables none of them
/// resolves swift-crypto (and its swift-asn1) and nothing more, and one that enables a trait gets
/// that trait's packages. Checked by resolving the fixture package `Tests/Fixtures/NoTraits`,
/// which depends on every product, with SwiftPM itself. Each test resolves a copy of its own, so
/// the two run at once and neither sees the other's `Package.resolved` (the no-trait resolution
/// would otherwise check out every package the other pinned).
@Suite struct PackageTraitTests {
    @Test func aDependentThatEnablesNoTraitResolvesNothingMore() async throws {
        let packages = try await Self.resolvedPackages(traits: nil)
        #expect(packages == ["swift-asn1", "swift-crypto"])
    }

    /// Observability, of the traits whose packages do not come with the no-trait graph, is the one
    /// with the fewest: a resolution from nothing loads 12 manifests for it, against 20 for
    /// `Configuration` (5 s against 11 s alone, on 2 cores).
    @Test func aDependentThatEnablesObservabilityGetsItsPackagesOnly() async throws {
        let packages = try await Self.resolvedPackages(traits: "Observability")
        #expect(packages.isSuperset(of: ["swift-log", "swift-metrics", "swift-distributed-tracing"]))
        #expect(packages.isDisjoint(with: ["postgres-nio", "swift-nio", "swift-configuration", "hummingbird"]))
    }

    /// Where SwiftPM keeps the fixture's resolution for `traits`, kept between runs so that a
    /// run whose manifests did not change resolves from the checkouts of the last one instead of
    /// cloning every package again (what took most of the suite's time). The folder is named for
    /// the manifests' contents (the fixture's, the library's and its `Package.resolved`), the
    /// checkout and the traits, so any change to what resolution reads starts from nothing; the
    /// dependencies are resolved by SwiftPM on every run, never remembered here.
    static func scratchPath(traits: String?) throws -> URL {
        let root = DocumentationTests.root
        var read = Data(root.path(percentEncoded: false).utf8) + Data("\u{0}\(traits ?? "")".utf8)
        for manifest in ["Package.swift", "Package.resolved", "Tests/Fixtures/NoTraits/Package.swift"] {
            // Package.resolved is absent until a first resolution: absence is part of the name.
            let contents = FileManager.default.contents(
                atPath: root.appending(path: manifest).path(percentEncoded: false))
            read += Data("\u{0}\(manifest)\u{0}".utf8) + (contents ?? Data("absent".utf8))
        }
        let name = Digest.sha256(read).prefix(8).map { String(format: "%02x", $0) }.joined()
        let scratch = FileManager.default.temporaryDirectory
            .appending(path: "valuestore-fixture-\(name)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        return scratch
    }

    /// The identities of every package the fixture resolves, beside itself and the library.
    ///
    /// The test's task runs at high priority from here on, on Linux and on the 26 releases of
    /// Apple's systems (earlier ones skip it). In a full run on a machine of few cores, each
    /// wake-up of a task at the default priority waits behind every other test's work: on 2
    /// cores, a resolution that took 2–3 s took 14–18 s of the suite's time, 8 s of it between
    /// SwiftPM's exit and the test going on. Swift Testing's own steps before and after the test
    /// stay at the default priority.
    static func resolvedPackages(traits: String?) async throws -> Set<String> {
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            withUnsafeCurrentTask { $0?.escalatePriority(to: .high) }
        }
        let scratch = try scratchPath(traits: traits)
        let package = try copyOfFixture(in: scratch)
        let output = scratch.appending(path: "dependencies-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // `--skip-update`: a package SwiftPM's own cache holds already (the library's build
        // cloned them all) is not fetched again from its remote, so the test needs no network
        // once the library has resolved; which packages resolve does not depend on their newest
        // commits. (Once, here, a fresh scratch path took 10 s without it, fetching.)
        process.arguments = [
            "swift", "package", "--skip-update", "--package-path", package.path(percentEncoded: false),
            "--scratch-path", scratch.path(percentEncoded: false),
            "show-dependencies", "--format", "json", "--output-path", output.path(percentEncoded: false),
        ]
        process.environment = fixtureEnvironment(traits: traits)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(await exitStatus(of: process) == 0, "swift package show-dependencies failed")
        let graph = try JSONSerialization.jsonObject(with: Data(contentsOf: output))
        var identities: Set<String> = []
        func collect(_ node: Any) {
            guard let node = node as? [String: Any] else { return }
            if let identity = node["identity"] as? String {
                identities.insert(identity)
            }
            for child in node["dependencies"] as? [Any] ?? [] {
                collect(child)
            }
        }
        collect(graph)
        let library = DocumentationTests.root.lastPathComponent.lowercased()
        return identities.subtracting(["notraits", library])
    }

    /// The environment SwiftPM resolves the fixture in: the fixture's two variables, and of the
    /// test's own only what finding the toolchain, SwiftPM's caches and settings, and a proxy
    /// need (and any `SWIFT…` setting of the toolchain's), none of which changes between runs. SwiftPM keys each manifest it has compiled by the environment
    /// too (here, one variable changed compiled 7 of 12 manifests again), so a variable that
    /// differs between two runs would compile them again, each a few tenths of a second alone and
    /// several seconds among the suite's other work.
    static func fixtureEnvironment(traits: String?) -> [String: String] {
        let inherited = ProcessInfo.processInfo.environment
        let kept: Set = [
            "PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "LD_LIBRARY_PATH", "DEVELOPER_DIR",
            "TOOLCHAINS", "SDKROOT", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
            "SSL_CERT_FILE", "SSL_CERT_DIR",
        ]
        var environment = inherited.filter { kept.contains($0.key) || $0.key.hasPrefix("SWIFT") }
        environment["VALUESTORE_FIXTURE_TRAITS"] = traits
        environment["VALUESTORE_FIXTURE_LIBRARY"] = DocumentationTests.root.path(percentEncoded: false)
        return environment
    }

    /// A copy of the fixture in `scratch`, made again on every run from everything the fixture
    /// holds; only the copy's `Package.resolved`, the resolution of these traits, stays from the
    /// last run. The source tree gets none. (Two runs of one checkout at once could collide
    /// here: SwiftPM's lock on the scratch folder comes later.)
    static func copyOfFixture(in scratch: URL) throws -> URL {
        let files = FileManager.default
        let fixture = DocumentationTests.root.appending(path: "Tests/Fixtures/NoTraits")
        let copy = scratch.appending(path: "NoTraits")
        try files.createDirectory(at: copy, withIntermediateDirectories: true)
        for item in try files.contentsOfDirectory(atPath: copy.path(percentEncoded: false))
        where item != "Package.resolved" {
            try files.removeItem(at: copy.appending(path: item))
        }
        // What SwiftPM leaves in the fixture when it is resolved in place is not copied.
        for item in try files.contentsOfDirectory(atPath: fixture.path(percentEncoded: false))
        where item != "Package.resolved" && !item.hasPrefix(".") {
            try files.copyItem(at: fixture.appending(path: item), to: copy.appending(path: item))
        }
        return copy
    }
}
