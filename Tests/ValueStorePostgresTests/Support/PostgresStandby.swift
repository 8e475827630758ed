#if PostgreSQL
import Foundation
import Glibc
import PostgresNIO

/// A hot standby of the `pg_virtualenv` server, made for one test: `pg_basebackup -R` into a
/// temporary directory and a second postmaster on a port of its own, streaming from the primary.
/// It can be promoted (a failover) and is removed when stopped.
///
/// ```swift
/// let standby = try await PostgresStandby.start()
/// defer { Task { try? await standby.remove() } }
/// try await standby.promote()
/// ```
struct PostgresStandby {
    /// The temporary directory holding its data and socket.
    let directory: String
    /// The TCP port it listens on, on `localhost`.
    let port: Int

    private static let binaries = "/usr/lib/postgresql"

    /// Makes a standby of the server and starts it; returns once it accepts connections.
    ///
    /// The backup asks the primary for an immediate checkpoint (`--checkpoint=fast`): the
    /// default, a spread one, paces its writes (about 0.1 s a dirty page) over up to 90% of
    /// `checkpoint_timeout`, so with the pages a full run leaves dirty it took over a minute.
    static func start() async throws -> PostgresStandby {
        let environment = ProcessInfo.processInfo.environment
        let primary = try PostgresServer.configuration()
        let version = try await Self.version()
        let directory = FileManager.default.temporaryDirectory.appending(path: "standby-\(UUID().uuidString)")
            .path(percentEncoded: false)
        let port = try freePort()
        let bin = "\(binaries)/\(version)/bin"
        // The primary's own pg_hba.conf, wherever its cluster keeps it (Debian: under /etc).
        let hba = try await PostgresServer.withClient { client in
            var file = ""
            for try await row in try await client.query("SHOW hba_file") {
                file = try row.decode(String.self)
            }
            return file
        }
        let script = """
            set -e
            mkdir -p '\(directory)' && chown postgres '\(directory)' && chmod 700 '\(directory)'
            runuser -u postgres -- env PGPASSWORD='\(primary.password ?? "")' '\(bin)/pg_basebackup' \
                -h '\(environment["PGHOST"] ?? "localhost")' -p '\(primary.port ?? 5432)' -U '\(primary.username)' \
                -D '\(directory)/data' -R -X stream --checkpoint=fast
            cp '\(hba)' '\(directory)/data/pg_hba.conf'
            printf "port = \(port)\\nlisten_addresses = 'localhost'\\nunix_socket_directories = '\(directory)'\\nhot_standby = on\\n" \
                > '\(directory)/data/postgresql.conf'
            chown -R postgres '\(directory)'
            runuser -u postgres -- '\(bin)/pg_ctl' -D '\(directory)/data' -l '\(directory)/log' -w start
            """
        try await shell(script)
        return PostgresStandby(directory: directory, port: port)
    }

    /// The client configuration of a client for the standby.
    func configuration() throws -> PostgresClient.Configuration {
        try PostgresServer.configuration(port: port)
    }

    /// Promotes it: it stops following the primary and takes writes (a failover).
    func promote() async throws {
        let version = try await Self.version()
        try await Self.shell(
            "runuser -u postgres -- '\(Self.binaries)/\(version)/bin/pg_ctl' -D '\(directory)/data' -w promote")
    }

    /// Stops it (a fast shutdown), so it receives nothing more from the primary.
    func stop() async throws {
        let version = try await Self.version()
        try await Self.shell(
            "runuser -u postgres -- '\(Self.binaries)/\(version)/bin/pg_ctl' -D '\(directory)/data' -m fast -w stop")
    }

    /// Starts it again as a primary of its own, with only what it had received: an
    /// asynchronous standby promoted after the primary was lost.
    func startAsPrimary() async throws {
        let version = try await Self.version()
        try await Self.shell(
            """
            set -e
            rm -f '\(directory)/data/standby.signal'
            runuser -u postgres -- '\(Self.binaries)/\(version)/bin/pg_ctl' -D '\(directory)/data' -l '\(directory)/log' -w start
            """)
    }

    /// Stops it at once and removes its directory.
    func remove() async throws {
        let version = try await Self.version()
        try await Self.shell(
            """
            runuser -u postgres -- '\(Self.binaries)/\(version)/bin/pg_ctl' -D '\(directory)/data' -m immediate stop || true
            rm -rf '\(directory)'
            """)
    }

    /// Runs `script` with `/bin/sh` through perl, which unblocks every signal first (see
    /// ``PostgresServer/restartImmediately()``: a postmaster started with signals blocked never
    /// finishes starting).
    static func shell(_ script: String) async throws {
        try await PostgresServer.run(
            "/usr/bin/perl", "-MPOSIX", "-e",
            "sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die; exec @ARGV or die", "--",
            "/bin/sh", "-c", script)
    }

    /// The server's major version, for the path of its binaries: `PGVERSION` (pg_virtualenv
    /// sets it), else the cluster that listens on `PGPORT`.
    static func version() async throws -> String {
        if let version = ProcessInfo.processInfo.environment["PGVERSION"] {
            return version
        }
        return try await PostgresServer.cluster().version
    }

    /// A TCP port nothing listens on now: the kernel's choice for a socket bound to port 0.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PostgresServer.Missing(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw PostgresServer.Missing(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
#endif
