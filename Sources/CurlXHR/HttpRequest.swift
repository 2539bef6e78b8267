import CCurlShim
import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// An XHR-style HTTP request: `open`, `send`, ready states, `abort` — the counterpart of
/// BlackBerry Dynamics' `GDHttpRequest`, over libcurl.
///
/// ```swift
/// let request = HttpRequest()
/// request.open("GET", url: "https://example.com/")   // synchronous
/// request.send()
/// print(request.getStatus(), String(decoding: request.getReceiveBuffer(), as: UTF8.self))
/// ```
///
/// Every method may be called from any thread. A synchronous `send` blocks only its caller;
/// the transfer itself runs on the library's engine thread. In asynchronous mode
/// (`open(…, async: true)`) every ready-state transition is reported once, in order, on
/// ``callbackQueue`` to the ``delegate`` and to ``onStatusChange``.
///
/// Where GDHttpRequest says "based on the XHR standard" and is silent, the WHATWG
/// XMLHttpRequest and Fetch rules hold:
/// - only 301, 302, 303, 307 and 308 are redirects; any other 3xx comes back with its own
///   status and body;
/// - 301 and 302 turn a POST into a GET, 303 anything but GET and HEAD, and the body goes
///   with its headers (`Content-Type`, `Content-Encoding`, `Content-Language`,
///   `Content-Location`); 307 and 308 keep method, body and headers; credentials and
///   caller-set `Authorization` and `Cookie` fields never go to another origin;
/// - only `DELETE`, `GET`, `HEAD`, `OPTIONS`, `POST` and `PUT` are upper-cased;
/// - bytes outside ASCII in a URL's path and query are sent percent-encoded as UTF-8;
/// - a second `open` while OPENED reports no second OPENED;
/// - `User-Agent: CurlXHR/<version> libcurl/<version>` is sent unless the caller sets one.
public final class HttpRequest: Sendable {
    /// The ready states of `GDHttpRequest_state_t`, with the same numbers.
    public enum State: Int32, Sendable, CustomStringConvertible {
        /// Created, or never opened.
        case unsent = 0
        /// `open` succeeded; headers, form values and the switches may be set; `send` may be called.
        case opened
        /// `send` handed the request to the engine; nothing has come back yet.
        case sent
        /// The final response's status line and headers are in (not those of a 100-continue,
        /// a redirect hop or an authentication round).
        case headersReceived
        /// Body bytes are arriving; reported again as more arrive.
        case loading
        /// Complete, failed or aborted.
        case done

        public var description: String {
            switch self {
            case .unsent: "UNSENT"
            case .opened: "OPENED"
            case .sent: "SENT"
            case .headersReceived: "HEADERS_RECEIVED"
            case .loading: "LOADING"
            case .done: "DONE"
            }
        }
    }

    /// The queue callbacks run on when the caller sets none: one serial queue shared by all
    /// requests, so callbacks of different requests never run at the same time. The library
    /// runs them from a thread of its own inside `sync` on this queue (fewer thread wake-ups
    /// than `async`), so they are on the queue, in order with anything else submitted to it.
    public static let defaultCallbackQueue = DispatchQueue(label: "CurlXHR.callbacks")

    /// Trusted CAs for every request of the process that sets none of its own; `nil` means
    /// `CURL_CA_BUNDLE`, else `SSL_CERT_FILE` (read once, at the first request), else the
    /// system store.
    public static var caCertificateFile: String? {
        get { TrustedCertificates.configuredFile.withLock { $0 } }
        set {
            TrustedCertificates.configuredFile.withLock { $0 = newValue }
            ProcessSettings.changed()
        }
    }

    /// The request's state, behind one lock; only ``withCore(_:)`` takes it.
    let lockedCore = Locked(Core())
    /// What each locked section leaves, for ``getState()`` and ``getStatus()``.
    let published = PublishedState()
    /// The callback running for this request (its state and `open` generation) and the thread
    /// it runs on, 0 between callbacks. Only that thread writes them, so it reads them without
    /// the lock, and no other thread finds its own identity in them.
    let callbackThread = Atomic<UInt>(0)
    let callbackState = Atomic<Int32>(0)
    let callbackGeneration = Atomic<Int>(0)
    /// The bit this request's synchronous sends sleep with (``Wakeups``).
    let completionBit = Wakeups.newRequestBit()
    /// Body bytes of the current or last send that went out (``getBytesSent()``).
    let sentBytes = Atomic<Int64>(0)
    /// Counts replacements of the delegate or the closure (``replaceReceivers(_:)``).
    let receiverChanges = Atomic<UInt>(0)
    /// For tests only: run by `send` on its own thread after its locked step and before it
    /// posts the start command.
    nonisolated(unsafe) var startWindowHook: (() -> Void)?

    public init() {}

    // MARK: Callbacks

    /// Receives the ready-state changes in asynchronous mode. Held weakly.
    public var delegate: (any HttpRequestDelegate)? {
        get { withCore { $0.receivers.delegate } }
        set { replaceReceivers { ReportReceivers(delegate: newValue, closure: $0.closure) } }
    }

    /// A closure called after the delegate for each ready-state change in asynchronous mode.
    public var onStatusChange: (@Sendable (HttpRequest) -> Void)? {
        get { withCore { $0.receivers.closure } }
        set { replaceReceivers { ReportReceivers(delegate: $0.delegate, closure: newValue) } }
    }

    /// Replaces the delegate and closure together, and counts the change for callbacks
    /// already taken for delivery (``deliverReports()``).
    private func replaceReceivers(_ replacing: (ReportReceivers) -> ReportReceivers) {
        withCore { core in
            core.receivers = replacing(core.receivers)
            receiverChanges.add(1, ordering: .releasing)
        }
    }

    /// Where the callbacks of this request run; ``defaultCallbackQueue`` unless set.
    public var callbackQueue: DispatchQueue {
        get { withCore { $0.callbackQueue } }
        set { withCore { $0.callbackQueue = newValue } }
    }

    /// Lets requests share one HTTP/2 connection (multiplexing) where the server offers it.
    /// Default `true`; `false` keeps the request on HTTP/1.1.
    public var enablePipelining: Bool {
        get { withCore { $0.enablePipelining } }
        set { withCore { $0.enablePipelining = newValue } }
    }

    /// Why the last call that returned `false` (or, for `setPostValue`, did nothing) refused.
    /// Cleared by the next call that succeeds.
    public var lastError: HttpRequestError? { withCore { $0.lastError } }

    // MARK: Opening

    /// Prepares a request. Allowed in every state; a request in flight is aborted first
    /// (reporting DONE), the response is forgotten, and the state becomes OPENED. Opening a
    /// request that is already OPENED reports no second OPENED (as XMLHttpRequest).
    ///
    /// - Parameters:
    ///   - method: `DELETE`, `GET`, `HEAD`, `OPTIONS`, `POST`, `PUT` (upper-cased whatever their
    ///     case, as XMLHttpRequest does) or any other token, sent exactly as given (`patCH`
    ///     stays `patCH`).
    ///   - url: an absolute `http` or `https` URL. Bytes outside ASCII in its path, query and
    ///     fragment are sent percent-encoded as UTF-8.
    ///   - async: `true` reports states to the delegate and `send` returns at once; `false`
    ///     makes `send` return in DONE.
    ///   - user: the user name for server authentication.
    ///   - password: the password for server authentication.
    ///   - auth: `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"` or `"NEGOTIATE"`, case-insensitive.
    /// - Returns: `false` with ``lastError`` for a malformed method or URL or an unknown scheme.
    @discardableResult
    public func open(_ method: String, url: String, async: Bool = false,
                     user: String? = nil, password: String? = nil, auth: String? = nil) -> Bool {
        guard let method = MessageValidation.normalizedMethod(method) else {
            return refuse(.invalidArgument, "'\(method)' is not a valid HTTP method")
        }
        guard let scheme = AuthScheme(name: auth) else {
            return refuse(.invalidArgument, "unknown authentication scheme '\(auth ?? "")': use BASIC, DIGEST, NTLM or NEGOTIATE")
        }
        var credentials: Credentials?
        if let user {
            if let problem = Credentials.problem(user: user, password: password, scheme: scheme) {
                return refuse(.invalidArgument, problem)
            }
            credentials = Credentials(user: user, password: password ?? "", scheme: scheme)
        }
        let url = MessageValidation.percentEncodingNonASCII(url)
        // Moved into the lock, not copied.
        var message: RequestMessage? = RequestMessage(method: method, url: url, isAsync: async, credentials: credentials)
        // The URL of the previous open passed already: re-opening it skips libcurl's parser
        // (a new request's message has the URL "", which never passes). Else the URL is
        // parsed outside the lock, and the lock taken again.
        var parsedURLHasUser: Bool?
        while true {
            let opened = withCore { core -> (effects: Effects, generation: Int)? in
                guard let urlHasUser = parsedURLHasUser ?? (!url.isEmpty && core.message.url == url ? core.message.urlHasUser : nil)
                else { return nil }
                message!.urlHasUser = urlHasUser
                return (core.open(message.take()!, async: async), core.generation)
            }
            if let (effects, generation) = opened {
                // A callback of this request that opens it sees OPENED (and the new open's
                // data) for the rest of the callback.
                if runsCallback { callbackChangedState(to: .opened, generation: generation) }
                perform(effects)
                return true
            }
            switch MessageValidation.parseURL(url) {
            case .failure(let problem): return refuse(.invalidArgument, problem.message)
            case .success(let hasUser): parsedURLHasUser = hasUser
            }
        }
    }

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

    /// Sends this request through the HTTP proxy at `host:port`: plain HTTP as a proxy
    /// request, HTTPS through a `CONNECT` tunnel with the origin's certificate verified as
    /// without a proxy.
    ///
    /// - Parameters:
    ///   - user: the user name for the proxy; `nil` sends none.
    ///   - password: the password for the proxy.
    ///   - auth: `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"` or `"NEGOTIATE"` (tickets from the
    ///     library's Kerberos cache or the user's default one; a `user@REALM` and password get
    ///     them first, as for ``open(_:url:async:user:password:auth:)``).
    /// - Returns: `false` with ``lastError`` for a bad host or port, an unknown scheme, or a
    ///   request in flight.
    @discardableResult
    public func enableHttpProxy(host: String, port: Int, user: String? = nil,
                                password: String? = nil, auth: String? = nil) -> Bool {
        if let problem = ProxySetting.problem(host: host, port: port) {
            return refuse(.invalidArgument, problem)
        }
        guard let scheme = AuthScheme(name: auth) else {
            return refuse(.invalidArgument, "unknown proxy authentication scheme '\(auth ?? "")': use BASIC, DIGEST, NTLM or NEGOTIATE")
        }
        var credentials: Credentials?
        if let user {
            if let problem = Credentials.problem(user: user, password: password, scheme: scheme) {
                return refuse(.invalidArgument, problem)
            }
            credentials = Credentials(user: user, password: password ?? "", scheme: scheme)
        } else if scheme == .negotiate {
            credentials = Credentials(user: "", password: "", scheme: .negotiate)
        }
        let proxy = ProxySetting(host: host, port: port, credentials: credentials)
        return changeSwitches { $0.proxy = proxy }
    }

    /// Sends this request directly, without the proxy set by ``enableHttpProxy(host:port:user:password:auth:)``.
    @discardableResult
    public func disableHttpProxy() -> Bool {
        changeSwitches { $0.proxy = nil }
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
        guard MessageValidation.isToken(name) else {
            return refuse(.invalidArgument, "'\(name.debugDescription)' is not a valid header name")
        }
        guard MessageValidation.isFieldValue(value) else {
            return refuse(.invalidArgument, "the value of header '\(name)' contains CR, LF or NUL")
        }
        guard !MessageValidation.derivedFieldNames.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) else {
            return refuse(.invalidArgument, "\(name) is set by the library from the body")
        }
        let trimmed = MessageValidation.trimmedFieldValue(value)
        return changeMessage(.setRequestHeader) { $0.setHeader(name, value: trimmed) }
    }

    /// Adds (or replaces) a form value; the values are sent as an
    /// `application/x-www-form-urlencoded` body, which excludes any other body. OPENED only;
    /// in other states it does nothing and sets ``lastError``.
    public func setPostValue(_ value: String, forKey key: String) {
        changeMessage(.setPostValue) { $0.setFormValue(value, forKey: key) }
    }

    /// Removes every form value. OPENED only.
    public func clearPostValues() {
        changeMessage(.setPostValue) { $0.formValues.removeAll() }
    }

    // MARK: Sending (OPENED only)

    /// Sends the request with no body (or the form values). See ``send(_:timeout:)``.
    @discardableResult
    public func send(timeout: Double = 0) -> Bool {
        start(.none, timeout: timeout)
    }

    /// Sends the request with `body` as UTF-8 text (`Content-Type: text/plain;charset=UTF-8`
    /// unless set). `nil` sends no body.
    ///
    /// - Parameter timeout: seconds for the whole request, 0 for no limit.
    /// - Returns: `false` with ``lastError`` when the request is not OPENED, the timeout is
    ///   negative, or a body is given together with form values. Network failures do not
    ///   make it `false`: they end in DONE with status 0 and a text.
    @discardableResult
    public func send(_ body: String?, timeout: Double = 0) -> Bool {
        guard let body else { return start(.none, timeout: timeout) }
        return start(.bytes(Data(body.utf8), contentType: "text/plain;charset=UTF-8"), timeout: timeout)
    }

    /// Sends `body` byte for byte (no `Content-Type` unless set). `nil` sends no body.
    ///
    /// Bodies up to 64 KiB are copied into libcurl once; larger ones are read from `body`
    /// itself as libcurl sends them (the request keeps it until DONE), never copied whole.
    @discardableResult
    public func sendData(_ body: Data?, timeout: Double = 0) -> Bool {
        guard let body else { return start(.none, timeout: timeout) }
        return start(.bytes(body, contentType: nil), timeout: timeout)
    }

    /// Streams the file at `path` as the body, never reading it whole. The method becomes PUT
    /// unless `open` was given a method other than GET, HEAD, POST and PUT.
    /// - Returns: `false` when the file is missing, unreadable or not a regular file.
    @discardableResult
    public func sendWithFile(_ path: String, timeout: Double = 0) -> Bool {
        switch ReadableFile.open(path) {
        case .failure(let problem):
            return refuse(.fileUnreadable, problem.message)
        case .success(let file):
            return start(.file(path: path), timeout: timeout, fileDescriptor: file.descriptor, fileSize: file.size)
        }
    }

    private func start(_ body: RequestBody, timeout: Double,
                       fileDescriptor: Int32 = -1, fileSize: Int64 = 0) -> Bool {
        let outcome = withCore { core -> Result<(Transfer, Effects), HttpRequestError> in
            guard timeout.isFinite, timeout >= 0 else {
                return .failure(HttpRequestError(.invalidArgument, "the timeout must be 0 or more seconds"))
            }
            var body = body
            if !core.message.formValues.isEmpty {
                guard case .none = body else {
                    return .failure(HttpRequestError(.invalidArgument, "a body cannot be sent together with form values"))
                }
                body = .bytes(Data(core.message.formBody), contentType: "application/x-www-form-urlencoded")
            }
            if core.message.method == "HEAD", case .bytes = body {
                return .failure(HttpRequestError(.invalidArgument, "a HEAD request cannot carry a body"))
            }
            if case .reject(let rejection) = core.machine.send() {
                return .failure(HttpRequestError(rejection))
            }
            let transfer = core.reusableTransfer() ?? Transfer(request: self)
            transfer.prepare(message: core.message, body: body, switches: core.switches, timeout: timeout,
                             pipelining: core.enablePipelining, fileDescriptor: fileDescriptor, fileSize: fileSize)
            TransferEngine.transfersInFlight.add(1, ordering: .relaxed)  // until `complete()`
            core.switches.freshConnection = false
            core.transfer = transfer
            sentBytes.store(0, ordering: .relaxed)
            core.lastError = nil
            var effects = Effects()
            // Without tickets to get first, the engine starts it at once.
            if transfer.ticketCredentials == nil { effects.start = transfer }
            if core.message.isAsync { core.report(.sent, effects: &effects) }
            return .success((transfer, effects))
        }
        switch outcome {
        case .failure(let error):
            if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
            withCore { $0.lastError = error }
            return false
        case .success(let (transfer, effects)):
            // Tests force an abort into the window between the lock and the start command.
            startWindowHook?()
            perform(effects)
            if effects.start == nil {
                if transfer.message.isAsync {
                    DispatchQueue.global().async { self.obtainTicketsThenStart(transfer) }
                } else {
                    obtainTicketsThenStart(transfer)
                }
            }
            if !transfer.message.isAsync {
                Wakeups.sleep(completionBit) { transfer.isComplete.load(ordering: .acquiring) }
            }
            return true
        }
    }

    /// Turns the Negotiate user and password into tickets (a KDC exchange, so never on the
    /// engine thread), then hands the transfer to the engine; a refusal ends it in DONE.
    private func obtainTicketsThenStart(_ transfer: Transfer) {
        guard let credentials = transfer.ticketCredentials else { return }
        let failure = KerberosCredentials.obtainTickets(principal: credentials.user, password: credentials.password)
        let stillWanted = withCore { $0.transfer === transfer }
        if stillWanted, failure == nil {
            TransferEngine.shared.start(transfer)
            return
        }
        if let failure { transferFinished(transfer, failure: TransferFailure(kind: .authentication, text: failure)) }
        Wakeups.wake(transfer.complete())  // the engine never had it
    }

    // MARK: Stopping

    /// Stops a request in SENT, HEADERS_RECEIVED or LOADING: when it returns the state is
    /// DONE, the status 0 and received data discarded; asynchronous requests get one DONE
    /// callback and none after it. Safe from any thread, including inside a callback.
    /// - Returns: `false`, changing nothing, in UNSENT, OPENED and DONE.
    @discardableResult
    public func abort() -> Bool {
        let outcome = withCore { core -> Result<Effects, HttpRequestError> in
            var effects = Effects()
            if case .reject(let rejection) = core.machine.abort() {
                // A callback reporting SENT, HEADERS_RECEIVED or LOADING of the current open,
                // whose transfer already ended: aborted as it sees it, its DONE not yet run.
                guard runsCallback, !isStale(core), core.failure == nil,
                      let reported = State(rawValue: callbackState.load(ordering: .relaxed)),
                      [.sent, .headersReceived, .loading].contains(reported)
                else {
                    core.lastError = HttpRequestError(rejection)
                    return .failure(HttpRequestError(rejection))
                }
            }
            effects.cancel = core.stopTransfer(reason: "Request aborted", effects: &effects)
            core.lastError = nil
            return .success(effects)
        }
        guard case .success(let effects) = outcome else { return false }
        // A callback of this request that aborts it sees DONE for the rest of the callback.
        if runsCallback { callbackChangedState(to: .done, generation: callbackGeneration.load(ordering: .relaxed)) }
        perform(effects)
        return true
    }

    /// Closes every connection the request used for its last send (each hop of its
    /// redirects, a `CONNECT` tunnel through a proxy included), at once: the server or proxy
    /// sees each end, while other requests' connections stay open for reuse. A request in flight is aborted first (one DONE, as for
    /// ``abort()``); a connection another request is using right now is closed as soon as
    /// that request is done with it. The next send opens a new connection with a full TLS
    /// handshake, so certificates are verified afresh. Allowed in every state.
    @discardableResult
    public func close() -> Bool {
        let effects = withCore { core in
            var effects = Effects()
            if core.machine.close() == .cancelTransferThenDropConnections {
                effects.cancel = core.stopTransfer(reason: "Request closed", effects: &effects)
            }
            effects.closeConnections = core.usedConnections
            core.usedConnections.removeAll()
            core.switches.freshConnection = true
            core.lastError = nil
            return effects
        }
        perform(effects)
        return true
    }


    // MARK: The response

    /// The ready state; inside a callback, the state being reported.
    public func getState() -> State {
        // Without the lock: this thread's own callback, else the state the lock last left.
        runsCallback ? State(rawValue: callbackState.load(ordering: .relaxed)) ?? .unsent : published.read().state
    }

    /// The callback running on this thread changed the request's state (abort or open):
    /// `getState()` returns the new state, and the getters the new `open`'s data, until it
    /// returns. Only the thread that runs the callback writes these.
    private func callbackChangedState(to state: State, generation: Int) {
        callbackState.store(state.rawValue, ordering: .relaxed)
        callbackGeneration.store(generation, ordering: .relaxed)
    }

    /// Whether the calling thread runs a callback of this request.
    private var runsCallback: Bool {
        callbackThread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// Whether the calling thread runs a callback of an earlier `open` (the DONE of a transfer
    /// a re-open aborted, delivered late): it sees that request as it ended, aborted, and never
    /// the current one's data.
    private func isStale(_ core: Core) -> Bool {
        isStale(generation: UInt32(truncatingIfNeeded: core.generation))
    }

    /// ``isStale(_:)`` against the `open` generation (its low 32 bits, as published).
    private func isStale(generation: UInt32) -> Bool {
        runsCallback && UInt32(truncatingIfNeeded: callbackGeneration.load(ordering: .relaxed)) != generation
    }

    /// The value of a response header, matched case-insensitively; repeated fields are joined
    /// with ", ". `nil` when absent or before HEADERS_RECEIVED.
    public func getResponseHeader(_ name: String) -> String? {
        withCore { isStale($0) ? nil : $0.response?.value(of: name) }
    }

    /// All headers of the final response as `Name: value` lines joined by `\n`; `nil` before
    /// HEADERS_RECEIVED and after a failure.
    public func getAllResponseHeaders() -> String? {
        withCore { isStale($0) ? nil : $0.response?.allFields }
    }

    /// The HTTP status of the final response; 0 before HEADERS_RECEIVED and on any failure
    /// (DNS, connect, TLS, timeout, reset, malformed response, abort).
    public func getStatus() -> Int {
        // Without the lock, as for getState().
        let snapshot = published.read()
        return isStale(generation: snapshot.generation) ? 0 : snapshot.status
    }

    /// The reason phrase, or after a failure the text describing it (TLS failures begin with
    /// "SSL"); `nil` before either is known.
    public func getStatusText() -> String? {
        withCore { isStale($0) ? Core.staleFailure.text : $0.failure?.text ?? $0.response?.reason }
    }

    /// How many body bytes of the current (or last) send have gone out, for upload progress.
    /// Counts the body only, not the headers; 0 for a request without a body.
    public func getBytesSent() -> Int64 {
        sentBytes.load(ordering: .relaxed)
    }

    /// The kind of failure that ended the request with status 0 (the details are in
    /// ``getStatusText()``); `nil` while it has not failed.
    public func getFailureKind() -> FailureKind? {
        withCore { isStale($0) ? Core.staleFailure.kind : $0.failure?.kind }
    }

    /// What the last send measured and where it ended: the protocol, the URL after
    /// redirects, how many were followed, and its times (as curl's `--write-out` variables).
    /// Empty before a send ends and after `open`.
    public func getMetrics() -> Metrics {
        withCore { isStale($0) ? Metrics() : Metrics($0.lastSend, openedURL: $0.message.url) }
    }

    /// The body bytes received since the previous call (all of them on the first call).
    public func getReceiveBuffer() -> Data {
        // Without the lock when no bytes wait (as at DONE after LOADING took them).
        guard published.read().hasReceived else { return Data() }
        return withCore { core in
            if isStale(core) { return Data() }
            return core.takeReceived()
        }
    }

    // MARK: Internals

    func perform(_ effects: Effects) {
        // The send number was set under the lock this decision was taken in, before it.
        if let connections = effects.closeConnections {
            TransferEngine.shared.close(effects.cancel.map { ($0, $0.sends) }, connections: connections)
        } else if let transfer = effects.cancel {
            TransferEngine.shared.cancel(transfer, send: transfer.sends)
        }
        if let transfer = effects.start { TransferEngine.shared.start(transfer) }
        guard let queue = effects.deliverOn else { return }
        if TransferEngine.isCurrentThread {
            // The engine hands callbacks to their queue with those of other requests when
            // its round ends: one hop per queue, not one per request and state.
            TransferEngine.shared.deliverLater(self, on: queue)
        } else {
            queue.async { self.deliverReports() }
        }
    }

    /// Runs `body` under the request's lock, and publishes the ready state, the status and
    /// the `open` generation it leaves.
    func withCore<Result>(_ body: (inout Core) throws -> Result) rethrows -> Result {
        try lockedCore.withLock { core in
            defer {
                published.publish(state: core.machine.state, status: core.response?.status ?? 0, generation: core.generation,
                                  hasReceived: core.unreadCount > 0, reportDiscards: core.reports.discards)
            }
            return try body(&core)
        }
    }

    private func refuse(_ code: HttpRequestError.Code, _ message: String) -> Bool {
        withCore { $0.lastError = HttpRequestError(code, message) }
        return false
    }

    private func changeSwitches(_ change: (inout TransferSwitches) -> Void) -> Bool {
        withCore { core in
            if case .reject(let rejection) = core.machine.configureSwitch() {
                core.lastError = HttpRequestError(rejection)
                return false
            }
            change(&core.switches)
            core.lastError = nil
            return true
        }
    }

    @discardableResult
    private func changeMessage(_ call: RequestStateMachine.Call, _ change: (inout RequestMessage) -> Void) -> Bool {
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
