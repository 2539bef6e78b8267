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

/// An HTTP proxy set by `enableHttpProxy`.
///
/// A class, so that the switches holding one copy, compare and test it for nil as one
/// reference (every transfer does, when the engine matches its options to a handle's).
final class ProxySetting: Sendable, Equatable {
    let host: String
    let port: Int
    let credentials: Credentials?

    init(host: String, port: Int, credentials: Credentials? = nil) {
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    static func == (lhs: ProxySetting, rhs: ProxySetting) -> Bool {
        lhs === rhs || (lhs.port == rhs.port && lhs.host == rhs.host && lhs.credentials == rhs.credentials)
    }

    /// The proxy's URL for `CURLOPT_PROXY`, with an IPv6 address in brackets.
    var url: String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(bracketed):\(port)"
    }

    /// `host:port` as a user wrote it, for texts.
    var name: String { url.dropFirst("http://".count).description }

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
}
