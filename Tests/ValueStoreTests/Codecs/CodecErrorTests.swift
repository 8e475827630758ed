import Foundation
import Testing
import ValueStore

@Suite struct CodecErrorTests {
    enum MigrationError: Error, Equatable {
        case unsupported
    }

    enum SettingsError: Error {
        case unreadable(any Error)
    }

    @Test func failingThrowsBothWays() throws {
        let codec = Codec<Settings, Data>.failing(Boom(id: 3))
        #expect(throws: Boom(id: 3)) { try codec.to(.standard) }
        #expect(throws: Boom(id: 3)) { try codec.from(Data()) }
    }

    @Test func aFailingCodecThroughAStore() async throws {
        let unreadable = ValueStore<Void, Data>.inMemory(Data())
            .coded(Codec<Settings, Data>.failing(MigrationError.unsupported))
        let loading = await #expect(throws: ValueStoreError.self) { try await unreadable.load() }
        #expect(loading?.code == .decodingFailed)
        #expect(loading?.underlyingError as? MigrationError == .unsupported)
        let saving = await #expect(throws: ValueStoreError.self) { try await unreadable.save(.standard) }
        #expect(saving?.code == .encodingFailed)

        let absent = ValueStore<Void, Data>.inMemory().coded(Codec<Settings, Data>.failing(Boom()))
        await #expect(throws: ValueStoreError.notFound) { try await absent.load() }
    }

    @Test func mapErrorReplacesTheErrorsOfBothConversions() throws {
        let strict = Codec<Settings, Data>.json.mapError { error in
            SettingsError.unreadable(error)
        }
        #expect(try strict.from(strict.to(.custom)) == .custom)
        let error = try #require(throws: SettingsError.self) { try strict.from(Data("{".utf8)) }
        switch error {
        case .unreadable(let underlying):
            #expect((underlying as? ValueStoreError)?.code == .corrupted)
        }

        let failing = Codec<Int, String>.failing(Boom(id: 1)).mapError { _ in Boom(id: 2) }
        #expect(throws: Boom(id: 2)) { try failing.to(1) }
        #expect(throws: Boom(id: 2)) { try failing.from("1") }
    }

    @Test func mapErrorCanChooseTheCodeAStoreReports() async throws {
        let codec = Codec<Int, String>(to: { String($0) }, from: { _ in throw Boom() })
            .mapError { _ in ValueStoreError(.corrupted, reason: "not a number") }
        let store = ValueStore<Void, String>.inMemory("x").coded(codec)
        let error = await #expect(throws: ValueStoreError.self) { try await store.load() }
        #expect(error?.code == .corrupted)
        #expect(error?.reason == "not a number")
    }
}

@Suite struct ReversedCodecTests {
    @Test func swapsTheConversions() async throws {
        let keychainItem = ValueStore<Void, String>.inMemory()
        // A store of strings (a keychain item, say) that should hold JSON documents:
        let settings =
            keychainItem
            .coded(Codec<String, Data>.utf8.reversed())
            .coded(Codec<Settings, Data>.json)
        try await settings.save(.custom)
        #expect(try await keychainItem.load().contains("\"theme\":\"dark\""))
        #expect(try await settings.load() == .custom)

        let invalid = #expect(throws: ValueStoreError.self) {
            try Codec<String, Data>.utf8.reversed().to(Data([0xFF, 0xFE]))
        }
        #expect(invalid?.code == .corrupted)
    }
}
