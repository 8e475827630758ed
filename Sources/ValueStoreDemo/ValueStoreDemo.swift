import Foundation
import ValueStore

/// `swift run ValueStoreDemo [--directory PATH]`: shows the library at work on real files.
///
/// Without `--directory` it uses a new temporary directory. Run it twice with the same
/// `--directory` to see the files survive a restart.
@main
struct ValueStoreDemo {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "--set-theme", arguments.count == 3 {
            await setTheme(arguments.dropFirst().first!, in: URL(fileURLWithPath: arguments.last!))
            return
        }
        let directory: URL
        if let flag = arguments.firstIndex(of: "--directory"), arguments.index(after: flag) < arguments.endIndex {
            directory = URL(fileURLWithPath: arguments[arguments.index(after: flag)], isDirectory: true)
        } else if arguments.isEmpty {
            directory = FileManager.default.temporaryDirectory
                .appending(path: "ValueStoreDemo-\(UUID().uuidString.prefix(8))", directoryHint: .isDirectory)
        } else {
            print("usage: ValueStoreDemo [--directory PATH]")
            exit(64)
        }
        print("ValueStore demo, storing its files in \(directory.path(percentEncoded: false))")
        do {
            try await Demo(directory: directory).run()
            print(
                "\nDone. Run again with --directory \(directory.path(percentEncoded: false)) to continue from these files."
            )
        } catch {
            print("\nThe demo failed: \(error)")
            exit(1)
        }
    }

    /// The second process of the "Changes from another process" step: saves a theme and exits.
    static func setTheme(_ theme: String, in file: URL) async {
        do {
            try await ValueStore<Void, Settings>.jsonFile(file).default(.standard).update { $0.theme = theme }
        } catch {
            print("The second process failed: \(error)")
            exit(1)
        }
    }
}
