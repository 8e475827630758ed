// swift-tools-version: 6.1
// The benchmarks live in their own package so the library's manifest stays dependency-free.

import Foundation
import PackageDescription

/// A path dependency is identified by its folder's name, which depends on where the repository
/// was cloned; read it rather than assume it.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

/// The PostgreSQL rows build postgres-nio and need a server, so they are built only when asked:
/// `VALUESTORE_BENCHMARK_POSTGRES=1 pg_virtualenv ./ratios.sh --target PostgresBenchmarks`. The
/// configuration provider's delivery (PostgresConfigLatency) comes with them.
let withPostgres = ProcessInfo.processInfo.environment["VALUESTORE_BENCHMARK_POSTGRES"] == "1"

/// Sync over HTTP (the Hummingbird routes over a PostgresSyncTable, on loopback) beside the same
/// work through the table in process, built only when asked, so a plain `swift package benchmark`
/// never resolves hummingbird:
/// `VALUESTORE_BENCHMARK_HTTP=1 pg_virtualenv ./ratios.sh --target SyncHTTPBenchmarks`. The
/// delivery over server-sent events (SyncHTTPLatency) and the open poke streams' memory
/// (SyncHTTPStreams) come with them.
let withHTTP = ProcessInfo.processInfo.environment["VALUESTORE_BENCHMARK_HTTP"] == "1"

/// The library and what an instrumented store is measured with: the no-op backends of swift-log,
/// swift-metrics and swift-distributed-tracing.
let instrumented: [Target.Dependency] = [
    .product(name: "ValueStore", package: library),
    .product(name: "ValueStoreObservability", package: library),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "Tracing", package: "swift-distributed-tracing"),
]

let package = Package(
    name: "ValueStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        // The raw seal the encrypted store is judged against; CryptoKit on Apple platforms.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        // The no-op backends the instrumented load is measured with.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.7.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.0"),
    ],
    targets: [
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FileBenchmarks",
            dependencies: [
                // The synced key's save row, beside the settings file's.
                .product(name: "ValueStoreSync", package: library),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
            ] + instrumented,
            path: "Benchmarks/FileBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ObservationBenchmarks",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ObservationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Not a package-benchmark suite: it measures latency between two processes, by clock. It
        // lives outside Benchmarks/, where the benchmark plugin would run it as a suite.
        .executableTarget(
            name: "ObservationLatency",
            dependencies: [.product(name: "ValueStore", package: library), "LatencySupport"],
            path: "Latency/ObservationLatency"
        ),
        // The instrumented jsonFile load against the bare one, interleaved in one process.
        .executableTarget(
            name: "InstrumentedLoad",
            dependencies: instrumented,
            path: "Latency/InstrumentedLoad"
        ),
        // The writer process, the clock and the report both latency tools share.
        .target(
            name: "LatencySupport",
            dependencies: [.product(name: "ValueStore", package: library)],
            path: "Latency/LatencySupport"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Observability for the instrumented row; with PostgreSQL and Configuration too, for
// PostgresBenchmarks, PostgresLatency and PostgresConfigLatency (run them under pg_virtualenv).
// With HTTP, PostgreSQL and Hummingbird, for SyncHTTPBenchmarks, SyncHTTPLatency and SyncHTTPStreams.
var traits: Set<String> = ["Observability"]
if withPostgres { traits.formUnion(["PostgreSQL", "Configuration"]) }
if withHTTP { traits.formUnion(["PostgreSQL", "Hummingbird"]) }
package.dependencies += [.package(path: "..", traits: Set(traits.map { Package.Dependency.Trait(name: $0) }))]
if withPostgres || withHTTP {
    package.dependencies.append(.package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"))
    package.targets.append(
        // The client the PostgreSQL and HTTP latency tools measure through.
        .target(
            name: "PostgresLatencySupport",
            dependencies: [.product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Latency/PostgresLatencySupport"
        ))
}
if withPostgres {
    package.targets += [
        .executableTarget(
            name: "PostgresBenchmarks",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "ValueStorePostgres", package: library),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Benchmark", package: "benchmark"),
                "PostgresLatencySupport",
            ],
            path: "Benchmarks/PostgresBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Cross-process delivery over PostgreSQL, by clock, as ObservationLatency.
        .executableTarget(
            name: "PostgresLatency",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "ValueStorePostgres", package: library),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "LatencySupport", "PostgresLatencySupport",
            ],
            path: "Latency/PostgresLatency"
        ),
        // A ConfigReader's delivery of a flag another process saves, beside changes() of the
        // same row, by clock.
        .executableTarget(
            name: "PostgresConfigLatency",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "ValueStorePostgres", package: library),
                .product(name: "ValueStoreConfiguration", package: library),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                "LatencySupport", "PostgresLatencySupport",
            ],
            path: "Latency/PostgresConfigLatency"
        ),
        // A synced change's delivery to another device through PostgresSyncTable, beside the
        // PostgreSQL store's own cross-process delivery, by clock.
        .executableTarget(
            name: "PostgresSyncLatency",
            dependencies: [
                .product(name: "ValueStore", package: library),
                .product(name: "ValueStorePostgres", package: library),
                .product(name: "ValueStoreSync", package: library),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "LatencySupport", "PostgresLatencySupport",
            ],
            path: "Latency/PostgresSyncLatency"
        ),
    ]
    package.dependencies.append(.package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"))
}
if withHTTP {
    package.dependencies.append(.package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"))
    // A second HTTP client, for the rows that show what the client library costs (hummingbird's
    // own graph already resolves it; the library never depends on it).
    package.dependencies.append(
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"))
    // Its request and buffer types (swift-nio), which the transport over it names.
    package.dependencies.append(.package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"))
    /// What every HTTP tool serves and measures through: the routes over a PostgresSyncTable in
    /// this process, on 127.0.0.1, and the remotes that reach them.
    let http: [Target.Dependency] = [
        .product(name: "ValueStore", package: library),
        .product(name: "ValueStorePostgres", package: library),
        .product(name: "ValueStoreSync", package: library),
        .product(name: "ValueStoreSyncHTTP", package: library),
        .product(name: "ValueStoreSyncHTTPServer", package: library),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
    ]
    package.targets += [
        // Pushes over HTTP beside the same pushes through table.remote(for:), one device and 32.
        .executableTarget(
            name: "SyncHTTPBenchmarks",
            dependencies: http + [
                "SyncHTTPSupport", "PostgresLatencySupport", .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/SyncHTTPBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // A synced change's delivery to another device over HTTP and server-sent events, beside the
        // same through PostgresSyncTable directly, by clock, as PostgresSyncLatency.
        .executableTarget(
            name: "SyncHTTPLatency",
            dependencies: http + ["SyncHTTPSupport", "LatencySupport"],
            path: "Latency/SyncHTTPLatency"
        ),
        // The memory 1,000 open poke streams cost the server, and its PostgreSQL connections.
        .executableTarget(
            name: "SyncHTTPStreams",
            dependencies: http + ["SyncHTTPSupport"],
            path: "Latency/SyncHTTPStreams"
        ),
        // The in-process server the three share, and its PostgreSQL client.
        .target(
            name: "SyncHTTPSupport", dependencies: http + ["PostgresLatencySupport"], path: "Latency/SyncHTTPSupport"),
    ]
}
