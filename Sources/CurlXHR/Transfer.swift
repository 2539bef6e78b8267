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

/// The switches that apply to the next send. They belong to the request object and survive
/// `open`, as in GDHttpRequest.
struct TransferSwitches: Sendable, Equatable {
    var verifyPeer = true
    var verifyHost = true
    var followLocation = true
    var cookies = true
    /// The HTTP proxy to go through, or nil to go direct.
    var proxy: ProxySetting?
    /// Trusted CAs for this request only (`setCACertificateFile`).
    var caFile: String?
    /// Set by `close()`: the next transfer opens a new connection and a full TLS handshake.
    var freshConnection = false
}

/// One send of one request: everything libcurl needs, and what comes back, until DONE.
///
/// Prepared by `HttpRequest.send…`, then owned by the engine thread, which alone touches
/// the easy handle and the engine-side fields below. libcurl's callbacks only record: the
/// header callback (in C) copies lines until a head is complete, which is then read once;
/// bytes and heads go to the request.
///
/// A request keeps its last transfer and prepares it again for its next send, once the
/// engine is done with it (``isComplete``) and nothing else refers to it: no allocation a
/// send.
final class Transfer: @unchecked Sendable {
    /// Counts the sends the transfer carried (``prepare(message:body:switches:timeout:pipelining:fileDescriptor:fileSize:)``):
    /// an abort names the one it stops.
    @exclusivity(unchecked) private(set) var sends = 0

    /// The request the transfer belongs to, for its whole life. Not a counted reference: the
    /// request keeps its finished transfer for the next send, and a counted one back would
    /// make a cycle. While the transfer is in flight, `requestInFlight` holds the request.
    private let owner: Unmanaged<HttpRequest>

    /// Calls into the request without taking a reference to it: only while the transfer is in
    /// flight (``requestInFlight`` holds it), as for every head, body chunk and end.
    func withRequest<Result>(_ body: (HttpRequest) -> Result) -> Result {
        owner._withUnsafeGuaranteedRef(body)
    }
    /// The request, from ``prepare(message:body:switches:timeout:pipelining:fileDescriptor:fileSize:)``
    /// until ``complete()``, so a request the application let go still gets its transfer's end.
    @exclusivity(unchecked) private var requestInFlight: HttpRequest?

    // Set by `prepare`, before the transfer goes to the engine (which a lock orders after
    // it); no run-time exclusivity checks on these either.
    @exclusivity(unchecked) private(set) var message = RequestMessage()
    @exclusivity(unchecked) private(set) var body = RequestBody.none
    @exclusivity(unchecked) private(set) var switches = TransferSwitches()
    @exclusivity(unchecked) private(set) var timeout = 0.0
    @exclusivity(unchecked) private(set) var pipelining = true
    /// An open descriptor of the file `sendWithFile` streams, or -1.
    @exclusivity(unchecked) private(set) var fileDescriptor: Int32 = -1
    @exclusivity(unchecked) private(set) var fileSize: Int64 = 0
    /// The engine is done with the transfer, whatever the reason: a synchronous send waits
    /// for it, and the request may prepare the transfer again.
    let isComplete = Atomic<Bool>(false)

    // Engine thread only: one thread touches these, so Swift's run-time exclusivity checks
    // (on every header line and body chunk) are left out.
    @exclusivity(unchecked) var handle: EasyHandle?
    /// The send (``sends``) an abort stopped before its start command reached the engine.
    @exclusivity(unchecked) var cancelledSend = 0
    @exclusivity(unchecked) var isAdded = false
    @exclusivity(unchecked) var isFinished = false
    @exclusivity(unchecked) private var progress = Progress()

    /// What the engine learns of a send as it goes.
    private struct Progress {
        /// How far libcurl has read an in-memory body it streams (`BodyShape.streamed`).
        var bodyOffset = 0
        /// A head that may be an intermediate one (redirect, auth round): reported only when
        /// its body starts or the transfer ends.
        var pendingHead: ResponseHead?
        /// A complete response head arrived (final or not).
        var sawHead = false
        /// The status of the last head other than an interim (1xx) one; 0 before any.
        var lastStatus = 0
        /// A 401 or 407 head arrived: libcurl may keep authentication state in the handle.
        var sawChallenge = false
        /// Body bytes the request took so far.
        var bodyBytesTaken = 0
        /// The last head is a redirect the transfer follows: its body is dropped.
        var followsRedirect = false
        /// Redirects followed so far.
        var redirectCount = 0
        /// Where the redirects led, and the method and body the request has there (nil: as
        /// `open` gave them).
        var hopURL: String?
        var hopMethod: String?
        var hopDropsBody = false
        /// The current hop's header list lacks fields of the request's own (``RedirectStep/sends(_:)``),
        /// and it goes to another origin than `open`'s (without credentials).
        var hopListReduced = false
        var hopCrossOrigin = false
        /// Microseconds the hops before the current one took.
        var hopOffset: Int64 = 0
        /// The protocol of the last head.
        var httpVersion: String?
        /// The connection of the last hop, and those of the hops before it (redirects).
        var lastConnection: ConnectionID?
        var hopConnections: [ConnectionID] = []
    }

    /// Notes the connection a hop ran on (nil: it never connected). Engine thread.
    func usedConnection(_ connection: ConnectionID?) {
        guard let connection, connection != progress.lastConnection else { return }
        if let last = progress.lastConnection { progress.hopConnections.append(last) }
        progress.lastConnection = connection
    }

    /// The connections the send ran on. Engine thread.
    func forEachConnectionUsed(_ body: (ConnectionID) -> Void) {
        progress.hopConnections.forEach(body)
        if let last = progress.lastConnection { body(last) }
    }

    init(request: HttpRequest) {
        owner = Unmanaged.passUnretained(request)
    }

    deinit {
        closeFile()
    }

    /// Readies the transfer for a send (a new one, or one the engine completed and nothing
    /// else refers to). The request's thread, under its lock, before the engine sees it.
    func prepare(message: RequestMessage, body: RequestBody, switches: TransferSwitches, timeout: Double,
                 pipelining: Bool, fileDescriptor: Int32 = -1, fileSize: Int64 = 0) {
        closeFile()
        sends += 1
        requestInFlight = owner.takeUnretainedValue()
        self.message = message
        self.body = body
        self.switches = switches
        self.timeout = timeout
        self.pipelining = pipelining
        self.fileDescriptor = fileDescriptor
        self.fileSize = fileSize
        handle = nil
        isAdded = false
        isFinished = false
        progress = Progress()
        isComplete.store(false, ordering: .relaxed)
    }

    private func closeFile() {
        if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
        fileDescriptor = -1
    }

    // MARK: Configuring the easy handle

    /// Bodies up to this size are copied into libcurl (sent with the request head, as
    /// libcurl does below 64 KiB); larger ones are streamed from the caller's bytes.
    static let copiedBodyLimit = 64 * 1024

    /// The options this transfer needs besides the per-transfer ones, with the process-wide
    /// `settings` as the engine last read them (again after every change).
    func profile(_ settings: ProcessSettings) -> EasyProfile.Fields {
        let negotiate = message.usesNegotiate
        return EasyProfile.Fields(
            body: bodyShape,
            timeoutMilliseconds: timeoutMilliseconds,
            pipelining: pipelining,
            environmentProxy: switches.proxy == nil && settings.environmentProxy,
            negotiate: negotiate, delegation: negotiate && settings.allowDelegation,
            method: message.method, headers: message.headers, contentType: contentType,
            caFile: switches.caFile ?? settings.caFile, switches: switches,
            credentials: negotiate ? nil : message.credentials)
    }

    /// Whether `profile`'s fields are what ``profile(_:)`` would build, compared field by
    /// field in place, without building or copying them (the engine checks its recent
    /// profiles for every transfer).
    func matches(_ profile: EasyProfile, _ settings: ProcessSettings) -> Bool {
        let negotiate = message.usesNegotiate
        guard profile.fields.body == bodyShape
            && profile.fields.timeoutMilliseconds == timeoutMilliseconds
            && profile.fields.pipelining == pipelining
            && profile.fields.environmentProxy == (switches.proxy == nil && settings.environmentProxy)
            && profile.fields.negotiate == negotiate && profile.fields.delegation == (negotiate && settings.allowDelegation)
            && profile.fields.method == message.method
            && profile.fields.headers == message.headers
            && profile.fields.contentType == contentType
            && profile.fields.switches == switches
        else { return false }
        let caFileMatches = if let own = switches.caFile { profile.fields.caFile == own } else { profile.fields.caFile == settings.caFile }
        guard caFileMatches else { return false }
        return negotiate ? profile.fields.credentials == nil : profile.fields.credentials == message.credentials
    }

    private var bodyShape: BodyShape {
        switch body {
        case .none:
            Self.sendsEmptyBody(message.method) ? .empty : .none
        case .bytes(let bytes, _):
            bytes.isEmpty ? .empty : bytes.count <= Self.copiedBodyLimit ? .copied : .streamed
        case .file:
            .file
        }
    }

    /// POST, PUT and PATCH send an empty body when given none; other methods send no body.
    /// (Every transfer asks: the first byte rules out most methods without a string compare.)
    private static func sendsEmptyBody(_ method: String) -> Bool {
        guard method.utf8.first == UInt8(ascii: "P") else { return false }
        return method == "POST" || method == "PUT" || method == "PATCH"
    }

    /// The `Content-Type` the request's headers lack: a type, "" for none (rather than
    /// libcurl's default for a POST), or nil to leave it to libcurl (which sends none without
    /// a body, so a GET has no header list to build or search).
    private var contentType: String? {
        let wanted: String? = switch body {
        case .bytes(_, let type?): type
        case .bytes(_, nil): ""  // no libcurl default
        case .none: Self.sendsEmptyBody(message.method) ? "" : nil
        case .file: nil
        }
        // The headers are searched only when there is a type to add.
        guard wanted != nil, !message.hasHeader("Content-Type") else { return nil }
        return wanted
    }

    private var timeoutMilliseconds: Int {
        timeout > 0 ? Int(min(timeout * 1000, Double(Int32.max)).rounded(.up)) : 0
    }

    /// Makes `handle` carry this transfer's options: all of them after a reset when the
    /// handle was set up for a different profile, else only the per-transfer ones.
    /// Returns the first failure as text.
    func configure(_ handle: EasyHandle, profile: EasyProfile, share: UnsafeMutableRawPointer) -> String? {
        var options = EasyOptions(handle.easy)
        // The engine gave a handle set up for an equal profile this very object.
        if handle.profile !== profile {
            handle.reset()
            profile.fields.apply(to: &options, handle: handle, share: share)
            if options.failure != nil { return options.failure }
            handle.profile = profile
        }
        handle.errorBuffer[0] = 0
        handle.headParser.reset()
        handle.transfer = Unmanaged.passUnretained(self)
        if handle.url != message.url {
            // libcurl starts every transfer from the URL set (not where a redirect led).
            options.set(CURLOPT_URL, message.url)
            handle.url = message.url
        }
        switch profile.fields.body {
        case .none:
            break
        case .empty:
            options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            options.set(CURLOPT_COPYPOSTFIELDS, "")
        case .copied:
            guard case .bytes(let bytes, _) = body else { break }
            options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(bytes.count))
            bytes.withUnsafeBytes {
                // libcurl copies the bytes before this returns.
                options.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: $0.baseAddress))
            }
        case .streamed, .file:
            let size = if case .bytes(let bytes, _) = body { Int64(bytes.count) } else { fileSize }
            options.set(profile.fields.body == .file ? CURLOPT_INFILESIZE_LARGE : CURLOPT_POSTFIELDSIZE_LARGE, offset: size)
        }
        if options.failure != nil {
            handle.profile = nil  // set up again from a reset, URL included
        }
        return options.failure
    }

    /// Whether SPNEGO may run for the proxy before any head reaches the header callback (its
    /// 407 to `CONNECT` never does), so GSS-API needs its cache chosen before the transfer.
    var proxyUsesNegotiate: Bool {
        switches.proxy?.credentials?.scheme == .negotiate
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        message.ticketCredentials ?? switches.proxy?.ticketCredentials
    }

    // MARK: What libcurl reports

    /// How a finished transfer ended: a failure, or nil and the status when the response is
    /// the outcome (including a proxy refusing the `CONNECT` tunnel, which libcurl reports as
    /// a receive error).
    func outcome(_ code: CURLcode, easy: UnsafeMutableRawPointer) -> (failure: TransferFailure?, status: Int) {
        var status = 0
        if code == CURLE_OK {
            if handle?.headParser.hasUnfinishedBlock == true {
                // libcurl 7.88 ends a response cut off within its head without an error.
                return (TransferFailure(kind: .response, text: "The response ended inside its head: the connection closed before the empty line that ends the header fields"), 0)
            }
            if progress.lastStatus != 0 { return (nil, progress.lastStatus) }
            _ = cxhr_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return (nil, status)
        }
        if switches.proxy != nil, !progress.sawHead {
            _ = cxhr_easy_get_long(easy, CURLINFO_HTTP_CONNECTCODE, &status)
            if status >= 300 { return (nil, status) }
        }
        return (failure(code), 0)
    }

    /// A failed transfer's kind and text: libcurl's detailed message, TLS failures starting
    /// with "SSL", failures to reach the proxy naming it.
    func failure(_ code: CURLcode) -> TransferFailure {
        let errorBuffer = handle?.errorBuffer
        let detail = if let errorBuffer, errorBuffer[0] != 0 { String(cString: errorBuffer) } else { String(cString: curl_easy_strerror(code)) }
        if let proxy = switches.proxy, Transfer.proxyFailures.contains(code.rawValue), !progress.sawHead {
            return TransferFailure(kind: .proxy, text: "Proxy \(proxy.name) failed: \(detail)")
        }
        if Transfer.tlsFailures.contains(code.rawValue) {
            return TransferFailure(kind: .tls, text: detail.hasPrefix("SSL") ? detail : "SSL error: \(detail)")
        }
        switch code {
        case CURLE_OUT_OF_MEMORY where (errorBuffer?[0] ?? 0) == 0 && !progress.sawHead:
            // libcurl reports a header beyond its 100 KiB limit as out of memory, silently.
            return TransferFailure(kind: .response, text: "Response header too large (libcurl accepts up to 100 KiB) or out of memory")
        case CURLE_COULDNT_RESOLVE_HOST: return TransferFailure(kind: .dns, text: detail)
        case CURLE_OPERATION_TIMEDOUT: return TransferFailure(kind: .timeout, text: detail)
        case CURLE_TOO_MANY_REDIRECTS: return TransferFailure(kind: .redirects, text: detail)
        case CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            return TransferFailure(kind: .connection, text: detail)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_UNSUPPORTED_PROTOCOL:
            return TransferFailure(kind: .response, text: detail)
        default:
            return TransferFailure(kind: .other, text: detail)
        }
    }

    private static let tlsFailures: Set<UInt32> = [
        CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
        CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION,
        CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
        CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
        CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// Failures that, before any response head, are the proxy's (libcurl connects only to it).
    private static let proxyFailures: Set<UInt32> = [
        CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PROXY, CURLE_RECV_ERROR,
        CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// Marks the transfer complete; returns the bit to wake (``Wakeups/wake(_:)``) for the
    /// synchronous send that may wait for it, or 0 for an asynchronous one. The last touch of
    /// whoever ends the transfer (the engine; the request when the engine never had it): from
    /// here on the request may prepare the transfer again, once no one else refers to it.
    func complete() -> UInt32 {
        let bit = message.isAsync ? 0 : withRequest { $0.completionBit }
        // A kept transfer holds neither the caller's body nor an open file until its next send.
        body = .none
        closeFile()
        let request = requestInFlight.take()  // released after the flag is set
        TransferEngine.transfersInFlight.subtract(1, ordering: .relaxed)
        isComplete.store(true, ordering: .releasing)
        _ = consume request
        return bit
    }

    /// Whether the transfer met an authentication challenge, whose state libcurl keeps in
    /// the handle. A proxy's 407 to `CONNECT` never reaches the header callback
    /// (`CURLOPT_SUPPRESS_CONNECT_HEADERS`), so through a proxy libcurl is asked.
    var heardChallenge: Bool {
        progress.sawChallenge || (switches.proxy != nil && handle?.heardChallenge == true)
    }

    /// Whether a head may be followed by another one within this transfer (an
    /// authentication round libcurl may answer).
    private func mayBeIntermediate(_ head: RecordedHead) -> Bool {
        switch head.status {
        case 401: message.credentials != nil || message.usesNegotiate
        case 407: switches.proxy?.credentials != nil
        default: false
        }
    }

    /// A head (or a block that is none) ended; `head` is what the parser made of it.
    private func headEnded(_ head: RecordedHead?) {
        guard let head else { return }
        progress.sawHead = true
        switch head.status {
        case 100..<200 where head.status != 101:
            return  // 100-continue and other interim responses
        default:
            progress.lastStatus = head.status
            progress.httpVersion = head.httpVersion
            if head.status == 401 || head.status == 407 { progress.sawChallenge = true }
            progress.followsRedirect = switches.followLocation && RedirectStep.isRedirect(head.status) && head.hasField("Location")
            if progress.followsRedirect || mayBeIntermediate(head) {
                // An authentication round or a redirect: reported only if it turns out final.
                progress.pendingHead = ResponseHead(head)
            } else {
                progress.pendingHead = nil
                withRequest { $0.transferReceivedHead(self, head) }
            }
        }
    }

    private func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> HttpRequest.BodyDisposition {
        if progress.followsRedirect { return .accepted }  // a redirect's body: dropped
        flushPendingHead()
        let disposition = withRequest { $0.transferReceivedBody(self, bytes) }
        if disposition == .accepted { progress.bodyBytesTaken += bytes.count }
        return disposition
    }

    /// How many body bytes the response still announces after `chunk` more (its
    /// `Content-Length` less what came); nil when it announces no length. Engine thread only.
    func bodyBytesToCome(after chunk: Int) -> Int? {
        var length: curl_off_t = -1
        guard let easy = handle?.easy, cxhr_easy_get_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK,
              length >= 0 else { return nil }
        return max(0, Int(length) - progress.bodyBytesTaken - chunk)
    }

    /// Reports a head held back as possibly intermediate: it turned out to be the final one.
    func flushPendingHead() {
        if let head = progress.pendingHead {
            progress.pendingHead = nil
            head.withRecorded { recorded in withRequest { $0.transferReceivedHead(self, recorded) } }
        }
    }

    // MARK: Redirects

    /// How a transfer that libcurl finished goes on.
    enum Next {
        /// Its response is the final one.
        case end
        /// The handle is set up for the next hop of a redirect: add it to libcurl again.
        case follow
        case fail(TransferFailure)
    }

    /// After libcurl finished a hop without error: whether a redirect is to be followed, and
    /// if so the handle set up for it (``RedirectStep``). Engine thread, handle out of libcurl.
    func next(_ handle: EasyHandle) -> Next {
        guard progress.followsRedirect else { return .end }
        var target: UnsafePointer<CChar>?
        // libcurl resolves the Location against the URL even when it does not follow it.
        guard cxhr_easy_get_string(handle.easy, CURLINFO_REDIRECT_URL, &target) == CURLE_OK, let target else {
            progress.followsRedirect = false
            return .end
        }
        guard progress.redirectCount < RedirectStep.maxRedirects else {
            return .fail(TransferFailure(kind: .redirects, text: "Maximum (\(RedirectStep.maxRedirects)) redirects followed"))
        }
        let url = String(cString: target)
        usedConnection(ConnectionID(handle.easy))
        let method = progress.hopMethod ?? sentMethod
        let step = RedirectStep(status: progress.lastStatus, method: method, crossOrigin: !RedirectStep.sameOrigin(url, message.url))
        var hopTime: curl_off_t = 0
        _ = cxhr_easy_get_offset(handle.easy, CURLINFO_TOTAL_TIME_T, &hopTime)
        progress.hopOffset += Int64(hopTime)
        progress.redirectCount += 1
        progress.hopURL = url
        progress.hopMethod = step.method
        progress.followsRedirect = false
        progress.pendingHead = nil
        progress.lastStatus = 0
        progress.bodyBytesTaken = 0
        if let failure = configureHop(handle, url: url, step: step, methodChanged: step.method != method) {
            return .fail(TransferFailure(kind: .other, text: failure))
        }
        return .follow
    }

    /// The method that goes out: a file goes with PUT unless `open` was given another method.
    private var sentMethod: String {
        if case .file = body, Self.sendsFileWithPut(message.method) { return "PUT" }
        return message.method
    }

    /// `sendWithFile` turns these methods into PUT; any other goes out as given.
    static func sendsFileWithPut(_ method: String) -> Bool {
        ["GET", "HEAD", "POST", "PUT"].contains(method)
    }

    /// `User-Agent` unless the request sets one: `CurlXHR/<version> libcurl/<version>`.
    static let defaultUserAgent = "CurlXHR/\(CurlXHRVersion.string) "
        + String(cString: curl_version()).prefix { $0 != " " }  // "libcurl/7.88.1", the first of its components
    static let defaultUserAgentLine = "User-Agent: " + defaultUserAgent

    /// Sets the handle up for the next hop: the URL, the method and body, the header fields
    /// and the credentials that go there, changing only what the hop changes (a redirect to
    /// the same origin with the same method sets the URL alone). A handle whose options
    /// changed beyond the URL is set up afresh for its next transfer.
    private func configureHop(_ handle: EasyHandle, url: String, step: RedirectStep, methodChanged: Bool) -> String? {
        var options = EasyOptions(handle.easy)
        options.set(CURLOPT_URL, url)
        handle.url = url
        if methodChanged {
            // To GET, without the body (HEAD never changes).
            handle.profile = nil
            progress.hopDropsBody = true
            options.set(CURLOPT_CUSTOMREQUEST, nil)
            options.set(CURLOPT_HTTPGET, 1)
        } else if !progress.hopDropsBody {
            // The same body again, from its start.
            progress.bodyOffset = 0
            if fileDescriptor >= 0, lseek(fileDescriptor, 0, SEEK_SET) < 0 { return "cannot rewind the file to send it again" }
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

    /// What the send measured, once libcurl finished its last hop. Engine thread.
    func record(_ easy: UnsafeMutableRawPointer) -> SendRecord {
        var connect: curl_off_t = 0, start: curl_off_t = 0, total: curl_off_t = 0
        _ = cxhr_easy_get_offset(easy, CURLINFO_CONNECT_TIME_T, &connect)
        _ = cxhr_easy_get_offset(easy, CURLINFO_STARTTRANSFER_TIME_T, &start)
        _ = cxhr_easy_get_offset(easy, CURLINFO_TOTAL_TIME_T, &total)
        let offset = progress.hopOffset
        return SendRecord(ended: true, httpVersion: progress.httpVersion, redirectedURL: progress.hopURL,
                          redirectCount: progress.redirectCount, connectMicroseconds: offset + Int64(connect),
                          startTransferMicroseconds: offset + Int64(start), totalMicroseconds: offset + Int64(total))
    }

    /// Runs `body` with the easy handle a libcurl callback's context points to and its
    /// transfer. The engine holds both for as long as libcurl has the transfer, so no
    /// reference is taken here (this runs for every header line and body chunk).
    private static func with<Result>(_ context: UnsafeMutableRawPointer?, _ body: (Transfer, EasyHandle) -> Result) -> Result {
        Unmanaged<EasyHandle>.fromOpaque(context!)._withUnsafeGuaranteedRef { handle in
            handle.transfer!._withUnsafeGuaranteedRef { body($0, handle) }
        }
    }

    static let writeCallback: curl_write_callback = { data, size, count, context in
        let length = size * count
        guard length > 0, let data else { return length }
        switch with(context, { transfer, _ in transfer.bodyBytes(UnsafeRawBufferPointer(start: data, count: length)) }) {
        case .accepted: return length
        case .paused: return cxhr_write_pause  // libcurl hands the same bytes again on resume
        case .refused: return 0
        }
    }

    /// Called by the header callback (`cxhr_head_callback`) when a block of header lines
    /// ended, with the easy handle as context.
    static let headEndedCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
        with(context) { transfer, handle in transfer.headEnded(handle.headParser.finishHead()) }
        return 1
    }

    /// Called by the header callback when a 401 or 407 status line arrives, before libcurl
    /// reads the challenge: a request that may answer Negotiate has GSS-API pointed at the
    /// credential cache now. (Only then: a request that meets no challenge never touches
    /// GSS-API, whose state a program's exit tears down while the engine runs.)
    static let challengedCallback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
        with(context) { transfer, _ in
            if transfer.message.usesNegotiate { TransferEngine.shared.selectCredentialCacheForChallenge() }
        }
    }

    /// Hands libcurl the next bytes of the body it uploads: from the file, or from memory.
    private func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard case .bytes(let bytes, _) = body else {
            while true {
                let got = Glibc.read(fileDescriptor, buffer, capacity)
                if got >= 0 { return got }
                if errno != EINTR { return cxhr_read_abort }
            }
        }
        let count = min(capacity, bytes.count - progress.bodyOffset)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + progress.bodyOffset, byteCount: count)
        }
        progress.bodyOffset += count
        return count
    }

    /// Moves the upload back (libcurl rewinds for a redirect or an authentication round).
    private func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard case .bytes(let bytes, _) = body else {
            return lseek(fileDescriptor, off_t(offset), origin) < 0 ? cxhr_seek_fail : 0
        }
        guard origin == SEEK_SET, (0...Int64(bytes.count)).contains(offset) else { return cxhr_seek_fail }
        progress.bodyOffset = Int(offset)
        return 0
    }

    static let readCallback: curl_read_callback = { buffer, size, count, context in
        with(context) { transfer, _ in transfer.readBody(into: buffer!, capacity: size * count) }
    }

    static let seekCallback: curl_seek_callback = { context, offset, origin in
        with(context) { transfer, _ in transfer.seekBody(to: Int64(offset), origin: origin) }
    }

    static let progressCallback: curl_xferinfo_callback = { context, _, _, _, uploaded in
        with(context) { transfer, _ in transfer.withRequest { $0.transferSent(transfer, bytes: Int64(uploaded)) } }
        return 0
    }
}

/// The process-wide settings that shape transfers. The engine reads them again only after a
/// change (`changed()`, called by every setter), not for every transfer. A class, so that
/// each transfer takes them as one reference.
final class ProcessSettings {
    /// Trusted CAs for requests that set none (`HttpRequest.caCertificateFile` or the
    /// environment), or nil for the system store.
    let caFile: String?
    /// Requests without a proxy of their own may use the proxy environment variables.
    let environmentProxy: Bool
    /// Kerberos tickets may be delegated to the server.
    let allowDelegation: Bool
    /// The credential cache GSS-API should use ("" for the user's default one). Looked up
    /// (through libkrb5) only when a transfer needs it: a program that meets no Negotiate
    /// challenge never loads Kerberos state, which its exit would tear down under the engine.
    private(set) lazy var credentialCache: String = KerberosCredentials.activeCacheFile ?? ""

    /// Counts changes to the settings.
    static let version = Atomic<Int>(0)

    /// Marks the settings changed; call after the change is stored.
    static func changed() {
        version.add(1, ordering: .releasing)
    }

    /// The settings as they are now.
    convenience init() {
        self.init(caFile: TrustedCertificates.processWideFile, environmentProxy: ProxyEnvironment.enabled.withLock { $0 },
                  allowDelegation: KerberosCredentials.allowDelegation)
    }

    init(caFile: String?, environmentProxy: Bool, allowDelegation: Bool, credentialCache: String? = nil) {
        self.caFile = caFile
        self.environmentProxy = environmentProxy
        self.allowDelegation = allowDelegation
        if let credentialCache { self.credentialCache = credentialCache }
    }
}

/// How a request's body reaches libcurl.
enum BodyShape: Equatable {
    /// No body (GET, HEAD, DELETE, …).
    case none
    /// POST, PUT or PATCH without a body: an empty one, with `Content-Length: 0`.
    case empty
    /// Copied into libcurl, which sends it with the request head.
    case copied
    /// Read from memory as libcurl sends it (large bodies: no copy of the whole body).
    case streamed
    /// Read from a file as libcurl sends it (`sendWithFile`, an upload).
    case file

    /// Whether ``HttpRequest/getBytesSent()`` follows the upload.
    var countsProgress: Bool { self == .copied || self == .streamed || self == .file }
}

/// The options of an easy handle that are not per transfer. A handle set up for a profile
/// serves the next transfer with an equal profile after setting only the URL, the body and
/// the pointers to the transfer: the common case of one request shape sent again and again.
///
/// A class, so that handing it around and keeping it with a handle costs a reference, not a
/// copy of every field; the engine gives transfers with equal fields one object, so a handle
/// set up for them is recognised by identity.
final class EasyProfile {
    let fields: Fields

    init(_ fields: Fields) { self.fields = fields }

    /// Everything the options depend on; compared in this order, scalars first, where most
    /// differences show.
    struct Fields: Equatable {
        let body: BodyShape
        let timeoutMilliseconds: Int
        let pipelining: Bool
        /// libcurl may read the proxy environment variables (no proxy of the request's own).
        let environmentProxy: Bool
        /// libcurl may answer a Negotiate challenge with tickets from a credential cache.
        let negotiate: Bool
        let delegation: Bool
        let method: String
        /// The request's own header fields.
        let headers: [HeaderField]
        /// The `Content-Type` the request's headers lack: a type, "" for none (rather than
        /// libcurl's default for a POST), or nil to leave it to libcurl.
        let contentType: String?
        /// Trusted CAs replacing the system store, or nil for the system store.
        let caFile: String?
        let switches: TransferSwitches
        /// Server credentials other than Negotiate.
        let credentials: Credentials?
    }
}

extension EasyProfile.Fields {
    /// Sets every option of the profile on a handle just reset.
    func apply(to options: inout EasyOptions, handle: EasyHandle, share: UnsafeMutableRawPointer) {
        let easy = options.easy
        handle.isPristine = false
        options.set(share: share)
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(handle.errorBuffer))
        // Every callback, and the engine when a transfer is done, reaches the transfer through
        // the handle (`EasyHandle.transfer`), so these are set once, not for every transfer.
        let context = Unmanaged.passUnretained(handle).toOpaque()
        for option in [CURLOPT_PRIVATE, CURLOPT_WRITEDATA, CURLOPT_READDATA, CURLOPT_SEEKDATA, CURLOPT_XFERINFODATA] {
            options.set(option, pointer: context)
        }
        options.set(CURLOPT_HEADERDATA, pointer: UnsafeMutableRawPointer(handle.headParser.recorder))
        options.set(CURLOPT_NOSIGNAL, 1)
        options.set(CURLOPT_PROTOCOLS_STR, "http,https")
        options.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Redirects are followed by the engine (``RedirectStep``), not by libcurl.
        options.set(CURLOPT_FOLLOWLOCATION, 0)
        options.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        options.check(cxhr_easy_set_write_function(easy, Transfer.writeCallback))
        options.check(cxhr_easy_set_header_function(easy, cxhr_head_callback))
        options.check(cxhr_easy_set_socket_functions(easy, LibcurlSockets.openCallback, LibcurlSockets.closeCallback))
        if timeoutMilliseconds > 0 { options.set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds) }
        options.set(CURLOPT_SSL_VERIFYPEER, switches.verifyPeer ? 1 : 0)
        options.set(CURLOPT_SSL_VERIFYHOST, switches.verifyHost ? 2 : 0)
        if let caFile {
            // Replace the system store rather than add to it.
            options.set(CURLOPT_CAINFO, caFile)
            options.set(CURLOPT_CAPATH, nil)
        }
        applyMethodAndBody(&options)
        let contentTypeLine = contentType.map { $0.isEmpty ? "Content-Type:" : "Content-Type: \($0)" }
        handle.hopContentType = contentTypeLine
        // The default User-Agent goes in the header list, formatted once: set as
        // CURLOPT_USERAGENT, libcurl 7.88 formats it twice a request, a character at a time
        // (about 10,000 instructions).
        let ownUserAgent = headers.first { MessageValidation.sameFieldName($0.name.utf8, "User-Agent".utf8) }
        let userAgentLine = ownUserAgent == nil ? Transfer.defaultUserAgentLine : nil
        for line in headers.map(\.curlLine) + [contentTypeLine, userAgentLine].compactMap({ $0 }) {
            guard let list = curl_slist_append(handle.headerList, line) else {
                options.fail("out of memory building the header list")
                return
            }
            handle.headerList = list
        }
        options.set(CURLOPT_HTTPHEADER, slist: handle.headerList)
        if pipelining {
            options.set(CURLOPT_PIPEWAIT, 1)
        } else {
            options.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        }
        if switches.cookies {
            options.set(CURLOPT_COOKIEFILE, "")
        }
        if switches.freshConnection {
            // A new connection, no resumed TLS session, and the CA file read again rather
            // than taken from libcurl's cache of it.
            options.set(CURLOPT_FRESH_CONNECT, 1)
            options.set(CURLOPT_SSL_SESSIONID_CACHE, 0)
            options.set(CURLOPT_CA_CACHE_TIMEOUT, 0)
        }
        applyProxy(&options)
        if switches.proxy != nil {
            // For the proxy's CONNECT, which carries none of the request's own fields.
            options.set(CURLOPT_USERAGENT, ownUserAgent?.value ?? Transfer.defaultUserAgent)
        }
        if negotiate || credentials != nil { options.setServerAuthentication(negotiate: negotiate, credentials: credentials) }
        if negotiate { options.set(CURLOPT_GSSAPI_DELEGATION, delegation ? Int(cxhr_gssapi_delegation_flag) : 0) }
    }


    /// The buffer libcurl copies a body it reads through `Transfer.readCallback` into, and
    /// sends from (`CURLOPT_UPLOAD_BUFFERSIZE`; libcurl's default is 64 KiB). A 1 MiB body
    /// goes out in about 5 `send` calls instead of 17. Not larger: libcurl 7.88 allocates
    /// the buffer for every transfer and frees it at the end, and above 256 KiB (from 320 KiB
    /// in the benchmarks) glibc hands the freed memory back to the kernel often enough that
    /// the next transfer page-faults it in again.
    static let uploadBufferSize = 256 * 1024

    private func applyMethodAndBody(_ options: inout EasyOptions) {
        switch body {
        case .none:
            switch method {
            case "GET": options.set(CURLOPT_HTTPGET, 1)
            case "HEAD": options.set(CURLOPT_NOBODY, 1)
            default: options.set(CURLOPT_CUSTOMREQUEST, method)
            }
        case .empty, .copied:
            // The transfer sets the body (CURLOPT_COPYPOSTFIELDS, which makes it a POST).
            if method != "POST" { options.set(CURLOPT_CUSTOMREQUEST, method) }
        case .streamed:
            options.set(CURLOPT_POST, 1)
            if method != "POST" { options.set(CURLOPT_CUSTOMREQUEST, method) }
        case .file:
            options.set(CURLOPT_UPLOAD, 1)
            if !Transfer.sendsFileWithPut(method) {
                options.set(CURLOPT_CUSTOMREQUEST, method)
            }
        }
        if body == .streamed || body == .file {
            options.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize)
            options.check(cxhr_easy_set_read_function(options.easy, Transfer.readCallback))
            options.check(cxhr_easy_set_seek_function(options.easy, Transfer.seekCallback))
        }
        if body.countsProgress {
            // libcurl's progress callback, only for requests with a body.
            options.set(CURLOPT_NOPROGRESS, 0)
            options.check(cxhr_easy_set_xferinfo_function(options.easy, Transfer.progressCallback))
        }
    }

    private func applyProxy(_ options: inout EasyOptions) {
        guard let proxy = switches.proxy else {
            // "" stops libcurl from reading http_proxy and friends unless the application
            // opted in; the no-proxy list "" (which a direct transfer never consults) keeps it
            // from reading no_proxy and NO_PROXY for every transfer.
            if !environmentProxy {
                options.set(CURLOPT_PROXY, "")
                options.set(CURLOPT_NOPROXY, "")
            }
            return
        }
        options.set(CURLOPT_PROXY, proxy.url)
        // Go through this proxy whatever no_proxy says.
        options.set(CURLOPT_NOPROXY, "")
        if let credentials = proxy.credentials {
            options.set(CURLOPT_PROXYUSERNAME, credentials.user)
            options.set(CURLOPT_PROXYPASSWORD, credentials.password)
            options.set(CURLOPT_PROXYAUTH, Int(credentials.scheme.curlMask))
        }
    }
}

/// An easy handle the engine keeps between transfers, with what was last set on it. Engine
/// thread only.
final class EasyHandle {
    let easy: UnsafeMutableRawPointer
    /// The profile whose options the handle carries; nil when fresh, reset, or when it must
    /// be set up again (after a failure or an authentication round, whose state libcurl keeps
    /// in the handle).
    @exclusivity(unchecked) var profile: EasyProfile?
    /// It holds libcurl's defaults (but for the receive buffer size): new, or reset since its
    /// last transfer, so `reset()` has nothing to do.
    @exclusivity(unchecked) var isPristine = true
    /// The request headers of `profile`, owned here.
    @exclusivity(unchecked) var headerList: UnsafeMutablePointer<curl_slist>?
    /// The `Content-Type` line `profile` adds to the request's own fields, for a redirect's
    /// next hop that keeps the body.
    @exclusivity(unchecked) var hopContentType: String?
    /// Where the engine lists the handle while libcurl runs a transfer on it; -1 when not.
    @exclusivity(unchecked) var runningIndex = -1
    /// The URL last set (`CURLOPT_URL`), kept by libcurl until a reset.
    @exclusivity(unchecked) var url: String?
    /// The transfer the handle carries, from `Transfer.configure` until the engine ends it;
    /// libcurl's callbacks find it here. The engine holds the transfer meanwhile.
    @exclusivity(unchecked) var transfer: Unmanaged<Transfer>?
    /// libcurl's text for a failure of the current transfer (CURLOPT_ERRORBUFFER).
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Reads the response heads of the current transfer; its recorder is libcurl's header
    /// callback's context, and calls back with this handle.
    let headParser = ResponseHeadParser(headEnded: Transfer.headEndedCallback, challenged: Transfer.challengedCallback)

    init?() {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        errorBuffer[0] = 0
        headParser.recorder.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        setReceiveBufferSize()
    }

    /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`; its default is 16 KiB): fewer, larger
    /// reads on large responses. libcurl 7.88 allocates it, plus a byte, for every transfer and
    /// frees it at the end, so its size decides how the engine's heap behaves. At 256 KiB glibc
    /// handed the heap back to the kernel about every 15 requests at 16 in flight (every 8
    /// from 16 threads) and faulted it in again; at 120 KiB, half the runs faulted in about a
    /// page a request; at 64 KiB neither happens. A synchronous 100 MiB download reads about
    /// 12 % slower than in 256 KiB, and 15 % faster than in 16 KiB. Set on a new handle and
    /// after every reset, which returns it to the default.
    static let receiveBufferSize = 64 * 1024

    private func setReceiveBufferSize() {
        _ = cxhr_easy_set_long(easy, CURLOPT_BUFFERSIZE, Self.receiveBufferSize)
    }

    deinit {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Whether the handle carries `profile`'s options.
    func isSetUp(for profile: EasyProfile) -> Bool {
        guard let current = self.profile else { return false }
        return current === profile || current.fields == profile.fields
    }

    /// The last transfer met an authentication challenge (server or proxy), whose state
    /// libcurl keeps in the handle.
    var heardChallenge: Bool {
        var server = 0
        var proxy = 0
        _ = cxhr_easy_get_long(easy, CURLINFO_HTTPAUTH_AVAIL, &server)
        _ = cxhr_easy_get_long(easy, CURLINFO_PROXYAUTH_AVAIL, &proxy)
        return server != 0 || proxy != 0
    }

    /// Back to libcurl's defaults (a fresh handle needs nothing).
    func reset() {
        guard !isPristine else { return }
        // curl_easy_reset (libcurl 7.88) drops the list of cookie files without freeing it;
        // clearing it first frees it.
        _ = cxhr_easy_set_string(easy, CURLOPT_COOKIEFILE, nil)
        curl_easy_reset(easy)
        setReceiveBufferSize()
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        hopContentType = nil
        url = nil
        profile = nil
        isPristine = true
    }
}

/// Typed `curl_easy_setopt` calls that remember the first failure.
struct EasyOptions {
    let easy: UnsafeMutableRawPointer
    private(set) var failure: String?

    init(_ easy: UnsafeMutableRawPointer) { self.easy = easy }

    mutating func fail(_ text: String) {
        if failure == nil { failure = text }
    }

    /// `option` names what was refused; built only on failure (this runs for every option of
    /// every transfer).
    mutating func check(_ code: CURLcode, _ option: @autoclosure () -> String = "a callback") {
        if code != CURLE_OK {
            fail("libcurl refused \(option()): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    mutating func set(_ option: CURLoption, _ value: Int) {
        check(cxhr_easy_set_long(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, offset value: Int64) {
        check(cxhr_easy_set_offset(easy, option, curl_off_t(value)), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, _ value: String?) {
        // withCString hands over a native string's own bytes; an optional String converted
        // implicitly would be copied first.
        let code = if let value { value.withCString { cxhr_easy_set_string(easy, option, $0) } }
                   else { cxhr_easy_set_string(easy, option, nil) }
        check(code, "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        check(cxhr_easy_set_pointer(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, slist value: UnsafeMutablePointer<curl_slist>?) {
        check(cxhr_easy_set_slist(easy, option, value), "option \(option.rawValue)")
    }

    /// Server authentication: SPNEGO through GSS-API with the tickets in a credential cache
    /// (the engine picks which; an empty user name tells libcurl to use them), a user and
    /// password for their scheme, or none at all.
    mutating func setServerAuthentication(negotiate: Bool, credentials: Credentials?) {
        if negotiate {
            set(CURLOPT_USERNAME, "")
            set(CURLOPT_PASSWORD, "")
            set(CURLOPT_HTTPAUTH, Int(AuthScheme.negotiate.curlMask))
        } else if let credentials {
            set(CURLOPT_USERNAME, credentials.user)
            set(CURLOPT_PASSWORD, credentials.password)
            set(CURLOPT_HTTPAUTH, Int(credentials.scheme.curlMask))
        } else {
            set(CURLOPT_USERNAME, nil)
            set(CURLOPT_PASSWORD, nil)
            set(CURLOPT_HTTPAUTH, Int(cxhr_auth_none))
        }
    }

    mutating func set(share: UnsafeMutableRawPointer) {
        check(cxhr_easy_set_share(easy, share), "the share handle")
    }
}
