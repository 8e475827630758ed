import Dispatch
import Synchronization

/// Where the loads of the file stores and the encrypted store read, and a cache checks its file
/// (a `stat`) while the file's directory is not watched: on the cooperative pool, one at a time,
/// while the disk answers quickly, and on the I/O threads (``BlockingIO``) otherwise.
///
/// The hand-off to the I/O threads and back costs 10 to 20 µs, as much as the read of a small
/// file the kernel has cached, so a load that always took it would cost twice the read. A brief
/// read runs where its caller's `@concurrent` code runs, on the pool, when no other brief read
/// runs there; a read that finds one running goes to the I/O threads. So at most one of the
/// pool's threads waits for the disk at a time, and only until a read is seen to be slow (over
/// 5 ms, the disk's own time, not the page cache's): for a second from then on, every read goes
/// to the I/O threads. Writes, `fsync` and lock waits never come here.
///
/// ```swift
/// let data = try await BriefReads.shared.run { try await file.readConcurrently() }
/// ```
package final class BriefReads: Sendable {
    /// The process's brief reads: every store's.
    package static let shared = BriefReads()

    /// A read that took longer than this waited for the disk.
    private let slowNanoseconds: UInt64
    /// How long after a slow read every read goes to the I/O threads.
    private let backOffNanoseconds: UInt64
    /// Whether a read runs on the pool now.
    private let running = Atomic<Bool>(false)
    /// The uptime, in nanoseconds, from which reads may run on the pool again.
    private let resumes = Atomic<UInt64>(0)

    /// Brief reads of their own, apart from the process's (tests make them to control `slow`
    /// and `backOff`).
    ///
    /// - Parameters:
    ///   - slow: A read that takes longer waited for the disk; by default 5 ms.
    ///   - backOff: How long after a slow read every read goes to the I/O threads; by default 1 s.
    package init(slow: Duration = .milliseconds(5), backOff: Duration = .seconds(1)) {
        slowNanoseconds = Self.nanoseconds(slow)
        backOffNanoseconds = Self.nanoseconds(backOff)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }

    /// Runs `operation` on the pool when it may, or on the I/O threads.
    ///
    /// ```swift
    /// let data = try await BriefReads.shared.run { try await file.readConcurrently() }
    /// ```
    ///
    /// - Parameter operation: One read of a store, `@concurrent` so that it leaves an actor.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    package func run<Result, Failure: Error>(
        _ operation: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let start = DispatchTime.now().uptimeNanoseconds
        guard start >= resumes.load(ordering: .relaxed),
            running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else {
            return try await BlockingIO.run(operation)
        }
        defer {
            let end = DispatchTime.now().uptimeNanoseconds
            if end - start > slowNanoseconds {
                resumes.store(end + backOffNanoseconds, ordering: .relaxed)
            }
            running.store(false, ordering: .releasing)
        }
        return try await operation()
    }
}
