#if Observability
import Logging
import Metrics
import Tracing
import ValueStore

/// What an instrumented store measures with: its name, logger, metrics and tracer, and the
/// timers of successful operations, made once.
struct Instruments: Sendable {
    /// The operations of a store, as spans, metrics and logs name them.
    enum Operation: String, Sendable, CaseIterable {
        case load, save, remove, update

        /// The span's name: `valuestore.load`.
        var spanName: String {
            switch self {
            case .load: "valuestore.load"
            case .save: "valuestore.save"
            case .remove: "valuestore.remove"
            case .update: "valuestore.update"
            }
        }
    }

    let name: String
    let logger: Logger?
    let metrics: any MetricsFactory
    let tracer: any Tracer
    let kind: SpanKind
    /// The timer of each operation that did not throw; a failure's timer also carries its
    /// `error.type`, so it is made when it happens.
    let durations: [Operation: Timer]
    let retries: Counter

    init(name: String, logger: Logger?, metrics: any MetricsFactory, tracer: any Tracer, kind: SpanKind) {
        self.name = name
        self.logger = logger
        self.metrics = metrics
        self.tracer = tracer
        self.kind = kind
        durations = Dictionary(
            uniqueKeysWithValues: Operation.allCases.map { operation in
                (
                    operation,
                    Timer(
                        label: "valuestore.operation.duration",
                        dimensions: [("valuestore.store", name), ("valuestore.operation", operation.rawValue)],
                        factory: metrics)
                )
            })
        retries = Counter(
            label: "valuestore.update.retries", dimensions: [("valuestore.store", name)], factory: metrics)
    }

    /// The span kind of a store: `.client` when its label names a server (the PostgreSQL stores'
    /// labels start with "PostgreSQL table", the sync stores' with "sync"), `.internal` otherwise.
    static func spanKind(forLabel label: String) -> SpanKind {
        label.hasPrefix("PostgreSQL ") || label.hasPrefix("sync ") ? .client : .internal
    }

    /// Runs `body` (given how many times an update's body ran, to count) inside a span, then
    /// records its duration, retries and outcome, and logs it at debug level.
    func measure<Result>(_ operation: Operation, _ body: (_ runs: inout Int) async throws -> Result) async throws
        -> Result
    {
        try await measure(operation, tracer: tracer, body)
    }

    /// ``measure(_:_:)`` with the tracer's own type, so its span is not boxed.
    ///
    /// The span is started and ended here rather than through `withSpan`, which records a thrown
    /// error whole: an error's description names the store and may quote a key, which a span
    /// must never carry. With the no-op tracer there is nothing to record and no context to pass
    /// on, so neither the span nor its task-local context is made (about 3 µs a call otherwise).
    private func measure<Result, Traced: Tracer>(
        _ operation: Operation,
        tracer: Traced,
        _ body: (_ runs: inout Int) async throws -> Result
    ) async throws -> Result {
        let start = ContinuousClock.now
        var runs = 0
        let outcome: Swift.Result<Result, any Error>
        if Traced.self == NoOpTracer.self {
            outcome = await Self.outcome(of: body, runs: &runs)
        } else {
            let span = tracer.startSpan(operation.spanName, ofKind: kind)
            outcome = await InstrumentationContext.$current.withValue(span.context) {
                await Self.outcome(of: body, runs: &runs)
            }
            describe(span, operation, outcome: outcome, runs: runs)
            span.end()
        }
        let elapsed = ContinuousClock.now - start
        record(operation, outcome: outcome, runs: runs, elapsed: elapsed)
        return try outcome.get()
    }

    /// What `body` returned or threw.
    private static func outcome<Result>(
        of body: (_ runs: inout Int) async throws -> Result,
        runs: inout Int
    ) async -> Swift.Result<Result, any Error> {
        do {
            return .success(try await body(&runs))
        } catch {
            return .failure(error)
        }
    }

    /// Sets the span's attributes and, for a failure other than absence, its error status.
    private func describe<Result>(
        _ span: some Span,
        _ operation: Operation,
        outcome: Swift.Result<Result, any Error>,
        runs: Int
    ) {
        span.updateAttributes { attributes in
            attributes["valuestore.store"] = name
            attributes["valuestore.operation"] = operation.rawValue
            attributes["valuestore.outcome"] = Self.outcome(outcome)
            if case .failure(let error) = outcome {
                attributes["error.type"] = Self.errorType(error)
            }
            if operation == .update {
                attributes["valuestore.update.runs"] = runs
            }
        }
        if case .failure(let error) = outcome, !Self.isAbsence(error) {
            span.setStatus(SpanStatus(code: .error))
        }
    }

    /// Records the duration and retries, and logs the operation.
    private func record<Result>(
        _ operation: Operation,
        outcome: Swift.Result<Result, any Error>,
        runs: Int,
        elapsed: Duration
    ) {
        var errorType: String?
        switch outcome {
        case .success:
            durations[operation]!.record(duration: elapsed)
        case .failure(let error):
            let type = Self.errorType(error)
            errorType = type
            Timer(
                label: "valuestore.operation.duration",
                dimensions: [
                    ("valuestore.store", name), ("valuestore.operation", operation.rawValue), ("error.type", type),
                ],
                factory: metrics
            )
            .record(duration: elapsed)
        }
        if runs > 1 {
            retries.increment(by: runs - 1)
        }
        let logger = logger ?? Logger.current
        logger.debug(
            "valuestore.\(operation.rawValue)",
            metadata: {
                var metadata: Logger.Metadata = [
                    "valuestore.store": .string(name),
                    "valuestore.operation": .string(operation.rawValue),
                    "valuestore.outcome": .string(Self.outcome(outcome)),
                    "valuestore.duration_ms": .stringConvertible(Double(elapsed.microseconds) / 1000),
                ]
                if let errorType {
                    metadata["error.type"] = .string(errorType)
                }
                if operation == .update {
                    metadata["valuestore.update.runs"] = .stringConvertible(runs)
                }
                return metadata
            }())
    }

    /// `ok`, `absent` (``/ValueStore/ValueStoreError/Code/notFound``), `cancelled` or `error`.
    static func outcome<Result>(_ outcome: Swift.Result<Result, any Error>) -> String {
        switch outcome {
        case .success: "ok"
        case .failure(let error) where isAbsence(error): "absent"
        case .failure(let error) where error is CancellationError: "cancelled"
        case .failure: "error"
        }
    }

    static func isAbsence(_ error: any Error) -> Bool {
        (error as? ValueStoreError)?.code == .notFound
    }

    /// What `error.type` says of an error: a ``/ValueStore/ValueStoreError``'s code, `cancelled`,
    /// or the error's type name; never its description.
    static func errorType(_ error: any Error) -> String {
        if let error = error as? ValueStoreError {
            return error.code.rawValue
        }
        if error is CancellationError {
            return "cancelled"
        }
        return String(reflecting: type(of: error))
    }
}

extension Duration {
    /// The whole microseconds in the duration.
    fileprivate var microseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }
}
#endif
