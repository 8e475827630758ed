// swift-tools-version: 6.1
// The benchmarks live in their own package so the library's manifest stays dependency-free.

import Foundation
import PackageDescription

/// A path dependency is identified by its folder's name, which depends on where the repository
/// was cloned; read it rather than assume it.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

/// The PostgreSQL rows build postgres-nio and need a server, so they are built only when asked:
/// `VALUESTORE_BENCHMARK_POSTGRES=1 pg_virtualenv ./ratios.sh --target PostgresBenchmarks`.
let withPostgres = ProcessInfo.processInfo.environment["VALUESTORE_BENCHMARK_POSTGRES"] == "1"

let package = Package(
    name: "ValueStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        // The raw seal the encrypted store is judged against; CryptoKit on Apple platforms.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
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
                .product(name: "ValueStore", package: library),
                // The synced key's save row, beside the settings file's.
                .product(name: "ValueStoreSync", package: library),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
            ],
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
        // The writer process, the clock and the report both latency tools share.
        .target(
            name: "LatencySupport",
            dependencies: [.product(name: "ValueStore", package: library)],
            path: "Latency/LatencySupport"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// With the PostgreSQL trait, for PostgresBenchmarks and PostgresLatency (run them under
// pg_virtualenv); the other targets use only ValueStore.
package.dependencies += [
    withPostgres ? .package(path: "..", traits: ["PostgreSQL"]) : .package(path: "..")
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
                "LatencySupport",
            ],
            path: "Latency/PostgresLatency"
        ),
    ]
}
