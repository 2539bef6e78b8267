import CCurlShim

extension EasyProfile.Fields {
    /// The proxy of the request, or none; its credentials, TLS, bypass list and own fields.
    func applyProxy(_ options: inout EasyOptions, handle: EasyHandle) {
        options.setProxyRoute(switches.proxy, switches: switches, environmentProxy: environmentProxy, handle: handle)
        guard let proxy = switches.proxy else { return }
        if proxy.usesGSSAPI { return applyGSSAPITunnel(proxy, &options, handle: handle) }
        if let service = switches.routing.proxyServiceName { options.set(CURLOPT_PROXY_SERVICE_NAME, service) }
        if let credentials = proxy.credentials {
            options.set(CURLOPT_PROXYUSERNAME, credentials.user)
            options.set(CURLOPT_PROXYPASSWORD, credentials.password)
            if proxy.scheme.isSOCKS {
                // A SOCKS5 user and password (RFC 1929); SOCKS4 sends the user as its user id.
                options.set(CURLOPT_SOCKS5_AUTH, Int(cxhr_auth_basic))
            } else {
                options.set(CURLOPT_PROXYAUTH, Int(credentials.scheme.curlMask))
            }
        }
        if !switches.proxyHeaders.isEmpty {
            options.set(CURLOPT_PROXYHEADER, lines: switches.proxyHeaders.map(\.curlLine), keptBy: handle)
            // libcurl's pool does not tell proxy connections apart by the fields they were
            // opened with: a connection of its own, which no other request is lent.
            options.ownConnection()
        }
    }

    /// A SOCKS5 proxy with GSS-API, whose handshake the library runs (``ProxySetting/usesGSSAPI``):
    /// libcurl goes "directly" to the origin, each connection to the proxy's address (its
    /// name resolved by libcurl, the first `CURLOPT_CONNECT_TO` entry matching any origin),
    /// opened by the tunnel (`cxhr_socks_gss_open`, from ``LibcurlSockets``), which hands
    /// libcurl a loopback connection that leads to the origin once a thread of the
    /// connection's own has run the handshake. Each send's own: a tunnel carries the identity
    /// it was made with.
    private func applyGSSAPITunnel(_ proxy: ProxySetting, _ options: inout EasyOptions, handle: EasyHandle) {
        let connect = Timeouts.milliseconds(switches.timeouts.connect)
        let budget = connect > 0 ? connect : timeoutMilliseconds > 0 ? timeoutMilliseconds : 300_000
        let service = switches.routing.proxyServiceName
        guard let tunnel = cxhr_socks_gss_new(options.easy, proxy.host, service, proxy.scheme == .socks5h, budget) else {
            return options.fail("out of memory for the SOCKS5 proxy's GSS-API handshake")
        }
        handle.socksTunnel = tunnel
        let bracketed = proxy.host.contains(":") ? "[\(proxy.host)]" : proxy.host
        options.set(CURLOPT_CONNECT_TO, lines: ["::\(bracketed):\(proxy.port)"], keptBy: handle)
        options.check(cxhr_easy_set_socks_gss(options.easy, tunnel), "the SOCKS5 proxy's GSS-API handshake")
        options.ownConnection()
    }
}

extension EasyOptions {
    /// The proxy a hop goes through (nil: direct), with the request's bypass list and the
    /// TLS of an https proxy (trust, client certificate, pins): for a transfer's setup, and for
    /// a PAC route taken on the way.
    mutating func setProxyRoute(_ proxy: ProxySetting?, switches: TransferSwitches, environmentProxy: Bool, handle: EasyHandle) {
        guard let proxy, !proxy.usesGSSAPI else {
            // "" stops libcurl from reading http_proxy and friends unless the application
            // opted in; the no-proxy list "" (which a direct transfer never consults) keeps it
            // from reading no_proxy and NO_PROXY for every transfer.
            // A SOCKS5 proxy with GSS-API is the library's: libcurl goes direct.
            if !environmentProxy || proxy != nil {
                set(CURLOPT_PROXY, "")
                set(CURLOPT_NOPROXY, "")
            }
            return
        }
        set(CURLOPT_PROXY, proxy.url)
        // Go through this proxy whatever no_proxy says: only the request's own list counts.
        set(CURLOPT_NOPROXY, switches.proxyBypass ?? "")
        guard proxy.scheme == .https else { return }
        let tls = switches.proxyTLS
        if let caFile = tls.caFile { set(CURLOPT_PROXY_CAINFO, caFile) }
        if !tls.verifyPeer {
            set(CURLOPT_PROXY_SSL_VERIFYPEER, 0)
            set(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
        }
        if let identity = tls.clientIdentity {
            identity.apply(&self, certificate: CURLOPT_PROXY_SSLCERT, blob: CURLOPT_PROXY_SSLCERT_BLOB,
                           type: CURLOPT_PROXY_SSLCERTTYPE, key: CURLOPT_PROXY_SSLKEY, keyType: CURLOPT_PROXY_SSLKEYTYPE,
                           password: CURLOPT_PROXY_KEYPASSWD)
        }
        // libcurl 7.88 lends a connection to an https proxy, for a plain http request, without
        // comparing the proxy's TLS settings (its ConnectionExists compares the server's
        // there): a connection to the proxy trusted by a CA file of the request's own, or not
        // verified, or shown a client certificate, would be lent to a request that trusts the
        // system's CAs alone. Such a connection stays this request's, and so does its TLS
        // session; nor does it take one of the others'.
        if tls.caFile != nil || !tls.verifyPeer || tls.clientIdentity != nil { ownConnection(fullHandshake: true) }
        if let pins = tls.pins { applyProxyPins(pins, handle: handle) }
    }

    /// The library's check of the proxy's key (``ProxyTLS/pins``), on a connection of the
    /// request's own: a pooled one was made without the check.
    private mutating func applyProxyPins(_ pins: PublicKeyPins, handle: EasyHandle) {
        guard let pinCheck = pins.hashes.withUnsafeBufferPointer({ hashes in
            pins.key.withUnsafeBufferPointer { cxhr_proxy_pins_new(hashes.baseAddress, hashes.count / 32, $0.baseAddress, $0.count) }
        }) else { return fail("out of memory for the proxy's pinned public keys") }
        handle.proxyPins = pinCheck
        check(cxhr_easy_set_proxy_pins(handle.easy, pinCheck), "the proxy's pinned public keys")
        ownConnection()
    }

    /// A connection of the request's own for each send, lent to no other and closed after it;
    /// with `fullHandshake`, its TLS sessions are neither resumed nor kept for another.
    mutating func ownConnection(fullHandshake: Bool = false) {
        set(CURLOPT_FRESH_CONNECT, 1)
        set(CURLOPT_FORBID_REUSE, 1)
        if fullHandshake { set(CURLOPT_SSL_SESSIONID_CACHE, 0) }
    }
}
