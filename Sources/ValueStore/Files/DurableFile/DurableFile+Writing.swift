import Foundation

extension DurableFile {
    /// Replaces the file with `data`: temporary file, write, sync, rename, sync the directory.
    func write(_ data: Data) throws {
        let temporary = sibling(temporaryPrefix + Self.hexadecimal(UInt64.random(in: .min ... .max)))
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(
                temporary,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode_t(options.permissions)
            )
        } catch {
            throw failure("create the temporary file '\(temporary)'", error)
        }
        var isOpen = true
        var step = "write the temporary file"
        do {
            try writeAll(data, to: descriptor)
            if isDurable {
                step = "sync the temporary file to disk"
                try fileSystem.synchronize(descriptor)
            }
            step = "close the temporary file"
            isOpen = false
            try fileSystem.close(descriptor)
            step = "rename the temporary file over the target"
            fileSystem.changes.willReplace(path, with: temporary)
            try fileSystem.rename(temporary, path)
            fileSystem.changes.didChange(path)
        } catch {
            if isOpen {
                closeQuietly(descriptor)
            }
            removeQuietly(temporary)
            throw failure(step, error)
        }
        try synchronizeDirectory(after: "replacing the file; the new value may not survive a power loss")
    }

    /// Removes the file; removing a missing file succeeds.
    func delete() throws {
        do {
            fileSystem.changes.willRemove(path)
            try fileSystem.unlink(path)
            fileSystem.changes.didChange(path)
        } catch let error as FileSystemError where error.isNotFound {
            return
        } catch {
            throw failure("remove the file", error)
        }
        try synchronizeDirectory(after: "removing the file; the removal may not survive a power loss")
    }

    /// Writes `data`, or deletes the file for `nil`.
    func store(_ data: Data?) throws {
        if let data {
            try write(data)
        } else {
            try delete()
        }
    }

    /// Moves the file aside to `<name>.corrupt-<time>-<random>` and returns the new path.
    func moveAside() throws -> String {
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
            .replacingOccurrences(of: ":", with: "")
        let aside = sibling("\(name).corrupt-\(stamp)-\(String(UInt16.random(in: .min ... .max), radix: 16))")
        do {
            fileSystem.changes.willRemove(path)
            try fileSystem.rename(path, aside)
            fileSystem.changes.didChange(path)
        } catch let error as FileSystemError where error.isNotFound {
            throw ValueStoreError(.notFound, store: label, reason: "there is no file to move aside")
        } catch {
            throw failure("move the file aside to '\(aside)'", error)
        }
        try synchronizeDirectory(after: "moving the file aside")
        return aside
    }

    private func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = try fileSystem.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[written...]))
                guard count > 0 else {
                    throw FileSystemError(operation: "write (wrote \(written) of \(buffer.count) bytes)", code: EIO)
                }
                written += count
            }
        }
    }

    /// Syncs the file's directory, when durable, so a rename or unlink in it survives a power
    /// loss.
    private func synchronizeDirectory(after change: String) throws {
        try synchronize(directory: directory, step: "sync the directory after \(change)")
    }

    /// Syncs a directory, when durable, reporting a failure as `step`.
    func synchronize(directory: String, step: String) throws {
        guard isDurable else { return }
        do {
            let descriptor = try fileSystem.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            defer { closeQuietly(descriptor) }
            try fileSystem.synchronize(descriptor)
        } catch {
            throw failure(step, error)
        }
    }

    /// Closes a descriptor whose data is already safe or abandoned, so a failure loses nothing.
    func closeQuietly(_ descriptor: Int32) {
        do {
            try fileSystem.close(descriptor)
        } catch {
            // Nothing to recover: the descriptor was only read, synced already, or abandoned.
        }
    }

    /// Removes an abandoned temporary file; a leftover is cleaned up by a later writer.
    func removeQuietly(_ path: String) {
        do {
            try fileSystem.unlink(path)
        } catch {
            // An orphan is never read as data, and the next process to write removes it.
        }
    }
}
