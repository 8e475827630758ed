public import Foundation

/// The wall clock a replica (or the in-memory server) reads: the system's, or a test's.
///
/// A replica's timestamps start from it, corrected by what the server's answers taught the
/// replica, so a wrong clock neither wins every conflict nor is refused forever. Tests inject
/// skew:
///
/// ```swift
/// var options = SyncOptions()
/// options.clock = SyncClock { Date().addingTimeInterval(-600) }   // ten minutes behind
/// ```
public struct SyncClock: Sendable {
    /// Reads the clock.
    ///
    /// ```swift
    /// let time = options.clock.now()
    /// ```
    public var now: @Sendable () -> Date

    /// A clock that reads `now`.
    ///
    /// ```swift
    /// let ahead = SyncClock { Date().addingTimeInterval(300) }
    /// ```
    ///
    /// - Parameter now: Returns the current time as this clock sees it.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's clock.
    ///
    /// ```swift
    /// options.clock = .system
    /// ```
    public static let system = SyncClock { Date() }

    /// The clock's reading in whole milliseconds since 1970.
    var milliseconds: Int64 {
        Int64((now().timeIntervalSince1970 * 1_000).rounded(.down))
    }
}
