import Benchmark
import Foundation
import PostgresLatencySupport
import PostgresNIO
import SyncHTTPSupport
import Synchronization
import ValueStorePostgres
import ValueStoreSync
import ValueStoreSyncHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Sync over HTTP against the same work through the PostgreSQL sync table in process: the routes
// (Hummingbird, in this process, on 127.0.0.1) over a PostgresSyncTable, reached through
// `SyncRemote.http`, beside `table.remote(for:)` of a table of the same shape on the same client
// (see targets.txt). A floor is named after its row so the two run one right after the other.
// Run under pg_virtualenv, which makes a throwaway server:
//
//     cd Benchmarks && VALUESTORE_BENCHMARK_HTTP=1 pg_virtualenv ./ratios.sh --target SyncHTTPBenchmarks
//
// Without the server variables the target registers nothing.

extension Benchmark.Configuration {
    /// Each sample is one push, or 32 at once: a few round trips on loopback, a millisecond or so.
    static var pushes: Self {
        Self(metrics: [.wallClock], warmupIterations: 20, maxDuration: .seconds(4), maxIterations: 5_000)
    }
}

/// One running client for the process; each benchmark runs in a process of its own.
let client = runningClient(label: "benchmarks")

/// A device of a benchmark: its remote, and what each of its pushes names.
final class Device: Sendable {
    let account: SyncAccount
    let replica: ReplicaID
    let remote: SyncRemote
    let epoch: UUID
    /// The stamp of the next push, in milliseconds: each push is newer than the last.
    private let generation = Atomic<Int>(0)

    init(account: SyncAccount, remote: SyncRemote) async throws {
        self.account = account
        replica = ReplicaID("device-\(account.id)")
        self.remote = remote
        epoch = try await SyncHTTPSupport.epoch(of: account, through: remote)
    }

    /// Pushes `changes` changes, newer than the last push's, and checks they were accepted.
    func push(changes: Int) async throws {
        let generation = generation.add(1, ordering: .relaxed).newValue
        try await pushAccepted(
            pushRequest(account: account, replica: replica, epoch: epoch, generation: generation, changes: changes),
            through: remote)
    }
}

/// Where a benchmark's devices push: over HTTP to the loopback server (through the default
/// transport, URLSession, or through AsyncHTTPClient), through the client and the server's
/// service with no HTTP between them, or to its table directly.
enum Path {
    case http
    case httpThroughAsyncHTTPClient
    case serviceInProcess
    case direct

    /// `count` devices of their own accounts on a new server.
    func devices(_ count: Int, client: PostgresClient) async throws -> [Device] {
        let server = try await LoopbackSyncServer.start(
            client: client, name: "bench_\(UInt32.random(in: 0...UInt32.max))")
        var devices: [Device] = []
        for index in 0..<count {
            let account = SyncAccount(id: "account-\(index)")
            let remote =
                switch self {
                case .http: server.http(for: account, pokes: .none)
                case .httpThroughAsyncHTTPClient: server.http(for: account, pokes: .none, transport: .asyncHTTPClient)
                case .serviceInProcess:
                    server.http(
                        for: account, pokes: .none,
                        transport: .inProcess(server.service, mountedAt: server.url, account: account))
                case .direct: server.table.remote(for: account)
                }
            devices.append(try await Device(account: account, remote: remote))
        }
        return devices
    }
}

let benchmarks: @Sendable () -> Void = {
    guard let client else {
        print("SyncHTTPBenchmarks: no PGHOST and PGUSER; run under pg_virtualenv to measure.")
        return
    }
    Benchmark.defaultConfiguration = .pushes

    // Each push row beside its floor; the AsyncHTTPClient and in-process rows are context, judged
    // by no target: the same push through another HTTP client, and the client's requests and the
    // service's answers with no HTTP between them.
    let paths: [(Path, String)] = [
        (.direct, ", floor: table.remote(for:)"), (.http, ""),
        (.httpThroughAsyncHTTPClient, ", through AsyncHTTPClient"),
        (.serviceInProcess, ", client and service in process, no HTTP"),
    ]
    for (changes, name) in [(1, "push of 1 change"), (500, "push of 500 changes")] {
        for (path, suffix) in paths {
            Benchmark("sync over HTTP: \(name)\(suffix)") { benchmark, devices in
                for _ in benchmark.scaledIterations {
                    try await devices[0].push(changes: changes)
                }
            } setup: {
                try await path.devices(1, client: client)
            }
        }
    }

    // Context, judged by no target: what HTTP alone costs here, a bare POST of 600 bytes (about
    // twice a one-change push's JSON) to the same server, answered 404 by Hummingbird before any
    // route of the service runs.
    for (transport, name) in [(SyncHTTPTransport.urlSession(), ""), (.asyncHTTPClient, ", through AsyncHTTPClient")] {
        Benchmark("sync over HTTP: a bare POST answered 404\(name)") { benchmark, url in
            for _ in benchmark.scaledIterations {
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.httpBody = Data(repeating: UInt8(ascii: "a"), count: 600)
                request.setValue("application/json", forHTTPHeaderField: "content-type")
                let (_, head) = try await transport.send(request)
                guard head.statusCode == 404 else {
                    throw ValueStoreSyncHTTPBenchmarkError("a bare POST was answered \(head.statusCode), not 404")
                }
            }
        } setup: {
            let server = try await LoopbackSyncServer.start(
                client: client, name: "bench_\(UInt32.random(in: 0...UInt32.max))")
            return server.url.deletingLastPathComponent().appending(path: "elsewhere")
        }
    }

    // Throughput: each sample is one push of one change from each of 32 devices (32 accounts), all
    // at once. Pushes per second are 32 over the sample's time, so the ratio of the times is the
    // inverse of the ratio of the rates.
    for path in [Path.direct, .http] {
        let name = "sync over HTTP: 32 devices pushing at once"
        Benchmark(path == .http ? name : "\(name), floor: table.remote(for:)") { benchmark, devices in
            for _ in benchmark.scaledIterations {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for device in devices {
                        group.addTask { try await device.push(changes: 1) }
                    }
                    try await group.waitForAll()
                }
            }
        } setup: {
            try await path.devices(32, client: client)
        }
    }
}
