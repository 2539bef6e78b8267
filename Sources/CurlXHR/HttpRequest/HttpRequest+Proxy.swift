/// The request's proxy in general form: HTTP, HTTPS (TLS to the proxy) and SOCKS, which hosts
/// bypass it, the fields it alone sees, and how its TLS connection is trusted.
extension HttpRequest {
    /// Sends this request through the proxy at `url` (curl's `-x`, libcurl's `CURLOPT_PROXY`):
    /// `http://host:port`, `https://host:port` (TLS to the proxy, verified against
    /// ``setProxyCACertificateFile(_:)`` or the system CAs), `socks4://`, `socks4a://` (names
    /// resolved by the proxy), `socks5://` or `socks5h://` (names resolved by the proxy).
    /// Without a scheme the proxy is http; without a port, 443 for https and 1080 for the
    /// others, as libcurl. A user and password in the URL (percent-encoded) count as given.
    /// Replaces ``enableHttpProxy(host:port:user:password:auth:)``'s proxy, which is
    /// `setProxy("http://host:port")`.
    ///
    /// A proxy that cannot be reached, or refuses a SOCKS login, ends the send in DONE with
    /// status 0, ``getFailureKind()`` `.proxy` and a text naming it; a proxy certificate that
    /// does not verify, `.tls`.
    /// - Parameters:
    ///   - url: the proxy, `[scheme://][user[:password]@]host[:port]`.
    ///   - user: for an HTTP or HTTPS proxy, as ``enableHttpProxy(host:port:user:password:auth:)``
    ///     takes it; for SOCKS5, its user name login (RFC 1929); for SOCKS4, the user id sent.
    ///   - password: the proxy's password (not for SOCKS4).
    ///   - auth: for an HTTP or HTTPS proxy, `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"`,
    ///     `"NEGOTIATE"` or `"ANY"`; for SOCKS, `nil` or `"BASIC"` (a user name login), or
    ///     for SOCKS5 `"NEGOTIATE"`: Kerberos through GSS-API (RFC 1961), with the tickets of
    ///     the credential cache (no user) or, with a principal and password, tickets the
    ///     library obtains as for a server's Negotiate.
    /// - Returns: `false` with ``lastError`` for a URL that is not a proxy's (another scheme,
    ///   a path, a bad host or port, CR, LF or NUL), credentials with CR, LF or NUL, a SOCKS4
    ///   password, an authentication scheme SOCKS does not have (`"NEGOTIATE"` for SOCKS4),
    ///   SOCKS5 with `"NEGOTIATE"` while a bypass list is set (``setProxyBypass(_:)``), or a
    ///   request in flight.
    ///
    /// ## SOCKS5 with Kerberos (GSS-API)
    ///
    /// libcurl 7.88 offers GSS-API to a SOCKS5 proxy and then ends the handshake, so the
    /// library runs it itself: it connects to the proxy (each of its addresses in turn, as
    /// libcurl resolves them), offers GSS-API alone, authenticates to the service
    /// `rcmd@proxyhost` (``setProxyServiceName(_:)`` names another) with mutual
    /// authentication, agrees on no per-message protection (as curl and dante do: a proxy
    /// that requires integrity or confidentiality protection is refused), and asks for the
    /// origin: by name for `socks5h://`, by an address looked up here for `socks5://`.
    /// libcurl then speaks HTTP, or TLS with the origin, over that connection. The
    /// handshake runs on a thread of the connection's own, never the library's engine thread:
    /// a proxy that is slow or silent holds only its own request, for at most the connect
    /// timeout (``setTimeouts(connect:headers:idle:total:)``; else the send's timeout, else
    /// 300 s), and a request aborted meanwhile ends its handshake. The connection reaches
    /// libcurl through a loopback relay on that thread (what libcurl sends waits there until
    /// the handshake is done); the metrics' remote address is the relay's. Each send has a
    /// connection of its own, closed after it: no other request is lent a tunnel made with
    /// this one's identity. The bypass list (``setProxyBypass(_:)``) is not applied to such
    /// a proxy.
    ///
    /// A proxy that cannot be reached, refuses GSS-API or the principal, breaks or garbles
    /// the handshake, or does not answer within that time ends the send in DONE with status
    /// 0, ``getFailureKind()`` `.proxy` and a text naming the proxy and what failed (curl's
    /// exits: 7 unreachable, 28 no answer in time, 97 the handshake); so do missing tickets.
    @discardableResult
    public func setProxy(_ url: String, user: String? = nil, password: String? = nil, auth: String? = nil) -> Bool {
        let parts: ProxySetting.Parts
        switch ProxySetting.parse(url) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed): parts = parsed
        }
        let user = user ?? parts.user, password = password ?? parts.password
        if parts.scheme.isSOCKS {
            let negotiate = auth?.uppercased() == "NEGOTIATE"
            if negotiate, parts.scheme != .socks5 && parts.scheme != .socks5h {
                return refuse(.invalidArgument, "SOCKS4 has no Kerberos (GSS-API) authentication: use socks5:// or socks5h://")
            }
            guard auth == nil || negotiate || auth?.uppercased() == "BASIC" else {
                return refuse(.invalidArgument, "a SOCKS proxy takes a user and password or NEGOTIATE (SOCKS5's GSS-API), not '\(MessageValidation.escaped(auth ?? ""))' authentication")
            }
            if parts.scheme == .socks4 || parts.scheme == .socks4a, password != nil {
                return refuse(.invalidArgument, "SOCKS4 has no password: give SOCKS4 a user id alone, or use socks5://")
            }
        }
        var credentials: Credentials?
        switch Credentials.parse(user: user, password: password, auth: auth, party: "proxy ") {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success((let scheme, let parsed)):
            credentials = parsed ?? (scheme == .negotiate ? Credentials(user: "", password: "", scheme: .negotiate) : nil)
        }
        let proxy = ProxySetting(scheme: parts.scheme, host: parts.host, port: parts.port, credentials: credentials)
        if proxy.usesGSSAPI, withCore({ $0.switches.proxyBypass != nil }) {
            return refuse(.invalidArgument, Self.bypassWithGSSAPI)
        }
        return changeSwitches {
            $0.proxy = proxy
            $0.proxyAutoConfig = nil
        }
    }

    /// Why a bypass list and a SOCKS5 proxy with GSS-API are not taken together.
    static let bypassWithGSSAPI = "a proxy bypass list does not apply to a SOCKS5 proxy with GSS-API, whose tunnel the library makes for every host: remove the list (setProxyBypass(\"\")) or choose the proxy per host"

    /// The Kerberos service the proxy's ticket is for (curl's `--proxy-service-name` and
    /// `--socks5-gssapi-service`, libcurl's `CURLOPT_PROXY_SERVICE_NAME`): the ticket is for
    /// `NAME/proxyhost`. A SOCKS5 proxy with GSS-API uses `rcmd` by default, an HTTP proxy's
    /// Negotiate `HTTP`; `nil` goes back to those.
    /// - Parameter name: the service, as `rcmd`, or `nil`.
    /// - Returns: `false` with ``lastError`` for an empty name, one with CR, LF, NUL, a space,
    ///   '/' or '@', one over 255 bytes, or a request in flight.
    @discardableResult
    public func setProxyServiceName(_ name: String?) -> Bool {
        if let name, let problem = RouteEntries.serviceNameProblem(name) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.routing.proxyServiceName = name }
    }

    /// Chooses each hop's proxy with the proxy auto-config (PAC) file at `location`: a path,
    /// a `file://` URL, or an `http://` or `https://` URL. `FindProxyForURL(url, host)` is
    /// evaluated for the send and for each redirect it follows; its answer is followed in
    /// order (`DIRECT`, `PROXY host:port`, `HTTPS host:port` a TLS proxy, `SOCKS host:port`
    /// or `SOCKS4 host:port`, `SOCKS5 host:port`), going on to the next entry when a proxy
    /// cannot be reached (not resolved, not connected to, or its handshake fails). Replaces a
    /// proxy set with ``setProxy(_:user:password:auth:)`` and overrides the process-wide
    /// ``proxyAutoConfig``.
    ///
    /// A file is read again when its modification time changes; a URL is fetched once (directly,
    /// never through a proxy), fetched again after its `Cache-Control: max-age` (five minutes
    /// without one) and revalidated with its `ETag` or `Last-Modified`. An asynchronous send
    /// fetches it off the calling thread. A PAC file that cannot be read or fetched, does not
    /// run, throws, or answers something else than routes ends the send in DONE with status
    /// 0, ``getFailureKind()`` `.proxy` and a text naming the PAC file: never a silent DIRECT.
    /// So does an answer whose proxies all cannot be reached, with the last one's failure.
    /// - Parameter location: the PAC file: a path or `file://` URL of a regular file that can
    ///   be read now, or an `http://` or `https://` URL (checked for its scheme only).
    /// - Returns: `false` with ``lastError`` for an empty location, CR, LF or NUL, a file that
    ///   cannot be read or is not a regular file, another scheme, or a request in flight.
    @discardableResult
    public func setProxyAutoConfig(_ location: String) -> Bool {
        switch PACLocation.parse(location) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed):
            return changeSwitches {
                $0.proxy = nil
                $0.proxyAutoConfig = parsed
            }
        }
    }

    /// The PAC file requests use when they make no proxy choice of their own (no
    /// ``setProxy(_:user:password:auth:)``, ``enableHttpProxy(host:port:user:password:auth:)``,
    /// ``disableHttpProxy()`` or ``setProxyAutoConfig(_:)``), as that call reads it; nil (the
    /// default) or `""` for none. Process-wide; applies to sends begun after the change. A location
    /// that cannot be used fails those sends with ``getFailureKind()`` `.proxy` (the C call
    /// `cxhr_set_default_proxy_auto_config` refuses it at once instead).
    public static var proxyAutoConfig: String? {
        get { ProxyAutoConfig.processDefault?.name }
        set { ProxyAutoConfig.setDefault(newValue.flatMap { $0.isEmpty ? nil : PACLocation.unchecked($0) }) }
    }

    /// Sets ``proxyAutoConfig`` to `location` (nil clears it) if the location is one
    /// ``setProxyAutoConfig(_:)`` takes (C `cxhr_set_default_proxy_auto_config`).
    /// - Parameter location: the PAC file, as ``setProxyAutoConfig(_:)`` takes it, or nil.
    /// - Returns: `false`, changing nothing, for a location ``setProxyAutoConfig(_:)`` refuses.
    @discardableResult
    public static func setDefaultProxyAutoConfig(_ location: String?) -> Bool {
        guard let location else {
            ProxyAutoConfig.setDefault(nil)
            return true
        }
        guard case .success(let parsed) = PACLocation.parse(location) else { return false }
        ProxyAutoConfig.setDefault(parsed)
        return true
    }

    /// Reaches the hosts in `hosts` without the proxy (curl's `--noproxy`, libcurl's
    /// `CURLOPT_NOPROXY`), in `NO_PROXY` syntax: names or addresses separated by commas, each
    /// matching itself and its subdomains (`example.com` matches `www.example.com`; a
    /// leading dot is the same), `"*"` every host. `""` removes the list. The environment's
    /// `NO_PROXY` is never read for a proxy set on the request.
    /// - Returns: `false` with ``lastError`` for CR, LF or NUL, a request in flight, or a
    ///   SOCKS5 proxy with GSS-API set (its tunnel is the library's, made for every host; and
    ///   ``setProxy(_:user:password:auth:)`` refuses that proxy while a list is set).
    @discardableResult
    public func setProxyBypass(_ hosts: String) -> Bool {
        guard MessageValidation.isFieldValue(hosts) else {
            return refuse(.invalidArgument, "the proxy bypass list '\(MessageValidation.escaped(hosts))' contains CR, LF or NUL")
        }
        if !hosts.isEmpty, withCore({ $0.switches.proxy?.usesGSSAPI == true }) {
            return refuse(.invalidArgument, Self.bypassWithGSSAPI)
        }
        return changeSwitches { $0.proxyBypass = hosts.isEmpty ? nil : hosts }
    }

    /// Sends the field `name: value` to the proxy only (curl's `--proxy-header`, libcurl's
    /// `CURLOPT_PROXYHEADER`): in the `CONNECT` of an https request, never to the origin
    /// through the tunnel. A plain http request through an HTTP proxy is one request, which
    /// carries it (and the proxy may pass it on). Set again, a name's value is replaced; an
    /// empty value sends the field empty. A request with proxy fields opens a connection of
    /// its own for each send, closed after it, since libcurl lends pooled proxy connections
    /// without regard to the fields they were opened with.
    /// - Returns: `false` with ``lastError`` for a name that is no token, a value with CR, LF
    ///   or NUL, or a request in flight.
    @discardableResult
    public func setProxyHeader(_ name: String, value: String) -> Bool {
        if let problem = MessageValidation.fieldProblem(name: name, value: value) { return refuse(.invalidArgument, problem) }
        return changeSwitches { switches in
            switches.proxyHeaders.removeAll { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }
            switches.proxyHeaders.append(HeaderField(name: name, value: MessageValidation.trimmedFieldValue(value)))
        }
    }

    /// Trusts only the CAs in the PEM file at `path` for the connection to an https proxy
    /// (curl's `--proxy-cacert`, libcurl's `CURLOPT_PROXY_CAINFO`); without it, the system
    /// store. The origin's certificate is verified as before.
    /// - Returns: `false` with ``lastError`` when the file cannot be read, or the request is
    ///   in flight.
    @discardableResult
    public func setProxyCACertificateFile(_ path: String) -> Bool {
        if let problem = ReadableFile.problem(path) { return refuse(.fileUnreadable, problem) }
        return changeSwitches { $0.proxyTLS.caFile = path }
    }

    /// Shows the certificate at `path` to an https proxy that asks for one (curl's
    /// `--proxy-cert`, `--proxy-cert-type`, `--proxy-key` and `--proxy-pass`; libcurl's
    /// `CURLOPT_PROXY_SSLCERT`), read as
    /// ``setClientCertificate(_:format:keyPath:password:)`` reads the server's: the key in
    /// `keyPath`, in the certificate's format, or with a PEM certificate in the same file; a
    /// PKCS#12 file holds both; an encrypted key without a password is refused, never asked
    /// for. The server's own certificate, if any, is the other call's.
    ///
    /// A wrong password or format ends the send in DONE with status 0, ``getFailureKind()``
    /// `.tls` (curl's exit 58); a proxy that refuses the certificate ends the handshake (`.tls`).
    /// - Parameters:
    ///   - path: the certificate file.
    ///   - format: how the certificate (and the key, unless xhr's `--proxy-key-type` says
    ///     otherwise) is stored.
    ///   - keyPath: the key's file, or nil when `path` holds it.
    ///   - password: the key's or the PKCS#12 file's password.
    /// - Returns: `false` with ``lastError`` when a path is empty, holds CR, LF or NUL, or
    ///   names no readable regular file; a PKCS#12 file comes with a `keyPath`; the password
    ///   holds NUL; or the request is in flight.
    @discardableResult
    public func setProxyClientCertificate(_ path: String, format: CertificateFormat = .pem,
                                          keyPath: String? = nil, password: String? = nil) -> Bool {
        setProxyClientCertificate(path, format: format, keyPath: keyPath, keyFormat: nil, password: password)
    }

    /// ``setProxyClientCertificate(_:format:keyPath:password:)`` with a key in a format of its
    /// own (xhr's `--proxy-key-type`).
    package func setProxyClientCertificate(_ path: String, format: CertificateFormat, keyPath: String?,
                                           keyFormat: CertificateFormat?, password: String?) -> Bool {
        setIdentity(\.proxyTLS.clientIdentity, path, format: format, keyPath: keyPath, keyFormat: keyFormat, password: password)
    }

    /// Accepts an https proxy only if its certificate's public key is one of `pins` (curl's
    /// `--proxy-pinnedpubkey`), in ``setPinnedPublicKeys(_:)``'s syntax: `sha256//BASE64`
    /// hashes separated by `;`, or the path of the key in PEM or DER (read now). The proxy's
    /// certificate is still verified, unless ``disableProxyPeerVerification()`` says not to;
    /// the pins hold either way. `""` removes them.
    ///
    /// libcurl 7.88 takes this option and never checks it, so the library checks the key
    /// itself, in the proxy's handshake. Another key ends the send in DONE with status 0,
    /// ``getFailureKind()`` `.tls` and a text saying the proxy's key is not pinned (curl's exit
    /// 90). A request with proxy pins opens a connection of its own for each send, with a full
    /// handshake (a pooled or resumed one would show no key to check), closed after it.
    /// - Parameter pins: the hashes, or a public key file's path; `""` for none.
    /// - Returns: `false` with ``lastError`` for a hash that is not the base64 of 32 bytes,
    ///   a file that cannot be read or is not a public key, CR, LF or NUL, or a request in flight.
    @discardableResult
    public func setProxyPinnedPublicKeys(_ pins: String) -> Bool {
        if pins.isEmpty { return changeSwitches { $0.proxyTLS.pins = nil } }
        switch PublicKeyPins.parse(pins) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed): return changeSwitches { $0.proxyTLS.pins = parsed }
        }
    }

    /// Accepts any certificate from an https proxy, under any name (curl's `--proxy-insecure`):
    /// for a test proxy. The origin's certificate is verified as before.
    @discardableResult
    public func disableProxyPeerVerification() -> Bool {
        changeSwitches { $0.proxyTLS.verifyPeer = false }
    }
}
