import Foundation

/// `swift run ValueStoreDemo [--directory PATH]`: shows the library at work on real files.
///
/// Without `--directory` it uses a new temporary directory. Run it twice with the same
/// `--directory` to see the files survive a restart.
@main
struct ValueStoreDemo {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
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
}
