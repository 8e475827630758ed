// The sync mode of the helper, for the crash test of ValueStoreSync's replica.
//
//     ValueStoreTestHelper sync-save-loop DIRECTORY   saves synced keys until killed, printing
//                                                     each save once it returned, while `run()`
//                                                     pushes them to an in-process server
//     ValueStoreTestHelper sync-share-loop DIRECTORY NAME FROM TO
//                                                     saves NAME-I = "NAME-I" for I in FROM..<TO
//                                                     in the folder another process shares,
//                                                     offline, the journal folded every few
//                                                     saves, printing I once its save returned
//     ValueStoreTestHelper sync-read DIRECTORY ACCOUNT KEY…
//                                                     as a user that may only read the folder
//                                                     (`nobody` when run as root), prints
//                                                     "KEY VALUE" (or "KEY CODE") for each key
//                                                     and "pending N", then saves "changed" in
//                                                     the first key: "save ok" or "save CODE:
//                                                     DESCRIPTION"
//     ValueStoreTestHelper sync-acknowledge-and-wait DIRECTORY URL
//                                                     saves two keys three times, each round
//                                                     pushed over HTTP to the server at URL and
//                                                     acknowledged, prints "flushed N of M" of
//                                                     its journal, and waits to be killed

import Foundation
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP

/// Saves `key0` … `key9` in turn, each the next sequence number, durably (the default options,
/// but a journal folded every few saves), and prints the number once the save returned; `run()`
/// pushes them meanwhile, so at the kill some are acknowledged and some pending.
func syncSaveLoop(directory: URL) async throws -> Never {
    let server = InMemorySyncServer()
    let account = SyncAccount(id: "crash")
    // A small journal, folded every few saves, so that kills land in folds too.
    var options = SyncOptions()
    options.journalFoldingSize = 4 * 1024
    let replica = try SyncReplica(
        directory: directory, account: account, remote: server.remote(for: account), options: options)
    Task { try await replica.run() }
    var sequence = try await replica.store("sequence", as: Int.self).optional().load() ?? 0
    while true {
        sequence += 1
        try await replica.store("key\(sequence % 10)", as: Int.self).save(sequence)
        try await replica.store("sequence", as: Int.self).save(sequence)
        FileHandle.standardOutput.write(Data("\(sequence)\n".utf8))
    }
}

/// Reads an account's synced string values from a folder it may only read, then tries to save.
func syncRead(directory: URL, account: String, keys: [String]) async throws {
    if getuid() == 0 {
        // Root writes anywhere: read as `nobody`, to whom the test's folder is read-only.
        guard setgid(65534) == 0, setuid(65534) == 0 else {
            FileHandle.standardError.write(Data("could not become nobody (errno \(errno))\n".utf8))
            exit(70)
        }
    }
    let unreachable = SyncRemote(
        label: "unreachable",
        push: { _ in throw ValueStoreError(.unavailable, store: "unreachable") },
        pull: { _ in throw ValueStoreError(.unavailable, store: "unreachable") })
    let replica = try SyncReplica(directory: directory, account: SyncAccount(id: account), remote: unreachable)
    var lines: [String] = []
    for key in keys {
        do {
            lines.append("\(key) \(try await replica.store(key, as: String.self).load())")
        } catch let error as ValueStoreError {
            lines.append("\(key) \(error.code.rawValue)")
        }
    }
    lines.append("pending \(replica.status.pendingChanges)")
    do {
        try await replica.store(keys[0], as: String.self).save("changed")
        lines.append("save ok")
    } catch let error as ValueStoreError {
        lines.append("save \(error.code.rawValue): \(error)")
    }
    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
}

/// Saves its own keys in a folder another process saves in too, with no server, printing each
/// once its save returned: what the two-process test checks survives.
func syncShareLoop(directory: URL, name: String, range: Range<Int>) async throws {
    let unreachable = SyncRemote(
        label: "unreachable",
        push: { _ in throw ValueStoreError(.unavailable, store: "unreachable") },
        pull: { _ in throw ValueStoreError(.unavailable, store: "unreachable") })
    var options = SyncOptions()
    options.journalFoldingSize = 4 * 1024  // folds every few saves, by either process
    let replica = try SyncReplica(
        directory: directory, account: SyncAccount(id: "shared"), remote: unreachable, options: options)
    for index in range {
        try await replica.store("\(name)-\(index)", as: String.self).save("\(name)-\(index)")
        FileHandle.standardOutput.write(Data("\(index)\n".utf8))
    }
}

/// Saves `theme` and `draft` three times each (`theme-N`, `draft-N`), pushing each round through
/// the sync server over HTTP at `url` until it is acknowledged, then prints how far its journal
/// is flushed (`flushed N of M`: the last acknowledgement is not yet) and waits to be killed.
func syncAcknowledgeAndWait(directory: URL, url: URL) async throws -> Never {
    let account = SyncAccount(id: "crash")
    let replica = try SyncReplica(
        directory: directory, account: account, remote: .http(url, account: account) { _ in "token" })
    for round in 1...3 {
        try await replica.store("theme", as: String.self).save("theme-\(round)")
        try await replica.store("draft", as: String.self).save("draft-\(round)")
        try await replica.syncNow()
    }
    let (flushed, length) = replica.journalExtent
    FileHandle.standardOutput.write(Data("flushed \(flushed) of \(length)\n".utf8))
    while true {
        try await Task.sleep(for: .seconds(60))
    }
}

/// Listens to the pokes of `account` at the sync server `url`, with `token`, and prints `poked`
/// for each, until killed: a device that stays idle with its stream open, whose CPU a test reads.
func syncPokes(url: URL, account: String, token: String) async -> Never {
    let remote = SyncRemote.http(url, account: SyncAccount(id: account)) { _ in token }
    for await _ in remote.pokes() {
        FileHandle.standardOutput.write(Data("poked\n".utf8))
    }
    exit(0)
}
