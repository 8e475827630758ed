// The sync device over HTTP: the same device and commands as SyncDevice.swift, its replicas
// syncing with a valuestore-sync-server through `SyncRemote.http`, for the PostgreSQL chaos
// test's HTTP mode.
//
//     ValueStoreTestHelper sync-device NAME DIRECTORY ACCOUNT --http URL --tokens DIRECTORY
//
// URL is the server's sync routes (`http://127.0.0.1:PORT/sync`, a test's forwarder). The bearer
// token of each account is the content of the file named for the account in the tokens
// DIRECTORY, read before the first request and again each time the server refuses the token it
// sent (401): the test rotates a token by writing the file, and a refused token the file still
// holds is refused once more, then `unauthorized`, with everything kept pending.

import Foundation

#if PostgreSQL
import ValueStoreSync
import ValueStoreSyncHTTP

func syncDeviceOverHTTP(_ arguments: [String]) async throws {
    guard arguments.count == 7, arguments[3] == "--http", arguments[5] == "--tokens",
        let url = URL(string: arguments[4])
    else {
        FileHandle.standardError.write(
            Data("usage: sync-device NAME DIRECTORY ACCOUNT --http URL --tokens DIRECTORY\n".utf8))
        exit(64)
    }
    logErrorsOnly()
    let tokens = URL(fileURLWithPath: arguments[6], isDirectory: true)
    var options = SyncHTTPOptions()
    options.pokes = .serverSentEvents
    // A request through a blackholed forwarder gives up within seconds.
    options.requestTimeout = .seconds(5)
    let settings = options
    let device = SyncDevice(
        name: arguments[0], directory: URL(fileURLWithPath: arguments[1]),
        remote: { account in
            SyncRemote.http(url, account: account, options: settings) { _ in
                try String(contentsOf: tokens.appending(path: account.id), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        },
        account: arguments[2])
    try await device.serve()
}
#endif
