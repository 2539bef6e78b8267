/// One way FindProxyForURL's answer lets a request go: straight to the origin, or through a
/// proxy (`PROXY`/`HTTP` an HTTP proxy, `HTTPS` a TLS proxy, `SOCKS`/`SOCKS4` SOCKS4,
/// `SOCKS5` SOCKS5).
enum PACRoute: Sendable, Equatable {
    case direct
    case proxy(ProxySetting)

    /// The proxy, nil for DIRECT.
    var proxy: ProxySetting? {
        if case .proxy(let proxy) = self { proxy } else { nil }
    }

    /// How texts name it.
    var name: String { proxy?.name ?? "DIRECT" }
}

/// FindProxyForURL's answer (`"PROXY host:port; SOCKS5 host:port; DIRECT"`) read into routes,
/// in its order; or why it is none. A pure function, tested answer by answer (PACAnswerTests).
enum PACAnswer {
    /// Longer answers are refused: no PAC file needs them, and each entry may cost a connect.
    static let maxLength = 64 * 1024
    /// The routes tried at most; later entries are left out.
    static let maxRoutes = 32

    /// The routes of `answer`: entries separated by `;` (empty ones skipped), each a keyword
    /// (case aside) and, but for DIRECT, `host[:port]` (an IPv6 address in brackets) after
    /// spaces or tabs. Refused: CR, LF or NUL, an answer longer than ``maxLength``, an
    /// unknown keyword, a bad host or port, or no entry at all.
    static func parse(_ answer: String) -> Result<[PACRoute], ReadableFile.Problem> {
        func refused(_ why: String) -> Result<[PACRoute], ReadableFile.Problem> {
            let quoted = answer.utf8.count > 80 ? String(answer.prefix(80)) + "…" : answer
            return .failure(ReadableFile.Problem(message: "FindProxyForURL answered '\(MessageValidation.escaped(quoted))': \(why)"))
        }
        guard answer.utf8.count <= maxLength else { return refused("longer than \(maxLength) bytes") }
        guard MessageValidation.isFieldValue(answer) else { return refused("it contains CR, LF or NUL") }
        var routes: [PACRoute] = []
        for entry in answer.split(separator: ";", omittingEmptySubsequences: false) {
            let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.isEmpty { continue }
            switch route(words.map(String.init)) {
            case .failure(let why): return refused(why.message)
            case .success(let route):
                if routes.count < maxRoutes { routes.append(route) }
            }
        }
        return routes.isEmpty ? refused("no proxy and no DIRECT") : .success(routes)
    }

    /// One entry's route, from its words.
    private static func route(_ words: [String]) -> Result<PACRoute, ReadableFile.Problem> {
        func refused(_ why: String) -> Result<PACRoute, ReadableFile.Problem> {
            .failure(ReadableFile.Problem(message: why))
        }
        let keyword = words[0].uppercased()
        if keyword == "DIRECT" {
            return words.count == 1 ? .success(.direct) : refused("DIRECT takes no host")
        }
        let scheme: ProxySetting.Scheme
        switch keyword {
        case "PROXY", "HTTP": scheme = .http
        case "HTTPS": scheme = .https
        case "SOCKS", "SOCKS4": scheme = .socks4
        case "SOCKS5": scheme = .socks5
        default:
            let shown = words[0].count > 20 ? String(words[0].prefix(20)) + "…" : words[0]
            return refused("'\(MessageValidation.escaped(shown))' is not DIRECT, PROXY, HTTPS, SOCKS, SOCKS4 or SOCKS5")
        }
        guard words.count == 2 else { return refused("\(keyword) takes one host:port") }
        let defaultPort = scheme == .http ? 80 : scheme.defaultPort
        guard let (host, port) = hostAndPort(words[1], defaultPort: defaultPort) else {
            return refused("'\(MessageValidation.escaped(String(words[1].prefix(80))))' is not host:port")
        }
        if let problem = ProxySetting.problem(host: host, port: port) { return refused(problem) }
        return .success(.proxy(ProxySetting(scheme: scheme, host: host, port: port)))
    }

    /// `host:port`, `[v6]:port`, or a host alone with `defaultPort`; nil when the port is no
    /// number of 1…65535 or an IPv6 address is not in brackets.
    private static func hostAndPort(_ text: String, defaultPort: Int) -> (String, Int)? {
        var host = Substring(text), portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            guard text[text.index(after: colon)...].firstIndex(of: ":") == nil else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { return nil }
        guard let portText else { return (String(host), defaultPort) }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
