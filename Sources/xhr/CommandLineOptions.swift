#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A wrong command line: the message, and curl's exit status for it (2; 3 for a URL).
struct ValidationError: Error {
    let message: String
    let code: Int32
    init(_ message: String, code: Int32 = 2) {
        self.message = message
        self.code = code
    }
}

/// An option no table knows: curl's "option --NAME: is unknown" (exit 2), a warning in a config file.
struct UnknownOption: Error {
    let name: String
    var asUsageError: ValidationError { ValidationError("option \(name): is unknown") }
}

/// The exit a run ends with (0: success), after its message was printed.
struct ExitCode: Error {
    let rawValue: Int32
    init(_ rawValue: Int32) { self.rawValue = rawValue }
    static let success = ExitCode(0)
}

/// One option of the command line, as curl names it: a short letter and a long name, a
/// value or none (a switch, which `--no-NAME` turns off), its help, and what it sets.
struct OptionSpec {
    let short: Character?
    let long: String
    /// The value's name in the help; nil for a switch.
    let valueName: String?
    let help: String
    /// `--no-NAME` is shown in the help (it works for every switch).
    var showsNegation = false
    var hidden = false
    /// Sets the option: the value, or for a switch "" (on) or "no" (off).
    let apply: (inout Fetch, String) throws -> Void

    var takesValue: Bool { valueName != nil }

    // The setters are closures, not key paths: a key path is made at run time, at every start.

    static func flag(_ short: Character?, _ long: String, _ help: String, showsNegation: Bool = false, hidden: Bool = false,
                     _ set: @escaping (inout Fetch, Bool) -> Void) -> OptionSpec {
        OptionSpec(short: short, long: long, valueName: nil, help: help, showsNegation: showsNegation, hidden: hidden) {
            set(&$0, $1 != "no")
        }
    }

    static func text(_ short: Character?, _ long: String, _ valueName: String, _ help: String,
                     _ set: @escaping (inout Fetch, String) -> Void) -> OptionSpec {
        OptionSpec(short: short, long: long, valueName: valueName, help: help, apply: set)
    }

    static func list(_ short: Character?, _ long: String, _ valueName: String, _ help: String,
                     _ append: @escaping (inout Fetch, String) -> Void) -> OptionSpec {
        OptionSpec(short: short, long: long, valueName: valueName, help: help, apply: append)
    }

    static func seconds(_ short: Character?, _ long: String, _ help: String, _ set: @escaping (inout Fetch, Double) -> Void) -> OptionSpec {
        OptionSpec(short: short, long: long, valueName: "SECONDS", help: help) { fetch, value in
            guard let number = Double(value), number >= 0, number.isFinite else {
                throw ValidationError("option --\(long): expected a proper numerical parameter")
            }
            set(&fetch, number)
        }
    }

    static func count(_ long: String, _ help: String, _ set: @escaping (inout Fetch, Int) -> Void) -> OptionSpec {
        OptionSpec(short: nil, long: long, valueName: "N", help: help) { fetch, value in
            guard let number = Int(value), number >= 0 else {
                throw ValidationError("option --\(long): expected a proper numerical parameter")
            }
            set(&fetch, number)
        }
    }

    /// The help's line naming it: `-X, --request <METHOD>`, `-L, --location/--no-location`.
    var definition: String {
        var names = short.map { "-\($0), --\(long)" } ?? "--\(long)"
        if showsNegation { names += "/--no-\(long)" }
        return valueName.map { names + " <\($0)>" } ?? names
    }
}

/// The options of a section of the help, under its title.
struct OptionSection {
    let title: String
    let options: [OptionSpec]
}

/// curl's command line: options (`-sS`, `-o FILE`, `-oFILE`, `--output FILE`, `--no-SWITCH`)
/// and URLs in any order, `-K FILE` reading more from a config file, `-q` first.
struct CommandLineParser {
    let sections: [OptionSection]
    /// Every option, searched in order: a run names a handful, and a dictionary's hashing
    /// costs more at start-up than these comparisons.
    private let options: [OptionSpec]
    /// How deep -K files may name more -K files.
    static let maxConfigDepth = 8

    init(sections: [OptionSection]) {
        self.sections = sections
        options = sections.flatMap(\.options)
    }

    private func option(long name: String) -> OptionSpec? {
        options.first { $0.long == name }
    }

    private func option(short letter: Character) -> OptionSpec? {
        options.first { $0.short == letter }
    }

    /// Applies `arguments` to `fetch`; a help request answers `true` (nothing else is done).
    func parse(_ arguments: [String], into fetch: inout Fetch) throws -> Bool {
        var rest = arguments[...]
        if rest.first == "-q" || rest.first == "--disable" { rest.removeFirst() }  // xhr reads no ~/.curlrc anyway
        return try parse(&rest, into: &fetch, depth: 0)
    }

    private func parse(_ rest: inout ArraySlice<String>, into fetch: inout Fetch, depth: Int) throws -> Bool {
        while let argument = rest.popFirst() {
            if argument == "-h" || argument == "--help" { return true }
            if argument.hasPrefix("--"), argument.count > 2 {
                try long(String(argument.dropFirst(2)), rest: &rest, into: &fetch, depth: depth)
            } else if argument.hasPrefix("-"), argument.count > 1 {
                try shorts(argument, rest: &rest, into: &fetch, depth: depth)
            } else {
                fetch.urls.append(argument)
            }
        }
        return false
    }

    private func long(_ name: String, rest: inout ArraySlice<String>, into fetch: inout Fetch, depth: Int) throws {
        if name == "config" { return try config(Self.value(for: "--config", &rest), into: &fetch, depth: depth) }
        if name == "disable" { return }  // -q later than first: curl ignores it too
        if let option = option(long: name) {
            if option.takesValue { return try option.apply(&fetch, Self.value(for: "--" + name, &rest)) }
            return try option.apply(&fetch, "")
        }
        if name.hasPrefix("no-"), let option = option(long: String(name.dropFirst(3))), !option.takesValue {
            return try option.apply(&fetch, "no")
        }
        throw UnknownOption(name: "--" + name)
    }

    /// `-sS`, `-o FILE`, `-oFILE`, `-so FILE`: switches, and at most one option with a value, last.
    private func shorts(_ argument: String, rest: inout ArraySlice<String>, into fetch: inout Fetch, depth: Int) throws {
        var letters = argument.dropFirst()
        while let letter = letters.popFirst() {
            if letter == "K" {
                let path = letters.isEmpty ? try Self.value(for: "-K", &rest) : String(letters)
                return try config(path, into: &fetch, depth: depth)
            }
            if letter == "q" { continue }  // -q later than first: curl ignores it too
            guard let option = option(short: letter) else { throw UnknownOption(name: "-\(letter)") }
            guard option.takesValue else {
                try option.apply(&fetch, "")
                continue
            }
            let value = letters.isEmpty ? try Self.value(for: "-\(letter)", &rest) : String(letters)
            return try option.apply(&fetch, value)
        }
    }

    private static func value(for name: String, _ rest: inout ArraySlice<String>) throws -> String {
        guard let value = rest.popFirst() else { throw ValidationError("option \(name): requires parameter") }
        return value
    }

    /// `-K FILE` (`-`: standard input): its options, as curl reads a config file.
    private func config(_ path: String, into fetch: inout Fetch, depth: Int) throws {
        guard depth < Self.maxConfigDepth else { throw ValidationError("-K \(path): config files nested too deep") }
        guard let bytes = path == "-" ? StandardStreams.readAll(0) : StandardStreams.read(file: path) else {
            throw ValidationError("cannot read config file \(path)", code: 26)
        }
        for line in try ConfigFile.lines(String(decoding: bytes, as: UTF8.self), path: path) {
            var arguments = line.arguments[...]
            do {
                if try parse(&arguments, into: &fetch, depth: depth + 1) { throw ValidationError("-K \(path): --help in a config file") }
            } catch let unknown as UnknownOption {
                // As curl: a warning, and the next line.
                StandardStreams.write("xhr: \(path):\(line.number): warning: '\(unknown.name)' is unknown\n", to: 2)
            }
        }
    }

    /// The help: an overview, every option of every section, then `footer`.
    func help(overview: String, footer: String) -> String {
        var text = overview + "\n"
        for section in sections {
            text += "\n\(section.title.uppercased()):\n"
            for option in section.options where !option.hidden {
                text += "  \(option.definition)\n" + Self.wrapped(option.help, indent: "        ")
            }
        }
        text += "\n  -K, --config <FILE>\n" + Self.wrapped("Read more options from FILE, in curl's config file syntax (- : standard input); an unknown one there is reported and skipped.", indent: "        ")
        text += "  -q, --disable\n" + Self.wrapped("As the first option: read no ~/.curlrc (xhr never reads one).", indent: "        ")
        text += "  -h, --help\n" + Self.wrapped("Show help information.", indent: "        ")
        return text + "\n" + footer
    }

    /// `text` wrapped to 80 columns, paragraph by paragraph; a line starting with two spaces
    /// starts a paragraph of its own.
    static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard !line.isEmpty else { return "\n" }
            let indent = line.hasPrefix("  ") ? "  " : ""
            return wrapped(String(line.dropFirst(indent.count)), indent: indent)
        }.joined()
    }

    static func wrapped(_ text: String, indent: String, width: Int = 80) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width, line != indent {
                lines.append(line)
                line = indent
            }
            line += (line == indent ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}

/// curl's config file syntax: one option a line, `--name`, `name` or `-X`, then its value after
/// blanks, `=` or `:`, "quoted" with \\ \" \t \n \r \v escapes or bare to the next blank;
/// `#` starts a comment line.
enum ConfigFile {
    /// The arguments of each option line, with its number (from 1).
    static func lines(_ text: String, path: String) throws -> [(number: Int, arguments: [String])] {
        var lines: [(number: Int, arguments: [String])] = []
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            var line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            // `=` and `:` separate the value only after a name without dashes (as curl).
            let dashed = line.hasPrefix("-")
            let name = line.prefix { $0 != " " && $0 != "\t" && (dashed || ($0 != "=" && $0 != ":")) }
            var rest = line[name.endIndex...].drop { $0 == " " || $0 == "\t" }
            if !dashed, let first = rest.first, first == "=" || first == ":" {
                rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            }
            var arguments = [dashed ? String(name) : "--" + name]
            if !rest.isEmpty {
                guard let value = value(rest) else {
                    throw ValidationError("config file \(path), line \(number + 1): an unterminated quoted value")
                }
                arguments.append(value)
            }
            lines.append((number + 1, arguments))
        }
        return lines
    }

    /// A quoted value with its escapes resolved, or a bare one up to the first blank.
    private static func value(_ text: Substring) -> String? {
        guard text.first == "\"" else { return String(text.prefix { $0 != " " && $0 != "\t" }) }
        var value = ""
        var escaped = false
        for character in text.dropFirst() {
            if escaped {
                value.append(["t": "\t", "n": "\n", "r": "\r", "v": "\u{0B}"][character] ?? character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return value
            } else {
                value.append(character)
            }
        }
        return nil
    }
}
