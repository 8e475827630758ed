import Foundation

@testable import ValueStore

// The models and stores the README and the guides show, which DocumentationExamplesTests uses:
// `DocumentationTests` finds each guide's Swift block here as in any test.

struct Preferences: Codable, Equatable, Sendable {
    var theme = "system"
    var fontSize = 14
}

struct User: Codable, Equatable, Sendable {
    var name: String
}

extension URL {
    /// Application Support on Apple platforms, ~/.local/share on Linux.
    static let appData = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
}

extension ValueStore where Environment == Void, Value == [User] {
    static var users: Self {
        .jsonFile(URL.appData.appending(path: "users.json")).default([])
    }
}

struct AppPersistence: Sendable {
    var preferences: ValueStore<Void, Preferences>
    var token: ValueStore<Void, String>
}

extension AppPersistence {
    static func live(directory: URL) -> Self {
        Self(
            preferences: .jsonFile(directory.appending(path: "preferences.json")).default(Preferences()),
            token: ValueStore<Void, Data>.file(directory.appending(path: "token"), options: .private).coded(.utf8)
        )
    }

    static var mock: Self {
        Self(preferences: .inMemory(Preferences()), token: .inMemory("test-token"))
    }
}

// Core.md, "Writing your own store": blocking calls live in `@concurrent` functions.
struct BlobFolder: Sendable {
    let directory: URL

    @concurrent func read(_ name: String) async throws -> Data {
        do {
            return try Data(contentsOf: directory.appending(path: name))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            throw ValueStoreError(.notFound, store: "blob '\(name)'")
        }
    }

    @concurrent func write(_ data: Data, to name: String) async throws {
        try data.write(to: directory.appending(path: name), options: .atomic)
    }

    @concurrent func remove(_ name: String) async throws {
        do {
            try FileManager.default.removeItem(at: directory.appending(path: name))
        } catch let error as CocoaError where error.code == .fileNoSuchFile {
            return
        }
    }
}

extension ValueStore where Environment == Void, Value == Data {
    static func blob(_ name: String, in folder: BlobFolder) -> Self {
        ValueStore(
            label: "blob '\(name)'",
            load: { try await folder.read(name) },
            save: { data in
                try await folder.write(data, to: name)
                return data
            },
            remove: { try await folder.remove(name) }
        )
    }
}

struct Session: Sendable {
    var accountID: String
}

struct AppEnvironment: Sendable {
    var session: Session
}
