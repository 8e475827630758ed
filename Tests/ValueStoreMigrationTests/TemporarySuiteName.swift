import Foundation

/// A UserDefaults suite name of its own for one test, never in the user's home: on Linux,
/// Foundation keeps a suite named by an absolute path in that file, so it lives in a temporary
/// directory (a plain name would land in `~/.config`).
func temporarySuiteName() -> String {
    #if os(Linux)
    FileManager.default.temporaryDirectory.appendingPathComponent("ValueStoreMigrationTests.\(UUID().uuidString)").path
    #else
    "ValueStoreMigrationTests.\(UUID().uuidString)"
    #endif
}
