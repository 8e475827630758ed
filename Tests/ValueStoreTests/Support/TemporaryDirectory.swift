import Foundation

/// A fresh directory for one test, removed when the test is done with it.
///
/// ```swift
/// try await TemporaryDirectory.with { directory in … }
/// ```
enum TemporaryDirectory {
    static func with<Result>(
        _ body: (_ directory: URL) async throws -> Result
    ) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appending(path: "ValueStoreTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}

extension URL {
    /// The names in this directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path(percentEncoded: false)).sorted()
    }

    /// The file's permission bits.
    func permissions() throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path(percentEncoded: false))
        return (attributes[.posixPermissions] as? Int) ?? -1
    }

    /// The file's bytes.
    func bytes() throws -> Data {
        try Data(contentsOf: self)
    }
}
