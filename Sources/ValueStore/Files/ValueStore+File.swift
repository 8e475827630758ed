public import Foundation

extension ValueStore where Environment == Void, Value == Data {
    /// A store that keeps raw bytes in a file, saved atomically and durably.
    ///
    /// ```swift
    /// let avatar = ValueStore<Void, Data>.file(directory.appending(path: "avatar.png"))
    /// try await avatar.save(pngData)
    /// ```
    ///
    /// - **Atomic and durable saves.** A save writes a temporary file in the same directory,
    ///   syncs it, renames it over the file and syncs the directory. A crash or power loss at any
    ///   instant leaves the old bytes or the new ones, complete. Missing parent directories are
    ///   created.
    /// - **Atomic updates across processes.** `update` runs its body with no lock held, then
    ///   writes under a per-path lock in this process and an advisory lock on a sidecar
    ///   `.<name>.lock` file shared with other processes, only if no one wrote the file since it
    ///   was read; otherwise it runs the body again on the newer value. Concurrent updates from
    ///   any number of tasks and processes never lose one. Stores created separately for the
    ///   same path share the locks. A write to the same file from inside the body throws
    ///   ``ValueStoreError/Code/nestedWrite``.
    /// - **Clear failures.** A missing file loads as ``ValueStoreError/notFound``; every other
    ///   failure throws ``ValueStoreError/Code/io`` naming the file, the step and the system's
    ///   reason, and leaves the previous bytes in place.
    ///
    /// Loads take no lock and never see a partial write. `remove` deletes the file and syncs the
    /// directory; removing a missing file succeeds.
    ///
    /// - Parameters:
    ///   - url: The file's location. A symbolic link there is kept: reads and writes go through it,
    ///     and one that names nothing reachable makes loads throw `io`, not `notFound`.
    ///   - options: Durability and permissions; by default durable, `0644`.
    /// - Returns: A store of the file's bytes.
    public static func file(_ url: URL, options: FileOptions = .default) -> Self {
        file(url, options: options, fileSystem: .live)
    }

    /// A file store over the given file system, for tests that inject faults.
    static func file(_ url: URL, options: FileOptions, fileSystem: FileSystem) -> Self {
        file(DurableFile(url, options: options, fileSystem: fileSystem))
    }

    /// The store of `file`'s bytes.
    static func file(_ file: DurableFile) -> Self {
        let label = file.label
        return Self(
            label: label,
            // Updates run on the I/O threads (see BlockingIO), and so do the commits of saves
            // and removals: each joins the file's commit queue where it is, and the queue's
            // leader alone goes there to commit (see CommitQueue). A load is a brief read: the
            // hand-off there and back costs as much as a read of 1 KB, so one load at a time
            // reads on the pool while the disk is quick (see BlockingIO.runBrief).
            load: { _ in
                guard let data = try await BlockingIO.runBrief({ try await file.readConcurrently() }) else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return data
            },
            save: { data, _ in
                try await file.save(data)
                return data
            },
            remove: { _ in try await file.remove() },
            update: { _, body in try await BlockingIO.run { try await file.update(body) } },
            changeSignals: { _ in file.changeSignals() }
        )
    }
}
