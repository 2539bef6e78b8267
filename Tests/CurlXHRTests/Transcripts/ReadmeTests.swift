import Foundation
import Testing

/// README points to the DocC catalogs, the man page and the other documents rather than
/// repeating them: what a reader follows from it must be there. Its links lead to files that
/// exist, every DocC article is listed and every one it lists is in its catalog, its code
/// calls only public API that exists, and its two commands are the scripts of the package.
@Suite(.ownThreads) struct ReadmeTests {
    static let root = TestEnvironment.packageRoot

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
    }

    /// The fenced code blocks of `text` whose info string is `language`, each as its lines.
    static func codeBlocks(_ text: String, language: String) -> [String] {
        var blocks: [String] = [], current: [String]? = nil, currentLanguage = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var lines = current {
                if trimmed == "```" {
                    if currentLanguage == language { blocks.append(lines.joined(separator: "\n")) }
                    current = nil
                } else {
                    lines.append(String(line))
                    current = lines
                }
            } else if trimmed.hasPrefix("```") {
                currentLanguage = String(trimmed.dropFirst(3))
                current = []
            }
        }
        return blocks
    }

    /// `text` without its fenced code blocks and inline code spans: the prose, where links are.
    static func prose(_ text: String) -> String {
        var kept: [String] = [], inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inBlock.toggle()
                continue
            }
            if !inBlock { kept.append(String(line).replacing(/`[^`]*`/, with: "")) }
        }
        return kept.joined(separator: "\n")
    }

    /// The targets of README's Markdown links `[text](target)`.
    static func linkTargets() throws -> [String] {
        try prose(read("README.md")).matches(of: /\[[^\]]*\]\(([^)\s]+)\)/).map { String($0.output.1) }
    }

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
        })
    }

    /// The DocC catalogs under Sources/: catalog folder → its article files (`Name.md`).
    static func catalogs() throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for target in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path) {
            let targetPath = "Sources/\(target)"
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(targetPath).path) else { continue }
            for entry in entries where entry.hasSuffix(".docc") {
                let catalog = "\(targetPath)/\(entry)"
                result[catalog] = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)
                    .filter { $0.hasSuffix(".md") }.sorted()
            }
        }
        return result
    }

    @Test func everyRelativeLinkLeadsToAFileOrAHeadingThatExists() throws {
        let readme = try Self.read("README.md")
        let headings = Set(readme.split(separator: "\n").filter { $0.hasPrefix("#") }
            .map { Self.anchor($0.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)) })
        let relative = try Self.linkTargets().filter { !$0.contains("://") && !$0.hasPrefix("mailto:") }
        #expect(relative.count >= 10, "README should link the documents it points to: \(relative)")
        for target in relative {
            if target.hasPrefix("#") {
                #expect(headings.contains(String(target.dropFirst())), "README links \(target), which is no heading of README")
            } else {
                let path = String(target.prefix { $0 != "#" })
                #expect(Self.exists(path), "README links \(path), which does not exist")
            }
        }
    }

    /// README lists every DocC article, and every article it links is in its catalog and in the
    /// Topics of the catalog's root page (`- <doc:Name>`), where DocC shows it.
    @Test func readmeListsEveryDocCArticleAndEachIsInItsCatalog() throws {
        let catalogs = try Self.catalogs()
        #expect(catalogs.count >= 3, "the DocC catalogs under Sources/: \(catalogs.keys.sorted())")
        let linked = Set(try Self.linkTargets().filter { $0.contains(".docc/") })
        for (catalog, articles) in catalogs.sorted(by: { $0.key < $1.key }) {
            #expect(!articles.isEmpty, "\(catalog) has no page")
            for article in articles {
                #expect(linked.contains("\(catalog)/\(article)"), "README's Documentation does not list \(catalog)/\(article)")
            }
        }
        for target in linked.sorted() {
            let path = String(target.prefix { $0 != "#" }).split(separator: "/")
            let catalog = path.dropLast().joined(separator: "/"), article = String(path.last ?? "")
            let pages = try #require(catalogs[catalog], "README links \(target), in no DocC catalog")
            guard pages.contains(article) else {
                Issue.record("README links \(target), which \(catalog) does not hold")
                continue
            }
            // The root page is the module's (# ``Module``); every other page is in its Topics.
            let root = try #require(try pages.first { try Self.read("\(catalog)/\($0)").hasPrefix("# ``") },
                                    "\(catalog) has no root page (# ``Module``)")
            guard article != root else { continue }
            let name = article.replacingOccurrences(of: ".md", with: "")
            let topics = try Self.read("\(catalog)/\(root)").components(separatedBy: "\n## Topics\n").dropFirst().first ?? ""
            #expect(topics.contains("- <doc:\(name)>"), "\(catalog)/\(root) does not list <doc:\(name)> in its Topics")
        }
        for match in try Self.read("README.md").matches(of: /<doc:(\w+)>/) {
            let file = "\(match.output.1).md"
            #expect(catalogs.values.contains { $0.contains(file) }, "README names <doc:\(match.output.1)>, which no catalog holds")
        }
    }

    /// Every method README's Swift code calls on a value (`request.open(`, `response.body.collect(`)
    /// is a `public func` of CurlXHR or CurlXHRClient.
    @Test func readmeSwiftCodeCallsOnlyPublicMethodsThatExist() throws {
        var declared = Set<String>()
        for target in ["Sources/CurlXHR", "Sources/CurlXHRClient"] {
            let directory = Self.root.appendingPathComponent(target)
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                let source = try String(contentsOf: file, encoding: .utf8)
                for match in source.matches(of: /public\s+(?:(?:static|mutating|nonisolated|final|override)\s+)*func\s+(\w+)/) {
                    declared.insert(String(match.output.1))
                }
            }
        }
        #expect(declared.contains("open") && declared.contains("invoke"), "public funcs found: \(declared.count)")
        let blocks = Self.codeBlocks(try Self.read("README.md"), language: "swift")
        #expect(!blocks.isEmpty, "README has no Swift code block")
        // A member call on a value: `x.name(`, `f().name(`, not a leading-dot case such as `.json(`.
        let called = blocks.flatMap { block in block.matches(of: /[\w)\]]\.([a-z]\w*)\(/).map { String($0.output.1) } }
        #expect(called.count >= 8, "README's Swift code calls: \(called)")
        for name in Set(called).sorted() {
            #expect(declared.contains(name), "README's Swift code calls .\(name)(, which is no public func of CurlXHR or CurlXHRClient")
        }
    }

    /// Every `cxhr_…` and `CXHR_…` name in README is declared in curlxhr.h (outside its
    /// comments); `cxhr_kerberos_*` stands for the names that begin so.
    @Test func everyCNameInReadmeIsDeclaredInTheHeader() throws {
        let header = try Self.read("CSupport/CurlXHRHeader/include/curlxhr.h")
            .replacing(try Regex(#"/\*[\s\S]*?\*/"#), with: " ").replacing(try Regex("//[^\n]*"), with: " ")
        let declared = Set(header.matches(of: /\b(?:cxhr|CXHR)_\w+/).map { String($0.output) })
        let names = Set(try Self.read("README.md").matches(of: /\b(?:cxhr|CXHR)_\w*/).map { String($0.output) })
        #expect(names.count >= 5, "README's C names: \(names.sorted())")
        for name in names.sorted() {
            let found = name.hasSuffix("_") ? declared.contains { $0.hasPrefix(name) } : declared.contains(name)
            #expect(found, "README names \(name), which curlxhr.h does not declare")
        }
    }

    /// "## Two commands" gives exactly scripts/demo.sh and scripts/test.sh, and both are
    /// executable scripts of the package.
    @Test func theTwoCommandsAreTheScriptsThatExist() throws {
        let readme = try Self.read("README.md")
        let section = try #require(readme.components(separatedBy: "\n## Two commands\n").dropFirst().first?
            .components(separatedBy: "\n## ").first, "README has no section ## Two commands")
        let block = try #require(Self.codeBlocks(section, language: "sh").first, "## Two commands has no sh block")
        let commands = block.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands == ["scripts/demo.sh", "scripts/test.sh"], "the two commands: \(commands)")
        for command in commands {
            let path = Self.root.appendingPathComponent(command).path
            #expect(FileManager.default.isExecutableFile(atPath: path), "\(command) is not an executable file")
        }
    }
}
