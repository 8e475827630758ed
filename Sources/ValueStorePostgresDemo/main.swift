// Two processes sharing values through PostgreSQL. Run it under pg_virtualenv, which makes a
// throwaway server and sets PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE:
//
//     pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo
//
// This process creates the table, watches a greeting, and starts a second copy of itself (the
// "other machine"), which saves the greeting and counts a visit three times with `update`. This
// process prints each change as the notification brings it, then the count both agree on.
//
// Then the two processes are two devices of one user, syncing through a `PostgresSyncTable`:
// each keeps its values in a folder of its own, the other device changes the theme and pushes,
// and this device, poked through PostgreSQL, pulls it.
//
// With the Configuration trait too, this process also reads a feature flag through a
// swift-configuration `ConfigReader` over the table, and the other machine flips it:
//
//     pg_virtualenv swift run --traits PostgreSQL,Configuration ValueStorePostgresDemo

import Foundation

#if PostgreSQL
import PostgresNIO
import ValueStore
import ValueStorePostgres
import ValueStoreSync
#if Configuration
import Configuration
import ValueStoreConfiguration
#endif

/// Prints a line at once, so the two processes' lines interleave in the order they happen.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let environment = PostgresEnvironment()
guard environment.host != nil, environment.user != nil else {
    say("No server: run `pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo`.")
    exit(1)
}
let configuration = try environment.configuration()
let client = PostgresClient(
    configuration: configuration,
    backgroundLogger: Logger(label: "demo"))
let isOtherMachine = CommandLine.arguments.dropFirst().first == "other-machine"
let me = isOtherMachine ? "other machine (pid \(getpid()))" : "this machine (pid \(getpid()))"

try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await client.run() }
    defer { group.cancelAll() }

    let table = try PostgresValueTable(client: client, name: "demo_values")
    let greeting = table.store("greeting", as: String.self)
    let visits = table.store("visits", as: Int.self).default(0)
    // One user's devices: each process is one, with its own folder.
    let sync = try PostgresSyncTable(client: client, name: "demo_sync")
    let account = SyncAccount(id: "demo-user")
    let folder = FileManager.default.temporaryDirectory.appending(path: "valuestore-demo-device-\(getpid())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let device = try SyncReplica(directory: folder, account: account, remote: sync.remote(for: account))
    let theme = device.store("theme", as: String.self)

    if isOtherMachine {
        try await greeting.save("Hello from the \(me)")
        for _ in 1...3 {
            let count = try await visits.update { $0 += 1 }
            say("  \(me): visits is now \(count)")
        }
        #if Configuration
        try await table.dataStore("flags").save(Data(#"{"checkout": {"enabled": true}}"#.utf8))
        say("  \(me): flipped checkout.enabled to true")
        #endif
        try await device.syncNow()
        try await theme.save("dark")  // durable on this device at once
        try await device.syncNow()  // pushed: the other device is poked
        say("  \(me)'s device set the theme to dark and pushed it")
        return
    }

    try await table.createIfNeeded()
    try await sync.createIfNeeded()
    try await sync.startNewEpoch(for: account)  // the demo's account starts afresh each run
    try await device.syncNow()
    group.addTask { try await device.run() }  // pushes and pulls, poked through PostgreSQL
    var themes = theme.changes().makeAsyncIterator()
    _ = await themes.next()  // no theme yet on this device
    try await greeting.remove()
    try await visits.remove()
    try await table.dataStore("flags").remove()
    say("\(me) watches 'greeting' and starts the other machine")
    var changes = greeting.changes().makeAsyncIterator()
    _ = await changes.next()  // absent, for now

    #if Configuration
    // A live flag: the provider follows the row, and the reader's watcher hears each change.
    let flags = try await ValueStoreConfigProvider<JSONSnapshot>(store: table.dataStore("flags"), name: "flags")
    let config = ConfigReader(providers: [flags])
    group.addTask { try await flags.run() }  // in an app: a service of its ServiceGroup
    say("\(me)'s ConfigReader reads checkout.enabled = \(config.bool(forKey: "checkout.enabled", default: false))")
    let flagFlipped = Task {
        try await config.watchBool(forKey: "checkout.enabled") { updates in
            for await enabled in updates where enabled == true {
                say("\(me)'s ConfigReader sees checkout.enabled = true")
                return
            }
        }
    }
    #else
    say("(add the Configuration trait to also see a ConfigReader follow a flag the other machine flips)")
    #endif

    let other = Process()
    other.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    other.arguments = ["other-machine"]
    try other.run()

    while let state = await changes.next() {
        if case .value(let text) = state {
            say("\(me) saw the greeting change to: \(text)")
            break
        }
    }
    other.waitUntilExit()
    say("\(me) loads visits: \(try await visits.load())")
    while let state = await themes.next() {
        if case .value(let value) = state {
            say("\(me)'s device synced the theme the other device set: \(value)")
            break
        }
    }
    #if Configuration
    try await flagFlipped.value
    #endif
}
#else
print("Built without the PostgreSQL trait: `pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo`.")
#endif
