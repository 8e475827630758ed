import Benchmark
import Foundation
import Logging
import Metrics
import Tracing
import ValueStore
import ValueStoreObservability

/// The 1 KB `jsonFile` load again, instrumented with swift-log's, swift-metrics' and the tracer's
/// no-op backends: what `instrumented(as:)` costs an app that has not bootstrapped any of them.
/// Judged against the bare load of the same file (`jsonFile 1 KB: load`), which sorts and runs
/// just before it.
func registerInstrumentedRows() {
    let format = Format<Settings>.json
    benchmarkInFreshDirectory("jsonFile 1 KB: load, instrumented", configuration: .smallLoads) { directory in
        let url = directory.appending(path: format.fileName)
        try await format.store(url).save(Settings.sample)
        let store = format.store(url).instrumented(
            as: "settings",
            logger: Logger(label: "benchmark") { _ in SwiftLogNoOpLogHandler() },
            metrics: NOOPMetricsHandler.instance,
            tracer: NoOpTracer())
        try expect(await store.load() == Settings.sample, "the instrumented store reads the value")
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }
}
