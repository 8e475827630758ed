#if Observability
public import Logging
public import Metrics
public import Tracing
public import ValueStore

extension ValueStore where Environment: Sendable {
    /// The same store, with a span, a duration and a debug log for every operation.
    ///
    /// ```swift
    /// let profile = ValueStore<Void, Profile>.jsonFile(url)
    ///     .instrumented(as: "profile")
    /// ```
    ///
    /// Each `load`, `save`, `remove` and `update` runs inside a span named `valuestore.load`,
    /// `valuestore.save`, `valuestore.remove` or `valuestore.update` (kind `.client` for a store
    /// whose label names a server, PostgreSQL or sync; `.internal` otherwise), records its
    /// duration in the timer `valuestore.operation.duration`, and logs one entry at debug level.
    /// An `update` whose body ran more than once counts the extra runs in
    /// `valuestore.update.retries`. Every one of them carries `valuestore.store` (the `name`
    /// given here) and, when the operation threw, `error.type`: the
    /// ``/ValueStore/ValueStoreError``'s code (`notFound`, `corrupted`, `unavailable`, …),
    /// `cancelled`, or the type name of another error. The span's status is an error for every
    /// failure but absence, which is an answer. Changes pass through as they are.
    ///
    /// What the core cannot throw (a directory's watch lost and armed again, a PostgreSQL
    /// listener listening again, a change a sync server refused) is logged at info level, or
    /// warning while changes may go unseen, to this store's logger and counted in
    /// `valuestore.events`; see the Observability guide.
    ///
    /// > Important: Nothing that is emitted carries a value, a decrypted byte, a key the app's
    /// > users chose, a password or a connection string: only `name`, the operation, the
    /// > outcome and the error's code or type. An error's description, which names the store and
    /// > may quote a key, is never emitted.
    ///
    /// Every operation goes through the instrumented `load`, so a store instrumented over
    /// ``/ValueStore/ValueStore/cached()`` answers its hits with a span too: the synchronous
    /// ``/ValueStore/ValueStore/loadImmediately`` path is not kept.
    ///
    /// - Parameters:
    ///   - name: What the store is called in every span, metric and log entry; choose it as a
    ///     developer, never from user input.
    ///   - logger: Where the entries go; `nil` (the default) logs to the task-local
    ///     `Logger.current` of each operation.
    ///   - metrics: Where the timer and the counters are recorded.
    ///   - tracer: What starts the spans.
    /// - Returns: A store that does what this one does, observed.
    public func instrumented(
        as name: String,
        logger: Logger? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory,
        tracer: any Tracer = InstrumentationSystem.tracer
    ) -> Self {
        let instruments = Instruments(
            name: name, logger: logger, metrics: metrics, tracer: tracer,
            kind: Instruments.spanKind(forLabel: label))
        ObservedEvents.shared.connect(logger: logger ?? Logger.current, metrics: metrics, name: name, label: label)
        let base = self
        return ValueStore(
            label: label,
            load: { environment in
                try await instruments.measure(.load) { _ in try await base.load(environment) }
            },
            save: { value, environment in
                try await instruments.measure(.save) { _ in try await base.save(value, environment) }
            },
            remove: { environment in
                try await instruments.measure(.remove) { _ in try await base.remove(environment) }
            },
            update: { environment, body in
                try await instruments.measure(.update) { runs in
                    try await base.update(environment) { value in
                        runs += 1
                        try await body(&value)
                    }
                }
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
#endif
