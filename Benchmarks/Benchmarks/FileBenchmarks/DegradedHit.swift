import Benchmark
import Foundation
import ValueStore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `cached()` hit of the 1 KB JSON value while its directory is not watched, as when the user
/// has no inotify instance left: the hit checks the file with one `stat` before answering from
/// memory, and tries no watch. Judged against a plain load of the same file (`jsonFile 1 KB:
/// load`), which it must stay well under.
///
/// The watch is refused the way the kernel refuses it, by `EMFILE`: this process may open no
/// more descriptors while the cache arms its watch. No other process is touched. The registry
/// retries on its own only every 2 seconds, so the samples, a few tens of milliseconds in all,
/// run degraded; the row checks that they did.
func registerDegradedHitRow() {
    let format = Format<Settings>.json
    benchmarkInFreshDirectory("jsonFile 1 KB: load, cached(): degraded hit", configuration: .smallLoads) {
        directory in
        let url = directory.appending(path: format.fileName)
        try await format.store(url).save(Settings.sample)
        let cached = format.store(url).cached()
        let starved = try DescriptorStarvation()
        // The first load arms the watch, which fails (EMFILE), and cannot open the file either.
        var refused = false
        do {
            _ = try await cached.load()
        } catch {
            refused = true
        }
        starved.end()
        try expect(refused, "with no descriptor left, the first load opens nothing")
        try expect(await cached.load() == Settings.sample, "the cache holds the value")
        try expect(cached.loadImmediately?(()) == nil, "the directory is not watched, so a hit checks first")
        return cached
    } measure: { benchmark, cached in
        for _ in benchmark.scaledIterations {
            blackHole(try await cached.load())
        }
        benchmark.stopMeasurement()
        try expect(cached.loadImmediately?(()) == nil, "every sample ran with the directory not watched")
    }
}

/// Holds every descriptor this process may still open, under a lowered limit, until ``end()``.
struct DescriptorStarvation {
    private let held: [Int32]
    private let limit: rlimit

    init() throws {
        var limit = rlimit()
        try expect(getrlimit(Self.resource, &limit) == 0, "getrlimit works")
        self.limit = limit
        var lowered = limit
        lowered.rlim_cur = 256
        try expect(setrlimit(Self.resource, &lowered) == 0, "the descriptor limit can be lowered")
        var held: [Int32] = []
        while true {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { break }
            held.append(descriptor)
        }
        self.held = held
        try expect(errno == EMFILE, "descriptors ran out at the limit")
    }

    /// Closes the descriptors and restores the limit.
    func end() {
        for descriptor in held {
            close(descriptor)
        }
        var limit = self.limit
        setrlimit(Self.resource, &limit)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
