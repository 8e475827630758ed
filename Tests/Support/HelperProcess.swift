package import Foundation

/// Runs the package's `ValueStoreTestHelper` executable, which `swift test` builds beside the
/// test bundle. Shared by the test targets, which depend on the helper so it is built.
package struct HelperProcess {
    package let process = Process()
    private let ends = Ends()
    private var output: Pipe { ends.output }
    private var input: Pipe { ends.input }

    /// The pipes to the helper, whose ends this process holds closed once the last copy of the
    /// helper value is gone: `Process` may keep the pipes for as long as it lives, and a test run
    /// that starts hundreds of helpers would leak a descriptor or two each.
    private final class Ends: Sendable {
        let output = Pipe()
        let input = Pipe()

        deinit {
            for handle in [
                output.fileHandleForReading, output.fileHandleForWriting, input.fileHandleForReading,
                input.fileHandleForWriting,
            ] {
                // Already closed (the child's ends, after the start) is all a failure can mean.
                try? handle.close()
            }
        }
    }

    /// Starts the helper with `arguments`, adding `environment` to this process's environment.
    package init(environment: [String: String] = [:], _ arguments: String...) throws {
        try self.init(environment: environment, arguments: arguments)
    }

    /// Starts the helper with `arguments`, adding `environment` to this process's environment.
    package init(environment: [String: String] = [:], arguments: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        // The child has its ends: this process keeps only its own, so that the child's exit
        // ends the output and the end of the input reaches the child.
        try? output.fileHandleForWriting.close()
        try? input.fileHandleForReading.close()
    }

    /// The descriptors of the pipes' ends this process holds; for the test that checks they are
    /// closed.
    package var descriptors: [Int32] {
        [output.fileHandleForReading.fileDescriptor, input.fileHandleForWriting.fileDescriptor]
    }

    /// Reads the next line the process prints, without the newline; `nil` once it closed its
    /// output. Reads byte by byte, so nothing after the line is consumed, on a thread of its own:
    /// the process may take as long as it likes to print, and the wait holds none of the
    /// cooperative pool's threads.
    package func nextLine() async -> String? {
        let output = output
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Self.line(from: output)) }.start()
        }
    }

    /// Reads the next line from `output`, blocking this thread until it comes.
    private static func line(from output: Pipe) -> String? {
        var line = Data()
        while true {
            guard let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first else {
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
            if first == UInt8(ascii: "\n") {
                return String(decoding: line, as: UTF8.self)
            }
            line.append(first)
        }
    }

    /// Writes `line` and a newline to the process's standard input.
    package func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Kills the process with SIGKILL and waits for it, which takes no longer than the kernel
    /// takes to end it.
    package func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        _ = exitStatusBlockingThisThread(of: process)
    }

    /// Waits for the process to exit and returns its status, holding no thread while it waits:
    /// what an async test calls, so that the cooperative pool's few threads keep running.
    ///
    /// ```swift
    /// #expect(await helper.exitStatus() == 0)
    /// ```
    package func exitStatus() async -> Int32 {
        await ValueStoreTestSupport.exitStatus(of: process)
    }

    /// Every line the process printed; call after it exited (``kill()`` or ``exitStatus()``), when all
    /// of it is in the pipe. Reads what is there rather than up to the pipe's end: a helper
    /// another test started at the moment this pipe was made can hold a copy of its write end,
    /// and the end would come only when that helper exits.
    package func lines() -> [String] {
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer.prefix(count))
            } else if count == 0 || errno != EINTR {
                break  // the end, or nothing more there (EAGAIN)
            }
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The package's executable product `name`, built beside the test bundle: the helper by
    /// default, or another a test target depends on (`valuestore-sync-server`).
    package static func executable(named name: String = "ValueStoreTestHelper") throws -> URL {
        let candidates = Bundle.allBundles.map(\.bundleURL) + [URL(fileURLWithPath: CommandLine.arguments[0])]
        for candidate in candidates {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<4 {
                let helper = directory.appending(path: name)
                if FileManager.default.isExecutableFile(atPath: helper.path(percentEncoded: false)) {
                    return helper
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(name) was not built"])
    }
}
