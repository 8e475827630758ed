import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore

@Suite struct CodedTests {
    @Test func storesTheEncodedForm() async throws {
        let data = ValueStore<Void, Data>.inMemory()
        let settings: ValueStore<Void, Settings> = data.coded(Codec<Settings, Data>.json)
        try await settings.save(.custom)
        let stored = try JSONDecoder().decode(Settings.self, from: try await data.load())
        #expect(stored == .custom)
        try await ValueStoreLaws.check(settings, samples: .standard, .custom)
    }

    @Test func undecodableDataIsNotAbsenceAndNamesTheStore() async throws {
        let data = ValueStore<Void, Data>.inMemory(Data("{\"theme\": 1}".utf8))
        let settings = data.coded(Codec<Settings, Data>.json).default(.standard)
        let error = await #expect(throws: ValueStoreError.self) { try await settings.load() }
        #expect(error?.code == .decodingFailed)
        #expect(error?.store == "in-memory store")
        #expect(try await data.load() == Data("{\"theme\": 1}".utf8), "bad data stays untouched")
    }

    @Test func encodingFailuresWriteNothing() async throws {
        let data = ValueStore<Void, Data>.inMemory(Data("1.5".utf8))
        let numbers = data.coded(Codec<Double, Data>.json)
        let error = await #expect(throws: ValueStoreError.self) { try await numbers.save(.infinity) }
        #expect(error?.code == .encodingFailed)
        #expect(try await numbers.load() == 1.5)
    }

    @Test func saveReturnsTheSavedValueWithoutDecodingItAgain() async throws {
        let decodes = Calls()
        let counting = Codec<Int, Data>(
            to: { Data(String($0).utf8) },
            from: { data in
                decodes.increment()
                return Int(String(decoding: data, as: UTF8.self))!
            }
        )
        let store = ValueStore<Void, Data>.inMemory().coded(counting)
        #expect(try await store.save(42) == 42)
        #expect(decodes.value == 0)
        #expect(try await store.load() == 42)
        #expect(decodes.value == 1)
    }

    @Test func updateStaysAtomicThroughCoded() async throws {
        let store = ValueStore<Void, Data>.inMemory().coded(Codec<Int, Data>.json).default(0)
        try await concurrently(500) { _ in try await store.update { $0 += 1 } }
        #expect(try await store.load() == 500)
    }

    @Test func updateDoesNotWriteWhenTheStoredDataIsBad() async throws {
        let data = ValueStore<Void, Data>.inMemory(Data("oops".utf8))
        let store = data.coded(Codec<Int, Data>.json).default(0)
        let error = await #expect(throws: ValueStoreError.self) { try await store.update { $0 += 1 } }
        #expect(error?.code == .corrupted)
        #expect(try await data.load() == Data("oops".utf8))
    }
}
