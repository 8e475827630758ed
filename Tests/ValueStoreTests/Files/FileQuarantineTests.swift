import Foundation
import Testing
import ValueStore

@Suite struct FileQuarantineTests {
    @Test func movesACorruptFileAsideAndKeepsItsBytes() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            try Data("{ not json".utf8).write(to: url)
            let store = ValueStore<Void, Settings>.jsonFile(url)
            await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }

            let aside = try await FileQuarantine.moveAside(url)
            #expect(aside.lastPathComponent.hasPrefix("settings.json.corrupt-"))
            #expect(try aside.bytes() == Data("{ not json".utf8))
            #expect(try FileQuarantine.files(for: url) == [aside])

            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            try await store.save(.standard)
            #expect(try await store.load() == .standard)
        }
    }

    @Test func keepsEveryQuarantinedCopy() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            for content in ["one", "two"] {
                try Data(content.utf8).write(to: url)
                _ = try await FileQuarantine.moveAside(url)
            }
            let kept = try FileQuarantine.files(for: url).map { try String(decoding: $0.bytes(), as: UTF8.self) }
            #expect(Set(kept) == ["one", "two"])
        }
    }

    @Test func aMissingFileIsNotFound() async throws {
        try await TemporaryDirectory.with { directory in
            await #expect(throws: ValueStoreError.notFound) {
                try await FileQuarantine.moveAside(directory.appending(path: "none.json"))
            }
            await #expect(throws: ValueStoreError.notFound) {
                try await FileQuarantine.moveAside(directory.appending(path: "missing/none.json"))
            }
            let kept = try FileQuarantine.files(for: directory.appending(path: "missing/none.json"))
            #expect(kept.isEmpty)
        }
    }
}
