/// A running watch of one directory, made by a ``FileSystem``'s `watchDirectory`.
///
/// The live file system's watch is a ``DirectoryWatcher`` (inotify on Linux, a dispatch source on
/// Apple platforms); a test's is a fake whose events the test sends. ``FileChanges`` keeps one per
/// observed directory and stops it when the last stream for a file in it ends.
protocol DirectoryWatch: AnyObject, Sendable {
    /// Ends the watch: no events arrive once it has closed.
    func stop()
    /// Whether the watch has closed and released what it held.
    var isClosed: Bool { get }
}

extension DirectoryWatcher: DirectoryWatch {}
