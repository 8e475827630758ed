#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreSync
import ValueStoreTestSupport

extension PostgresTests {
    /// Two device processes on one replica folder (an app and its extension), syncing through
    /// PostgreSQL, online and offline, one or the other killed: every save either acknowledged
    /// reaches the server once, and both show it.
    @Suite struct PostgresSharedFolderTests {
        @Test func twoProcessesOnOneFolderKeepAndPushEverySave() async throws {
            let root = FileManager.default.temporaryDirectory.appending(path: "ValueStoreShared-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            let folder = root.appending(path: "device")
            try await PostgresServer.withClient { client in
                let table = try PostgresSyncTable(client: client, name: "shared_\(PostgresServer.scratchName())")
                try await table.createIfNeeded()
                let app = try SyncDeviceProcess(name: "app", folder: folder, account: "alice", table: table.name)
                let widget = try SyncDeviceProcess(name: "widget", folder: folder, account: "alice", table: table.name)
                defer {
                    app.kill()
                    widget.kill()
                    app.forwarder.stop()
                    widget.forwarder.stop()
                }
                var acknowledged: [String: String] = [:]
                for round in 0..<5 {
                    // Round 2 is offline: both forwarders blackhole.
                    for device in [app, widget] { device.forwarder.mode = round == 2 ? .blackhole : .pass }
                    for index in 0..<20 {
                        let device = index.isMultiple(of: 2) ? app : widget
                        let key = "k\(round)-\(index)"
                        let answer = try await device.send("save \(key) \(device.name)-\(key)")
                        #expect(answer.error == nil, "\(device.name) could not save \(key): \(answer.error ?? "")")
                        if answer.error == nil { acknowledged[key] = "\(device.name)-\(key)" }
                    }
                    if round == 1 {
                        app.kill()  // while its run() may be pushing
                        try app.restart()
                    }
                    if round == 3 {
                        widget.kill()
                        try widget.restart()
                    }
                }
                for device in [app, widget] { device.forwarder.mode = .pass }
                var dumps: [SyncReplicaDump] = []
                for _ in 0..<10 {
                    for device in [app, widget] { _ = try await device.send("sync") }
                    dumps = [try await app.dump(), try await widget.dump()]
                    if dumps.allSatisfy({ $0.pendingChanges == 0 && $0.records.count >= acknowledged.count }) { break }
                }
                for dump in dumps {
                    #expect(dump.pendingChanges == 0, "\(dump.device) still has changes pending")
                    let shown = dump.records.compactMapValues { $0.value.map { String(decoding: $0, as: UTF8.self) } }
                    let missing = acknowledged.filter { shown[$0.key] != "\"\($0.value)\"" }.keys.sorted()
                    #expect(missing.isEmpty, "\(dump.device) does not show \(missing.prefix(10))")
                }
                // The server holds every save, once: nothing was archived as a loser.
                let account = SyncAccount(id: "alice")
                let reader = try SyncReplica(
                    directory: root.appending(path: "reader"), account: account, remote: table.remote(for: account))
                try await reader.syncNow()
                var missing: [String] = []
                for (key, value) in acknowledged {
                    let held = try await reader.store(key, as: String.self).optional().load()
                    if held != value { missing.append(key) }
                }
                #expect(missing.isEmpty, "the server lacks \(missing.prefix(10))")
                #expect(try await table.archivedConflicts(for: account).isEmpty)
            }
        }
    }
}
#endif
