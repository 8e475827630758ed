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
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// `own` and the signals of the file the link at the path names, in one stream. The link is
    /// resolved off the caller's executor as the stream starts, and again each time `own`
    /// signals (the link's directory reported its name: `ln -sfn b/n.json n.json` points it
    /// elsewhere): when it names another file now, the stream follows that one instead, before it
    /// passes the signal on, so the reload it causes and every later write are seen. While the
    /// file it names cannot be reached, the stream follows the link's directory alone, which sees
    /// the link change.
    func followingLinkedFile(beside own: AsyncStream<Void>) -> AsyncStream<Void> {
        let (merged, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The subscriptions are made as the caller's writer (see ``ChangeOrigin``): the task
        // inherits it, and the cache's freshness being recorded.
        let following = Task { @concurrent in
            var target = LinkedTarget()
            target.follow(linkedFileIfReachable(), into: continuation)
            for await _ in own {
                target.follow(linkedFileIfReachable(), into: continuation)
                continuation.yield()
            }
            target.follow(nil, into: continuation)
        }
        continuation.onTermination = { _ in
            following.cancel()
        }
        return merged
    }

    /// ``linkedFile()``, or `nil` when the path is no link now or names nothing reachable: the
    /// link's own directory is followed then.
    private func linkedFileIfReachable() -> DurableFile? {
        do {
            return try linkedFile()
        } catch {
            return nil
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

/// The file a link names, whose signals a stream forwards, and the task that forwards them.
private struct LinkedTarget {
    private var path: String?
    private var forwarding: Task<Void, Never>?

    /// Forwards the signals of `file` (`nil`: none) into `continuation` from now on, unless they
    /// are forwarded already; the subscription is made before this returns.
    mutating func follow(_ file: DurableFile?, into continuation: AsyncStream<Void>.Continuation) {
        guard file?.path != path else { return }
        forwarding?.cancel()
        path = file?.path
        forwarding = file.map { file in
            let signals = file.fileSystem.changes.signals(path: file.path, directory: file.directory)
            return Task {
                for await _ in signals {
                    continuation.yield()
                }
            }
        }
    }
}
