// Two processes sharing values through PostgreSQL. Run it under pg_virtualenv, which makes a
// throwaway server and sets PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE:
//
//     pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo
//
// This process creates the table, watches a greeting, and starts a second copy of itself (the
// "other machine"), which saves the greeting and counts a visit three times with `update`. This
// process prints each change as the notification brings it, then the count both agree on.
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
#if Configuration
import Configuration
import ValueStoreConfiguration
#endif

/// Prints a line at once, so the two processes' lines interleave in the order they happen.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let environment = ProcessInfo.processInfo.environment
guard let host = environment["PGHOST"], let user = environment["PGUSER"] else {
    say("No server: run `pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo`.")
    exit(1)
}
let configuration = PostgresClient.Configuration(
    host: host,
    port: environment["PGPORT"].flatMap(Int.init) ?? 5432,
    username: user,
    password: environment["PGPASSWORD"],
    database: environment["PGDATABASE"],
    tls: .disable
)
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
        return
    }

    try await table.createIfNeeded()
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
    #if Configuration
    try await flagFlipped.value
    #endif
}
#else
print("Built without the PostgreSQL trait: `pg_virtualenv swift run --traits PostgreSQL ValueStorePostgresDemo`.")
#endif
