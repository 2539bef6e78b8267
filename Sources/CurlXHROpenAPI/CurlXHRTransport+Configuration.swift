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
                try CurlXHRTransport.check(request.enableHttpProxy(proxy), request)
            }
            if let caCertificateFile {
                try CurlXHRTransport.check(request.setCACertificateFile(caCertificateFile), request)
            }
            if timeouts != Timeouts() {
                try CurlXHRTransport.check(request.setTimeouts(timeouts), request)
            }
            configure?(request)
        }
    }

    /// An authentication scheme: CurlXHR's own, `HttpRequest.AuthScheme`.
    public typealias AuthScheme = HttpRequest.AuthScheme
    /// A user name, a password and the scheme to present them with: `HttpRequest.Credentials`.
    public typealias Credentials = HttpRequest.Credentials
    /// An HTTP proxy: `HttpRequest.Proxy`, as `HttpRequest.enableHttpProxy(_:)` takes it.
    public typealias Proxy = HttpRequest.Proxy
    /// Limits of each phase of a request, in seconds (0: none): `HttpRequest.Timeouts`, as
    /// `HttpRequest.setTimeouts(_:)` takes them. A limit that runs out fails the call with an
    /// `HttpRequestError` (`FailureKind` `.timeout`), or, once the body streams, fails reading
    /// the body.
    public typealias Timeouts = HttpRequest.Timeouts
}
