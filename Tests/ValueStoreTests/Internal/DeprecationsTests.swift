import Foundation
import Testing
import ValueStore

@Suite struct DeprecatedTests {
    @available(*, deprecated)
    @Test func oldNamesStillWork() async throws {
        #expect(try await ValueStore<Void, Int>.const(3).load() == 3)
        await #expect(throws: Boom()) { try await ValueStore<Void, Int>.error(Boom()).load() }
        await #expect(throws: ValueStoreError.noData) { try await ValueStore<Void, Int>.inMemory().load() }
    }

    @available(*, deprecated)
    @Test func conversionIsACodecAndMapAppliesIt() async throws {
        let base = ValueStore<Void, Int>.inMemory(4)
        let conversion = Conversion<String, Int>(to: { Int($0)! }, from: { String($0) })
        let store = base.map(conversion)
        #expect(try await store.load() == "4")
        try await store.save("5")
        #expect(try await base.load() == 5)
    }

    @available(*, deprecated)
    @Test func positionalMapTakesTheConversionToTheStoredTypeFirst() async throws {
        let base = ValueStore<Void, Int>.inMemory(4)
        let store = base.map({ (text: String) in Int(text)! }, { (stored: Int) in String(stored) })
        #expect(try await store.load() == "4")
        try await store.save("6")
        #expect(try await base.load() == 6)
    }

    @available(*, deprecated)
    @Test func processIsTheAsyncMap() async throws {
        let base = ValueStore<Void, Int>.inMemory(3)
        let store = base.process(
            preprocess: { (text: String) async throws -> Int in Int(text)! },
            postprocess: { (stored: Int) async throws -> String in String(stored) }
        )
        #expect(try await store.load() == "3")
        #expect(try await store.update { $0 += "0" } == "30")
        #expect(try await base.load() == 30)
    }

    @available(*, deprecated)
    @Test func representingStoresRawValues() async throws {
        let base = ValueStore<Void, String>.inMemory("dark")
        #expect(try await base.representing(by: Theme.self).load() == .dark)
        #expect(try await base.coded(Codec<Theme, String>.representing).load() == .dark)
        let unknown = ValueStore<Void, String>.inMemory("sepia").representing(by: Theme.self)
        let error = await #expect(throws: ValueStoreError.self) { try await unknown.load() }
        #expect(error?.code == .decodingFailed)
    }

    @available(*, deprecated)
    @Test func jsonCodecTakesTheDecoderFirst() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let codec = Codec<Settings, Data>.jsonCodec(JSONDecoder(), encoder)
        let text = String(decoding: try codec.to(.standard), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"fontSize\" : 14"))
        #expect(try Codec<Settings, Data>.jsonCodec().from(codec.to(.custom)) == .custom)
    }

    @available(*, deprecated)
    @Test func codecErrorIsFailing() throws {
        #expect(throws: Boom(id: 5)) { try Codec<Int, String>.error(Boom(id: 5)).to(1) }
    }

    @available(*, deprecated)
    @Test func referenceIsASendableBoxWithAStore() async throws {
        let reference = Reference<Int>(1)
        let store = reference.valueStore
        #expect(try await store.load() == 1)
        reference.value = 2
        #expect(try await store.load() == 2)
        try await store.remove()
        #expect(reference.value == nil)
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }

        let shared = Ref<Int>(0)
        try await concurrently(100) { _ in try await shared.valueStore.update { $0 += 1 } }
        #expect(shared.value == 100)
    }
}

extension DeprecatedTests {
    @available(*, deprecated)
    @Test func theUnsafeUserDefaultsStoresTakeAnyEnvironment() async throws {
        try await TemporarySuite.with { suite in
            let count = ValueStore<String, Int>.unsafeRawUserDefaults("count", userDefaults: suite.defaults)
            let saved = try await count.save(3, "ignored")
            #expect(saved == 3)
            #expect(try await ValueStore<Void, Int>.userDefaults("count", suiteName: suite.name).load() == 3)
            let profile = ValueStore<String, [String: String]>.unsafeJSONUserDefaults(
                "profile", userDefaults: suite.defaults)
            _ = try await profile.save(["name": "ada"], "ignored")
            #expect(try await profile.load("ignored") == ["name": "ada"])
            suite.defaults.set("three", forKey: "count")
            await #expect(throws: ValueStoreError(.decodingFailed), "a wrong type is not absence") {
                try await count.load("ignored")
            }
        }
    }
}
