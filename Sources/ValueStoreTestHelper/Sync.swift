// The sync mode of the helper, for the crash test of ValueStoreSync's replica.
//
//     ValueStoreTestHelper sync-save-loop DIRECTORY   saves synced keys until killed, printing
//                                                     each save once it returned, while `run()`
//                                                     pushes them to an in-process server

import Foundation
import ValueStore
import ValueStoreSync

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
