/// The pre-send switches and the message: what a request is set up with before it is sent.
extension HttpRequest {
    // MARK: Pre-send switches (UNSENT, OPENED, DONE; they apply to the next send)

    /// Accepts a certificate whose name does not match the host. Verification of the
    /// certificate chain stays on.
    @discardableResult
    public func disableHostVerification() -> Bool {
        changeSwitches { $0.verifyHost = false }
    }

    /// Accepts any certificate, and any host name (implies ``disableHostVerification()``).
    @discardableResult
    public func disablePeerVerification() -> Bool {
        changeSwitches {
            $0.verifyPeer = false
            $0.verifyHost = false
        }
    }

    /// Returns redirects (301, 302, 303, 307, 308) instead of following them. Other 3xx
    /// responses are never followed.
    @discardableResult
    public func disableFollowLocation() -> Bool {
        changeSwitches { $0.followLocation = false }
    }

    /// Sends the credentials given to `open`, and the `Authorization` and `Cookie` fields set
    /// with ``setRequestHeader(_:value:)``, on to redirect targets of another scheme, host or
    /// port too, as curl's `--location-trusted` (libcurl's `CURLOPT_UNRESTRICTED_AUTH`). By
    /// default they go only to the origin `open` was given. Only for redirects you trust: a
    /// server can send them anywhere, over plain http too.
    @discardableResult
    public func enableLocationTrusted() -> Bool {
        changeSwitches { $0.locationTrusted = true }
    }

    /// Limits the schemes this request may use, and those a redirect it follows may lead to
    /// (curl's `--proto` and `--proto-redir`, libcurl's `CURLOPT_PROTOCOLS_STR`): `"http"`
    /// and `"https"`, case aside. A URL of another scheme ends the send in DONE with status 0
    /// and libcurl's text `Protocol "http" not supported or disabled in libcurl` (curl's exit
    /// 1); so does a redirect to a scheme not in both lists. `redirects` `nil`: both schemes
    /// (within `schemes`); `[]`: no redirect is followed to anywhere.
    /// - Returns: `false` with ``lastError`` for an empty `schemes`, or a name other than
    ///   http and https, or a request in flight.
    @discardableResult
    public func setAllowedSchemes(_ schemes: [String], redirects: [String]? = nil) -> Bool {
        var allowed = AllowedSchemes()
        switch AllowedSchemes.parse(schemes, allowingNone: false) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed): allowed.request = parsed
        }
        if let redirects {
            switch AllowedSchemes.parse(redirects, allowingNone: true) {
            case .failure(let problem): return refuse(.invalidArgument, problem.message)
            case .success(let parsed): allowed.redirects = parsed
            }
        }
        return changeSwitches { $0.schemes = allowed }
    }

    /// Follows at most `count` redirects in one send (20 by default; -1: no limit, 0: none, so
    /// the first redirect fails), as curl's `--max-redirs`. One more ends the request in DONE
    /// with status 0, ``getFailureKind()`` `.redirects` and curl's text "Maximum (N) redirects
    /// followed" (curl's exit 47). ``disableFollowLocation()`` still returns redirects instead.
    /// - Returns: `false` with ``lastError`` for a count below -1 or above 10 000, or a
    ///   request in flight.
    @discardableResult
    public func setMaxRedirects(_ count: Int) -> Bool {
        guard (-1...RedirectStep.maxRedirectsLimit).contains(count) else {
            return refuse(.invalidArgument, "the redirect limit must be -1 (none) or 0 to \(RedirectStep.maxRedirectsLimit) redirects (\(count))")
        }
        return changeSwitches { $0.maxRedirects = count }
    }

    /// Which IP addresses a request connects to (``setIPVersion(_:)``; C `cxhr_ip_version`).
    public enum IPVersion: Int32, Sendable, CaseIterable {
        /// Any address the host name resolves to (the default).
        case any = 0
        /// IPv4 addresses only (curl's `-4`).
        case v4 = 4
        /// IPv6 addresses only (curl's `-6`).
        case v6 = 6
    }

    /// Connects only to the host's IPv4 or IPv6 addresses (curl's `-4` and `-6`, libcurl's
    /// `CURLOPT_IPRESOLVE`); `.any` (the default) to whichever answers. A name without an
    /// address of that version fails to resolve, and a literal address of the other version
    /// (`127.0.0.1` with `.v6`) fails to connect: DONE, status 0, `.dns` or `.connection`.
    /// Applies to the proxy's address too.
    /// - Returns: `false` with ``lastError`` for a request in flight.
    @discardableResult
    public func setIPVersion(_ version: IPVersion) -> Bool {
        changeSwitches { $0.ipVersion = version }
    }

    /// Sends no cookies and stores none for this request.
    @discardableResult
    public func disableCookieHandling() -> Bool {
        changeSwitches { $0.cookies = false }
    }

    /// Trusts only the CAs in the PEM file at `path` for this request's TLS connections.
    /// - Returns: `false` when the file cannot be read.
    @discardableResult
    public func setCACertificateFile(_ path: String) -> Bool {
        if let problem = ReadableFile.problem(path) {
            return refuse(.fileUnreadable, problem)
        }
        return changeSwitches { $0.caFile = path }
    }

    /// Trusts only the CAs in the folder at `path` for this request's TLS connections: PEM
    /// certificates under their subject-hash names, as `openssl rehash` (or `c_rehash`) makes
    /// them; libcurl's `CURLOPT_CAPATH`, curl's `--capath`. With
    /// ``setCACertificateFile(_:)`` the request trusts the CAs of both; without it, neither the
    /// system store nor ``caCertificateFile``. A certificate missing from the folder fails the
    /// handshake as an unknown CA does (`.tls`, curl's exit 60).
    /// - Returns: `false` with ``lastError`` when `path` is not a readable folder (a symbolic
    ///   link to one included), holds CR, LF or NUL, or the request is in flight.
    @discardableResult
    public func setCACertificatePath(_ path: String) -> Bool {
        if let problem = CertificateFolder.problem(path) {
            return refuse(.fileUnreadable, problem)
        }
        return changeSwitches { $0.caPath = path }
    }

    /// A TLS protocol version (``setTLSVersion(minimum:maximum:)``; C `cxhr_tls_version`).
    public enum TLSVersion: Int32, Sendable, CaseIterable, Comparable {
        /// TLS 1.0 (curl's `--tls-max 1.0`).
        case v1_0 = 10
        /// TLS 1.1.
        case v1_1 = 11
        /// TLS 1.2 (curl's `--tlsv1.2` as a minimum).
        case v1_2 = 12
        /// TLS 1.3 (curl's `--tlsv1.3` as a minimum).
        case v1_3 = 13

        /// Whether `lhs` is an older version than `rhs`.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Limits the TLS versions this request's https connections may use (libcurl's
    /// `CURLOPT_SSLVERSION`; curl's `--tlsv1.2`, `--tlsv1.3` and `--tls-max`); `nil` leaves a
    /// bound to libcurl and OpenSSL (whose configuration may refuse TLS 1.0 and 1.1 anyway). A
    /// server that cannot meet the range fails the handshake: DONE, status 0, `.tls` (curl's
    /// exit 35).
    /// - Returns: `false` with ``lastError`` for a minimum above the maximum, or a request in
    ///   flight.
    @discardableResult
    public func setTLSVersion(minimum: TLSVersion? = nil, maximum: TLSVersion? = nil) -> Bool {
        if let minimum, let maximum, minimum > maximum {
            return refuse(.invalidArgument, "the lowest TLS version (\(minimum.name)) is above the highest (\(maximum.name))")
        }
        return changeSwitches { $0.tlsVersions = TLSVersions(minimum: minimum, maximum: maximum) }
    }

    /// Sends this request through the HTTP proxy at `host:port`: plain HTTP as a proxy
    /// request, HTTPS through a `CONNECT` tunnel with the origin's certificate verified as
    /// without a proxy.
    ///
    /// - Parameters:
    ///   - host: the proxy's host name or IP address (no scheme, no port).
    ///   - port: the proxy's port, 1…65535.
    ///   - user: the user name for the proxy; `nil` sends none.
    ///   - password: the password for the proxy.
    ///   - auth: `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"`, `"NEGOTIATE"` (tickets from the
    ///     library's Kerberos cache or the user's default one; a `user@REALM` and password get
    ///     them first, as for ``open(_:url:async:user:password:auth:)``) or `"ANY"` (the
    ///     strongest of NTLM, Digest and Basic the proxy offers).
    /// - Returns: `false` with ``lastError`` for a bad host or port, an unknown scheme, or a
    ///   request in flight.
    @discardableResult
    public func enableHttpProxy(host: String, port: Int, user: String? = nil,
                                password: String? = nil, auth: String? = nil) -> Bool {
        if let problem = ProxySetting.problem(host: host, port: port) {
            return refuse(.invalidArgument, problem)
        }
        var credentials: Credentials?
        switch Credentials.parse(user: user, password: password, auth: auth, party: "proxy ") {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success((let scheme, let parsed)):
            // Negotiate without a user: tickets already in a credential cache.
            credentials = parsed ?? (scheme == .negotiate ? Credentials(user: "", password: "", scheme: .negotiate) : nil)
        }
        let proxy = ProxySetting(host: host, port: port, credentials: credentials)
        return changeSwitches {
            $0.proxy = proxy
            $0.proxyAutoConfig = nil
        }
    }

    /// Sends this request through `proxy`: ``enableHttpProxy(host:port:user:password:auth:)``
    /// with its parts (C: `cxhr_enable_http_proxy`).
    /// - Parameter proxy: the proxy, and credentials for it.
    /// - Returns: `false` with ``lastError`` for a bad host or port, credentials with CR, LF or
    ///   NUL, or a request in flight.
    @discardableResult
    public func enableHttpProxy(_ proxy: Proxy) -> Bool {
        enableHttpProxy(host: proxy.host, port: proxy.port, user: proxy.credentials?.user,
                        password: proxy.credentials?.password, auth: proxy.credentials?.scheme.rawValue)
    }

    /// Sends this request directly, without the proxy set by ``enableHttpProxy(host:port:user:password:auth:)``
    /// or ``setProxy(_:user:password:auth:)``, the PAC file of ``setProxyAutoConfig(_:)``, or
    /// the process-wide ``proxyAutoConfig``.
    @discardableResult
    public func disableHttpProxy() -> Bool {
        changeSwitches {
            $0.proxy = nil
            $0.proxyAutoConfig = nil
            $0.proxyChosen = true
        }
    }

    /// Limits each phase of the request, in seconds (0: no limit). A limit that runs out ends
    /// the request in DONE with status 0, ``getFailureKind()`` `.timeout` and a status text
    /// that names the phase (`connect`, `header`, `idle` or `total`).
    ///
    /// - Parameters:
    ///   - connect: until the connection, and for https its TLS handshake, is up.
    ///   - headers: from the request sent (its head and whole body) to the response's head; an
    ///     authentication round or a redirect starts it again.
    ///   - idle: the longest time without a byte sent or received (a body the library paused
    ///     because a LOADING callback has not drained it yet is not idle).
    ///   - total: the whole request, redirects and authentication rounds included; a
    ///     `timeout` given to `send` replaces it for that send.
    /// - Returns: `false` with ``lastError`` for a negative or non-finite value, or a request
    ///   in flight.
    @discardableResult
    public func setTimeouts(connect: Double = 0, headers: Double = 0, idle: Double = 0, total: Double = 0) -> Bool {
        if let problem = Timeouts.problem(connect: connect, headers: headers, idle: idle, total: total) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.timeouts = Timeouts(connect: connect, headers: headers, idle: idle, total: total) }
    }

    /// Limits each phase of the request: ``setTimeouts(connect:headers:idle:total:)`` with the
    /// values of `timeouts` (C: `cxhr_set_timeouts`).
    /// - Parameter timeouts: the limits, in seconds; 0 is none.
    /// - Returns: `false` with ``lastError`` for a negative or non-finite value, or a request
    ///   in flight.
    @discardableResult
    public func setTimeouts(_ timeouts: Timeouts) -> Bool {
        setTimeouts(connect: timeouts.connect, headers: timeouts.headers, idle: timeouts.idle, total: timeouts.total)
    }

    /// Asks for bytes `start` to `end` of the body (both included; `nil`: to its end) with a
    /// `Range` header. A server that honours it answers 206 with those bytes; one that does
    /// not answers 200 with the whole body; a range beyond the end gets 416. The response is
    /// reported as it comes: check ``getStatus()``. A send with a body (POST, PUT, PATCH or any
    /// upload) refuses a range: libcurl would send it as the body's `Content-Range`.
    /// - Returns: `false` with ``lastError`` for a negative start, an end before the start, or
    ///   a request in flight.
    @discardableResult
    public func setRange(from start: Int64, to end: Int64? = nil) -> Bool {
        if let problem = ByteRange.problem(start: start, end: end) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.range = ByteRange(start: start, end: end) }
    }

    /// Tries the request again, up to `count` times after the first attempt, when it got no
    /// response (the connection failed or broke, a connect, headers or idle limit ran out
    /// before the head) or a 429 or 503 answer. Only GET, HEAD, PUT, DELETE and OPTIONS are
    /// retried: a POST or PATCH is sent once. A `Retry-After` of up to a minute is honoured
    /// (longer: the answer stands); otherwise the n-th retry waits `backoff × 2ⁿ⁻¹` seconds
    /// with a jitter of ±50 %. No retry goes beyond the total limit. Retries are invisible to
    /// the ready states: only the last attempt's response is reported.
    /// - Returns: `false` with ``lastError`` for a negative count or backoff, or a request in
    ///   flight.
    @discardableResult
    public func setRetries(_ count: Int, backoff: Double = 0.5) -> Bool {
        if let problem = RetryPolicy.problem(count: count, backoff: backoff) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.retries = RetryPolicy(count: count, backoff: backoff) }
    }

    /// Streams the body of a 2xx response into the file at `path` instead of the receive
    /// buffer, never holding it in memory: written as `path.part`, renamed over `path` when
    /// the response completes. A failure or an abort leaves the `.part`; a response other than
    /// 2xx leaves `path` alone and its body goes to the receive buffer as usual. LOADING is
    /// reported as the bytes arrive; ``getReceiveBuffer()`` stays empty.
    ///
    /// With `resume`, a send that finds a `.part` (and the validator kept beside it,
    /// `path.part.validator`) asks only for the rest (`Range` with `If-Range`, and no
    /// compression, as range offsets count the bytes as sent): a 206 from that byte with the
    /// same validator is appended, a 200 (the file changed) starts over, and any other range
    /// fails the send rather than make a file of two versions. A body that arrived compressed
    /// and was decoded into the file keeps no validator: its next send starts over. `nil`
    /// sends bodies to the receive buffer again.
    /// - Returns: `false` with ``lastError`` when the folder does not exist or is not writable,
    ///   `path` is a folder, or the request is in flight.
    @discardableResult
    public func setResponseFile(_ path: String?, resume: Bool = false) -> Bool {
        if let path, let problem = FileSink.Setting.problem(path) {
            return refuse(.fileUnwritable, problem)
        }
        return changeCore { $0.responseFile = path.map { FileSink.Setting(path: $0, resume: resume) } }
    }

    /// Receives the body as the server encoded it. By default a request asks for compressed
    /// bodies (`Accept-Encoding` with every encoding this libcurl decodes: gzip, deflate, br
    /// and zstd where built in) and gets them decoded; after this call it sends no
    /// `Accept-Encoding` of its own and decodes nothing, even when a header set with
    /// ``setRequestHeader(_:value:)`` asks for an encoding.
    @discardableResult
    public func disableContentDecoding() -> Bool {
        changeSwitches { $0.contentDecoding = false }
    }

    /// Limits the response body to `bytes` (after decoding; 0: no limit, the default). A body
    /// past it ends the request in DONE with status 0, ``getFailureKind()`` `.response` and a
    /// status text that names the limit, in memory and into a response file alike (whose
    /// `.part` is left, as after any failure); a `Content-Length` over it ends the request at
    /// its head. Whatever the limit, memory stays bounded while a consumer is behind: the body
    /// is decoded only as fast as it is taken.
    /// - Returns: `false` with ``lastError`` for a negative limit, or a request in flight.
    @discardableResult
    public func setMaxResponseSize(_ bytes: Int64) -> Bool {
        guard bytes >= 0 else { return refuse(.invalidArgument, "the response size limit must be 0 (none) or more bytes (\(bytes))") }
        return changeSwitches { $0.maxResponseSize = bytes }
    }

    /// Whether requests without a proxy of their own use the proxy named by the `http_proxy`,
    /// `https_proxy`, `all_proxy` and `no_proxy` environment variables, as the curl tool does.
    /// Process-wide; default `false`, so the environment never redirects a request the
    /// application did not configure. Upper-case `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` are
    /// read too; `HTTP_PROXY` is not (as in libcurl, for CGI safety).
    public static var usesEnvironmentProxy: Bool {
        get { ProxyEnvironment.enabled.withLock { $0 } }
        set {
            ProxyEnvironment.enabled.withLock { $0 = newValue }
            ProcessSettings.changed()
        }
    }

    /// Forgets every cookie of the process-wide jar that all requests share
    /// (``CookieStore/removeAll(includePersistentStore:)``).
    ///
    /// - Parameter includePersistentStore: also remove the persistent cookies from the store
    ///   on disk; otherwise they come back at the next launch.
    public func clearCookies(includePersistentStore: Bool) {
        CookieStore.shared.removeAll(includePersistentStore: includePersistentStore)
    }

    // MARK: The message (OPENED only)

    /// Adds a request header; a repeated name is joined with ", ". OPENED only.
    /// - Returns: `false` for a name that is not a token, a value with CR, LF or NUL, and for
    ///   `Content-Length` and `Transfer-Encoding`, which the library derives from the body.
    @discardableResult
    public func setRequestHeader(_ name: String, value: String) -> Bool {
        if let problem = MessageValidation.fieldProblem(name: name, value: value) { return refuse(.invalidArgument, problem) }
        guard !MessageValidation.derivedFieldNames.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) else {
            return refuse(.invalidArgument, "\(name) is set by the library from the body")
        }
        let trimmed = MessageValidation.trimmedFieldValue(value)
        return changeMessage(.setRequestHeader) { $0.setHeader(name, value: trimmed) }
    }

    /// Adds the fields `HTTPFields` holds (token names, values without CR, LF or NUL: nothing
    /// to check again), each as ``setRequestHeader(_:value:)`` adds it, in one step: for the
    /// layers that keep their fields as `HTTPFields` (the client, the OpenAPI transport).
    /// `leavingOutContentType`: no `Content-Type` sent (a multipart body's is libcurl's);
    /// `replacing`: fields added after the others, in place of theirs of the same names.
    /// `Content-Length` and `Transfer-Encoding` are refused, as `setRequestHeader` refuses
    /// them (the fields before it are added, as they would be one by one), or left out with
    /// `leavingOutDerived`. OPENED only.
    package func addRequestFields(_ fields: HTTPFields, leavingOutContentType: Bool = false,
                                  leavingOutDerived: Bool = false, replacingWith replacing: HTTPFields = [:]) -> Bool {
        var refused: HTTPField.Name?
        let added = changeMessage(.setRequestHeader) { message in
            /// Adds the fields of `list`, but for those whose names `replacing` holds when
            /// `skippingReplaced` (false: a refused one ends the step).
            func add(_ list: HTTPFields, skippingReplaced: Bool) -> Bool {
                // An empty list's loop would still make and drop its indices.
                if !list.isEmpty { for field in list {
                    // Compared as text only when the length matches.
                    let length = field.name.canonicalName.utf8.count
                    if length == 14 || length == 17, field.name == .contentLength || field.name == .transferEncoding {
                        if leavingOutDerived { continue }
                        refused = field.name
                        return false
                    }
                    if leavingOutContentType, field.name == .contentType { continue }
                    if skippingReplaced, replacing[field.name] != nil { continue }
                    message.setHeader(field.name.rawName, value: MessageValidation.trimmedFieldValue(field.value))
                } }
                return true
            }
            if add(fields, skippingReplaced: !replacing.isEmpty) { _ = add(replacing, skippingReplaced: false) }
        }
        if let refused { return refuse(.invalidArgument, "\(refused.rawName) is set by the library from the body") }
        return added
    }

    /// Leaves a header field out of the request: one set with ``setRequestHeader(_:value:)``,
    /// and one libcurl adds of its own (`Host`, `Accept`, `User-Agent`, `Accept-Encoding`…), as
    /// curl's `-H 'Name:'`. A later `setRequestHeader` of the name sends it again. OPENED only.
    /// - Returns: `false` for a name that is not a token, and for `Content-Length` and
    ///   `Transfer-Encoding`, which the library derives from the body.
    @discardableResult
    public func removeRequestHeader(_ name: String) -> Bool {
        guard MessageValidation.isToken(name) else {
            return refuse(.invalidArgument, "'\(MessageValidation.escaped(name))' is not a valid header name")
        }
        guard !MessageValidation.derivedFieldNames.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) else {
            return refuse(.invalidArgument, "\(name) is set by the library from the body")
        }
        return changeMessage(.setRequestHeader) { $0.removeHeader(name) }
    }

    /// Adds (or replaces) a form value; the values are sent as an
    /// `application/x-www-form-urlencoded` body (as `multipart/form-data` once a file is added
    /// with ``addPostFile(_:forKey:fileName:contentType:)``), which excludes any other body.
    /// OPENED only; in other states it does nothing and sets ``lastError``.
    public func setPostValue(_ value: String, forKey key: String) {
        changeMessage(.setPostValue) { $0.setFormValue(value, forKey: key) }
    }

    /// Adds a form value after the others, even when one has the same key (repeated keys, as
    /// the client layer sends arrays). OPENED only.
    package func appendPostValue(_ value: String, forKey key: String) {
        changeMessage(.setPostValue) { $0.formValues.append((key: key, value: value)) }
    }

    /// Adds the file at `path` to the form as the part `key`: the form then goes as
    /// `multipart/form-data`, the values first, then the files in the order added, each file
    /// streamed from disk as it is sent (never read whole). OPENED only.
    /// - Parameters:
    ///   - path: the file to send; it must be a readable regular file.
    ///   - key: the part's name in the form.
    ///   - fileName: the part's file name; `nil`: the path's last component.
    ///   - contentType: the part's type; `nil`: libcurl's guess from the name's extension
    ///     (`text/plain` for `.txt`, …), else `application/octet-stream`.
    /// - Returns: `false` with ``lastError`` when the file is missing, unreadable or not a
    ///   regular file (checked again at `send`), or the request is not OPENED.
    @discardableResult
    public func addPostFile(_ path: String, forKey key: String, fileName: String? = nil, contentType: String? = nil) -> Bool {
        if let problem = ReadableFile.problem(path) {
            return refuse(.fileUnreadable, problem)
        }
        for (name, value) in [("key", key), ("file name", fileName), ("content type", contentType)] {
            if let value, value.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
                return refuse(.invalidArgument, "the \(name) of a form file contains CR, LF or NUL")
            }
        }
        return changeMessage(.setPostValue) {
            $0.formFiles.append(FormFile(key: key, path: path, fileName: fileName, contentType: contentType))
        }
    }

    /// Sends the form as `multipart/form-data` even without a file, as curl's `-F` does (for
    /// the `xhr` tool). OPENED only.
    @discardableResult
    package func sendFormAsMultipart() -> Bool {
        changeMessage(.setPostValue) { $0.multipartForm = true }
    }

    /// Removes every form value and file. OPENED only.
    public func clearPostValues() {
        changeMessage(.setPostValue) {
            $0.formValues.removeAll()
            $0.formFiles.removeAll()
        }
    }


    func changeSwitches(_ change: (inout TransferSwitches) -> Void) -> Bool {
        changeCore { change(&$0.switches) }
    }

    /// Changes a pre-send switch (UNSENT, OPENED, DONE).
    func changeCore(_ change: (inout Core) -> Void) -> Bool {
        withCore { core in
            if case .reject(let rejection) = core.machine.configureSwitch() {
                core.lastError = HttpRequestError(rejection)
                return false
            }
            change(&core)
            core.lastError = nil
            return true
        }
    }

    @discardableResult
    func changeMessage(_ call: RequestStateMachine.Call, _ change: (inout RequestMessage) -> Void) -> Bool {
        withCore { core in
            if case .reject(let rejection) = core.machine.configureMessage(call) {
                core.lastError = HttpRequestError(rejection)
                return false
            }
            change(&core.message)
            core.lastError = nil
            return true
        }
    }
}
