import CCurlShim

extension HttpRequest {
    /// An HTTP proxy, as ``enableHttpProxy(_:)`` takes it: plain HTTP requests go to it as proxy
    /// requests, HTTPS ones through a `CONNECT` tunnel.
    public struct Proxy: Sendable, Equatable {
        /// The proxy's host name or address.
        public var host: String
        /// The proxy's port, 1…65535.
        public var port: Int
        /// Credentials for the proxy (answering its 407s); nil sends none. A `.negotiate`
        /// scheme with an empty user uses tickets already in a credential cache.
        public var credentials: Credentials?

        /// The proxy at `host:port`.
        /// - Parameters:
        ///   - host: the proxy's host name or address.
        ///   - port: the proxy's port.
        ///   - credentials: for the proxy, or nil.
        public init(host: String, port: Int, credentials: Credentials? = nil) {
            self.host = host
            self.port = port
            self.credentials = credentials
        }
    }
}

/// The proxy a request goes through (`enableHttpProxy`, `setProxy`).
///
/// A class, so that the switches holding one copy, compare and test it for nil as one
/// reference (every transfer does, when the engine matches its options to a handle's).
final class ProxySetting: Sendable, Equatable {
    /// How the library speaks to the proxy (the scheme of its URL).
    enum Scheme: String, Sendable, CaseIterable {
        case http, https, socks4, socks4a, socks5, socks5h

        var isSOCKS: Bool { self != .http && self != .https }
        /// libcurl's port for a proxy URL without one.
        var defaultPort: Int { self == .https ? 443 : 1080 }
    }

    let scheme: Scheme
    let host: String
    let port: Int
    let credentials: Credentials?

    init(scheme: Scheme = .http, host: String, port: Int, credentials: Credentials? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    static func == (lhs: ProxySetting, rhs: ProxySetting) -> Bool {
        lhs === rhs || (lhs.port == rhs.port && lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.credentials == rhs.credentials)
    }

    /// The proxy's URL for `CURLOPT_PROXY`, with an IPv6 address in brackets.
    var url: String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(bracketed):\(port)"
    }

    /// `host:port` as a user wrote it (with the scheme when not http), for texts.
    var name: String { scheme == .http ? url.dropFirst("http://".count).description : url }

    /// A SOCKS5 proxy with Kerberos (GSS-API, RFC 1961): the library runs its handshake
    /// (libcurl 7.88 cannot), and libcurl is handed the connection it leads to.
    var usesGSSAPI: Bool {
        (scheme == .socks5 || scheme == .socks5h) && credentials?.scheme == .negotiate
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        credentials.flatMap { $0.scheme == .negotiate && !$0.user.isEmpty ? $0 : nil }
    }

    /// Why `host` and `port` do not name a proxy, or nil when they do.
    static func problem(host: String, port: Int) -> String? {
        guard (1...65535).contains(port) else { return "proxy port \(port) is not between 1 and 65535" }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !"/?#@".utf8.contains($0) }) else {
            return "'\(MessageValidation.escaped(host))' is not a proxy host name or address"
        }
        let candidate = ProxySetting(host: host, port: port)
        return MessageValidation.urlProblem(candidate.url + "/").map { _ in "'\(MessageValidation.escaped(host))' is not a proxy host name or address" }
    }

    /// The parts of a proxy URL (`setProxy`) as libcurl's URL API reads it:
    /// `[scheme://][user[:password]@]host[:port][/]`, http when no scheme is given, the
    /// scheme's default port when no port is; or why `url` is not one. The user and password
    /// are percent-decoded.
    static func parse(_ url: String) -> Result<Parts, ReadableFile.Problem> {
        func refused(_ why: String) -> Result<Parts, ReadableFile.Problem> {
            .failure(ReadableFile.Problem(message: "'\(MessageValidation.escaped(url))' is not a proxy URL: \(why)"))
        }
        guard MessageValidation.isFieldValue(url) else { return refused("it contains CR, LF or NUL") }
        guard let handle = curl_url() else { return refused("out of memory") }
        defer { curl_url_cleanup(handle) }
        let text = url.contains("://") ? url : "http://" + url
        let code = curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME))
        guard code == CURLUE_OK else { return refused(String(cString: curl_url_strerror(code))) }
        func part(_ which: CURLUPart, _ flags: Int32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, UInt32(flags)) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME).flatMap({ Scheme(rawValue: $0.lowercased()) }) else {
            return refused("use http, https, socks4, socks4a, socks5 or socks5h")
        }
        guard (part(CURLUPART_PATH) ?? "/") == "/", part(CURLUPART_QUERY) == nil, part(CURLUPART_FRAGMENT) == nil else {
            return refused("a proxy URL has no path, query or fragment")
        }
        var host = part(CURLUPART_HOST) ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = part(CURLUPART_PORT).flatMap { Int($0) } ?? scheme.defaultPort
        if let problem = problem(host: host, port: port) { return refused(problem) }
        return .success(Parts(scheme: scheme, host: host, port: port,
                              user: part(CURLUPART_USER, CURLU_URLDECODE), password: part(CURLUPART_PASSWORD, CURLU_URLDECODE)))
    }

    /// A proxy URL's parts (``parse(_:)``).
    struct Parts: Equatable {
        let scheme: Scheme
        let host: String
        let port: Int
        let user: String?
        let password: String?
    }
}

/// The settings of the connection to an https proxy (`setProxyCACertificateFile`,
/// `disableProxyPeerVerification`, `setProxyClientCertificate`, `setProxyPinnedPublicKeys`).
struct ProxyTLS: Sendable, Equatable {
    var caFile: String?
    var verifyPeer = true
    /// The certificate and key shown to a proxy that asks.
    var clientIdentity: ClientIdentity?
    /// The public keys the proxy's certificate must have one of, checked by the library
    /// (libcurl 7.88 takes `CURLOPT_PROXY_PINNEDPUBLICKEY` and never checks it).
    var pins: PublicKeyPins?
}
