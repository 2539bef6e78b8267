/// How the tool reads its arguments: ranges, credentials, -G's query, -O's name, -x and -F.
extension Fetch {
    /// `--limit-rate RATE` → bytes a second, as curl reads it: digits with an optional unit, K,
    /// M or G (1024 each) or B (bytes), either case; 0 is no limit (nil: not a rate).
    static func rate(_ text: String) -> Int64? {
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let shift = ["k": 10, "m": 20, "g": 30, "b": 0][last.lowercased()] {
            unit = 1 << shift
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else { return nil }
        let (product, overflow) = count.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// `-r START-END` or `START-` → its bytes (nil: not a range this tool sends).
    static func byteRange(_ text: String) -> (start: Int64, end: Int64?)? {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int64(parts[0]), start >= 0 else { return nil }
        if parts[1].isEmpty { return (start, nil) }
        guard let end = Int64(parts[1]), end >= start else { return nil }
        return (start, end)
    }

    /// `user:password` → its parts (no colon: an empty password).
    static func split(_ credentials: String) -> (user: String, password: String) {
        guard let colon = credentials.firstIndex(of: ":") else { return (credentials, "") }
        return (String(credentials[..<colon]), String(credentials[credentials.index(after: colon)...]))
    }

    /// curl's -G: the data joins the query with `&`, or starts it with `?`.
    static func url(_ url: String, withQuery query: String?) -> String {
        guard let query, !query.isEmpty else { return url }
        let fragment = url.firstIndex(of: "#")
        let base = url[..<(fragment ?? url.endIndex)]
        return base + (base.contains("?") ? "&" : "?") + query + (fragment.map { String(url[$0...]) } ?? "")
    }

    /// curl's -O: the last segment of the URL's path (without query or fragment); nil when empty.
    static func remoteFileName(_ url: String) -> String? {
        var rest = Substring(url)
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }   // no path at all
        let name = rest[slash...].split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return name.isEmpty || name == "." || name == ".." ? nil : name
    }
}

/// One `-F` argument as curl reads it: `name=value`, `name=<FILE` (the file's content as the
/// value), or `name=@FILE` with `;type=TYPE` and `;filename=NAME` after the file.
struct FormPart: Equatable {
    enum Content: Equatable {
        case value(String)
        case fileContent(path: String)
        case file(path: String, type: String?, fileName: String?)
    }
    let name: String
    let content: Content

    init?(_ argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
        name = String(argument[..<equals])
        let rest = argument[argument.index(after: equals)...]
        if rest.first == "<" {
            guard rest.count > 1 else { return nil }
            content = .fileContent(path: String(rest.dropFirst()))
            return
        }
        guard rest.first == "@" else {
            content = .value(String(rest))
            return
        }
        var fields = rest.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let path = fields.removeFirst()
        guard !path.isEmpty else { return nil }
        var type: String?, fileName: String?
        for field in fields {
            if field.hasPrefix("type=") { type = String(field.dropFirst(5)) }
            else if field.hasPrefix("filename=") { fileName = String(field.dropFirst(9)) }
            else { return nil }
        }
        content = .file(path: path, type: type, fileName: fileName)
    }
}

/// One `-H` argument as curl reads it: `Name: value`; `Name:` (nothing after the colon) keeps
/// a field the tool would send out; `Name;` sends the field empty. Nil: curl ignores it.
enum HeaderArgument: Equatable {
    case value(name: String, value: String)
    case removed(name: String)
    case empty(name: String)

    init?(_ argument: String) {
        if let colon = argument.firstIndex(of: ":") {
            let name = String(argument[..<colon])
            let value = Self.trimmed(argument[argument.index(after: colon)...])
            self = value.isEmpty ? .removed(name: name) : .value(name: name, value: value)
        } else if argument.hasSuffix(";"), Self.trimmed(argument.dropLast()) == String(argument.dropLast()) {
            self = .empty(name: String(argument.dropLast()))
        } else {
            return nil
        }
    }

    var name: String {
        switch self {
        case .value(let name, _), .removed(let name), .empty(let name): name
        }
    }

    static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// The parts of a URL the tool looks at before the library does: the host (for --netrc) and
/// whether curl would call it malformed (exit 3).
enum URLShape {
    /// `scheme://[user@]host[:port]/…` → its authority's host and port text.
    static func authority(of url: String) -> (host: String, port: Substring?)? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        var authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            return (String(authority[...close]), rest.isEmpty ? nil : rest.dropFirst())
        }
        guard let colon = authority.firstIndex(of: ":") else { return (String(authority), nil) }
        return (String(authority[..<colon]), authority[authority.index(after: colon)...])
    }

    static func host(of url: String) -> String? {
        authority(of: url).map(\.host).flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    /// No host, a bracket left open, or a port that is not a number up to 65535.
    static func isMalformed(_ url: String) -> Bool {
        guard url.contains("://") else { return false }  // no scheme: the library's own refusal (2)
        guard let (host, port) = authority(of: url), !host.isEmpty else { return true }
        guard let port, !port.isEmpty else { return false }
        guard port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), let number = Int(port) else { return true }
        return number > 65535
    }
}

/// -J: the file name of a `Content-Disposition` field, as a name in the current folder: the
/// last segment of any path in it; nil for none, `.`, `..`, or one with control characters.
enum RemoteHeaderName {
    static func fileName(_ field: String) -> String? {
        for parameter in field.split(separator: ";").dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            // filename*= (RFC 5987) is not read: curl reads only filename=.
            guard HeaderArgument.trimmed(parameter[..<equals]).lowercased() == "filename" else { continue }
            var value = parameter[parameter.index(after: equals)...].drop { $0 == " " }
            value = value.first == "\"" ? value.dropFirst().prefix { $0 != "\"" } : value.prefix { $0 != " " }
            return usable(String(value))
        }
        return nil
    }

    static func usable(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        guard !last.isEmpty, last != ".", last != "..", !last.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return nil
        }
        return last
    }
}

/// curl's netrc file: `machine NAME login USER password PASSWORD`, `default …`, `macdef`
/// blocks skipped; tokens separated by blanks and line ends, "quoted" values allowed.
enum Netrc {
    struct Entry {
        /// nil: the `default` entry.
        var machine: String?
        var login: String?
        var password: String?
    }

    /// `login:password` for `host` (or the `default` entry); nil when none.
    static func credentials(in text: String, host: String) -> String? {
        var entries: [Entry] = []
        var tokens = self.tokens(text)[...]
        while let token = tokens.popFirst() {
            switch token {
            case "machine": entries.append(Entry(machine: tokens.popFirst()?.lowercased() ?? ""))
            case "default": entries.append(Entry(machine: nil))
            case "login":
                let value = tokens.popFirst()
                if !entries.isEmpty { entries[entries.count - 1].login = value }
            case "password":
                let value = tokens.popFirst()
                if !entries.isEmpty { entries[entries.count - 1].password = value }
            case "account": _ = tokens.popFirst()
            default: break  // a word out of place: skipped, as curl does
            }
        }
        guard let entry = entries.first(where: { $0.machine == host }) ?? entries.first(where: { $0.machine == nil }),
              let login = entry.login else { return nil }
        return login + ":" + (entry.password ?? "")
    }

    /// The file's words; a `macdef` block (to its empty line) is skipped.
    static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var inMacro = false
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            if inMacro { inMacro = !line.allSatisfy(\.isWhitespace); continue }
            var rest = Substring(line)
            while true {
                rest = rest.drop { $0 == " " || $0 == "\t" }
                guard let first = rest.first, first != "#" else { break }
                if first == "\"" {
                    let word = rest.dropFirst().prefix { $0 != "\"" }
                    tokens.append(String(word))
                    rest = rest.dropFirst(word.count + 2)
                } else {
                    let word = rest.prefix { $0 != " " && $0 != "\t" }
                    tokens.append(String(word))
                    rest = rest.dropFirst(word.count)
                }
                if tokens.last == "macdef" { inMacro = true; break }
            }
        }
        return tokens
    }
}
