// What open poke streams cost the server: the routes, served by Hummingbird in this process on
// 127.0.0.1 over a PostgresSyncTable, while another process holds COUNT streams open
// (`GET v1/pokes`, each of an account of its own, each read up to its `ready` event). It prints
// the server's resident memory per stream (the growth from a baseline taken with a few streams
// already open, so what the first stream sets up once is not counted), and the PostgreSQL
// connections of the server's client, as pg_stat_activity lists them: listening takes one, however
// many accounts are followed. The target: 16 KiB a stream at most, and one listening connection.
// With VALUESTORE_STREAMS_ONE_ACCOUNT=1 every stream is of one account, so what a stream costs
// apart from its account's subscription shows (20.9 KiB, against 27.2 KiB with an account each).
// The floor is measured first, in the same process: as many bare event streams, served by
// Hummingbird alone (BareEventStreamServer), held open while the sync routes' are measured so
// that neither reuses the other's freed memory (19.0 KiB a stream: above the target itself).
// Run under pg_virtualenv:
//
//     cd Benchmarks && VALUESTORE_BENCHMARK_HTTP=1 pg_virtualenv swift run -c release SyncHTTPStreams [COUNT]

import Foundation
import PostgresLatencySupport
import PostgresNIO
import SyncHTTPSupport
import ValueStoreSync

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
// The streams' process: `--streams PORT FIRST COUNT` opens streams of accounts stream-FIRST…,
// says `open` when each has read its `ready`, and holds them until its standard input closes.
if arguments.count == 5, arguments[1] == "--streams" {
    let port = UInt16(arguments[2])!
    let first = Int(arguments[3])!
    var sockets: [Int32] = []
    for index in first..<first + Int(arguments[4])! {
        let oneAccount = ProcessInfo.processInfo.environment["VALUESTORE_STREAMS_ONE_ACCOUNT"] == "1"
        sockets.append(try openStream(port: port, account: oneAccount ? "stream-all" : "stream-\(index)"))
    }
    FileHandle.standardOutput.write(Data("open\n".utf8))
    _ = FileHandle.standardInput.readDataToEndOfFile()
    for socket in sockets { close(socket) }
    exit(0)
}

let count = arguments.count > 1 ? Int(arguments[1])! : 1_000
let client = runningClientFromEnvironment()

/// Opens a poke stream of `account` to the server on `port` and reads it up to its `ready`.
func openStream(port: UInt16, account: String) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard socket >= 0, connected == 0 else { throw ValueStoreSyncHTTPBenchmarkError("cannot connect: \(errno)") }
    let request =
        "GET /sync/v1/pokes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(account)\r\n"
        + "Accept: text/event-stream\r\n\r\n"
    _ = request.withCString { send(socket, $0, strlen($0), 0) }
    var received = ""
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !received.contains("event: ready") {
        let read = recv(socket, &buffer, buffer.count, 0)
        guard read > 0 else { throw ValueStoreSyncHTTPBenchmarkError("stream of \(account) ended: \(received)") }
        received += String(decoding: buffer[0..<read], as: UTF8.self)
    }
    return socket
}

/// The process's resident memory, in bytes, from /proc/self/status.
func residentBytes() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ")[1])
    else { throw ValueStoreSyncHTTPBenchmarkError("no VmRSS in /proc/self/status") }
    return kilobytes * 1024
}

/// Starts the streams' process with `count` streams from `first`, and waits until they are open.
func holdStreams(port: Int, first: Int, count: Int) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--streams", String(port), String(first), String(count)]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    let said = output.fileHandleForReading.readData(ofLength: 5)
    guard String(decoding: said, as: UTF8.self).hasPrefix("open") else {
        throw ValueStoreSyncHTTPBenchmarkError("the streams' process did not open its streams")
    }
    return (process, input)
}

/// The server's client's connections, as pg_stat_activity lists them: all, and the listening
/// ones, whose last statement was their LISTEN or, once following, the heartbeat's query that
/// names the channel it listens on.
func connections() async throws -> (all: Int, listening: Int) {
    let rows = try await client.query(
        """
        SELECT count(*)::int,
               (count(*) FILTER (WHERE query ILIKE 'LISTEN%' OR query LIKE '%valuestore listening on%'))::int
        FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
        """)
    for try await (all, listening) in rows.decode((Int, Int).self) {
        return (all, listening)
    }
    throw ValueStoreSyncHTTPBenchmarkError("pg_stat_activity answered nothing")
}

/// Holds `count` streams to the server on `port`, after 20 that set up what the first streams
/// set up once (the listener, the buffers the event loops keep); returns the resident memory
/// each of the `count` added, in KiB, and the processes that hold them all.
func residentKiBPerStream(port: Int, count: Int) async throws -> (Double, [(Process, Pipe)]) {
    let warm = try holdStreams(port: port, first: 0, count: 20)
    try await Task.sleep(for: .seconds(1))
    let before = try residentBytes()
    let held = try holdStreams(port: port, first: 20, count: count)
    try await Task.sleep(for: .seconds(1))
    let after = try residentBytes()
    return (Double(after - before) / Double(count) / 1024, [warm, held])
}

let (floor, floorStreams) = try await residentKiBPerStream(port: try await BareEventStreamServer.start(), count: count)
let server = try await LoopbackSyncServer.start(client: client, name: "streams_\(UInt32.random(in: 0...UInt32.max))")
let (perStream, streams) = try await residentKiBPerStream(port: server.url.port!, count: count)
let (all, listening) = try await connections()
print(
    String(
        format: "%d poke streams open: %.2f KiB a stream (target <= 16), against %.2f KiB a bare Hummingbird "
            + "event stream (%.2fx); the client's PostgreSQL connections: %d, %d of them listening (target: 1)",
        count + 20, perStream, floor, perStream / floor, all, listening))
for (process, input) in floorStreams + streams {
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
}
exit(perStream <= 16 && listening == 1 ? 0 : 1)
