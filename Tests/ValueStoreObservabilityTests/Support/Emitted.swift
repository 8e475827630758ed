#if Observability
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import Tracing

/// An in-memory logger, metrics factory and tracer for one test, and everything they received
/// as text, to look for what must never be there.
struct Emitted: Sendable {
    let logs: InMemoryLogHandler
    let metrics = TestMetrics()
    let tracer = InMemoryTracer()
    let logger: Logger

    init(label: String = "test \(UUID().uuidString)") {
        var logs = InMemoryLogHandler()
        logs.logLevel = .trace
        self.logs = logs
        logger = Logger(label: label) { _ in logs }
    }

    /// Every log entry's level, message and metadata; every metric's label and dimensions; every
    /// span's name, attributes, status, events and recorded errors.
    var everything: [String] {
        var texts: [String] = []
        for entry in logs.entries {
            texts.append("\(entry.level) \(entry.message) \(entry.metadata) \(entry.error.map { "\($0)" } ?? "")")
        }
        for counter in metrics.counters {
            texts.append("\(counter.label) \(counter.dimensions)")
        }
        for timer in metrics.timers {
            texts.append("\(timer.label) \(timer.dimensions)")
        }
        for span in tracer.finishedSpans {
            var text = "\(span.operationName) \(span.kind) \(String(describing: span.status))"
            // SpanAttributes is no Sequence: forEach is its only walk.
            // swift-format-ignore: ReplaceForEachWithForLoop
            span.attributes.forEach { name, value in text += " \(name)=\(value)" }
            text += " \(span.events.map(\.name)) \(span.errors.map { "\($0.error)" })"
            texts.append(text)
        }
        return texts
    }

    /// The texts that contain any of `secrets`.
    func leaks(of secrets: [String]) -> [String] {
        everything.filter { text in secrets.contains { text.contains($0) } }
    }
}
#endif
