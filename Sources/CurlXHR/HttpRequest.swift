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
    private let lockedCore = Locked(Core())
    /// What each locked section leaves, for ``getState()`` and ``getStatus()``.
    private let published = PublishedState()
    /// The callback running for this request (its state and `open` generation) and the thread
    /// it runs on, 0 between callbacks. Only that thread writes them, so it reads them without
    /// the lock, and no other thread finds its own identity in them.
    private let callbackThread = Atomic<UInt>(0)
    private let callbackState = Atomic<Int32>(0)
    private let callbackGeneration = Atomic<Int>(0)
    /// The bit this request's synchronous sends sleep with (``Wakeups``).
    let completionBit = Wakeups.newRequestBit()
    /// Body bytes of the current or last send that went out (``getBytesSent()``).
    private let sentBytes = Atomic<Int64>(0)
    /// Counts replacements of the delegate or the closure (``replaceReceivers(_:)``).
    private let receiverChanges = Atomic<UInt>(0)
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

    /// What a decision taken under the lock asks to be done outside it.
    struct Effects {
        var start: Transfer?
        var cancel: Transfer?
        /// From `close()`: the connections to close, after cancelling `cancel`.
        var closeConnections: [ConnectionID]?
        var deliverOn: DispatchQueue?
    }

    /// The request's mutable state, kept behind one lock.
    struct Core {
        var machine = RequestStateMachine()
        var receivers = ReportReceivers.none
        var callbackQueue = HttpRequest.defaultCallbackQueue
        var enablePipelining = true
        var lastError: HttpRequestError?
        var switches = TransferSwitches()
        var message = RequestMessage()
        var response: ResponseHead?
        /// The field-line buffer of the last response forgotten, for the next one to fill.
        var spareHeadStorage: [UInt8] = []
        var failure: TransferFailure?
        /// What the last send measured (``HttpRequest/getMetrics()``).
        var lastSend = SendRecord()
        /// The connections the last send that completed ran on (one a hop), for `close()`.
        /// Only the last send's: a connection is named by its ports, which a later connection
        /// may reuse once it is gone, so names are not kept long.
        var usedConnections: [ConnectionID] = []
        /// Body bytes since the last ``HttpRequest/getReceiveBuffer()`` (none while
        /// `receivedTaken`).
        var received = Data()
        /// `received` went to the caller of `getReceiveBuffer()` and stays only for its
        /// buffer: the next body bytes replace it, in place once the caller let go of it.
        var receivedTaken = false
        var transfer: Transfer?
        /// The last transfer, kept for the next send once the engine is done with it.
        var finishedTransfer: Transfer?
        /// States waiting to be reported on the callback queue, in order.
        var isDelivering = false
        /// A LOADING report is queued or running: newer data joins it.
        var loadingReported = false
        /// The transfer's body is paused until the running LOADING callback ends.
        var isPaused = false
        /// Counts `open` calls: reports carry the one they belong to.
        var generation = 0
        /// Reports not yet delivered, with the generation each belongs to.
        var reports = ReportQueue()

        static let staleFailure = TransferFailure(kind: .aborted, text: "Request aborted by open()")

        /// Opens with `message`: aborts what is in flight, forgets the last response.
        mutating func open(_ message: consuming RequestMessage, async: Bool) -> Effects {
            var effects = Effects()
            let action = machine.open()
            if action == .abortThenOpen {
                effects.cancel = stopTransfer(reason: "Request aborted by open()", effects: &effects)
            }
            generation += 1
            // A LOADING callback of an earlier open may not have been counted as ended yet.
            loadingReported = false
            self.message = message
            forgetResponse()
            failure = nil
            lastSend = SendRecord()
            forgetReceived()
            lastError = nil
            if async, action != .reopen { report(.opened, effects: &effects) }
            return effects
        }

        /// The body bytes since the last call, for `getReceiveBuffer()`.
        mutating func takeReceived() -> Data {
            guard !receivedTaken else { return Data() }
            defer { forgetReceived() }
            return received
        }

        /// Done with the bytes received so far (handed out, or dropped by `open` or an abort).
        /// A small buffer is kept, shared with any caller, for the next bytes to reuse (no
        /// allocation a response once the caller has let go of it; a buffer of their own when
        /// not); a large one is let go of, so an idle request holds no large buffer.
        mutating func forgetReceived() {
            if received.count < HttpRequest.keptBufferLimit {
                receivedTaken = true
            } else {
                received = Data()
                receivedTaken = false
            }
        }

        /// Bytes received and not yet handed out.
        var unreadCount: Int { receivedTaken ? 0 : received.count }

        /// Appends body bytes, first emptying a buffer `takeReceived()` handed out.
        mutating func appendReceived(_ bytes: UnsafeRawBufferPointer) {
            guard receivedTaken else {
                received.append(bytes.assumingMemoryBound(to: UInt8.self))
                return
            }
            receivedTaken = false
            // Written over: in place when the caller let go of the buffer, else in a copy
            // Data makes first. (Emptying it would make it an inline `Data` and drop the
            // buffer; so does a count under 15 bytes.)
            if received.count != bytes.count { received.count = bytes.count }
            received.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
        }

        /// Keeps `head` as the response (its lines copied into the buffer of the last one).
        mutating func keepResponse(_ head: RecordedHead) {
            forgetResponse()
            response = ResponseHead(head, reusing: &spareHeadStorage)
        }

        mutating func forgetResponse() {
            response?.giveUpStorage(to: &spareHeadStorage)
            response = nil
        }

        /// The last transfer, when it can be prepared for the next send: the engine completed
        /// it and nothing but this request refers to it (no command, no callback).
        mutating func reusableTransfer() -> Transfer? {
            guard isKnownUniquelyReferenced(&finishedTransfer), finishedTransfer?.isComplete.load(ordering: .acquiring) == true
            else { return nil }
            return finishedTransfer.take()
        }

        /// Forgets the transfer in flight (kept for reuse once the engine is done with it).
        mutating func forgetTransfer() {
            if let forgotten = transfer.take() { finishedTransfer = forgotten }
        }

        /// Forgets the transfer in flight after the machine moved to DONE by abort or close.
        mutating func stopTransfer(reason: String, effects: inout Effects) -> Transfer? {
            let stopped = transfer
            forgetTransfer()
            forgetResponse()
            failure = TransferFailure(kind: .aborted, text: reason)
            forgetReceived()
            isPaused = false
            if message.isAsync {
                reports.discard(generation: generation)
                loadingReported = false
                report(.done, effects: &effects)
            }
            return stopped
        }

        /// A LOADING callback of the `open` numbered `generation` returned; returns the transfer
        /// to resume, if its end unpauses it. (A later `open` started afresh.)
        mutating func endLoadingDelivery(generation: Int) -> Transfer? {
            guard generation == self.generation else { return nil }
            loadingReported = false
            guard isPaused else { return nil }
            isPaused = false
            return transfer
        }

        mutating func report(_ state: State, effects: inout Effects) {
            if state == .loading {
                guard !loadingReported else { return }
                loadingReported = true
            }
            reports.append(state, generation: generation)
            if !isDelivering {
                isDelivering = true
                effects.deliverOn = callbackQueue
            }
        }

        mutating func apply(_ action: RequestStateMachine.ReportAction) -> Effects {
            var effects = Effects()
            guard message.isAsync else { return effects }
            switch action {
            case .ignore:
                break
            case .report(let state):
                report(state, effects: &effects)
            case .reportHeadersThen(let state):
                report(.headersReceived, effects: &effects)
                report(state, effects: &effects)
            }
            return effects
        }
    }

    private func perform(_ effects: Effects) {
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

    /// Runs queued callbacks in order; hands the queue back after a run of them so one busy
    /// request does not hold a shared queue. The reports waiting are taken together under one
    /// lock and delivered without it, each only while no abort of their `open` discarded its
    /// reports since they were taken (then they are stale, and its DONE is taken next), and to
    /// the delegate and closure set last.
    func deliverReports() {
        var delivered = 0
        /// The generation of a LOADING callback that returned since the last locked step.
        var endedLoading: Int?
        var receivers: ReportReceivers?
        // Kept apart, so that calling it takes no reference each time.
        var closure: (@Sendable (HttpRequest) -> Void)?
        /// ``receiverChanges`` when `receivers` were taken; nil before.
        var receiversTaken: UInt?
        func use(_ taken: (receivers: ReportReceivers, changes: UInt)) {
            receivers = taken.receivers
            closure = taken.receivers.closure
            receiversTaken = taken.changes
        }
        while true {
            let step = withCore { core -> DeliveryStep in
                var step = DeliveryStep()
                if let endedLoading { step.resume = core.endLoadingDelivery(generation: endedLoading) }
                if core.reports.isEmpty {
                    core.isDelivering = false
                } else if delivered >= Self.callbacksPerRun {
                    step.handBackTo = core.callbackQueue
                } else {
                    step.batch = core.reports.take(upTo: Self.callbacksPerRun - delivered)
                    step.discards = core.reports.discards
                    // Taken again only when a setter replaced them (a callback may).
                    let changes = receiverChanges.load(ordering: .relaxed)
                    if changes != receiversTaken { step.receivers = (core.receivers, changes) }
                }
                return step
            }
            endedLoading = nil
            if let paused = step.resume { TransferEngine.shared.resume(paused) }
            if let queue = step.handBackTo {
                queue.async { self.deliverReports() }
                return
            }
            guard step.batch.count > 0 else { return }
            if let taken = step.receivers { use(taken) }
            for index in 0..<step.batch.count {
                guard published.reportDiscards == step.discards else { break }
                if receiverChanges.load(ordering: .acquiring) != receiversTaken {
                    // A callback of this batch replaced the delegate or the closure.
                    use(withCore { ($0.receivers, receiverChanges.load(ordering: .relaxed)) })
                }
                let state = step.batch[index]
                callbackState.store(state.rawValue, ordering: .relaxed)
                callbackGeneration.store(step.batch.generation, ordering: .relaxed)
                callbackThread.store(UInt(pthread_self()), ordering: .relaxed)
                receivers?.delegate?.onStatusChange(self)
                closure?(self)
                // Cleared before the next locked step: once that step ends the run, another
                // thread may start the next one and mark itself.
                callbackThread.store(0, ordering: .relaxed)
                delivered += 1
                if state == .loading { endedLoading = step.batch.generation }
            }
        }
    }

    /// Callbacks one run of ``deliverReports()`` makes at most before it hands the queue back.
    static let callbacksPerRun = 16

    /// What one locked step of ``deliverReports()`` found.
    private struct DeliveryStep {
        /// The transfer to resume now that the LOADING callback that paused it ended.
        var resume: Transfer?
        /// The reports to deliver next.
        var batch = ReportBatch()
        /// ``ReportQueue/discards`` when the batch was taken.
        var discards: UInt64 = 0
        /// The receivers and ``HttpRequest/receiverChanges`` with them, when a setter replaced
        /// them since the run took them last.
        var receivers: (receivers: ReportReceivers, changes: UInt)?
        /// The run made its share of callbacks: the rest go in a new run on this queue.
        var handBackTo: DispatchQueue?
    }

    /// A state to report, and the `open` it belongs to.
    typealias Report = (state: State, generation: Int)

    /// Reports of one `open` taken from the queue together, oldest first: up to eight states,
    /// four bits each.
    struct ReportBatch {
        static let capacity = 8
        private var states: UInt32 = 0
        private(set) var count = 0
        /// The `open` the reports belong to.
        private(set) var generation = 0

        init(generation: Int = 0) {
            self.generation = generation
        }

        subscript(index: Int) -> State {
            State(rawValue: Int32(truncatingIfNeeded: states >> UInt32(4 * index) & 0xF))!
        }

        mutating func append(_ state: State) {
            states |= UInt32(truncatingIfNeeded: state.rawValue) << UInt32(4 * count)
            count += 1
        }
    }

    /// Reports waiting for the callback queue, oldest first: `items[next..<count]`. Taken by
    /// index, so taking some moves none of the others; emptied by resetting the indices, so
    /// the slots are written over by the next reports.
    struct ReportQueue {
        private var items: [Report] = []
        private var next = 0
        private var count = 0
        /// How many times ``discard(generation:)`` dropped the reports of the `open` whose
        /// reports were taken last: those taken before it are stale.
        private(set) var discards: UInt64 = 0
        /// The `open` of the reports taken last.
        private var takenGeneration = -1

        var isEmpty: Bool { next == count }

        mutating func append(_ state: State, generation: Int) {
            if count < items.count {
                items[count] = (state, generation)
            } else {
                items.append((state, generation))
            }
            count += 1
        }

        /// Takes the oldest reports of one `open`, up to `limit` and as many as a batch holds.
        mutating func take(upTo limit: Int = ReportBatch.capacity) -> ReportBatch {
            guard next < count else { return ReportBatch() }
            var batch = ReportBatch(generation: items[next].generation)
            let most = min(limit, ReportBatch.capacity)
            while next < count, batch.count < most, items[next].generation == batch.generation {
                batch.append(items[next].state)
                next += 1
            }
            takenGeneration = batch.generation
            if next == count { rewind() }
            return batch
        }

        /// Drops the waiting reports of the `open` numbered `generation`, the latest (an abort:
        /// its DONE supersedes them). Those of earlier opens stay, to be delivered as stale
        /// callbacks; they come first, as the queue is in `open` order.
        mutating func discard(generation: Int) {
            while count > next, items[count - 1].generation == generation { count -= 1 }
            if next == count { rewind() }
            if takenGeneration == generation { discards &+= 1 }
        }

        private mutating func rewind() {
            next = 0
            count = 0
        }
    }

    /// Runs `body` under the request's lock, and publishes the ready state, the status and
    /// the `open` generation it leaves.
    private func withCore<Result>(_ body: (inout Core) throws -> Result) rethrows -> Result {
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

    // MARK: Events from the engine thread

    func transferReceivedHead(_ transfer: Transfer, _ head: RecordedHead) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.keepResponse(head)
            return core.apply(core.machine.headersReceived())
        }
        perform(effects)
    }

    /// What became of body bytes handed to the request.
    enum BodyDisposition {
        case accepted
        /// Not taken: the consumer is behind; libcurl keeps them until `resume`.
        case paused
        /// The transfer is no longer this request's (aborted): stop it.
        case refused
    }

    /// Undrained bytes beyond which an asynchronous transfer waits for its LOADING callback.
    static let pauseThreshold = 1 << 20

    /// A first chunk from libcurl at least this large starts a receive buffer sized for what
    /// is still to come (after smaller ones the body is small or arrives slowly, and `Data`
    /// grows as it needs). Well under a full read: the first read of a response also carries
    /// its head.
    static let sizingChunk = 4 * 1024

    /// Receive buffers under this size are kept from response to response; larger ones are
    /// let go of, so an idle request holds no large buffer.
    static let keptBufferLimit = 16 * 1024

    /// The most a receive buffer is sized for ahead of the bytes it holds.
    static let maxReservation = 64 << 20

    /// The capacity for an empty receive buffer that takes a chunk of `chunk` bytes, with
    /// `toCome` more announced (nil: unknown; read only for a chunk of `sizingChunk` or more);
    /// nil to let `Data` grow by itself. Growing a `Data` chunk by chunk copies what it holds
    /// at every growth, which cost more than the copy from libcurl itself on fast downloads.
    /// An asynchronous request holds at most what arrives until its LOADING callback drains
    /// the buffer (`pauseThreshold`); a synchronous one the whole body, as announced.
    static func receiveBufferCapacity(chunk: Int, toCome: @autoclosure () -> Int?, async: Bool) -> Int? {
        guard chunk >= sizingChunk else { return nil }
        var more = toCome() ?? pauseThreshold
        if async { more = min(more, pauseThreshold) }
        return chunk + min(more, maxReservation)
    }

    func transferReceivedBody(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        let outcome = withCore { core -> (BodyDisposition, Effects) in
            guard core.transfer === transfer else { return (.refused, Effects()) }
            // Backpressure: while a LOADING callback is pending or running and has not drained
            // the buffer, stop reading rather than buffer without bound. The end of that
            // callback resumes the transfer, so a consumer that only reads at DONE still
            // gets there.
            if core.message.isAsync, core.loadingReported, core.unreadCount >= Self.pauseThreshold {
                core.isPaused = true
                return (.paused, Effects())
            }
            if core.unreadCount == 0,
               let capacity = Self.receiveBufferCapacity(chunk: bytes.count, toCome: transfer.bodyBytesToCome(after: bytes.count),
                                                         async: core.message.isAsync) {
                core.received = Data(capacity: capacity)
            }
            core.appendReceived(bytes)
            return (.accepted, core.apply(core.machine.bodyReceived()))
        }
        perform(outcome.1)
        return outcome.0
    }

    func transferSent(_ transfer: Transfer, bytes: Int64) {
        sentBytes.store(bytes, ordering: .relaxed)
    }

    func transferFinished(_ transfer: Transfer, failure: TransferFailure?, fallbackStatus: Int = 0,
                          record: SendRecord = SendRecord()) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.forgetTransfer()
            core.lastSend = record
            core.usedConnections.removeAll(keepingCapacity: true)
            transfer.forEachConnectionUsed { core.usedConnections.append($0) }
            core.isPaused = false
            if let failure {
                core.forgetResponse()
                core.failure = failure
                return core.apply(core.machine.failed())
            }
            if core.response == nil {
                core.response = ResponseHead(status: fallbackStatus, reason: ReasonPhrase.standard(for: fallbackStatus))
            }
            return core.apply(core.machine.finished())
        }
        perform(effects)
    }
}

/// A request's ready state, status and `open` generation as its lock last left them, and
/// whether received bytes wait, for getters that read them without the lock: one word, so a
/// read sees them together. And how many times an abort discarded the reports waiting, for
/// callbacks taken before.
struct PublishedState: ~Copyable, Sendable {
    /// Bits 32–63: the generation (its low 32 bits); 24: bytes wait; 8–23: the status; 0–7:
    /// the state.
    private let word = Atomic<UInt64>(0)
    private let discards = Atomic<UInt64>(0)

    func publish(state: HttpRequest.State, status: Int, generation: Int, hasReceived: Bool, reportDiscards: UInt64) {
        let value = UInt64(UInt32(truncatingIfNeeded: generation)) << 32 | (hasReceived ? 1 << 24 : 0)
            | UInt64(UInt16(clamping: status)) << 8 | UInt64(UInt8(truncatingIfNeeded: state.rawValue))
        word.store(value, ordering: .releasing)
        discards.store(reportDiscards, ordering: .releasing)
    }

    func read() -> (state: HttpRequest.State, status: Int, generation: UInt32, hasReceived: Bool) {
        let value = word.load(ordering: .acquiring)
        return (HttpRequest.State(rawValue: Int32(value & 0xFF)) ?? .unsent, Int((value >> 8) & 0xFFFF),
                UInt32(truncatingIfNeeded: value >> 32), value & 1 << 24 != 0)
    }

    /// ``HttpRequest/ReportQueue/discards`` as the lock last left it.
    var reportDiscards: UInt64 { discards.load(ordering: .acquiring) }
}

/// The process-wide opt-in to the proxy environment variables.
enum ProxyEnvironment {
    static let enabled = Locked(false)
}

/// The process-wide choice of trusted CAs.
enum TrustedCertificates {
    static let configuredFile = Locked<String?>(nil)

    /// `HttpRequest.caCertificateFile`, else `CURL_CA_BUNDLE`, else `SSL_CERT_FILE` (in the curl
    /// tool's order; libcurl reads neither variable itself), else `nil` for the system store.
    static var processWideFile: String? {
        configuredFile.withLock { $0 } ?? environmentFile
    }

    /// The variables as they were at the first request: the environment is read once per
    /// process, not on every request.
    private static let environmentFile: String? = {
        for name in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            if let value = getenv(name), value.pointee != 0 { return String(cString: value) }
        }
        return nil
    }()
}

/// Opens a path that must name a regular file this process can read.
enum ReadableFile {
    struct Problem: Error {
        let message: String
    }

    static func open(_ path: String) -> Result<(descriptor: Int32, size: Int64), Problem> {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .failure(Problem(message: "cannot open '\(path)': \(String(cString: strerror(errno)))"))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            return .failure(Problem(message: "'\(path)' is not a regular file"))
        }
        return .success((descriptor, Int64(info.st_size)))
    }

    /// Why `path` cannot be read, or nil when it can.
    static func problem(_ path: String) -> String? {
        switch open(path) {
        case .failure(let problem):
            return problem.message
        case .success(let file):
            _ = Glibc.close(file.descriptor)
            return nil
        }
    }
}
