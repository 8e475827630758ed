import Foundation

/// Runs the package's `ValueStoreTestHelper` executable, which `swift test` builds beside the
/// test bundle.
struct HelperProcess {
    let process = Process()
    private let output = Pipe()

    init(_ arguments: String...) throws {
        process.executableURL = try Self.executable()
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
    }

    /// Kills the process with SIGKILL and waits for it.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the process to exit and returns its status.
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Every line the process printed; call after it exited.
    func lines() -> [String] {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private static func executable() throws -> URL {
        let candidates = Bundle.allBundles.map(\.bundleURL) + [URL(fileURLWithPath: CommandLine.arguments[0])]
        for candidate in candidates {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<4 {
                let helper = directory.appending(path: "ValueStoreTestHelper")
                if FileManager.default.isExecutableFile(atPath: helper.path(percentEncoded: false)) {
                    return helper
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "ValueStoreTestHelper was not built"])
    }
}
