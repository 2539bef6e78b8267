/// How the tool reads its arguments: ranges, credentials, -G's query, -O's name, -x and -F.
extension Fetch {
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
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }   // no path at all
        let name = rest[slash...].split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return name.isEmpty || name == "." || name == ".." ? nil : name
    }
}

/// `-x host:port`, with an IPv6 address in brackets.
struct ProxyAddress {
    let host: String
    let port: Int

    init?(_ text: String) {
        var rest = Substring(text)
        if rest.hasPrefix("http://") { rest = rest.dropFirst("http://".count) }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return nil }
        var host = rest[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }
}

/// One `-F` argument as curl reads it: `name=value`, or `name=@FILE` with `;type=TYPE` and
/// `;filename=NAME` after the file.
struct FormPart: Equatable {
    enum Content: Equatable {
        case value(String)
        case file(path: String, type: String?, fileName: String?)
    }
    let name: String
    let content: Content

    init?(_ argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
        name = String(argument[..<equals])
        let rest = argument[argument.index(after: equals)...]
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
