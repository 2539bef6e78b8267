import CCurlShim

extension EasyProfile.Fields {
    /// The proxy of the request, or none; its credentials, TLS, bypass list and own fields.
    func applyProxy(_ options: inout EasyOptions, handle: EasyHandle) {
        options.setProxyRoute(switches.proxy, switches: switches, environmentProxy: environmentProxy)
        guard let proxy = switches.proxy else { return }
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
            options.set(CURLOPT_FRESH_CONNECT, 1)
            options.set(CURLOPT_FORBID_REUSE, 1)
        }
    }
}

extension EasyOptions {
    /// The proxy a hop goes through (nil: direct), with the request's bypass list and the
    /// trust of an https proxy: for a transfer's setup, and for a PAC route taken on the way.
    mutating func setProxyRoute(_ proxy: ProxySetting?, switches: TransferSwitches, environmentProxy: Bool) {
        guard let proxy else {
            // "" stops libcurl from reading http_proxy and friends unless the application
            // opted in; the no-proxy list "" (which a direct transfer never consults) keeps it
            // from reading no_proxy and NO_PROXY for every transfer.
            if !environmentProxy {
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
    }
}
