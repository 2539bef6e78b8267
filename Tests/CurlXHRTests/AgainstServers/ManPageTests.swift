import Foundation
import Testing

/// `docs/xhr.1`, the man page `scripts/install-c.sh` installs: `man -l` renders it without a
/// warning, and it and README's copy list exactly the options `xhr fetch --help` lists.
@Suite(.ownThreads) struct ManPageTests {
    let page = TestEnvironment.packageRoot.appendingPathComponent("docs/xhr.1").path

    /// The long options of `--help`'s option lines ("  -X, --request <METHOD>",
    /// "  -L, --location/--no-location").
    func helpOptions() throws -> Set<String> {
        let help = try XHRToolTests.run(TestEnvironment.builtProduct("xhr"), ["fetch", "--help"])
        #expect(help.status == 0)
        var options = Set<String>()
        for line in help.text.split(separator: "\n") where line.hasPrefix("  -") {
            let definition = line.dropFirst(2).prefix { $0 != " " || line.contains(", --") }
            options.formUnion(Self.longOptions(in: String(definition.split(separator: "<").first ?? "")))
        }
        return options
    }

    /// `--name` tokens of `text`.
    static func longOptions(in text: String) -> Set<String> {
        var found = Set<String>()
        var rest = Substring(text)
        while let start = rest.range(of: "--") {
            let name = rest[start.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
            if let first = name.first, first.isLetter { found.insert("--" + name) }
            rest = rest[start.upperBound...]
        }
        return found
    }

    @Test func thePageListsExactlyTheOptionsOfTheHelp() throws {
        let roff = try String(contentsOfFile: page, encoding: .utf8)
        // The line after each .TP names an option: `.BR \-X ", " \-\-request " " \fIMETHOD\fR`.
        let lines = roff.split(separator: "\n", omittingEmptySubsequences: false)
        var pageOptions = Set<String>()
        for (index, line) in lines.enumerated() where line == ".TP" && index + 1 < lines.count {
            let definition = lines[index + 1].replacingOccurrences(of: "\\-", with: "-")
            pageOptions.formUnion(Self.longOptions(in: definition.components(separatedBy: "\\fI").first ?? definition))
        }
        let help = try helpOptions()
        #expect(help.count > 50, "\(help.sorted())")
        #expect(pageOptions.subtracting(help).isEmpty, "in the page, not in --help: \(pageOptions.subtracting(help).sorted())")
        #expect(help.subtracting(pageOptions).isEmpty, "in --help, not in the page: \(help.subtracting(pageOptions).sorted())")
    }

    /// README's copy of the page lists the same options in its OPTIONS table: one truth.
    @Test func theReadmeListsExactlyTheOptionsOfTheHelp() throws {
        let readme = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "**OPTIONS**").dropFirst().first)
        let table = section.components(separatedBy: "\n\n").dropFirst().first ?? ""
        var readmeOptions = Set<String>()
        // An option row names its options in its first cell, and those that go with it in
        // its second (`--auth` with `-u`).
        for row in table.split(separator: "\n") where row.hasPrefix("| `-") {
            readmeOptions.formUnion(Self.longOptions(in: String(row)))
        }
        let help = try helpOptions()
        #expect(readmeOptions.count > 50, "\(readmeOptions.sorted())")
        #expect(readmeOptions.subtracting(help).isEmpty, "in README, not in --help: \(readmeOptions.subtracting(help).sorted())")
        #expect(help.subtracting(readmeOptions).isEmpty, "in --help, not in README: \(help.subtracting(readmeOptions).sorted())")
    }

    @Test func manRendersThePageWithoutAWarning() throws {
        let rendered = try Shell.run("/usr/bin/man", ["--warnings", "-l", page], environment: ["MANWIDTH": "100", "MAN_KEEP_FORMATTING": nil])
        #expect(rendered.status == 0, "\(rendered.output)")
        #expect(rendered.output.contains("xhr - fetch a URL with CurlXHR"), "\(rendered.output.prefix(300))")
        #expect(!rendered.output.contains("warning"), "\(rendered.output)")
    }
}
