import Foundation
import ValueStore
import ValueStoreSync

/// A temporary folder for a test's devices, each in a folder of its own, and the server they
/// share; removed when the test is done.
///
/// ```swift
/// try await SyncSandbox.with { sandbox in
///     let phone = try sandbox.replica("phone")
/// }
/// ```
struct SyncSandbox: Sendable {
    let root: URL
    let server: InMemorySyncServer
    let account = SyncAccount(id: "user-42")

    static func with<Result>(
        server: InMemorySyncServer = InMemorySyncServer(),
        _ body: (_ sandbox: SyncSandbox) async throws -> Result
    ) async throws -> Result {
        let root = FileManager.default.temporaryDirectory
            .appending(path: "ValueStoreSyncTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        return try await body(SyncSandbox(root: root, server: server))
    }

    /// The folder of one device.
    func folder(_ device: String) -> URL {
        root.appending(path: device, directoryHint: .isDirectory)
    }

    /// Options for tests: no `fsync`, and a clock `offset` seconds off.
    static func options(offset: TimeInterval = 0) -> SyncOptions {
        var options = SyncOptions()
        options.fileOptions = .cache
        if offset != 0 {
            options.clock = SyncClock { Date().addingTimeInterval(offset) }
        }
        return options
    }

    /// A replica of `account` (the sandbox's by default) on `device`, talking to `remote` (the
    /// sandbox server's by default).
    func replica(
        _ device: String,
        account: SyncAccount? = nil,
        remote: SyncRemote? = nil,
        options: SyncOptions = options()
    ) throws -> SyncReplica {
        let account = account ?? self.account
        return try SyncReplica(
            directory: folder(device), account: account, remote: remote ?? server.remote(for: account),
            options: options)
    }
}

/// `syncNow()` on each replica, one after the other, in the order given.
func syncInTurn(_ replicas: SyncReplica...) async throws {
    for replica in replicas {
        try await replica.syncNow()
    }
}

/// Waits until the wall clock has moved on, so that a change made after this is stamped later
/// than one made before it: two changes within one millisecond are ordered by their replicas'
/// identities, not by the order they were made in.
func waitForALaterStamp() async throws {
    try await Task.sleep(for: .milliseconds(20))
}
