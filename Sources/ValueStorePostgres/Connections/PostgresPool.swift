#if PostgreSQL
import NIOConcurrencyHelpers
import PostgresNIO

/// What the store reads of a client's pool and configuration.
///
/// postgres-nio publishes neither the client's configuration nor why its pool cannot connect,
/// and its pool keeps a request queued while it retries (for up to a minute). So the store reads
/// the configuration by reflection, under the client's own lock; each read is `nil` if a release
/// moves what it reads, and a wait for a connection is then bounded and described as if the
/// pool had said nothing.
enum PostgresPool {
    /// The pool's `maximumConnections`, kept in an immutable property.
    static func maximumConnections(of client: PostgresClient) -> Int? {
        Mirror(reflecting: client).descendant("pool", "configuration", "maximumConnectionHardLimit") as? Int
    }

    /// The client's configuration, password included: for ``PostgresProbe`` only, never quoted.
    static func configuration(of client: PostgresClient) -> PostgresClient.Configuration? {
        guard let box = Mirror(reflecting: client).descendant("factory", "configBox") as? any PostgresLockedBox
        else { return nil }
        return Mirror(reflecting: box.lockedValue).descendant("config") as? PostgresClient.Configuration
    }

    /// The event loops the client's connections run on.
    static func eventLoopGroup(of client: PostgresClient) -> any EventLoopGroup {
        Mirror(reflecting: client).descendant("factory", "eventLoopGroup") as? any EventLoopGroup
            ?? PostgresClient.defaultEventLoopGroup
    }
}

/// A value behind one of NIO's locks, read under the lock.
private protocol PostgresLockedBox {
    var lockedValue: Any { get }
}

extension NIOLockedValueBox: PostgresLockedBox {
    fileprivate var lockedValue: Any {
        withLockedValue { $0 }
    }
}
#endif
