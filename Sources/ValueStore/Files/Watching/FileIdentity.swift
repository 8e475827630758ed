import Foundation

/// What is at a path: which file (device and inode), its size and modification time, or nothing.
///
/// A save renames a new file over the old one, so each save leaves a new inode; an edit in place
/// changes the size or the time (and always the change time, which ``observe(_:)`` reads too).
enum FileIdentity: Equatable, Sendable {
    case absent
    case file(device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int)
    /// `stat` failed for another reason: never equal to a recorded write.
    case unknown(Int32)

    init(of path: String) {
        self = Self.observe(path).identity
    }

    /// What is at `path`, and when its inode last changed (`st_ctime`; `nil` without a file),
    /// from one `stat`.
    ///
    /// A write in place that puts the modification time back (`touch -m -d`, `utime`) leaves
    /// size and modification time as they were, but not the change time, which no call can set.
    /// A rename changes it too, so only a check that compares a file with itself a moment later
    /// uses it (``FileFreshness``), never one that compares a file with the temporary file it was
    /// renamed from.
    static func observe(_ path: String) -> (identity: FileIdentity, changed: Duration?) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            return (code == ENOENT ? .absent : .unknown(code), nil)
        }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        let changed = info.st_ctimespec
        #else
        let time = info.st_mtim
        let changed = info.st_ctim
        #endif
        let identity = FileIdentity.file(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(truncatingIfNeeded: info.st_size),
            seconds: Int(time.tv_sec), nanoseconds: Int(time.tv_nsec))
        return (identity, .seconds(Int64(changed.tv_sec)) + .nanoseconds(Int64(changed.tv_nsec)))
    }

    /// Whether both name the same file, whatever its size and time: the same device and inode.
    func isSameFile(as other: Self) -> Bool {
        guard case .file(let device, let inode, _, _, _) = self,
            case .file(let otherDevice, let otherInode, _, _, _) = other
        else { return false }
        return device == otherDevice && inode == otherInode
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.absent, .absent): true
        case (.file(let a, let b, let c, let d, let e), .file(let f, let g, let h, let i, let j)):
            a == f && b == g && c == h && d == i && e == j
        default: false
        }
    }
}
