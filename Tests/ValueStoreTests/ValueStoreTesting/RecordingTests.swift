import Testing
import ValueStore
import ValueStoreTesting

@Suite struct RecordingTests {
    @Test func updateThroughARecordingStoreStaysAtomic() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let store = ValueStore<Void, Int>.inMemory(0).recording(into: recorder)
        try await concurrently(100) { _ in try await store.update { $0 += 1 } }
        #expect(try await store.load() == 100)
        #expect(recorder.savedValues.sorted() == Array(1...100))
        #expect(store.label == "in-memory store")
    }

    @Test func recordsEachOperationWithItsValue() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let store = ValueStore<Void, Int>.inMemory(1).recording(into: recorder)
        try await store.update { $0 += 1 }
        try await store.remove()
        #expect(recorder.operations == [.load, .save(2), .remove])
        #expect(recorder.savedValues == [2])
        let loaded = try recorder.records[0].result.get()
        #expect(loaded == 1)
    }

    @Test func recordsFailures() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let store = ValueStore<Void, Int>.inMemory().recording(into: recorder)
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        let record = try #require(recorder.records.first)
        #expect(record.operation == .load)
        #expect(throws: ValueStoreError.notFound) { try record.result.get() }
    }

    @Test func resetForgets() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let store = ValueStore<Void, Int>.inMemory().recording(into: recorder)
        try await store.save(1)
        recorder.reset()
        #expect(recorder.operations.isEmpty)
    }

    @Test func recordsConcurrentOperations() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let store = ValueStore<Void, Int>.inMemory(0).recording(into: recorder)
        try await concurrently(200) { index in try await store.save(index) }
        #expect(Set(recorder.savedValues) == Set(0..<200))
    }
}
