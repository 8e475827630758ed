import Foundation

/// A symbolic link at a file store's path is kept: reads, writes and removes go through it to the
/// file it names, and a link that names nothing reachable is an error, not an absent value.
extension DurableFile {
    /// The most links followed in a chain, as the kernel allows (`ELOOP` past it).
    static let maximumLinks = 40

    /// The file that the symbolic link at the path names, following a chain of links; `nil` when
    /// the path is not a link.
    ///
    /// - Throws: `io` when the links loop, or when the directory of the file they name does not
    ///   exist (a volume or container that is not mounted yet): nothing may be written there, and
    ///   the link must not be replaced.
    func linkedFile() throws -> DurableFile? {
        try checkPath()
        var current = self
        var followed = 0
        while let target = try linkTarget(of: current.path) {
            followed += 1
            guard followed <= Self.maximumLinks else {
                throw ValueStoreError(
                    .io, store: label, reason: "the path is a symbolic link in a loop; nothing was read or written")
            }
            // A relative target is relative to where the link really is: its directory's own
            // links resolved first, so that `..` leaves the directory the link sits in.
            let resolved = target.hasPrefix("/") ? target : Self.realPath(current.directory) + "/" + target
            current = DurableFile(URL(filePath: resolved), options: options, fileSystem: fileSystem)
        }
        guard followed > 0 else { return nil }
        let directory: FileStatus
        do {
            directory = try fileSystem.pathStatus(current.directory)
        } catch {
            throw ValueStoreError(
                .io, store: label,
                reason: "the path is a symbolic link to '\(current.path)', whose directory is not there "
                    + "(a volume or container not mounted yet?); the link was left as it is",
                underlyingError: error)
        }
        guard directory.type == UInt32(S_IFDIR) else {
            throw ValueStoreError(
                .io, store: label,
                reason: "the path is a symbolic link to '\(current.path)', inside \(directory.typeDescription); "
                    + "the link was left as it is")
        }
        return current
    }

    /// Whether the path is a symbolic link: one `lstat`, a metadata call that does not block,
    /// made where a stream starts, as the watch's own `stat`s are.
    var isSymbolicLink: Bool {
        Self.isSymbolicLink(at: path)
    }

    /// Whether `path` is a symbolic link: one `lstat`.
    static func isSymbolicLink(at path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// Has the streams of the path follow the file the link at it names, as they start: the
    /// link is resolved on the I/O threads (see ``BlockingIO``); until it is, and while the file
    /// it names cannot be reached, the streams follow the link's directory, which sees the link
    /// change, and then the file it names then (see FileChanges+Links.swift).
    func followLinkedFile() {
        // Inherits the cache's freshness being recorded, if any.
        Task(executorPreference: BlockingIO.executor) { @concurrent in
            let linked: DurableFile?
            do {
                linked = try linkedFile()
            } catch {
                linked = nil  // unreachable now: the link's own directory is followed
            }
            if let linked {
                FileFreshness.recording?.depend(on: linked.path, in: linked.directory, changes: fileSystem.changes)
            }
            fileSystem.changes.follow(path, to: linked)
        }
    }

    /// `path` with every symbolic link in it resolved, or `path` when it cannot be (it does not
    /// exist).
    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// ``linkedFile()`` off the caller's executor.
    @concurrent func linkedFileConcurrently() async throws -> DurableFile? {
        try linkedFile()
    }

    /// Why the path reads as nothing although something is there: a symbolic link whose target
    /// does not exist. `nil` when the path is truly absent.
    func unreachableTarget() -> ValueStoreError? {
        let target: String?
        do {
            target = try linkTarget(of: path)
        } catch {
            return failure("read the symbolic link at the path", error)
        }
        guard let target else { return nil }
        return ValueStoreError(
            .io, store: label,
            reason: "the path is a symbolic link to '\(target)', which does not exist "
                + "(a volume or container not mounted yet?); unreachable is not absent")
    }

    private func linkTarget(of path: String) throws -> String? {
        do {
            return try fileSystem.linkTarget(path)
        } catch {
            throw failure("read the symbolic link '\(path)'", error)
        }
    }
}
