// valuestore-sync-server: sync over HTTP over a PostgreSQL table, configured by environment.
//
//     VALUESTORE_SYNC_JWT_HS256_SECRET=… pg_virtualenv swift run \
//         --traits PostgreSQL,Configuration,Hummingbird valuestore-sync-server
//
// The variables are in SyncServerConfiguration.swift and Documentation/ServingSyncOverHTTP.md.
import Foundation

#if PostgreSQL && Configuration && Hummingbird
import Configuration

do {
    let configuration = try SyncServerConfiguration(reader: ConfigReader(provider: EnvironmentVariablesProvider()))
    try await SyncServerApp(configuration: configuration).run()
} catch let error as SyncServerConfiguration.Invalid {
    FileHandle.standardError.write(Data("valuestore-sync-server: \(error)\n".utf8))
    exit(64)
} catch {
    FileHandle.standardError.write(Data("valuestore-sync-server: \(error)\n".utf8))
    exit(1)
}
#else
FileHandle.standardError.write(
    Data(
        "valuestore-sync-server needs the PostgreSQL, Configuration and Hummingbird traits: "
            .appending("swift run --traits PostgreSQL,Configuration,Hummingbird valuestore-sync-server\n").utf8))
exit(64)
#endif
