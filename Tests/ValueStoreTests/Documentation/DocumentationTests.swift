import Foundation
import Testing

/// Every Swift block in README.md and Documentation/*.md must appear, line for line, in code
/// that compiles: the tests (mostly `DocumentationExamplesTests`) or the demo. A block that quotes
/// the library's declarations instead must match its source: each line, in order, in one file
/// of `Sources/ValueStore`. Comments, blank lines, indentation and opening braces are ignored.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var guides: [URL] {
        let documentation = root.appending(path: "Documentation")
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: documentation.path(percentEncoded: false))) ?? []
        return [root.appending(path: "README.md")]
            + names.filter { $0.hasSuffix(".md") }.sorted().map { documentation.appending(path: $0) }
    }

    /// The code lines that count: trimmed, without comments and blank lines.
    static func codeLines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            var code = line.trimmingCharacters(in: .whitespaces)
            if let comment = code.range(of: " // ") {
                code = String(code[..<comment.lowerBound]).trimmingCharacters(in: .whitespaces)
            }
            return code.isEmpty || code.hasPrefix("//") ? nil : code
        }
    }

    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static let compiledCode: [[String]] = {
        var files: [[String]] = []
        for folder in ["Tests", "Sources/ValueStoreDemo"] {
            let url = root.appending(path: folder)
            guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in enumerator where file.pathExtension == "swift" {
                if let text = try? String(contentsOf: file, encoding: .utf8) {
                    files.append(codeLines(text))
                }
            }
        }
        return files
    }()

    static let librarySource: [[String]] = {
        let url = root.appending(path: "Sources/ValueStore")
        guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else {
            return []
        }
        return enumerator.compactMap { item in
            guard let file = item as? URL, file.pathExtension == "swift",
                let text = try? String(contentsOf: file, encoding: .utf8)
            else { return nil }
            return codeLines(text).map(withoutOpeningBrace)
        }
    }()

    static func withoutOpeningBrace(_ line: String) -> String {
        line.hasSuffix(" {") ? String(line.dropLast(2)) : line
    }

    /// Whether every line of `snippet` appears in order in one library source file.
    static func quotesLibrarySource(_ snippet: [String]) -> Bool {
        let wanted = snippet.map(withoutOpeningBrace)
        return librarySource.contains { lines in
            var remaining = wanted[...]
            for line in lines where line == remaining.first {
                remaining = remaining.dropFirst()
                if remaining.isEmpty { return true }
            }
            return remaining.isEmpty
        }
    }

    static func appearsInCompiledCode(_ snippet: [String]) -> Bool {
        compiledCode.contains { lines in
            guard lines.count >= snippet.count else { return false }
            return (0...(lines.count - snippet.count)).contains { start in
                lines[start..<(start + snippet.count)].elementsEqual(snippet)
            }
        }
    }

    @Test func everyGuideIsLinkedFromTheReadme() throws {
        let readme = try String(contentsOf: Self.root.appending(path: "README.md"), encoding: .utf8)
        for guide in Self.guides.dropFirst() {
            #expect(
                readme.contains("(Documentation/\(guide.lastPathComponent))"),
                "README does not link \(guide.lastPathComponent)")
        }
    }

    @Test(arguments: guides.map(\.lastPathComponent))
    func everySwiftBlockCompiles(guide: String) throws {
        let url = Self.guides.first { $0.lastPathComponent == guide }!
        let markdown = try String(contentsOf: url, encoding: .utf8)
        for block in Self.swiftBlocks(in: markdown) {
            let snippet = Self.codeLines(block)
            #expect(
                Self.appearsInCompiledCode(snippet) || Self.quotesLibrarySource(snippet),
                "This block of \(guide) is neither in the tests or the demo nor quoted from the library:\n\(block)"
            )
        }
    }

    @Test func theCheckerCatchesCodeThatIsNowhere() {
        #expect(!Self.appearsInCompiledCode(["let unicorn = ValueStore<Void, Unicorn>.rainbow()"]))
        #expect(
            !Self.quotesLibrarySource([
                "public struct ValueStore<Environment, Value>: Sendable {", "public var unicorn: Int",
            ]))
        #expect(Self.quotesLibrarySource(["public struct ValueStore<Environment, Value>: Sendable {", "}"]))
        #expect(Self.appearsInCompiledCode(Self.codeLines("try await launches.update { $0 += 1 }   // 1")))
    }
}
