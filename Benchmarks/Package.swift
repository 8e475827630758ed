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
package.dependencies += [
    .package(path: "..", traits: withPostgres ? ["Observability", "PostgreSQL", "Configuration"] : ["Observability"])
]
if withPostgres {
    package.dependencies.append(.package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"))
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
        // The client the PostgreSQL benchmarks and both latency tools measure through.
        .target(
            name: "PostgresLatencySupport",
            dependencies: [.product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Latency/PostgresLatencySupport"
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
