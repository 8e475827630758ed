// valuestore-sync-server: sync over HTTP over a PostgreSQL table, configured by environment.
#if PostgreSQL && Configuration && Hummingbird
print("valuestore-sync-server: not yet")
#else
import Foundation

FileHandle.standardError.write(
    Data(
        "valuestore-sync-server needs the PostgreSQL, Configuration and Hummingbird traits: "
            .appending("swift run --traits PostgreSQL,Configuration,Hummingbird valuestore-sync-server\n").utf8))
exit(64)
#endif
