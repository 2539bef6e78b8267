import CurlXHR

extension CurlXHRTransport {
    /// What every request of a ``CurlXHRTransport`` is set up with: server credentials, a
    /// proxy, trusted CAs, timeouts, the request body limit, and a hook for any other
    /// `HttpRequest` switch.
    public struct Configuration: Sendable {
        /// Credentials for the server, given to `HttpRequest.open(_:url:async:user:password:auth:)`;
        /// nil sends none. CurlXHR never sends them to another host after a redirect.
        public var credentials: Credentials?
        /// The HTTP proxy to send every request through (plain HTTP as proxy requests, HTTPS
        /// through a `CONNECT` tunnel); nil for none.
        public var proxy: Proxy?
        /// A PEM file with the only CAs to trust for HTTPS; nil for the process's default
        /// (`HttpRequest.caCertificateFile`, `SSL_CERT_FILE`, `CURL_CA_BUNDLE`, or
        /// the system bundle).
        public var caCertificateFile: String?
        /// Limits of each phase of a request (all 0, no limit, by default).
        public var timeouts: Timeouts
        /// The largest request body sent, in bytes (64 MiB by default): a body is collected in
        /// memory before it is sent, and a larger one fails the call.
        public var requestBodyLimit: Int
        /// Called with each request after the transport has set it up (method, URL,
        /// credentials, header fields, proxy, CA file, timeouts) and before it is sent, for
        /// any other switch: `HttpRequest.disableFollowLocation()`,
        /// `HttpRequest.disableCookieHandling()`, a `RequestQueue`, more
        /// headers. A switch it sets that CurlXHR refuses is ignored (see
        /// `HttpRequest.lastError`).
        public var configure: (@Sendable (HttpRequest) -> Void)?

        /// A configuration; every part is optional.
        /// - Parameters:
        ///   - credentials: for the server.
        ///   - proxy: the HTTP proxy.
        ///   - caCertificateFile: a PEM file with the CAs to trust.
        ///   - timeouts: limits of each phase.
        ///   - requestBodyLimit: the largest request body, in bytes.
        ///   - configure: a last look at each request before it is sent.
        public init(credentials: Credentials? = nil, proxy: Proxy? = nil, caCertificateFile: String? = nil,
                    timeouts: Timeouts = Timeouts(), requestBodyLimit: Int = 64 << 20,
                    configure: (@Sendable (HttpRequest) -> Void)? = nil) {
            self.credentials = credentials
            self.proxy = proxy
            self.caCertificateFile = caCertificateFile
            self.timeouts = timeouts
            self.requestBodyLimit = requestBodyLimit
            self.configure = configure
        }

        /// Sets the proxy, CA file and timeouts on an OPENED request, then runs ``configure``.
        /// - Throws: `HttpRequestError` when CurlXHR refuses one of them.
        func apply(to request: HttpRequest) throws {
            if let proxy {
                try CurlXHRTransport.check(request.enableHttpProxy(
                    host: proxy.host, port: proxy.port, user: proxy.credentials?.user,
                    password: proxy.credentials?.password, auth: proxy.credentials?.scheme.rawValue), request)
            }
            if let caCertificateFile {
                try CurlXHRTransport.check(request.setCACertificateFile(caCertificateFile), request)
            }
            if timeouts != Timeouts() {
                try CurlXHRTransport.check(request.setTimeouts(connect: timeouts.connect, headers: timeouts.headers,
                                                               idle: timeouts.idle, total: timeouts.total), request)
            }
            configure?(request)
        }
    }

    /// An authentication scheme, as CurlXHR names them.
    public enum AuthScheme: String, Sendable, CaseIterable {
        /// Basic: the user and password in every request (use it over HTTPS).
        case basic = "BASIC"
        /// Digest (RFC 7616).
        case digest = "DIGEST"
        /// NTLM; the user may be `DOMAIN\user`.
        case ntlm = "NTLM"
        /// Kerberos through SPNEGO; a `user@REALM` name and its password get tickets through
        /// libkrb5, kept in the library's credential cache (see `KerberosCredentials`).
        case negotiate = "NEGOTIATE"
    }

    /// A user name, a password and the scheme to present them with.
    public struct Credentials: Sendable, Equatable {
        /// The user name (`DOMAIN\user` for NTLM, `user@REALM` for Kerberos).
        public var user: String
        /// The password.
        public var password: String
        /// How they are sent.
        public var scheme: AuthScheme

        /// Credentials presented with `scheme` (Basic by default).
        /// - Parameters:
        ///   - user: the user name.
        ///   - password: the password.
        ///   - scheme: the authentication scheme.
        public init(user: String, password: String, scheme: AuthScheme = .basic) {
            self.user = user
            self.password = password
            self.scheme = scheme
        }
    }

    /// An HTTP proxy, as `HttpRequest.enableHttpProxy(host:port:user:password:auth:)` takes it.
    public struct Proxy: Sendable, Equatable {
        /// The proxy's host name or address.
        public var host: String
        /// The proxy's port.
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

    /// Limits of each phase of a request, in seconds; 0 is no limit. They are those of
    /// `HttpRequest.setTimeouts(connect:headers:idle:total:)`: a limit that runs out
    /// fails the call with an `HttpRequestError` (`FailureKind` `.timeout`),
    /// or, once the body streams, fails reading the body.
    public struct Timeouts: Sendable, Equatable {
        /// Until the connection (and its TLS handshake) is up.
        public var connect: Double
        /// From the request sent to the response's head.
        public var headers: Double
        /// The longest time without a byte sent or received.
        public var idle: Double
        /// The whole request, body included.
        public var total: Double

        /// Limits in seconds; 0 (the default of each) is none.
        /// - Parameters:
        ///   - connect: until the connection is up.
        ///   - headers: from the request sent to the response's head.
        ///   - idle: the longest time without a byte sent or received.
        ///   - total: the whole request.
        public init(connect: Double = 0, headers: Double = 0, idle: Double = 0, total: Double = 0) {
            self.connect = connect
            self.headers = headers
            self.idle = idle
            self.total = total
        }
    }
}
