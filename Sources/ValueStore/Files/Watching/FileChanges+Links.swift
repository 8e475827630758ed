import Foundation

/// Following a symbolic link at an observed path: its streams get the changes of the file the
/// link names too, and follow the link when it is pointed elsewhere.
///
/// A link's directory reports the link's name when the link is made, replaced or pointed
/// elsewhere (`ln -sfn b/n.json n.json`), as it does for a file. Each time, the link is resolved
/// again, and when it names another file now, the path follows that file instead: counted as one
/// stream of that file, whose directory is watched for it, until the path's last stream ends or
/// the link names something else. A stream over a link asks for the file it names as it starts
/// (``DurableFile/changeSignals()``), off the caller's executor.
///
/// Signals keep their origin: a write through the link by a cache's own writer signals the file
/// it names, and so the link's streams, as ``ChangeBroadcaster/signal()`` does, skipping that
/// writer's own.
extension FileChanges {
    /// The broadcasters to signal for a change of `path`: its own, and those of the links that
    /// follow it.
    func broadcasters(of path: String, _ state: State) -> [ChangeBroadcaster] {
        guard let entry = state.paths[path] else { return [] }
        guard !entry.followers.isEmpty else { return [entry.broadcaster] }
        return [entry.broadcaster] + entry.followers.compactMap { state.paths[$0]?.broadcaster }
    }

    /// Resolves the symbolic link at the observed `path` again, and has its streams follow the
    /// file it names now (nothing, when it is no link or names nothing reachable). One `lstat`
    /// for a path that is not a link and follows none.
    func followLink(at path: String) {
        let isLink = DurableFile.isSymbolicLink(at: path)
        guard let entry = state.withLock({ $0.paths[path] }), isLink || entry.follows != nil else { return }
        let link = DurableFile(URL(filePath: path), options: .default, fileSystem: .live)
        let target: DurableFile?
        do {
            target = try link.linkedFile()
        } catch {
            target = nil  // unreachable: the link's own directory sees it change
        }
        follow(path, to: target)
    }

    /// Has the streams of `path` follow `target` (`nil`: no file) from now on, unless they do
    /// already, and no longer the file they followed before.
    func follow(_ path: String, to target: DurableFile?) {
        let followed = target.map { Followed(path: $0.path, directory: $0.directory) }
        let current = followed.map { FileIdentity(of: $0.directory) }
        let (registration, stopped) = changingState { state -> (Registration?, [any DirectoryWatch]) in
            guard let entry = state.paths[path], entry.follows != followed else { return (nil, []) }
            var stopped: [any DirectoryWatch] = []
            if let old = entry.follows {
                state.paths[old.path]?.followers.removeAll { $0 == path }
                stopped = unregister(path: old.path, directory: old.directory, &state)
            }
            state.paths[path]!.follows = followed
            guard let followed, let current else { return (nil, stopped) }
            let registration = register(path: followed.path, directory: followed.directory, naming: current, &state)
            state.paths[followed.path]!.followers.append(path)
            return (registration, stopped)
        }
        if let registration, let followed {
            started(registration, in: followed.directory)
        }
        released(stopped)
    }
}
