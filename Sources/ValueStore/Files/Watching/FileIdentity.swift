#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// What is at a path: which file (device and inode), its size and modification time, or nothing.
///
/// A save renames a new file over the old one, so each save leaves a new inode; an edit in place
/// changes the size or the time.
enum FileIdentity: Equatable, Sendable {
    case absent
    case file(device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int)
    /// `stat` failed for another reason: never equal to a recorded write.
    case unknown(Int32)

    init(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            self = code == ENOENT ? .absent : .unknown(code)
            return
        }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        self = .file(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(truncatingIfNeeded: info.st_size),
            seconds: Int(time.tv_sec), nanoseconds: Int(time.tv_nsec))
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
