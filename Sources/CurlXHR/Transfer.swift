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
    @exclusivity(unchecked) var progress = Progress()

    /// What the engine learns of a send as it goes.
    struct Progress {
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
