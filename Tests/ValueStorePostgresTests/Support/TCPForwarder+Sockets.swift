#if PostgreSQL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The forwarder's plain POSIX sockets: the listening port, the connection upstream, writes
/// that never raise SIGPIPE, and closes with a reset.
extension TCPForwarder {
    static func listeningSocket(port: Int) throws -> (Int32, Int) {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw failure("socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let error = failure("bind/listen")
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func failure(_ call: String) -> any Error {
        TCPForwarderError(description: "\(call) failed: \(String(cString: strerror(errno)))")
    }

    func connectUpstream() -> Int32? {
        switch upstream {
        case .unix(let path):
            let fd = socket(AF_UNIX, streamSocket, 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() {
                    bytes[index] = byte
                }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                return nil
            }
            return fd
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = streamSocket
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0 else { return nil }
            defer { freeaddrinfo(list) }
            var entry = list
            while let info = entry {
                let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
                if fd >= 0 {
                    if systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                        var yes: Int32 = 1
                        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                        return fd
                    }
                    close(fd)
                }
                entry = info.pointee.ai_next
            }
            return nil
        }
    }

    static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var written = 0
        while written < count {
            // `send` without SIGPIPE: the peer may have been reset, which must not kill the tests.
            let result = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + written, count - written, noSignal) }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    /// Closes with an RST instead of a FIN: the peer's next read or write fails at once.
    static func closeWithReset(_ fd: Int32) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }
}

#if canImport(Glibc)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let systemConnect = Glibc.connect
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let streamSocket = SOCK_STREAM
private let systemConnect = Darwin.connect
private let noSignal: Int32 = 0  // no MSG_NOSIGNAL; these tests run under Debian's pg_virtualenv
#endif

struct TCPForwarderError: Error, CustomStringConvertible {
    var description: String
}
#endif
