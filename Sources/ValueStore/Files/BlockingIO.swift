import Foundation
import Synchronization

/// The threads the file stores' writes, the settings file's reads and commits, the encrypted
/// store (key derivation included) and a sync replica's journal run their blocking system calls
/// on: not the cooperative pool, whose few threads are the whole app's, and never the caller's
/// executor. The one exception is a load of a file store or the encrypted store, a brief read
/// (see ``runBrief(_:)``): one at a time, it reads on the pool while the disk answers quickly.
///
/// A slow disk (a network volume, an `fsync` the kernel holds for seconds) then holds only these
/// threads: tasks that do not wait for the disk, an in-memory store's load or a `cached()` hit,
/// go on running. An operation runs as a whole on them, with the threads as its task's
/// preferred executor (`withTaskExecutorPreference`): an encrypted load's open, read and close, a save's
/// lock, write, flush and rename, and the waits for this process's locks in between, pay for
/// one hand-off there and one back, and keep their task's locals and cancellation. A group
/// commit's waiters never come here: only its leader does (see ``CommitQueue``).
///
/// ``threadCount`` threads are started as work arrives and kept. Work that finds them all busy
/// (held in `fsync`) gets a thread of its own, up to ``maximumThreadCount``, so that a disk
/// that holds some of them does not stall the files of another disk.
///
/// Cancellation interrupts no system call: a caller cancelled while its write is in `fsync`
/// returns when the write has finished, with its outcome (a save that returns did land), and
/// the locks it holds are released after it, as before.
///
/// The wait for another process's file lock, which can last as long as that process likes, has a
/// thread of its own instead (see ``FileLocking``).
package enum BlockingIO {
    /// The threads kept running once started.
    package static let threadCount = 4
    /// The most threads running at once, when every thread is held by a slow disk.
    package static let maximumThreadCount = 32

    /// The I/O threads, as a task executor.
    package static let executor: any TaskExecutor = IOThreads.shared

    /// Runs `operation` with the I/O threads as its task's preferred executor: nonisolated
    /// async functions it calls (`@concurrent` ones included) run on them.
    ///
    /// ```swift
    /// let data = try await BlockingIO.run { try await file.readConcurrently() }
    /// ```
    ///
    /// - Parameter operation: One operation of a store; whatever is isolated to an actor still
    ///   runs on that actor.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws: nothing, when it throws nothing.
    package static func run<Result, Failure: Error>(
        _ operation: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await withTaskExecutorPreference(IOThreads.shared, operation: operation)
    }

    /// Runs `operation`, a read that is brief while the disk is well (a small file the kernel
    /// has cached), where it costs least: on the cooperative pool, one at a time, while the disk
    /// answers quickly; otherwise on the I/O threads, as ``run(_:)`` does (see ``BriefReads``).
    ///
    /// ```swift
    /// let data = try await BlockingIO.runBrief { try await file.readConcurrently() }
    /// ```
    ///
    /// - Parameter operation: One read of a store, `@concurrent` so that it leaves an actor.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    package static func runBrief<Result, Failure: Error>(
        _ operation: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await BriefReads.shared.run(operation)
    }

    /// Whether this code runs on one of the I/O threads: for tests that check where system calls
    /// run.
    package static var isCurrentThread: Bool {
        pthread_getspecific(IOThreads.marker) != nil
    }
}

/// The I/O threads and the jobs waiting for them.
// A lock box: its vars change only with `condition` locked.
private final class IOThreads: TaskExecutor, @unchecked Sendable {
    static let shared = IOThreads()
    static let name = "ValueStore I/O"
    /// Set on the I/O threads only (`Thread.name` does not read back on every platform).
    static let marker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var started = 0
    /// Threads waiting for a job, and how many of them were signalled and have not woken yet.
    private var idle = 0
    private var signalled = 0

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        var start = false
        if idle > signalled {
            signalled += 1
            condition.signal()
        } else if started < BlockingIO.maximumThreadCount {
            started += 1
            start = true
        }
        condition.unlock()
        if start {
            let thread = Thread { [self] in serve() }
            thread.name = Self.name
            thread.start()
        }
    }

    /// Runs jobs, one after the other, for the life of the process; a thread started past
    /// ``BlockingIO/threadCount`` ends once it finds no job.
    private func serve() {
        pthread_setspecific(Self.marker, UnsafeRawPointer(bitPattern: 1))
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == jobs.count {
                if started > BlockingIO.threadCount {
                    started -= 1
                    condition.unlock()
                    return
                }
                idle += 1
                condition.wait()
                idle -= 1
                signalled = max(0, signalled - 1)
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
