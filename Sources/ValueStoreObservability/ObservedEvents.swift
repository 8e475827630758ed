#if Observability
import Logging
import Metrics
import Synchronization
import ValueStore

/// Where the events the core cannot throw go (``/ValueStore/ValueStoreEvent``): the loggers and
/// metrics of the stores instrumented so far, once per logger label.
///
/// The first ``/ValueStore/ValueStore/instrumented(as:logger:metrics:tracer:)`` connects the
/// core's hook; each later one with a logger of a new label adds that logger, and one with a
/// label seen before replaces it. An event is logged once per label, at info level, or warning
/// while changes may go unseen, and counted in `valuestore.events` by the metrics that came with
/// the logger.
final class ObservedEvents: Sendable {
    static let shared = ObservedEvents()

    private struct Destination {
        let logger: Logger
        let metrics: any MetricsFactory
    }

    private let destinations = Mutex<[String: Destination]>([:])

    /// Sends the core's events to `logger` and `metrics` too, from now on.
    func connect(logger: Logger, metrics: any MetricsFactory) {
        let first = destinations.withLock { destinations in
            defer { destinations[logger.label] = Destination(logger: logger, metrics: metrics) }
            return destinations.isEmpty
        }
        if first {
            ValueStoreEvent.connect { [self] event in deliver(event) }
        }
    }

    private func deliver(_ event: ValueStoreEvent) {
        let destinations = destinations.withLock { Array($0.values) }
        for destination in destinations {
            let metadata: Logger.Metadata = [
                "valuestore.event": .string(event.kind.rawValue),
                "valuestore.source": .string(event.source),
            ]
            switch event.severity {
            case .info: destination.logger.info("\(event.message)", metadata: metadata)
            case .warning: destination.logger.warning("\(event.message)", metadata: metadata)
            }
            Counter(
                label: "valuestore.events", dimensions: [("valuestore.event", event.kind.rawValue)],
                factory: destination.metrics
            )
            .increment()
        }
    }
}
#endif
