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
    public static let defaultCallbackQueue: DispatchQueue = {
        let queue = DispatchQueue(label: "CurlXHR.callbacks")
        queue.setSpecific(key: defaultQueueKey, value: ())
        return queue
    }()

    /// Marks ``defaultCallbackQueue``: `DispatchQueue.getSpecific(key:)` finds it on the
    /// thread running a block of that queue.
    static let defaultQueueKey = DispatchSpecificKey<Void>()

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
    /// Body bytes of the current or last send that went out (``getBytesSent()``), and how
    /// many it has (-1: not known yet, as for a multipart form before libcurl sizes it).
    let sentBytes = Atomic<Int64>(0)
    let bytesToSend = Atomic<Int64>(0)
    /// ``onProgress`` is set: transfers report their progress.
    let hasProgressReceiver = Atomic<Bool>(false)
    /// Counts replacements of the delegate or the closure (``replaceReceivers(_:)``).
    let receiverChanges = Atomic<UInt>(0)
    /// For tests only: run by `send` on its own thread after its locked step and before it
    /// posts the start command.
    nonisolated(unsafe) var startWindowHook: (() -> Void)?

    /// Runs the transfers: the libcurl engine, unless a test gave another.
    let runner: (any TransferRunner)?

    /// A request in UNSENT, with no delegate, callbacks on ``defaultCallbackQueue``, TLS
    /// verification on, redirects followed and cookies handled; call
    /// ``open(_:url:async:user:password:auth:)`` next.
    public init() {
        runner = nil
    }

    /// A request whose transfers `runner` runs instead of the libcurl engine (tests drive a
    /// request with no server through it).
    init(runner: any TransferRunner) {
        self.runner = runner
    }

    /// The engine this request's transfers run on.
    var engine: any TransferRunner { runner ?? TransferEngine.shared }

    // MARK: Callbacks

    /// Receives the ready-state changes in asynchronous mode. Held weakly.
    public var delegate: (any HttpRequestDelegate)? {
        get { withCore { $0.receivers.delegate } }
        set { replaceReceivers { ReportReceivers(delegate: newValue, closure: $0.closure, progress: $0.progress) } }
    }

    /// A closure called after the delegate for each ready-state change in asynchronous mode.
    public var onStatusChange: (@Sendable (HttpRequest) -> Void)? {
        get { withCore { $0.receivers.closure } }
        set { replaceReceivers { ReportReceivers(delegate: $0.delegate, closure: newValue, progress: $0.progress) } }
    }

    /// Called on the ``callbackQueue`` as an asynchronous request's body goes out and comes
    /// in: read ``getProgress()`` inside it. Reports are coalesced as LOADING's are (one
    /// waiting or running takes the newer ones in), and the last one, just before DONE, sees
    /// the final counts. Not called for synchronous sends (poll ``getProgress()`` from another
    /// thread). Inside it ``getState()`` answers for the request as it is.
    public var onProgress: (@Sendable (HttpRequest) -> Void)? {
        get { withCore { $0.receivers.progress } }
        set {
            replaceReceivers { ReportReceivers(delegate: $0.delegate, closure: $0.closure, progress: newValue) }
            hasProgressReceiver.store(newValue != nil, ordering: .relaxed)
        }
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

    /// Lets requests share one HTTP/2 connection (multiplexing) where the server offers it:
    /// over TLS, through ALPN. Default `true`: requests to one origin sent together wait for
    /// the first connection to learn whether it speaks HTTP/2, and then all run on it (up to
    /// the 100 streams libcurl allows a connection). `false` keeps the request on HTTP/1.1, one
    /// request at a time on each connection. Plain `http` URLs always use HTTP/1.1: HTTP/2
    /// over cleartext with prior knowledge fails from the second request on in libcurl 7.88.
    /// libcurl reuses an idle HTTP/1.1 connection to the same server for any request, so a
    /// request with `true` may run on one that a request with `false` left open (`close()`
    /// that request to keep them apart). ``getMetrics()`` tells the protocol a response came
    /// over.
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
    ///   - auth: `"BASIC"` (or `nil`), `"DIGEST"`, `"NTLM"`, `"NEGOTIATE"` or `"ANY"` (the
    ///     strongest of NTLM, Digest and Basic the server offers, as curl's `--anyauth`),
    ///     case-insensitive.
    /// - Returns: `false` with ``lastError`` for a malformed method or URL, an unknown scheme,
    ///   the methods `CONNECT`, `TRACE` and `TRACK` (refused as XMLHttpRequest refuses them), a
    ///   URL with CR, LF, NUL or a backslash in its authority, or a user name or password with
    ///   CR, LF or NUL (which would split the request's head).
    @discardableResult
    public func open(_ method: String, url: String, async: Bool = false,
                     user: String? = nil, password: String? = nil, auth: String? = nil) -> Bool {
        guard let method = MessageValidation.normalizedMethod(method) else {
            return refuse(.invalidArgument, "'\(MessageValidation.escaped(method))' is not a valid HTTP method")
        }
        if let problem = MessageValidation.methodProblem(method) { return refuse(.invalidArgument, problem) }
        let credentials: Credentials?
        switch Credentials.parse(user: user, password: password, auth: auth) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success((_, let parsed)): credentials = parsed
        }
        let url = MessageValidation.percentEncodingNonASCII(url)
        // The URL of the previous open passed already: re-opening it reuses what libcurl's
        // parser made of it (a new request's message has the URL "", which never passes).
        // Else the URL is parsed outside the lock, and the lock taken again.
        var parsed: ParsedURL?
        while true {
            let opened = withCore { core -> (effects: Effects, generation: Int)? in
                guard let parsedURL = parsed ?? (!url.isEmpty && core.message.url == url ? core.message.parsedURL : nil)
                else { return nil }
                let effects = core.open(method: method, url: parsedURL, text: url, async: async, credentials: credentials)
                return (effects, core.scheduler.generation)
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
            case .success(let parsedURL): parsed = parsedURL
            }
        }
    }

    // MARK: Stopping

    /// Stops a request in SENT, HEADERS_RECEIVED or LOADING, or one OPENED and waiting in its
    /// ``queue``: when it returns the state is DONE, the status 0 and received data
    /// discarded; asynchronous requests get one DONE callback and none after it. Safe from any
    /// thread, including inside a callback.
    /// - Returns: `false`, changing nothing, in UNSENT, DONE and OPENED (not waiting).
    @discardableResult
    public func abort() -> Bool {
        let outcome = withCore { core -> Result<Effects, HttpRequestError> in
            var effects = Effects()
            let action = core.machine.abort()
            if case .reject(let rejection) = action {
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
            core.stopTransfer(reason: "Request aborted", leavesQueue: action == .leaveQueue, effects: &effects)
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
            switch core.machine.close() {
            case .dropConnections: break
            case .cancelTransferThenDropConnections: core.stopTransfer(reason: "Request closed", effects: &effects)
            case .leaveQueueThenDropConnections: core.stopTransfer(reason: "Request closed", leavesQueue: true, effects: &effects)
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


    // MARK: Internals

    /// Transfers prepared and not yet completed, in the whole process (the soak's check that
    /// none is left behind, in a process of its own).
    package static var transfersInFlight: Int { TransferEngine.transfersInFlight.load(ordering: .relaxed) }

    func perform(_ effects: Effects) {
        var forEngine = effects.closeConnections != nil
        switch effects.transferCommand {
        case .completeUnstarted(let unstarted)?:
            // Out of its queue: the synchronous send waiting for it returns, the slot is handed on.
            Wakeups.wake(unstarted.complete())
        case .start?, .cancel?: forEngine = true
        case nil: break
        }
        // Commands go to the concrete engine unless a test gave a runner: no existential, and
        // the engine is looked up only when there is a command for it.
        if forEngine {
            if let runner { command(effects, on: runner) } else { command(effects, on: TransferEngine.shared) }
        }
        guard let queue = effects.deliverOn else { return }
        if TransferEngine.isCurrentThread {
            // The engine hands callbacks to their queue with those of other requests when
            // its round ends: one hop per queue, not one per request and state.
            TransferEngine.shared.deliverLater(self, on: queue)
        } else {
            queue.async { self.deliverReports() }
        }
    }

    private func command<Runner: TransferRunner>(_ effects: Effects, on engine: Runner) {
        // The send number was set under the lock this decision was taken in, before it.
        var cancelled: Transfer?
        if case .cancel(let transfer)? = effects.transferCommand { cancelled = transfer }
        if let connections = effects.closeConnections {
            engine.close(cancelled.map { ($0, $0.sends) }, connections: connections)
        } else if let cancelled {
            engine.cancel(cancelled, send: cancelled.sends)
        }
        if case .start(let transfer)? = effects.transferCommand { engine.start(transfer) }
    }

    /// Runs `body` under the request's lock, and publishes the ready state, the status and
    /// the `open` generation it leaves.
    func withCore<Result>(_ body: (inout Core) throws -> Result) rethrows -> Result {
        try lockedCore.withLock { core in
            defer {
                published.publish(state: core.machine.state, status: core.response?.status ?? 0, generation: core.scheduler.generation,
                                  hasReceived: core.sink.unreadCount > 0, reportDiscards: core.scheduler.discards)
            }
            return try body(&core)
        }
    }

    func refuse(_ code: HttpRequestError.Code, _ message: String) -> Bool {
        withCore { $0.lastError = HttpRequestError(code, message) }
        return false
    }
}
