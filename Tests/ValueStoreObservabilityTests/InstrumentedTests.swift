#if Observability
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing
import ValueStore
import ValueStoreObservability

/// What an instrumented store emits: the spans, metrics and log entries the Observability guide
/// names, with their dimensions.
@Suite struct InstrumentedTests {
    @Test func eachOperationHasASpanATimerAndADebugEntry() async throws {
        let emitted = Emitted()
        let store = ValueStore<Void, Int>.inMemory().instrumented(
            as: "counter", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        _ = try? await store.load()
        try await store.save(1)
        _ = try await store.update { $0 += 1 }
        try await store.remove()

        let spans = emitted.tracer.finishedSpans
        #expect(
            spans.map(\.operationName) == [
                "valuestore.load", "valuestore.save", "valuestore.update", "valuestore.remove",
            ])
        #expect(spans.allSatisfy { $0.kind == .internal })
        #expect(spans.map { $0.attributes.get("valuestore.outcome") } == ["absent", "ok", "ok", "ok"])
        #expect(spans[0].attributes.get("error.type") == "notFound")
        // Absence is an answer, not a failed operation.
        #expect(spans.allSatisfy { $0.status == nil })
        #expect(spans[2].attributes.get("valuestore.update.runs") == 1)

        // The timers that recorded something (those of successful operations are made up front).
        let timers = emitted.metrics.timers.filter { $0.label == "valuestore.operation.duration" && !$0.values.isEmpty }
        let dimensions = Set(timers.map { $0.dimensions.map { "\($0.0)=\($0.1)" }.sorted().joined(separator: " ") })
        #expect(
            dimensions == [
                "error.type=notFound valuestore.operation=load valuestore.store=counter",
                "valuestore.operation=save valuestore.store=counter",
                "valuestore.operation=update valuestore.store=counter",
                "valuestore.operation=remove valuestore.store=counter",
            ])
        #expect(timers.allSatisfy { $0.values.count == 1 && $0.values[0] >= 0 })

        let entries = emitted.logs.entries.filter { $0.metadata["valuestore.operation"] != nil }
        #expect(entries.count == 4)
        #expect(entries.allSatisfy { $0.level == .debug && $0.metadata["valuestore.store"] == "counter" })
        #expect(
            entries.map { "\($0.message)" } == [
                "valuestore.load", "valuestore.save", "valuestore.update", "valuestore.remove",
            ])
    }

    @Test func aFailureCarriesItsCodeAndAnErrorStatus() async throws {
        let emitted = Emitted()
        let store = ValueStore<Void, Int>.failing(ValueStoreError(.unavailable, store: "server", reason: "down"))
            .instrumented(as: "quota", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        await #expect(throws: ValueStoreError(.unavailable)) { try await store.load() }
        let span = try #require(emitted.tracer.finishedSpans.first)
        #expect(span.status?.code == .error)
        #expect(span.status?.message == nil)
        #expect(span.attributes.get("error.type") == "unavailable")
        #expect(span.attributes.get("valuestore.outcome") == "error")
        #expect(span.errors.isEmpty)
        let timer = try emitted.metrics.expectTimer(
            "valuestore.operation.duration",
            [("valuestore.store", "quota"), ("valuestore.operation", "load"), ("error.type", "unavailable")])
        #expect(timer.values.count == 1)
    }

    @Test func anUpdateWhoseBodyRanAgainCountsTheRetries() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "retries-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appending(path: "count.json")
        let emitted = Emitted()
        let store = ValueStore<Void, Int>.jsonFile(url).instrumented(
            as: "count", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        try await store.save(1)
        var runs = 0
        _ = try await store.update { value in
            runs += 1
            if runs == 1 {
                // Another writer gets in while the body runs: the update reads again.
                try Data("10".utf8).write(to: url, options: .atomic)
            }
            value += 1
        }
        #expect(runs == 2)
        #expect(try await store.load() == 11)
        let retries = try emitted.metrics.expectCounter("valuestore.update.retries", [("valuestore.store", "count")])
        #expect(retries.totalValue == 1)
        let update = try #require(emitted.tracer.finishedSpans.first { $0.operationName == "valuestore.update" })
        #expect(update.attributes.get("valuestore.update.runs") == 2)
    }

    @Test func aCancelledOperationIsCalledCancelled() async throws {
        let emitted = Emitted()
        let store = ValueStore<Void, Int>(
            load: {
                try await Task.sleep(for: .seconds(60))
                return 1
            },
            save: { $0 },
            remove: {}
        )
        .instrumented(as: "slow", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        let loading = Task { try await store.load() }
        loading.cancel()
        await #expect(throws: CancellationError.self) { try await loading.value }
        let span = try #require(emitted.tracer.finishedSpans.first)
        #expect(span.attributes.get("valuestore.outcome") == "cancelled")
        #expect(span.attributes.get("error.type") == "cancelled")
    }

    @Test func withoutALoggerEntriesGoToTheTaskLocalLogger() async throws {
        let emitted = Emitted()
        let store = ValueStore<Void, Int>.inMemory(1).instrumented(
            as: "local", metrics: emitted.metrics, tracer: emitted.tracer)
        _ = try await withLogger(emitted.logger) { _ in
            try await store.load()
        }
        #expect(emitted.logs.entries.contains { $0.metadata["valuestore.store"] == "local" })
    }

    @Test func changesPassThroughAndASpanNestsWhatTheBaseStoreTraces() async throws {
        let emitted = Emitted()
        let base = ValueStore<Void, Int>.inMemory(1)
        let inner = base.instrumented(
            as: "inner", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        let outer = inner.instrumented(
            as: "outer", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        var states = outer.changes().makeAsyncIterator()
        #expect(await states.next()?.value == 1)
        try await base.save(2)
        #expect(await states.next()?.value == 2)
        let spans = emitted.tracer.finishedSpans
        let innerLoad = try #require(spans.first { $0.attributes.get("valuestore.store") == "inner" })
        let outerLoad = try #require(spans.first { $0.attributes.get("valuestore.store") == "outer" })
        #expect(innerLoad.parentSpanID == outerLoad.spanID)
    }

    @Test func eventsTheCoreCannotThrowAreLoggedAtInfoOrWarningAndCounted() async throws {
        let emitted = Emitted()
        _ = ValueStore<Void, Int>.inMemory().instrumented(
            as: "any", logger: emitted.logger, metrics: emitted.metrics, tracer: emitted.tracer)
        let source = "PostgreSQL table 'test_\(UUID().uuidString.prefix(8))'"
        ValueStoreEvent.report(
            ValueStoreEvent(
                .listeningAgain, source: source, message: "the listening connection was lost; listening again"))
        ValueStoreEvent.report(
            ValueStoreEvent(.cannotListen, severity: .warning, source: source, message: "no connection"))
        let entries = emitted.logs.entries.filter { $0.metadata["valuestore.source"] == .string(source) }
        #expect(entries.map(\.level) == [.info, .warning])
        #expect(entries.map { $0.metadata["valuestore.event"] } == ["listeningAgain", "cannotListen"])
        #expect("\(entries[0].message)" == "the listening connection was lost; listening again")
        #expect(
            try emitted.metrics.expectCounter("valuestore.events", [("valuestore.event", "listeningAgain")]).totalValue
                >= 1)
    }

    @Test func aStoreWhoseLabelNamesAServerIsAClient() async throws {
        let emitted = Emitted()
        var store = ValueStore<Void, Int>.inMemory(1)
        store.label = "PostgreSQL table 'app_values', key 'flags'"
        _ = try await store.instrumented(as: "flags", metrics: emitted.metrics, tracer: emitted.tracer).load()
        #expect(emitted.tracer.finishedSpans.first?.kind == .client)
    }
}
#endif
