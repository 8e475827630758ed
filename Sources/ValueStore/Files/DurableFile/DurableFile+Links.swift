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
            let resolved = target.hasPrefix("/") ? target : current.directory + "/" + target
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
