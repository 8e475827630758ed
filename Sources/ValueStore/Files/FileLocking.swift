import Foundation

/// Takes a file's exclusive advisory lock (`flock`) for processes that share the file: at once
/// when it is free, otherwise on a thread of its own, so a wait for another process never blocks
/// the threads Swift concurrency runs tasks on (nor the caller's executor).
///
/// The file stores' lock files and a sync replica's folder lock take their locks through it.
package enum FileLocking {
    /// Takes the exclusive lock on `descriptor`, waiting for another process's release off the
    /// cooperative pool.
    ///
    /// ```swift
    /// try await FileLocking.lockExclusively(descriptor)
    /// ```
    ///
    /// - Parameters:
    ///   - descriptor: An open descriptor of the lock file.
    ///   - fileSystem: The system calls to make: ``FileSystem/live`` unless a test's.
    /// - Throws: An error naming `flock` and its `errno` when the lock cannot be taken.
    package static func lockExclusively(_ descriptor: Int32, fileSystem: FileSystem = .live) async throws {
        if try !fileSystem.lock(descriptor, false) {
            try await waitForLock(descriptor, fileSystem: fileSystem)
        }
    }

    /// Waits for the lock on `descriptor`, which another process holds, on a thread of its own.
    static func waitForLock(_ descriptor: Int32, fileSystem: FileSystem) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                do {
                    _ = try fileSystem.lock(descriptor, true)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }
}
