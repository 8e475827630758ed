public import Foundation

/// Moves damaged files aside so an app can start fresh without losing them.
///
/// File stores never delete or overwrite a file they cannot read: they throw
/// ``ValueStoreError/Code/corrupted`` or ``ValueStoreError/Code/decodingFailed``. When the app
/// decides to start over, it moves the file aside, keeping it for recovery or a bug report:
///
/// ```swift
/// do {
///     settings = try await persistence.settings.load()
/// } catch let error as ValueStoreError where error.code == .corrupted || error.code == .decodingFailed {
///     let aside = try await FileQuarantine.moveAside(settingsURL)
///     settings = .standard
/// }
/// ```
public enum FileQuarantine {
    /// Renames the file to `<name>.corrupt-<time>-<random>` in the same directory, under the
    /// same locks as a save, and syncs the directory. A lock file it has to create gets the
    /// damaged file's own permissions, so a private store's lock file stays private.
    ///
    /// ```swift
    /// let aside = try await FileQuarantine.moveAside(settingsURL)
    /// print("Kept the damaged settings at \(aside.path)")
    /// ```
    ///
    /// - Parameter url: The file a store could not read.
    /// - Returns: Where the file is now.
    /// - Throws: ``ValueStoreError/notFound`` when there is no file, or an I/O error.
    public static func moveAside(_ url: URL) async throws -> URL {
        let file = DurableFile(url, options: .default, fileSystem: .live)
        // Its locks, rename and directory flush run on the I/O threads (see BlockingIO).
        let aside = try await BlockingIO.run { try await file.moveAsideKeepingPermissions() }
        return URL(fileURLWithPath: aside)
    }

    /// The files moved aside for `url`, oldest first.
    ///
    /// ```swift
    /// let kept = try FileQuarantine.files(for: settingsURL)
    /// ```
    ///
    /// - Parameter url: The file whose quarantined copies to list.
    /// - Returns: The quarantined copies, sorted by name, which starts with the time.
    /// - Throws: An I/O error if the directory cannot be read.
    public static func files(for url: URL) throws -> [URL] {
        let file = DurableFile(url, options: .default, fileSystem: .live)
        let names: [String]
        do {
            names = try file.fileSystem.contentsOfDirectory(file.directory)
        } catch let error as FileSystemError where error.isNotFound {
            return []
        } catch {
            throw file.failure("list the directory '\(file.directory)'", error)
        }
        return
            names
            .filter { $0.hasPrefix("\(file.name).corrupt-") }
            .sorted()
            .map { url.deletingLastPathComponent().appending(path: $0) }
    }
}
