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
///
/// Each entry carries `valuestore.event` (the kind), `valuestore.source` and, when stores
/// instrumented with the logger are concerned, their names in `valuestore.store`. An event about
/// files concerns a directory, whose path may name a user (`/home/alice.smith/…`): its source is
/// the names of those stores whose files are in the directory, or `directory` when there is
/// none, never the path. Other sources (`PostgreSQL table 'app_values'`) name no path and are
/// logged as they are.
final class ObservedEvents: Sendable {
    static let shared = ObservedEvents()

    /// A store instrumented with a logger: the name given, and its label, never emitted.
    private struct Instrumented: Hashable {
        let name: String
        let label: String
    }

    private struct Destination {
        var logger: Logger
        var metrics: any MetricsFactory
        var stores: Set<Instrumented> = []

        /// The names of the stores whose labels contain `text`, sorted.
        func names(containing text: String) -> [String] {
            Set(stores.filter { $0.label.contains(text) }.map(\.name)).sorted()
        }
    }

    private let destinations = Mutex<[String: Destination]>([:])

    /// Sends the core's events to `logger` and `metrics` too, from now on, naming the store
    /// instrumented as `name` in those about the files `label` names.
    func connect(logger: Logger, metrics: any MetricsFactory, name: String, label: String) {
        let first = destinations.withLock { destinations in
            let first = destinations.isEmpty
            var destination = destinations[logger.label] ?? Destination(logger: logger, metrics: metrics)
            destination.logger = logger
            destination.metrics = metrics
            destination.stores.insert(Instrumented(name: name, label: label))
            destinations[logger.label] = destination
            return first
        }
        if first {
            ValueStoreEvent.connect { [self] event in deliver(event) }
        }
    }

    private func deliver(_ event: ValueStoreEvent) {
        let destinations = destinations.withLock { Array($0.values) }
        for destination in destinations {
            var metadata: Logger.Metadata = ["valuestore.event": .string(event.kind.rawValue)]
            let names: [String]
            if let directory = event.directory {
                // A store's label quotes its file's path: `file '/srv/app/profile.json'`.
                names = destination.names(containing: "'\(directory.hasSuffix("/") ? directory : directory + "/")")
                metadata["valuestore.source"] = .string(names.isEmpty ? "directory" : names.joined(separator: ", "))
            } else {
                names = destination.names(containing: event.source)
                metadata["valuestore.source"] = .string(event.source)
            }
            if !names.isEmpty {
                metadata["valuestore.store"] = .string(names.joined(separator: ", "))
            }
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
