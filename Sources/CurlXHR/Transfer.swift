import CCurlShim
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The switches that apply to the next send. They belong to the request object and survive
/// `open`, as in GDHttpRequest.
struct TransferSwitches: Sendable {
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
/// Created by `HttpRequest.send…`, then owned by the engine thread, which alone touches
/// the easy handle and the engine-side fields below. libcurl's callbacks only record: they
/// parse header lines and hand bytes and heads to the request.
final class Transfer: @unchecked Sendable {
    let request: HttpRequest
    let message: RequestMessage
    let body: RequestBody
    let switches: TransferSwitches
    let timeout: Double
    let pipelining: Bool
    /// An open descriptor of the file `sendWithFile` streams, or -1.
    let fileDescriptor: Int32
    let fileSize: Int64
    /// Signalled once the engine is done with the transfer, whatever the reason.
    let completion = DispatchSemaphore(value: 0)

    // Engine thread only.
    var easy: UnsafeMutableRawPointer?
    var isAdded = false
    var isFinished = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var bodyStorage: UnsafeMutableRawBufferPointer?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var parser = ResponseHeadParser()
    /// A head that may be an intermediate one (redirect, auth round): reported only when
    /// its body starts or the transfer ends.
    private var pendingHead: ResponseHead?
    /// A complete response head arrived (final or not).
    private var sawHead = false
    /// A `Set-Cookie` header arrived, so the cookie store may have to be written.
    private(set) var receivedSetCookie = false

    init(request: HttpRequest, message: RequestMessage, body: RequestBody, switches: TransferSwitches,
         timeout: Double, pipelining: Bool, fileDescriptor: Int32 = -1, fileSize: Int64 = 0) {
        self.request = request
        self.message = message
        self.body = body
        self.switches = switches
        self.timeout = timeout
        self.pipelining = pipelining
        self.fileDescriptor = fileDescriptor
        self.fileSize = fileSize
        errorBuffer[0] = 0
        TransferEngine.liveTransfers.add(1, ordering: .relaxed)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        bodyStorage?.deallocate()
        errorBuffer.deallocate()
        if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
        TransferEngine.liveTransfers.subtract(1, ordering: .relaxed)
    }

    // MARK: Configuring the easy handle

    /// Sets every option of this transfer on `easy`; returns the first failure as text.
    func configure(_ easy: UnsafeMutableRawPointer, share: UnsafeMutableRawPointer) -> String? {
        var options = EasyOptions(easy)
        let context = Unmanaged.passUnretained(self).toOpaque()
        options.set(share: share)
        options.set(CURLOPT_PRIVATE, pointer: context)
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        options.set(CURLOPT_NOSIGNAL, 1)
        options.set(CURLOPT_URL, message.url)
        options.set(CURLOPT_PROTOCOLS_STR, "http,https")
        options.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        options.set(CURLOPT_FOLLOWLOCATION, switches.followLocation ? 1 : 0)
        options.set(CURLOPT_MAXREDIRS, 20)
        options.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        options.check(cxhr_easy_set_write_function(easy, Transfer.writeCallback))
        options.set(CURLOPT_WRITEDATA, pointer: context)
        options.check(cxhr_easy_set_header_function(easy, Transfer.headerCallback))
        options.set(CURLOPT_HEADERDATA, pointer: context)
        if timeout > 0 {
            options.set(CURLOPT_TIMEOUT_MS, Int(min(timeout * 1000, Double(Int32.max)).rounded(.up)))
        }
        configureTLS(&options)
        configureMethodAndBody(&options, context: context)
        configureHeaders(&options)
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
        configureProxy(&options)
        if message.usesNegotiate {
            // SPNEGO through GSS-API with the tickets in a credential cache (the engine picks
            // which); an empty user name tells libcurl to use them.
            options.set(CURLOPT_USERNAME, "")
            options.set(CURLOPT_PASSWORD, "")
            options.set(CURLOPT_HTTPAUTH, Int(AuthScheme.negotiate.curlMask))
            options.set(CURLOPT_GSSAPI_DELEGATION, KerberosCredentials.allowDelegation ? Int(cxhr_gssapi_delegation_flag) : 0)
        } else if let credentials = message.credentials {
            options.set(CURLOPT_USERNAME, credentials.user)
            options.set(CURLOPT_PASSWORD, credentials.password)
            options.set(CURLOPT_HTTPAUTH, Int(credentials.scheme.curlMask))
        }
        return options.failure
    }

    /// Whether SPNEGO may run for the server or the proxy, so GSS-API needs its cache chosen.
    var usesNegotiate: Bool {
        message.usesNegotiate || switches.proxy?.credentials?.scheme == .negotiate
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        message.ticketCredentials ?? switches.proxy?.ticketCredentials
    }

    private func configureProxy(_ options: inout EasyOptions) {
        guard let proxy = switches.proxy else {
            // "" stops libcurl from reading http_proxy and friends unless the application
            // opted in.
            if !ProxyEnvironment.enabled.withLock({ $0 }) { options.set(CURLOPT_PROXY, "") }
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

    private func configureTLS(_ options: inout EasyOptions) {
        options.set(CURLOPT_SSL_VERIFYPEER, switches.verifyPeer ? 1 : 0)
        options.set(CURLOPT_SSL_VERIFYHOST, switches.verifyHost ? 2 : 0)
        if let caFile = switches.caFile ?? TrustedCertificates.processWideFile {
            // Replace the system store rather than add to it.
            options.set(CURLOPT_CAINFO, caFile)
            options.set(CURLOPT_CAPATH, nil)
        }
    }

    private func configureMethodAndBody(_ options: inout EasyOptions, context: UnsafeMutableRawPointer) {
        let method = message.method
        switch body {
        case .none:
            switch method {
            case "GET":
                options.set(CURLOPT_HTTPGET, 1)
            case "HEAD":
                options.set(CURLOPT_NOBODY, 1)
            case "POST", "PUT", "PATCH":
                setPostFields([], &options)
                if method != "POST" { options.set(CURLOPT_CUSTOMREQUEST, method) }
            default:
                options.set(CURLOPT_CUSTOMREQUEST, method)
            }
        case .bytes(let bytes, _):
            setPostFields(bytes, &options)
            if method != "POST" { options.set(CURLOPT_CUSTOMREQUEST, method) }
            countSentBytes(&options, context: context)
        case .file:
            options.set(CURLOPT_UPLOAD, 1)
            options.set(CURLOPT_INFILESIZE_LARGE, offset: fileSize)
            options.check(cxhr_easy_set_read_function(options.easy, Transfer.readCallback))
            options.set(CURLOPT_READDATA, pointer: context)
            options.check(cxhr_easy_set_seek_function(options.easy, Transfer.seekCallback))
            options.set(CURLOPT_SEEKDATA, pointer: context)
            countSentBytes(&options, context: context)
            if !["GET", "HEAD", "POST", "PUT"].contains(method) {
                options.set(CURLOPT_CUSTOMREQUEST, method)
            }
        }
    }

    /// Lets ``HttpRequest/getBytesSent()`` follow an upload (libcurl's progress callback, set
    /// only for requests with a body).
    private func countSentBytes(_ options: inout EasyOptions, context: UnsafeMutableRawPointer) {
        options.set(CURLOPT_NOPROGRESS, 0)
        options.check(cxhr_easy_set_xferinfo_function(options.easy, Transfer.progressCallback))
        options.set(CURLOPT_XFERINFODATA, pointer: context)
    }

    private func setPostFields(_ bytes: [UInt8], _ options: inout EasyOptions) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        storage.copyBytes(from: bytes)
        bodyStorage = storage
        options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(bytes.count))
        options.set(CURLOPT_POSTFIELDS, pointer: storage.baseAddress)
    }

    private func configureHeaders(_ options: inout EasyOptions) {
        var lines = message.headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        if !message.hasHeader("Content-Type") {
            switch body {
            case .bytes(_, let contentType?): lines.append("Content-Type: \(contentType)")
            case .bytes(_, nil), .none: lines.append("Content-Type:")  // no libcurl default
            case .file: break
            }
        }
        for line in lines {
            guard let list = curl_slist_append(headerList, line) else {
                options.fail("out of memory building the header list")
                return
            }
            headerList = list
        }
        options.set(CURLOPT_HTTPHEADER, slist: headerList)
    }

    // MARK: What libcurl reports

    /// How a finished transfer ended: a failure, or nil and the status when the response is
    /// the outcome (including a proxy refusing the `CONNECT` tunnel, which libcurl reports as
    /// a receive error).
    func outcome(_ code: CURLcode, easy: UnsafeMutableRawPointer) -> (failure: TransferFailure?, status: Int) {
        var status = 0
        if code == CURLE_OK {
            _ = cxhr_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return (nil, status)
        }
        if switches.proxy != nil, !sawHead {
            _ = cxhr_easy_get_long(easy, CURLINFO_HTTP_CONNECTCODE, &status)
            if status >= 300 { return (nil, status) }
        }
        return (failure(code), 0)
    }

    /// A failed transfer's kind and text: libcurl's detailed message, TLS failures starting
    /// with "SSL", failures to reach the proxy naming it.
    func failure(_ code: CURLcode) -> TransferFailure {
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        if let proxy = switches.proxy, Transfer.proxyFailures.contains(code.rawValue), !sawHead {
            return TransferFailure(kind: .proxy, text: "Proxy \(proxy.name) failed: \(detail)")
        }
        if Transfer.tlsFailures.contains(code.rawValue) {
            return TransferFailure(kind: .tls, text: detail.hasPrefix("SSL") ? detail : "SSL error: \(detail)")
        }
        switch code {
        case CURLE_OUT_OF_MEMORY where errorBuffer[0] == 0 && !sawHead:
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

    /// Whether a head may be followed by another one within this transfer.
    private func mayBeIntermediate(_ head: ResponseHead) -> Bool {
        switch head.status {
        case 300..<400: switches.followLocation && head.value(of: "Location") != nil
        case 401: message.credentials != nil || message.usesNegotiate
        case 407: switches.proxy?.credentials != nil
        default: false
        }
    }

    private func headerLine(_ line: UnsafeRawBufferPointer) {
        if !receivedSetCookie, line.count > 11, line[0] | 0x20 == UInt8(ascii: "s"),
           String(decoding: line.prefix(11), as: UTF8.self).lowercased() == "set-cookie:" {
            receivedSetCookie = true
        }
        guard let head = parser.consume(line) else { return }
        sawHead = true
        switch head.status {
        case 100..<200 where head.status != 101:
            return  // 100-continue and other interim responses
        default:
            if mayBeIntermediate(head) {
                pendingHead = head
            } else {
                pendingHead = nil
                request.transferReceivedHead(self, head)
            }
        }
    }

    private func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> HttpRequest.BodyDisposition {
        flushPendingHead()
        return request.transferReceivedBody(self, bytes)
    }

    /// Reports a head held back as possibly intermediate: it turned out to be the final one.
    func flushPendingHead() {
        if let head = pendingHead {
            pendingHead = nil
            request.transferReceivedHead(self, head)
        }
    }

    private static let writeCallback: curl_write_callback = { data, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard length > 0, let data else { return length }
        switch transfer.bodyBytes(UnsafeRawBufferPointer(start: data, count: length)) {
        case .accepted: return length
        case .paused: return cxhr_write_pause  // libcurl hands the same bytes again on resume
        case .refused: return 0
        }
    }

    private static let headerCallback: curl_write_callback = { data, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        transfer.headerLine(UnsafeRawBufferPointer(start: data, count: length))
        return length
    }

    private static let readCallback: curl_read_callback = { buffer, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        while true {
            let got = Glibc.read(transfer.fileDescriptor, buffer, size * count)
            if got >= 0 { return got }
            if errno != EINTR { return cxhr_read_abort }
        }
    }

    private static let progressCallback: curl_xferinfo_callback = { context, _, _, _, uploaded in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        transfer.request.transferSent(transfer, bytes: Int64(uploaded))
        return 0
    }

    private static let seekCallback: curl_seek_callback = { context, offset, origin in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        return lseek(transfer.fileDescriptor, off_t(offset), origin) < 0 ? cxhr_seek_fail : 0
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
        check(cxhr_easy_set_string(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        check(cxhr_easy_set_pointer(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(_ option: CURLoption, slist value: UnsafeMutablePointer<curl_slist>?) {
        check(cxhr_easy_set_slist(easy, option, value), "option \(option.rawValue)")
    }

    mutating func set(share: UnsafeMutableRawPointer) {
        check(cxhr_easy_set_share(easy, share), "the share handle")
    }
}
