/// The switches that apply to the next send. They belong to the request object and survive
/// `open`, as in GDHttpRequest.
struct TransferSwitches: Sendable, Equatable {
    var verifyPeer = true
    var verifyHost = true
    var followLocation = true
    /// Credentials go on to redirect targets of other origins (`enableLocationTrusted`).
    var locationTrusted = false
    var cookies = true
    /// Set by `close()`: the next transfer opens a new connection and a full TLS handshake.
    var freshConnection = false
    /// The limits of each phase (`setTimeouts`).
    var timeouts = Timeouts()
    /// The bytes of the body asked for (`setRange`), or nil for all of it.
    var range: ByteRange?
    /// Asks for compressed bodies and decodes them (`disableContentDecoding` turns it off).
    var contentDecoding = true
    /// When a send is tried again (`setRetries`).
    var retries = RetryPolicy()
    /// The most body bytes (after decoding) a response may have; 0: no limit (`setMaxResponseSize`).
    var maxResponseSize: Int64 = 0
    /// The most redirects one send follows; -1: no limit (`setMaxRedirects`).
    var maxRedirects = RedirectStep.maxRedirects
    /// The addresses connected to (`setIPVersion`).
    var ipVersion = HttpRequest.IPVersion.any
    /// The TLS versions the server connection may use (`setTLSVersion`).
    var tlsVersions = TLSVersions()
    /// The switches few requests set, behind one reference (nil for none of them): a request
    /// without them copies and compares one pointer, not a dozen fields, whichever is added.
    /// Every switch that holds a string, an array or a reference is among them, so a send
    /// copies the rest as plain bytes.
    private var reach: ReachSwitches?

    /// The HTTP proxy to go through, or nil to go direct.
    var proxy: ProxySetting? {
        get { reach?.values.proxy }
        set { changeReach { $0.proxy = newValue } }
    }
    /// Trusted CAs for this request only (`setCACertificateFile`).
    var caFile: String? {
        get { reach?.values.caFile }
        set { changeReach { $0.caFile = newValue } }
    }
    /// A folder of trusted CAs for this request only (`setCACertificatePath`).
    var caPath: String? {
        get { reach?.values.caPath }
        set { changeReach { $0.caPath = newValue } }
    }
    /// The schemes the request and its redirects may use (`setAllowedSchemes`).
    var schemes: AllowedSchemes {
        get { reach?.values.schemes ?? AllowedSchemes() }
        set { changeReach { $0.schemes = newValue } }
    }
    /// The certificate and key shown to a server that asks (`setClientCertificate`).
    var clientIdentity: ClientIdentity? {
        get { reach?.values.clientIdentity }
        set { changeReach { $0.clientIdentity = newValue } }
    }
    /// The public keys the server's certificate must have one of (`setPinnedPublicKeys`).
    var pinnedPublicKeys: String? {
        get { reach?.values.pinnedPublicKeys }
        set { changeReach { $0.pinnedPublicKeys = newValue } }
    }
    /// The connection to an https proxy (`setProxyCACertificateFile`, …).
    var proxyTLS: ProxyTLS {
        get { reach?.values.proxyTLS ?? ProxyTLS() }
        set { changeReach { $0.proxyTLS = newValue } }
    }
    /// Hosts reached without the proxy, in `NO_PROXY` syntax (`setProxyBypass`).
    var proxyBypass: String? {
        get { reach?.values.proxyBypass }
        set { changeReach { $0.proxyBypass = newValue } }
    }
    /// Header fields sent to the proxy only (`setProxyHeader`).
    var proxyHeaders: [HeaderField] {
        get { reach?.values.proxyHeaders ?? [] }
        set { changeReach { $0.proxyHeaders = newValue } }
    }
    /// The PAC file the request's own proxy choice names (`setProxyAutoConfig`).
    var proxyAutoConfig: PACLocation? {
        get { reach?.values.proxyAutoConfig }
        set { changeReach { $0.proxyAutoConfig = newValue } }
    }
    /// The request chose to go direct (`disableHttpProxy`): the process-wide PAC file is not
    /// its. (A proxy or PAC file of its own is a choice too.)
    var proxyChosen: Bool {
        get { reach?.values.proxyChosen ?? false }
        set { changeReach { $0.proxyChosen = newValue } }
    }
    /// The PAC file a send follows: the request's own, else the process-wide one when the
    /// request made no proxy choice (``HttpRequest/proxyAutoConfig``); nil for none.
    var effectiveProxyAutoConfig: PACLocation? {
        if let own = proxyAutoConfig { return own }
        return proxy == nil && !proxyChosen ? ProxyAutoConfig.processDefault : nil
    }
    /// Where connections go, and whether they are the request's own (`setResolve`, …).
    var routing: Routing {
        get { reach?.values.routing ?? Routing() }
        set { changeReach { $0.routing = newValue } }
    }
    /// The transfer's rate limits (`setRateLimits`).
    var rateLimits: RateLimits {
        get { reach?.values.rateLimits ?? RateLimits() }
        set { changeReach { $0.rateLimits = newValue } }
    }
    /// Whether any switch of ``ReachSwitches`` is set.
    var hasReach: Bool { reach != nil }

    /// The shared HTTP cache takes no part in the request's sends: its connections may go
    /// elsewhere than its URL says (``Routing/isRerouted``), or it shows a client certificate,
    /// whose answer is that certificate's alone.
    var keepsOutOfCache: Bool { reach.map { $0.values.routing.isRerouted || $0.values.clientIdentity != nil } ?? false }

    private mutating func changeReach(_ change: (inout ReachSwitches.Values) -> Void) {
        var values = reach?.values ?? ReachSwitches.Values()
        change(&values)
        reach = values == ReachSwitches.Values() ? nil : ReachSwitches(values)
    }
}

/// The switches of proxies, trusted CAs, allowed schemes, TLS identity, routing and rate limits
/// (``TransferSwitches``), kept as one reference that is never changed: a change makes a new one.
final class ReachSwitches: Sendable, Equatable {
    struct Values: Sendable, Equatable {
        var proxy: ProxySetting?
        var caFile: String?
        var caPath: String?
        var schemes = AllowedSchemes()
        var clientIdentity: ClientIdentity?
        var pinnedPublicKeys: String?
        var proxyTLS = ProxyTLS()
        var proxyBypass: String?
        var proxyHeaders: [HeaderField] = []
        var routing = Routing()
        var rateLimits = RateLimits()
        var proxyAutoConfig: PACLocation?
        var proxyChosen = false
    }

    let values: Values
    init(_ values: Values) { self.values = values }

    static func == (lhs: ReachSwitches, rhs: ReachSwitches) -> Bool { lhs === rhs || lhs.values == rhs.values }
}

/// Where a request's connections go, and whether they are its own (``HttpRequest/setResolve(_:)``
/// and its kin).
struct Routing: Sendable, Equatable {
    /// `--resolve` entries (`setResolve`): the addresses some hosts' connections go to.
    var resolve: [ResolveEntry] = []
    /// `--connect-to` entries (`setConnectTo`): the host and port some connections go to.
    var connectTo: [ConnectToEntry] = []
    /// The Unix socket connections go through (`setUnixSocket`): a path, or `@NAME` in the
    /// abstract namespace; nil for TCP.
    var unixSocket: String?
    /// `CURLOPT_INTERFACE`'s value (`setInterface`): `if!NAME` or a numerical address.
    var interface: String?
    /// The Kerberos service Negotiate asks a ticket for (`setServiceName`); nil: libcurl's `HTTP`.
    var serviceName: String?
    /// The Kerberos service of the proxy (`setProxyServiceName`): a SOCKS5 proxy's GSS-API
    /// (nil: `rcmd`) and an HTTP proxy's Negotiate (nil: libcurl's `HTTP`).
    var proxyServiceName: String?
    /// Each send opens a connection of its own and closes it after (`disableConnectionReuse`).
    var forbidReuse = false
}

/// The range of TLS versions a request allows; nil bounds are libcurl's.
struct TLSVersions: Sendable, Equatable {
    var minimum: HttpRequest.TLSVersion?
    var maximum: HttpRequest.TLSVersion?

    /// `CURLOPT_SSLVERSION`'s value: a `CURL_SSLVERSION_*` ORed with a `CURL_SSLVERSION_MAX_*`;
    /// nil for libcurl's default range.
    var curlValue: Int? {
        guard minimum != nil || maximum != nil else { return nil }
        // CURL_SSLVERSION_TLSv1_0 is 4 … TLSv1_3 is 7; the maxima are those shifted by 16.
        let low = minimum.map { Int($0.rawValue) - 6 } ?? 0
        let high = maximum.map { (Int($0.rawValue) - 6) << 16 } ?? 0
        return low | high
    }
}

extension HttpRequest.TLSVersion {
    /// "TLS 1.2".
    var name: String { "TLS 1.\(rawValue - 10)" }
}

/// A request's byte range (`Range: bytes=start-end`, end inclusive; nil: to the end).
struct ByteRange: Sendable, Equatable {
    var start: Int64
    var end: Int64?

    /// libcurl's form of it (`CURLOPT_RANGE`).
    var curlValue: String { "\(start)-" + (end.map { String($0) } ?? "") }

    /// Why `start` and `end` make no range, or nil.
    static func problem(start: Int64, end: Int64?) -> String? {
        if start < 0 { return "the range must start at byte 0 or later" }
        if let end, end < start { return "the range must end at or after its start (\(end) < \(start))" }
        return nil
    }
}

/// The schemes a request may use (libcurl's `CURLOPT_PROTOCOLS_STR`) and those a redirect it
/// follows may lead to, within them (curl's `--proto` and `--proto-redir`).
struct AllowedSchemes: Sendable, Equatable {
    /// Every scheme the library sends.
    static let all = ["http", "https"]
    var request = AllowedSchemes.all
    var redirects = AllowedSchemes.all

    /// `CURLOPT_PROTOCOLS_STR`'s value.
    var curlValue: String { request.joined(separator: ",") }

    /// Whether a redirect may lead to `url`: its scheme is allowed for the request and for redirects.
    func allowsRedirect(to url: String) -> Bool {
        let scheme = url.prefix { $0 != ":" }.lowercased()
        return request.contains(scheme) && redirects.contains(scheme)
    }

    /// The schemes of `names` in ``all``'s order (case aside), or why they are none of them.
    static func parse(_ names: [String], allowingNone: Bool) -> Result<[String], ReadableFile.Problem> {
        var chosen = Set<String>()
        for name in names {
            let lower = name.lowercased()
            guard all.contains(lower) else {
                return .failure(ReadableFile.Problem(message: "'\(MessageValidation.escaped(name))' is not a scheme the library sends: use http or https"))
            }
            chosen.insert(lower)
        }
        if chosen.isEmpty, !allowingNone { return .failure(ReadableFile.Problem(message: "no scheme is allowed: a request could never be sent")) }
        return .success(all.filter(chosen.contains))
    }
}
