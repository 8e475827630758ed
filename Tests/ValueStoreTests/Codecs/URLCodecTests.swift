import Foundation
import Testing
import ValueStore

@Suite struct URLCodecTests {
    @Test(arguments: [
        "https://example.com/a?b=c#d",
        "mailto:someone@example.com",
        "custom-scheme://host/path",
    ])
    func absoluteURLsRoundTripAsTheirString(string: String) throws {
        let url = try #require(URL(string: string))
        #expect(try Codec<URL, String>.url.to(url) == string)
        #expect(try Codec<URL, String>.url.from(string) == url)
    }

    @Test func fileURLsAreStoredAsPaths() throws {
        let file = URL(filePath: "/tmp/exports/report 1.csv")
        let stored = try Codec<URL, String>.url.to(file)
        #expect(stored == "/tmp/exports/report 1.csv")
        let loaded = try Codec<URL, String>.url.from(stored)
        #expect(loaded.isFileURL)
        #expect(loaded == file)
    }

    @Test func aTrailingSlashIsADirectory() throws {
        let directory = URL(filePath: "/tmp/exports/", directoryHint: .isDirectory)
        let stored = try Codec<URL, String>.url.to(directory)
        #expect(stored == "/tmp/exports/")
        #expect(try Codec<URL, String>.url.from(stored).hasDirectoryPath)
    }

    @Test func fileURLStringsDecodeToo() throws {
        let loaded = try Codec<URL, String>.url.from("file:///tmp/a.txt")
        #expect(loaded.isFileURL)
        #expect(loaded.path(percentEncoded: false) == "/tmp/a.txt")
    }

    @Test(arguments: ["", "relative/path", "not a url", "example.com"])
    func invalidStringsFailToDecode(string: String) throws {
        let error = #expect(throws: ValueStoreError.self) { try Codec<URL, String>.url.from(string) }
        #expect(error?.code == .decodingFailed)
    }

    @Test func aStoreOfURLs() async throws {
        let lastExport = ValueStore<Void, String>.inMemory().coded(Codec<URL, String>.url)
        try await lastExport.save(URL(filePath: "/tmp/export.csv"))  // stores "/tmp/export.csv"
        #expect(try await lastExport.load() == URL(filePath: "/tmp/export.csv"))

        let corrupt = ValueStore<Void, String>.inMemory("nonsense").coded(Codec<URL, String>.url)
        let error = await #expect(throws: ValueStoreError.self) { try await corrupt.load() }
        #expect(error?.code == .decodingFailed)
        #expect(error?.store == "in-memory store")
    }
}
