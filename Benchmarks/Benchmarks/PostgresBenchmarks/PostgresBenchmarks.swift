import Benchmark
import Foundation
import PostgresLatencySupport
import PostgresNIO
import ValueStore
import ValueStorePostgres

// The PostgreSQL store against the same work written by hand with postgres-nio, on the same
// client and the same table shape (see targets.txt). A floor is named after its row so the two
// run one right after the other. Run under pg_virtualenv, which makes a throwaway server:
//
//     cd Benchmarks && pg_virtualenv ./ratios.sh --target PostgresBenchmarks
//
// Without the server variables the target registers nothing.

/// The value every row reads and writes: a few flags, about 100 bytes of JSON.
struct Flags: Codable, Equatable, Sendable {
    var newCheckout = true
    var banner = "Spring sale: 20% off everything"
    var limit = 42
}

extension Benchmark.Configuration {
    /// Each sample is one operation: a round trip or two on loopback, tens of microseconds.
    static var roundTrips: Self {
        Self(metrics: [.wallClock], warmupIterations: 20, maxDuration: .seconds(3), maxIterations: 5_000)
    }

    /// Each sample is eight tasks updating one key once each.
    static var contended: Self {
        Self(metrics: [.wallClock], warmupIterations: 5, maxDuration: .seconds(3), maxIterations: 1_000)
    }

    /// One sample of 100,000 loads, judged by the process's peak resident memory.
    static var residentMemory: Self {
        Self(
            metrics: [.peakMemoryResident, .wallClock], warmupIterations: 0, maxDuration: .seconds(600),
            maxIterations: 1)
    }

    /// Warm cache loads: nanoseconds.
    static var memory: Self {
        Self(metrics: [.wallClock], warmupIterations: 1_000, scalingFactor: .kilo, maxDuration: .seconds(2))
    }
}

/// One running client for the process; each benchmark runs in a process of its own.
let client: PostgresClient? = runningClient(label: "benchmarks")

let logger = Logger(label: "benchmarks")

let benchmarks: @Sendable () -> Void = {
    guard let client else {
        print("PostgresBenchmarks: no PGHOST and PGUSER; run under pg_virtualenv to measure.")
        return
    }
    Benchmark.defaultConfiguration = .roundTrips

    /// A fresh table with one stored value, for each benchmark.
    func table() async throws -> PostgresValueTable {
        let table = try PostgresValueTable(client: client, name: "bench_\(UInt32.random(in: 0...UInt32.max))")
        try await table.createIfNeeded()
        try await table.store("flags", as: Flags.self).save(Flags())
        return table
    }

    Benchmark("postgres: load, floor: SELECT + decode") { benchmark, table in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            let rows = try await client.query("SELECT value FROM \(unescaped: table.name) WHERE key = \("flags")")
            for try await value in rows.decode(Data.self) {
                blackHole(try decoder.decode(Flags.self, from: value))
            }
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: load") { benchmark, table in
        let flags = table.store("flags", as: Flags.self)
        for _ in benchmark.scaledIterations {
            blackHole(try await flags.load())
        }
    } setup: {
        try await table()
    }

    // What 100,000 loads, one after another, leave in memory: through postgres-nio's own
    // client.query and through the store, on one client (each row runs in a process of its own).
    // ratios.sh judges a row named "resident memory" by its peak resident memory, not its time.
    Benchmark("postgres: 100,000 loads, resident memory, floor: client.query", configuration: .residentMemory) {
        benchmark, table in
        for _ in 0..<100_000 {
            let rows = try await client.query("SELECT value FROM \(unescaped: table.name) WHERE key = \("flags")")
            for try await value in rows.decode(Data.self) {
                blackHole(value)
            }
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: 100,000 loads, resident memory", configuration: .residentMemory) { benchmark, table in
        let flags = table.dataStore("flags")
        for _ in 0..<100_000 {
            blackHole(try await flags.load())
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: save, floor: encode + upsert") { benchmark, table in
        let encoder = JSONEncoder()
        for _ in benchmark.scaledIterations {
            let value = try encoder.encode(Flags())
            let rows = try await client.query(
                """
                INSERT INTO \(unescaped: table.name) (key, value, version) VALUES (\("flags"), \(value), 1)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = \(unescaped: table.name).version + 1,
                    updated_at = now()
                """
            )
            for try await _ in rows {}
        }
    } setup: {
        try await table()
    }

    // The store's own statement, written by hand and prepared once per connection as the store
    // prepares it: what the store's own path adds to the write it must make.
    Benchmark("postgres: save, floor: the same statement, prepared by hand") { benchmark, table in
        let encoder = JSONEncoder()
        for _ in benchmark.scaledIterations {
            let value = try encoder.encode(Flags())
            for try await _ in try await client.execute(PreparedSave(key: "flags", value: value), logger: logger) {}
        }
    } setup: {
        let table = try PostgresValueTable(client: client, name: PreparedSave.table)
        try await table.createIfNeeded()
        return table
    }

    Benchmark("postgres: save") { benchmark, table in
        let flags = table.store("flags", as: Flags.self)
        for _ in benchmark.scaledIterations {
            blackHole(try await flags.save(Flags()))
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: update, floor: SELECT FOR UPDATE + UPDATE") { benchmark, table in
        for _ in benchmark.scaledIterations {
            try await lockingUpdate(client, table: table.name)
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: update") { benchmark, table in
        let flags = table.store("flags", as: Flags.self)
        for _ in benchmark.scaledIterations {
            blackHole(try await flags.update { $0.limit += 1 })
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: update, 8 tasks, floor: SELECT FOR UPDATE + UPDATE", configuration: .contended) {
        benchmark, table in
        for _ in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await lockingUpdate(client, table: table.name) }
                }
                try await group.waitForAll()
            }
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres: update, 8 tasks", configuration: .contended) { benchmark, table in
        let flags = table.store("flags", as: Flags.self)
        for _ in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await flags.update { $0.limit += 1 } }
                }
                try await group.waitForAll()
            }
        }
    } setup: {
        try await table()
    }

    Benchmark("postgres cached(): warm load, floor: inMemory load", configuration: .memory) { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    } setup: {
        ValueStore<Void, Flags>.inMemory(Flags())
    }

    Benchmark("postgres cached(): warm load", configuration: .memory) { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    } setup: { () async throws -> ValueStore<Void, Flags> in
        let cached = try await table().store("flags", as: Flags.self).cached()
        _ = try await cached.load()
        return cached
    }

    Benchmark("postgres cached(): hit, floor: inMemory cached() hit", configuration: .memory) { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    } setup: { () async throws -> ValueStore<Void, Flags> in
        let cached = ValueStore<Void, Flags>.inMemory(Flags()).cached()
        _ = try await cached.load()
        return cached
    }

    Benchmark("postgres cached(): hit while listening", configuration: .memory) { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    } setup: { () async throws -> ValueStore<Void, Flags> in
        let cached = try await table().store("flags", as: Flags.self).cached()
        // A hit answers from memory only once the listener listens with a proven connection;
        // before that, every load reads the server.
        while try cached.loadImmediately?(()) == nil {
            _ = try await cached.load()
            try await Task.sleep(for: .milliseconds(10))
        }
        return cached
    }
}

/// The floor's update: a transaction that locks the row, decodes, changes, encodes and writes.
@Sendable func lockingUpdate(_ client: PostgresClient, table: String) async throws {
    try await client.withTransaction(logger: logger) { connection in
        let rows = try await connection.query(
            "SELECT value FROM \(unescaped: table) WHERE key = \("flags") FOR UPDATE", logger: logger)
        var flags = Flags()
        for try await value in rows.decode(Data.self) {
            flags = try JSONDecoder().decode(Flags.self, from: value)
        }
        flags.limit += 1
        let value = try JSONEncoder().encode(flags)
        let updated = try await connection.query(
            "UPDATE \(unescaped: table) SET value = \(value), version = version + 1 WHERE key = \("flags")",
            logger: logger
        )
        for try await _ in updated {}
    }
}

/// The store's save statement with a fixed table, prepared by postgres-nio once per connection.
struct PreparedSave: PostgresPreparedStatement {
    static let table = "bench_prepared"
    static let sql = """
        INSERT INTO \(table) AS stored (key, value, version)
        SELECT $1::text, $2::bytea, 1 WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = stored.version + 1, updated_at = now()
        RETURNING pg_notify('bench'::text, stored.version || ' ' || 'writer'::text || ' ' || $1::text)
        """

    var key: String
    var value: Data

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(key)
        bindings.append(ByteBuffer(bytes: value))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
