import Foundation
import Testing

/// The folders of `Sources/ValueStore` depend on each other one way, as CONTRIBUTING.md draws
/// them: a file names only types declared in its own folder or in a lower layer.
///
/// The check is by name: every non-private type declared at the top level of a file belongs to
/// its folder, and a file that mentions another folder's type outside a comment depends on that
/// folder. Members added in extensions (`ValueStore.jsonFile`) are not seen; types are enough to
/// catch a folder reaching "up".
@Suite struct LayerTests {
    /// Each folder's layer: a file may use types of a folder in a lower layer, never of one in
    /// the same layer or a higher one. The core is the top-level files and `Codecs/`; the
    /// DocC catalog holds no Swift.
    static let layers: [String: Int] = [
        "Internal": 0,
        "core": 1,
        "Files": 2, "PropertyLists": 2,
        "InMemory": 3, "Combinators": 3, "Settings": 3, "UserDefaults": 3, "Encryption": 3, "Versioning": 3,
        "Observation": 4,
    ]

    /// Old names kept compiling point at whatever they replaced, in any layer.
    static let exempt: Set<String> = ["Deprecations.swift", "DeprecatedReference.swift"]

    struct SourceFile {
        let name: String
        let folder: String
        let code: String
    }

    static func sources() throws -> [SourceFile] {
        let root = DocumentationTests.root.appending(path: "Sources/ValueStore")
        let base = root.path(percentEncoded: false)
        let enumerator = try #require(FileManager.default.enumerator(atPath: base))
        var files: [SourceFile] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let components = relative.split(separator: "/")
            let folder = components.count > 1 && components[0] != "Codecs" ? String(components[0]) : "core"
            let text = try String(contentsOf: root.appending(path: relative), encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
            }
            files.append(
                SourceFile(
                    name: String(components.last!), folder: folder, code: code.joined(separator: "\n")))
        }
        return files
    }

    /// The names of the non-private types declared at the top level of `code`.
    static func declaredTypes(in code: String) -> [String] {
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "actor"]
        let modifiers: Set<String> = ["public", "package", "internal", "final", "indirect", "nonisolated"]
        var names: [String] = []
        for line in code.split(separator: "\n") where !line.hasPrefix(" ") && !line.hasPrefix("}") {
            var words = line.split(whereSeparator: { $0 == " " || $0 == "<" || $0 == ":" || $0 == "{" })[...]
            while let first = words.first, first.hasPrefix("@") || modifiers.contains(String(first)) {
                words = words.dropFirst()
            }
            guard words.count >= 2, kinds.contains(String(words.first!)) else { continue }
            names.append(String(words.dropFirst().first!))
        }
        return names
    }

    /// The identifiers in `code`, each once.
    static func identifiers(in code: String) -> Set<Substring> {
        Set(code.split { !($0.isLetter || $0.isNumber || $0 == "_") })
    }

    @Test func everyFolderHasALayer() throws {
        for file in try Self.sources() {
            #expect(Self.layers[file.folder] != nil, "\(file.folder)/\(file.name): add the folder to the layers")
        }
    }

    @Test func noFolderUsesATypeOfItsLayerOrAbove() throws {
        let files = try Self.sources()
        var owners: [String: String] = [:]
        for file in files {
            for name in Self.declaredTypes(in: file.code) {
                owners[name] = file.folder
            }
        }
        #expect(owners["DurableFile"] == "Files")  // the scan finds declarations
        #expect(owners["ChangeBroadcaster"] == "Internal")
        var violations: [String] = []
        for file in files where !Self.exempt.contains(file.name) {
            let layer = Self.layers[file.folder] ?? 0
            let used = Self.identifiers(in: file.code)
            for (name, owner) in owners where owner != file.folder && (Self.layers[owner] ?? 0) >= layer {
                if used.contains(Substring(name)) {
                    violations.append("\(file.folder)/\(file.name) uses \(name) from \(owner)/")
                }
            }
        }
        #expect(violations.sorted() == [])
    }
}
