import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// What following one redirect does to the request: the rules of WHATWG Fetch's
/// "HTTP-redirect fetch", which XMLHttpRequest (and so GDHttpRequest's users) rely on.
///
/// - Only 301, 302, 303, 307 and 308 are redirects; any other 3xx is a response.
/// - 301 and 302 turn a POST into a GET, 303 turns anything but GET and HEAD into a GET; the
///   body goes, and with it the headers that describe it (`Content-Type`, `Content-Encoding`,
///   `Content-Language`, `Content-Location`). 307 and 308 keep method, body and headers.
/// - To another origin (scheme, host or port), no credentials go: neither the user and
///   password given to `open` nor `Authorization` or `Cookie` fields set by the caller (the
///   cookie jar still sends that origin's own cookies). Back at the first origin they go again.
///
/// A pure value: the engine applies it to the easy handle for the next hop.
struct RedirectStep: Equatable {
    /// The most redirects one send follows unless ``HttpRequest/setMaxRedirects(_:)`` says
    /// otherwise (as libcurl's `CURLOPT_MAXREDIRS` was set).
    static let maxRedirects = 20
    /// The highest limit ``HttpRequest/setMaxRedirects(_:)`` takes; -1 is none at all.
    static let maxRedirectsLimit = 10_000

    /// The method of the next request.
    let method: String
    /// The body goes with the next request.
    let keepsBody: Bool
    /// The next request goes to another origin than the one `open` was given.
    let crossOrigin: Bool

    /// Whether a response with `status` is a redirect to follow (given a `Location`).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The step for a `status` redirect of a request sent with `method`.
    init(status: Int, method: String, crossOrigin: Bool) {
        let becomesGet = switch status {
        case 301, 302: method == "POST"
        case 303: method != "GET" && method != "HEAD"
        default: false
        }
        self.method = becomesGet ? "GET" : method
        keepsBody = !becomesGet
        self.crossOrigin = crossOrigin
    }

    /// Whether the caller's header field `name` goes with the next request.
    func sends(_ name: String) -> Bool {
        if !keepsBody, Self.bodyFields.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) { return false }
        if crossOrigin, Self.credentialFields.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) { return false }
        return true
    }

    /// Fetch's request-body-header names.
    static let bodyFields = ["Content-Type", "Content-Encoding", "Content-Language", "Content-Location"]
    /// Fields that carry credentials, never sent to another origin (as libcurl does).
    static let credentialFields = ["Authorization", "Cookie"]
}

/// Following redirects: the engine asks after each hop whether to go on, and the handle is
/// set up for the next one.
extension Transfer {

    /// How an attempt that libcurl finished goes on (``TransferHops``).
    enum Next {
        /// The send ends: with `failure`, or its response.
        case end(TransferFailure?)
        /// The handle is set up for the next hop of a redirect, or for the same hop by the PAC
        /// file's next route: add it to libcurl again.
        case follow
        /// The attempt is to be tried again after this many seconds.
        case retry(after: Double)
    }

    /// After libcurl finished an attempt (`failure`: how it failed, nil when it completed):
    /// what ``TransferHops`` decides, carried out: a redirect's next hop set up on the handle
    /// (``RedirectStep``), the held head reported at the end. Engine thread, handle out of
    /// libcurl.
    func next(_ handle: EasyHandle, failure: TransferFailure?) -> Next {
        var crossOrigin: Bool?
        var url: String?
        // libcurl resolves the Location against the URL even when it does not follow it.
        var target: UnsafePointer<CChar>?
        if failure == nil, hops.followsRedirect, cxhr_easy_get_string(handle.easy, CURLINFO_REDIRECT_URL, &target) == CURLE_OK,
           let target {
            url = String(cString: target)
            // enableLocationTrusted: every hop is treated as the first origin's.
            crossOrigin = !switches.locationTrusted && !HTTPURL.sameOrigin(url!, message.url)
        }
        let method = hops.method
        let status = hops.lastStatus
        // The time and a jitter matter only to a retry's plan (a random number is a system call).
        let retrying = switches.retries.count > 0
        switch hops.attemptEnded(failure.map { .failed($0) } ?? .completed, crossOrigin: crossOrigin,
                                 elapsed: retrying ? secondsSinceStart : 0, jitter: retrying ? Double.random(in: 0..<1) : 0) {
        case .end(let failure, let reportingHeld):
            if reportingHeld { reportHeldHead() }
            return .end(failure)
        case .retry(let delay):
            if let observer {
                let reason = failure?.text ?? "HTTP status \(status)"
                observer.post(.retry(attempt: hops.retries + 1, delay: delay, reason: reason))
            }
            return .retry(after: delay)
        case .nextRoute(let route):
            if let failure = prepareRoute(route, handle) { return .end(failure) }
            return .follow
        case .follow(let step):
            guard switches.schemes.allowsRedirect(to: url!) else {
                // As libcurl refuses a scheme CURLOPT_REDIR_PROTOCOLS_STR leaves out (CURLE_UNSUPPORTED_PROTOCOL).
                let scheme = MessageValidation.escaped(String(url!.prefix { $0 != ":" }))
                return .end(TransferFailure(kind: .response, text: "Protocol \"\(scheme)\" not supported or disabled in libcurl", code: 1))
            }
            usedConnection(ConnectionID(handle.easy))
            observer?.post(.redirect(status: status, location: url!))
            hopEnded(handle)
            progress.hopURL = url
            progress.pendingHead = nil
            if let problem = configureHop(handle, url: url!, step: step, methodChanged: step.method != method) {
                return .end(TransferFailure(kind: .other, text: problem))
            }
            if let failure = routeHop(to: url!, handle) { return .end(failure) }
            if let failure = limitToRemainingTotal(handle) { return .end(failure) }
            return .follow
        }
    }

    /// A redirect's hop to `url` goes where the PAC file says for it (its script as the send
    /// began: no I/O on the engine thread). Returns a failure when it says nothing usable.
    private func routeHop(to url: String, _ handle: EasyHandle) -> TransferFailure? {
        guard let script = pac?.script else { return nil }
        switch ProxyAutoConfig.routes(script, for: url) {
        case .failure(let failure): return failure
        case .success(let routes):
            hops.useRoutes(routes)
            return applyRoute(routes[0], handle)
        }
    }

    /// The method that goes out: a file goes with PUT unless `open` was given another method.
    var sentMethod: String {
        if case .file = body, Self.sendsFileWithPut(message.method) { return "PUT" }
        return message.method
    }

    /// `sendWithFile` turns these methods into PUT; any other goes out as given.
    static func sendsFileWithPut(_ method: String) -> Bool {
        ["GET", "HEAD", "POST", "PUT"].contains(method)
    }

    /// `User-Agent` unless the request sets one: `CurlXHR/<version> libcurl/<version>`.
    static let defaultUserAgent = "CurlXHR/\(CurlXHRVersion.string) libcurl/" + String(cString: cxhr_libcurl_version())
    static let defaultUserAgentLine = "User-Agent: " + defaultUserAgent

    /// Sets the handle up for the next hop: the URL, the method and body, the header fields
    /// and the credentials that go there, changing only what the hop changes (a redirect to
    /// the same origin with the same method sets the URL alone). A handle whose options
    /// changed beyond the URL is set up afresh for its next transfer.
    private func configureHop(_ handle: EasyHandle, url: String, step: RedirectStep, methodChanged: Bool) -> String? {
        var options = EasyOptions(handle.easy)
        handle.setURL(url, parsed: nil, with: &options)
        if methodChanged {
            // To GET, without the body (HEAD never changes).
            handle.profile = nil
            progress.hopDropsBody = true
            options.set(CURLOPT_CUSTOMREQUEST, nil)
            options.set(CURLOPT_HTTPGET, 1)
        } else if !progress.hopDropsBody {
            // The same body again, from its start.
            progress.bodyOffset = 0
            if fileDescriptor >= 0, lseek(fileDescriptor, off_t(fileStart), SEEK_SET) < 0 { return "cannot rewind the file to send it again" }
        }
        let sendsBodyFields = !progress.hopDropsBody
        func isOneOf(_ names: [String], _ field: HeaderField) -> Bool {
            names.contains { MessageValidation.sameFieldName($0.utf8, field.name.utf8) }
        }
        let fields = message.headers.filter { field in
            (sendsBodyFields || !isOneOf(RedirectStep.bodyFields, field)) && (!step.crossOrigin || !isOneOf(RedirectStep.credentialFields, field))
        }
        let reduced = fields.count != message.headers.count || (!sendsBodyFields && handle.hopContentType != nil)
        if reduced || progress.hopListReduced {
            handle.profile = nil
            progress.hopListReduced = reduced
            var lines = fields.map(\.curlLine)
            if sendsBodyFields, let contentType = handle.hopContentType { lines.append(contentType) }
            if !message.hasHeader("User-Agent") { lines.append(Self.defaultUserAgentLine) }
            var list: UnsafeMutablePointer<curl_slist>?
            for line in lines {
                guard let longer = curl_slist_append(list, line) else {
                    curl_slist_free_all(list)
                    return "out of memory building the header list"
                }
                list = longer
            }
            options.set(CURLOPT_HTTPHEADER, slist: list)
            if let old = handle.headerList { curl_slist_free_all(old) }
            handle.headerList = list
        }
        if step.crossOrigin != progress.hopCrossOrigin {
            handle.profile = nil
            progress.hopCrossOrigin = step.crossOrigin
            if step.crossOrigin {
                options.setServerAuthentication(negotiate: false, credentials: nil)
            } else {
                let negotiate = message.usesNegotiate
                options.setServerAuthentication(negotiate: negotiate, credentials: negotiate ? nil : message.credentials)
            }
        }
        return options.failure
    }

    /// A hop before the last ended: what it measured is kept for the send's metrics (as
    /// curl keeps them across the redirects it follows).
    private func hopEnded(_ handle: EasyHandle) {
        var connect: curl_off_t = 0, total: curl_off_t = 0
        _ = cxhr_easy_get_offset(handle.easy, CURLINFO_CONNECT_TIME_T, &connect)
        _ = cxhr_easy_get_offset(handle.easy, CURLINFO_TOTAL_TIME_T, &total)
        if connect > 0 {
            var facts = cxhr_send_facts()
            cxhr_easy_get_send_facts(handle.easy, &facts, 1, 1, 0)
            progress.earlier.setup.keepNonZero(nameLookup: Int64(facts.namelookup), connect: Int64(connect), tls: Int64(facts.appconnect),
                                               after: progress.earlier.offset)
            progress.earlier.newConnections += 1
        }
        progress.earlier.headerBytes += handle.headParser.takeReceivedBytes()
        progress.earlier.offset += Int64(total)
    }

    /// What the send measured, once libcurl finished its last hop (on `connection`). Engine thread.
    func record(_ handle: EasyHandle, connection: ConnectionID?) -> SendRecord {
        let easy = handle.easy
        var connect: curl_off_t = 0, start: curl_off_t = 0, total: curl_off_t = 0
        _ = cxhr_easy_get_offset(easy, CURLINFO_CONNECT_TIME_T, &connect)
        _ = cxhr_easy_get_offset(easy, CURLINFO_STARTTRANSFER_TIME_T, &start)
        _ = cxhr_easy_get_offset(easy, CURLINFO_TOTAL_TIME_T, &total)
        var record = SendRecord(ended: true, httpVersion: progress.httpVersion, redirectedURL: progress.hopURL,
                                redirectCount: hops.redirects, connect: Int64(connect), startTransfer: Int64(start),
                                total: Int64(total), headerBytes: handle.headParser.takeReceivedBytes(), earlier: progress.earlier,
                                retryCount: hops.retries, queueMicroseconds: progress.queueMilliseconds * 1000,
                                methodBecameGET: progress.hopDropsBody, trailers: progress.trailers)
        let sendsBody: Int32 = if case .none = body { 0 } else { 1 }
        cxhr_easy_get_send_facts(easy, &facts, connect > 0 ? 1 : 0, message.isSecure || switches.proxy?.scheme == .https ? 1 : 0,
                                 sendsBody)
        if let connection {
            record.remotePort = connection.remotePort
            record.localPort = connection.localPort
        }
        return record
    }
}
