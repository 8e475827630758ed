import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// The replica's folder on disk: read where it may only be read.
@Suite(.timeLimit(.minutes(2))) struct ReplicaFilesTests {
    /// Makes `url` and everything in it read-only (`0o555` folders, `0o444` files), or writable
    /// again.
    private func setReadOnly(_ url: URL, _ readOnly: Bool) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        _ = manager.fileExists(atPath: url.path(percentEncoded: false), isDirectory: &isDirectory)
        if isDirectory.boolValue {
            if !readOnly { try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path) }
            for name in try manager.contentsOfDirectory(atPath: url.path(percentEncoded: false)) {
                try setReadOnly(url.appending(path: name), readOnly)
            }
            if readOnly { try manager.setAttributes([.posixPermissions: 0o555], ofItemAtPath: url.path) }
        } else {
            try manager.setAttributes([.posixPermissions: readOnly ? 0o444 : 0o644], ofItemAtPath: url.path)
        }
    }

    @Test func aReadOnlyFolderIsReadAndASaveThrowsAClearError() async throws {
        try await SyncSandbox.with { sandbox in
            let directory = sandbox.folder("phone")
            let replica = try sandbox.replica("phone")
            try await replica.store("theme", as: String.self).save("dark")
            try await replica.syncNow()
            try await replica.store("draft", as: String.self).save("Dear Ann")  // pending
            try setReadOnly(sandbox.root, true)
            defer { try? setReadOnly(sandbox.root, false) }
            let reader = try HelperProcess(
                "sync-read", directory.path(percentEncoded: false), sandbox.account.id, "theme", "draft", "missing")
            #expect(await reader.exitStatus() == 0)
            let lines = reader.lines()
            #expect(Array(lines.prefix(4)) == ["theme dark", "draft Dear Ann", "missing notFound", "pending 1"])
            let save = try #require(lines.last)
            #expect(save.hasPrefix("save io:"), "\(save)")
            #expect(save.contains("read-only"), "\(save)")
        }
    }
}
