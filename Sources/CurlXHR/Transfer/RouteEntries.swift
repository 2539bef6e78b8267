#if canImport(Glibc)
import Glibc
#endif

/// One `--resolve` entry (``HttpRequest/setResolve(_:)``): connections for `host` (nil: any
/// host, curl's `*`) on `port` go to `addresses`.
struct ResolveEntry: Sendable, Equatable {
    var host: String?
    var port: Int
    /// Numerical IPv4 or IPv6 addresses, without brackets, in the order given.
    var addresses: [String]

    /// The name the entry's connections resolve through: made of its port and addresses only,
    /// so that it resolves, in libcurl's process-wide DNS cache, to nothing but those
    /// addresses, for no request but one that names them (`.invalid` never resolves otherwise).
    var alias: String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in "\(port)|\(addresses.joined(separator: ","))".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return "r" + String(repeating: "0", count: 16 - hex.count) + hex + ".resolve.invalid"
    }

    func matches(host other: String, port otherPort: Int) -> Bool {
        port == otherPort && (host.map { $0.lowercased() == other.lowercased() } ?? true)
    }
}

extension Routing {
    /// The request's connections may go elsewhere than its URL says (resolve or connect-to
    /// entries, a Unix socket): what comes back is not the URL's answer for other requests,
    /// so the shared HTTP cache takes no part in its sends.
    var isRerouted: Bool { !resolve.isEmpty || !connectTo.isEmpty || unixSocket != nil }
}

/// One `--connect-to` entry (``HttpRequest/setConnectTo(_:)``): connections for `host` (nil:
/// any) on `port` (nil: any) go to `target` (nil: the request's host) on `targetPort` (nil:
/// the request's port). IPv6 addresses are kept in brackets, as libcurl reads them.
struct ConnectToEntry: Sendable, Equatable {
    var host: String?
    var port: Int?
    var target: String?
    var targetPort: Int?
}

/// The routing switches' inputs, parsed and checked as curl reads them, so that a bad one is
/// refused by the call that sets it rather than failing a later send; and what libcurl is
/// given for them.
enum RouteEntries {
    /// The most entries one call takes.
    static let maxEntries = 1000
    /// The longest entry, in bytes.
    static let maxEntryLength = 4096

    typealias Problem = ReadableFile.Problem

    /// `entries` in curl's `--resolve` syntax: `[+]HOST:PORT:ADDRESS[,ADDRESS…]`, where HOST
    /// is a host name or `*` (any host), PORT 1–65535 and each ADDRESS a numerical IPv4 or
    /// IPv6 address (in brackets or not); `-HOST:PORT` takes an earlier entry of the list out.
    /// A later entry for the same host and port replaces an earlier one. `+` (curl's "may time
    /// out") changes nothing: a request's entries hold for its sends.
    static func resolve(_ entries: [String]) -> Result<[ResolveEntry], Problem> {
        if let problem = listProblem(entries, option: "--resolve") { return .failure(problem) }
        var parsed: [ResolveEntry] = []
        for entry in entries {
            let shown = "'\(MessageValidation.escaped(entry))' is not a --resolve entry HOST:PORT:ADDRESS[,ADDRESS]"
            var text = Substring(entry)
            let removes = text.first == "-"
            if removes || text.first == "+" { text.removeFirst() }
            let parts = text.split(separator: ":", maxSplits: removes ? 1 : 2, omittingEmptySubsequences: false)
            guard parts.count == (removes ? 2 : 3) else {
                return .failure(Problem(message: removes ? "'\(MessageValidation.escaped(entry))' is not a --resolve removal -HOST:PORT"
                                                         : "\(shown): it needs three parts separated by ':'"))
            }
            let host = String(parts[0])
            guard host == "*" || isHostName(host) else {
                return .failure(Problem(message: "\(shown): '\(MessageValidation.escaped(host))' is not a host name or *"))
            }
            guard let port = port(parts[1]) else {
                return .failure(Problem(message: "\(shown): the port '\(MessageValidation.escaped(String(parts[1])))' is not between 1 and 65535"))
            }
            let key = host == "*" ? nil : host
            parsed.removeAll { $0.port == port && $0.host?.lowercased() == key?.lowercased() }
            if removes { continue }
            var addresses: [String] = []
            for item in parts[2].split(separator: ",", omittingEmptySubsequences: true) {
                guard let address = address(item) else {
                    return .failure(Problem(message: "\(shown): '\(MessageValidation.escaped(String(item)))' is not a numerical IPv4 or IPv6 address"))
                }
                addresses.append(address)
            }
            guard !addresses.isEmpty else { return .failure(Problem(message: "\(shown): it names no address")) }
            parsed.append(ResolveEntry(host: key, port: port, addresses: addresses))
        }
        return .success(parsed)
    }

    /// `entries` in curl's `--connect-to` syntax: `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`,
    /// any part empty (the first two: any host or port; the last two: the request's own), an
    /// IPv6 address in brackets; each port 1–65535.
    static func connectTo(_ entries: [String]) -> Result<[ConnectToEntry], Problem> {
        if let problem = listProblem(entries, option: "--connect-to") { return .failure(problem) }
        var parsed: [ConnectToEntry] = []
        for entry in entries {
            let shown = "'\(MessageValidation.escaped(entry))' is not a --connect-to entry HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT"
            var rest = Substring(entry)
            var fields: [Substring] = []
            while fields.count < 4 {
                // A bracketed IPv6 address holds colons of its own.
                var end = rest.firstIndex(of: ":") ?? rest.endIndex
                if fields.count % 2 == 0, rest.first == "[" {
                    guard let close = rest.firstIndex(of: "]") else { return .failure(Problem(message: "\(shown): a '[' without its ']'")) }
                    end = rest.index(after: close)
                }
                fields.append(rest[..<end])
                rest = rest[end...]
                if fields.count < 4 {
                    guard rest.first == ":" else { return .failure(Problem(message: "\(shown): it needs four parts separated by ':'")) }
                    rest.removeFirst()
                }
            }
            guard rest.isEmpty else { return .failure(Problem(message: "\(shown): it has more than four parts")) }
            var hosts: [String?] = []
            var ports: [Int?] = []
            for index in [0, 2] {
                let host = fields[index]
                if host.isEmpty {
                    hosts.append(nil)
                } else if host.first == "[" {
                    guard host.last == "]", address(host) != nil, host.contains(":") else {
                        return .failure(Problem(message: "\(shown): '\(MessageValidation.escaped(String(host)))' is not an IPv6 address in brackets"))
                    }
                    hosts.append(String(host))
                } else {
                    guard isHostName(String(host)) else {
                        return .failure(Problem(message: "\(shown): '\(MessageValidation.escaped(String(host)))' is not a host name or address"))
                    }
                    hosts.append(String(host))
                }
                let portText = fields[index + 1]
                if portText.isEmpty {
                    ports.append(nil)
                } else {
                    guard let port = port(portText) else {
                        return .failure(Problem(message: "\(shown): the port '\(MessageValidation.escaped(String(portText)))' is not between 1 and 65535"))
                    }
                    ports.append(port)
                }
            }
            parsed.append(ConnectToEntry(host: hosts[0], port: ports[0], target: hosts[1], targetPort: ports[1]))
        }
        return .success(parsed)
    }

    /// What libcurl is given for a request's entries: `CURLOPT_CONNECT_TO` lines, and
    /// `CURLOPT_RESOLVE` lines for the entries' aliases only. A `--resolve` entry becomes a
    /// connect-to its alias (``ResolveEntry/alias``), which resolves to its addresses: libcurl's
    /// DNS cache is shared by every request of the process, and an entry for a real name there
    /// would send other requests to those addresses too; a connect-to stays with the request,
    /// and libcurl keeps its connections apart from others. The request's own `--connect-to`
    /// entries come first (curl applies them before resolving), their targets resolved by the
    /// `--resolve` entries that name them; then the `--resolve` entries, `*` last.
    static func curlLines(resolve: [ResolveEntry], connectTo: [ConnectToEntry]) -> (connectTo: [String], resolve: [String]) {
        func lookup(_ host: String, _ port: Int) -> ResolveEntry? {
            resolve.last { $0.host != nil && $0.matches(host: host, port: port) } ?? resolve.last { $0.host == nil && $0.port == port }
        }
        var connectLines: [String] = []
        var used: [ResolveEntry] = []
        for entry in connectTo {
            var target = entry.target ?? ""
            if let host = entry.target, let port = entry.targetPort, let resolved = lookup(host.trimmingBrackets, port) {
                target = resolved.alias
                used.append(resolved)
            }
            connectLines.append("\(entry.host ?? ""):\(entry.port.map(String.init) ?? ""):\(target):\(entry.targetPort.map(String.init) ?? "")")
        }
        for entry in resolve.filter({ $0.host != nil }) + resolve.filter({ $0.host == nil }) {
            connectLines.append("\(entry.host ?? ""):\(entry.port):\(entry.alias):\(entry.port)")
            used.append(entry)
        }
        var resolveLines: [String] = []
        for entry in used {
            let line = "\(entry.alias):\(entry.port):\(entry.addresses.joined(separator: ","))"
            if !resolveLines.contains(line) { resolveLines.append(line) }
        }
        return (connectLines, resolveLines)
    }

    /// `text` (libcurl's words for a failure) with the entries' aliases replaced by their
    /// addresses, as a user wrote them.
    static func readable(_ text: String, resolve: [ResolveEntry]) -> String {
        guard text.contains(".resolve.invalid") else { return text }
        var text = text
        for entry in resolve {
            text = text.replacing(entry.alias, with: entry.addresses.joined(separator: ","))
        }
        return text
    }

    /// Why `path` cannot be a Unix socket's path (a file path, or `@NAME` in the abstract
    /// namespace), or nil. Both fit `sun_path` (108 bytes, with a NUL after a path or before
    /// a name).
    static func unixSocketProblem(_ path: String) -> String? {
        let shown = MessageValidation.escaped(path)
        if hasLineBreakOrNUL(path) { return "the Unix socket path '\(shown)' contains CR, LF or NUL" }
        let name = path.hasPrefix("@") ? path.utf8.dropFirst() : path.utf8[...]
        if name.isEmpty { return path.isEmpty ? "the Unix socket path is empty" : "the abstract Unix socket name after '@' is empty" }
        if name.count > 107 {
            return "the Unix socket \(path.hasPrefix("@") ? "name" : "path") '\(shown)' is \(name.count) bytes: at most 107 fit"
        }
        return nil
    }

    /// `name` as libcurl's `CURLOPT_INTERFACE` is given it, or why it names no interface: an
    /// interface name (`lo`; `if!lo` too) goes as `if!NAME`, so that libcurl never looks it up
    /// as a host name (a DNS query on the engine thread); a numerical address as it is.
    static func interface(_ name: String) -> Result<String, Problem> {
        let shown = MessageValidation.escaped(name)
        if hasLineBreakOrNUL(name) { return .failure(Problem(message: "the interface '\(shown)' contains CR, LF or NUL")) }
        if address(Substring(name)) != nil, !name.hasPrefix("[") { return .success(name) }
        if name.hasPrefix("host!") {
            return .failure(Problem(message: "'\(shown)': a host name is not taken (it would be looked up on the engine thread); name an interface or a numerical address"))
        }
        let device = name.hasPrefix("if!") ? String(name.dropFirst(3)) : name
        // Linux's rules for a device name (dev_valid_name): under 16 bytes, no '/', ':' or space.
        guard !device.isEmpty, device.utf8.count < 16, device != ".", device != "..",
              device.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }) else {
            return .failure(Problem(message: "'\(shown)' is not a network interface name (at most 15 bytes, no '/', ':' or space) or a numerical address"))
        }
        return .success("if!" + device)
    }

    /// Why `name` cannot be a Kerberos service name (the SPN's first part, `HTTP` in
    /// `HTTP/host`), or nil.
    static func serviceNameProblem(_ name: String) -> String? {
        let shown = MessageValidation.escaped(name)
        if hasLineBreakOrNUL(name) { return "the service name '\(shown)' contains CR, LF or NUL" }
        guard !name.isEmpty, name.utf8.count <= 255,
              name.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@") }) else {
            return "'\(shown)' is not a Kerberos service name (1 to 255 bytes, no space, '/' or '@')"
        }
        return nil
    }

    // MARK: Pieces

    private static func listProblem(_ entries: [String], option: String) -> Problem? {
        if entries.count > maxEntries { return Problem(message: "\(entries.count) \(option) entries: at most \(maxEntries) are taken") }
        for entry in entries {
            if hasLineBreakOrNUL(entry) { return Problem(message: "the \(option) entry '\(MessageValidation.escaped(entry))' contains CR, LF or NUL") }
            if entry.utf8.count > maxEntryLength {
                return Problem(message: "a \(option) entry of \(entry.utf8.count) bytes: at most \(maxEntryLength) are taken")
            }
        }
        return nil
    }

    private static func hasLineBreakOrNUL(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0 || $0 == 0x0D || $0 == 0x0A }
    }

    /// A host name or numerical IPv4 address as libcurl takes one here: letters, digits, '-',
    /// '.' and '_', at most 253 bytes.
    static func isHostName(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 253 && host.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_")
        }
    }

    /// A port 1–65535 in decimal digits only.
    static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let port = Int(text), (1...65535).contains(port) else { return nil }
        return port
    }

    /// A numerical IPv4 or IPv6 address (an IPv6 one in brackets or not), without brackets.
    static func address(_ text: Substring) -> String? {
        var text = text
        if text.first == "[" {
            guard text.last == "]", text.count > 2 else { return nil }
            text = text.dropFirst().dropLast()
        }
        var storage = in6_addr()
        let plain = String(text)
        guard inet_pton(AF_INET, plain, &storage) == 1 || inet_pton(AF_INET6, plain, &storage) == 1 else { return nil }
        return plain
    }
}

private extension String {
    var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
