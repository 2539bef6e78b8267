import CCurlShim

/// One cookie of the jar, as libcurl's cookie engine holds it.
public struct Cookie: Sendable, Hashable {
    /// The cookie's name.
    public var name: String
    /// The cookie's value.
    public var value: String
    /// The host the cookie belongs to, without a leading dot.
    public var domain: String
    /// Whether hosts below ``domain`` receive it too (a `Domain=` attribute).
    public var includesSubdomains: Bool
    /// The path the cookie is sent for, and below (`/` for the whole host).
    public var path: String
    /// Sent over HTTPS only.
    public var isSecure: Bool
    /// Marked `HttpOnly` by the server.
    public var isHTTPOnly: Bool
    /// Expiry in seconds since 1970; `nil` for a session cookie, which never reaches the disk.
    public var expires: Int64?

    /// A cookie; by default for `domain` only (not its subdomains), for every path, sent over
    /// plain HTTP too, not `HttpOnly`, and a session cookie (`expires` `nil`).
    public init(name: String, value: String, domain: String, includesSubdomains: Bool = false,
                path: String = "/", isSecure: Bool = false, isHTTPOnly: Bool = false, expires: Int64? = nil) {
        self.name = name
        self.value = value
        self.domain = domain
        self.includesSubdomains = includesSubdomains
        self.path = path
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.expires = expires
    }

    /// Whether the cookie outlives the process.
    public var isPersistent: Bool { expires != nil }

    func isExpired(at now: Int64) -> Bool {
        expires.map { $0 <= now } ?? false
    }

    /// What identifies a cookie in the jar: a newer one with the same key replaces it.
    var key: String { "\(domain)\t\(path)\t\(name)" }

    /// Whether a request to `url` carries this cookie (RFC 6265 domain and path matching).
    func matches(_ url: HTTPURL, at now: Int64) -> Bool {
        guard !isExpired(at: now), !isSecure || url.isHTTPS else { return false }
        let host = url.host, domain = domain.lowercased()
        guard host == domain || (includesSubdomains && host.hasSuffix("." + domain)) else { return false }
        guard url.path.hasPrefix(path) else { return false }
        return url.path.count == path.count || path.hasSuffix("/") || url.path.dropFirst(path.count).hasPrefix("/")
    }

    // MARK: libcurl's Netscape cookie format

    /// The line libcurl's `CURLOPT_COOKIELIST` takes and `CURLINFO_COOKIELIST` gives. A domain
    /// that starts with a dot (read from such a line) gets one more, which a reader drops.
    var netscapeLine: String {
        let dot = includesSubdomains || domain.utf8.first == UInt8(ascii: ".")
        let prefix = (isHTTPOnly ? "#HttpOnly_" : "") + (dot ? "." : "")
        let fields = [prefix + domain, includesSubdomains ? "TRUE" : "FALSE", path,
                      isSecure ? "TRUE" : "FALSE", String(expires ?? 0), name, value]
        return fields.joined(separator: "\t")
    }

    /// Parses one line of the Netscape format; nil if it is not one. Prefixes are bytes, as
    /// libcurl reads them (a String's hasPrefix compares characters: "." and a combining mark
    /// after it are one character, which does not start with ".").
    init?(netscapeLine line: String) {
        var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        if fields.count == 6 { fields.append("") }
        guard fields.count == 7, let expires = Int64(fields[4]), expires >= 0,
              ["TRUE", "FALSE"].contains(fields[1]), ["TRUE", "FALSE"].contains(fields[3]),
              fields[2].utf8.first == UInt8(ascii: "/") else { return nil }
        var domain = Substring(fields[0])
        let httpOnly = domain.utf8.starts(with: "#HttpOnly_".utf8)
        if httpOnly { domain = Substring(domain.utf8.dropFirst("#HttpOnly_".utf8.count)) }
        if domain.utf8.first == UInt8(ascii: ".") { domain = Substring(domain.utf8.dropFirst()) }
        guard !domain.isEmpty, !fields[5].isEmpty else { return nil }
        self.init(name: fields[5], value: fields[6], domain: String(domain), includesSubdomains: fields[1] == "TRUE",
                  path: fields[2], isSecure: fields[3] == "TRUE", isHTTPOnly: httpOnly,
                  expires: expires == 0 ? nil : expires)
    }

    /// Why a cookie given to ``CookieStore/setCookie(_:)`` cannot be stored, or nil. The
    /// characters looked for are bytes, as libcurl and servers see them (a String's contains
    /// compares characters: ";" and a combining mark after it are one character, not ";").
    var problem: String? {
        let texts = [name, value, domain, path]
        if texts.contains(where: { text in text.utf8.contains { $0 < 0x20 || $0 == 0x7F } }) {
            return "a cookie's name, value, domain and path may not contain control characters"
        }
        if name.isEmpty || name.utf8.contains(where: { "=; ".utf8.contains($0) }) {
            return "'\(MessageValidation.escaped(name))' is not a cookie name"
        }
        if value.utf8.contains(UInt8(ascii: ";")) { return "a cookie value may not contain ';'" }
        // Nor what would make the line another one to libcurl: "#" starts a comment (or the
        // HttpOnly mark), "Set-Cookie:" a header.
        let first = domain.utf8.first
        if domain.isEmpty || first == UInt8(ascii: ".") || first == UInt8(ascii: "#") || domain.utf8.contains(UInt8(ascii: "/"))
            || domain.utf8.prefix(11).elementsEqual("set-cookie:".utf8, by: { $0 | 0x20 == $1 | 0x20 }) {
            return "'\(MessageValidation.escaped(domain))' is not a cookie domain"
        }
        // As libcurl's jar refuses it from a response (libpsl, the same list).
        if cxhr_is_public_suffix(domain) { return "'\(domain)' is a public suffix: the cookie would go to every site under it" }
        if path.utf8.first != UInt8(ascii: "/") { return "a cookie path must start with '/'" }
        return nil
    }
}
