import CCurlShim

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
    /// A `multipart/form-data` form built with libcurl's MIME API for each transfer.
    case multipart

    /// Whether ``HttpRequest/getBytesSent()`` follows the upload.
    var countsProgress: Bool { self == .copied || self == .streamed || self == .file || self == .multipart }
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
        /// An https request that may multiplex: libcurl waits for a connection to the origin
        /// being set up to learn whether it speaks HTTP/2 (`CURLOPT_PIPEWAIT`). Not for plain
        /// http, which never multiplexes here: there it made a request wait for another one's
        /// connection, busy with a slow response, instead of opening its own.
        let waitsForMultiplexing: Bool
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
        let observation: Observation
    }

    /// What libcurl reports of a transfer beyond its bytes, for a send's observer.
    enum Observation: Equatable {
        case none
        /// Each connection made ready for a request (`CURLOPT_PREREQFUNCTION`).
        case events
        /// That, and the wire (`CURLOPT_DEBUGFUNCTION` with `CURLOPT_VERBOSE`).
        case trace
    }
}

extension EasyProfile.Fields {
    /// Sets every option of the profile on a handle just reset.
    func apply(to options: inout EasyOptions, handle: EasyHandle, share: UnsafeMutableRawPointer) {
        let easy = options.easy
        handle.isPristine = false
        options.set(share: share)
        options.check(cxhr_easy_set_error_buffer(easy, handle.errorBuffer))
        // Every callback, and the engine when a transfer is done, reaches the transfer through
        // the handle (`EasyHandle.transfer`), so these are set once, not for every transfer.
        let context = Unmanaged.passUnretained(handle).toOpaque()
        for option in [CURLOPT_PRIVATE, CURLOPT_WRITEDATA, CURLOPT_READDATA, CURLOPT_SEEKDATA, CURLOPT_XFERINFODATA] {
            options.set(option, pointer: context)
        }
        options.set(CURLOPT_HEADERDATA, pointer: UnsafeMutableRawPointer(handle.headParser.recorder))
        options.set(CURLOPT_NOSIGNAL, 1)
        options.set(CURLOPT_PROTOCOLS_STR, switches.schemes.curlValue)
        options.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Redirects are followed by the engine (``RedirectStep``), not by libcurl.
        options.set(CURLOPT_FOLLOWLOCATION, 0)
        options.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        options.check(cxhr_easy_set_write_function(easy, Transfer.writeCallback))
        options.check(cxhr_easy_set_header_function(easy, cxhr_head_callback))
        options.check(cxhr_easy_set_socket_functions(easy, LibcurlSockets.openCallback, LibcurlSockets.closeCallback))
        if observation != .none {
            options.check(cxhr_easy_set_prereq_function(easy, Transfer.prereqCallback, context))
            if observation == .trace { options.check(cxhr_easy_set_debug_function(easy, Transfer.debugCallback, context)) }
        }
        if timeoutMilliseconds > 0 { options.set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds) }
        let connectMilliseconds = Timeouts.milliseconds(switches.timeouts.connect)
        if connectMilliseconds > 0 { options.set(CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds) }
        if let range = switches.range { options.set(CURLOPT_RANGE, range.curlValue) }
        // "": every encoding this libcurl decodes (gzip, deflate, br, zstd here) asked for.
        if switches.contentDecoding { options.set(CURLOPT_ACCEPT_ENCODING, "") }
        // libcurl passes the body as it comes, chunked framing undone, also under a coding it
        // does not know (which it would refuse): the library decodes (``ContentDecoder``),
        // where a paused consumer holds the decoding back.
        options.set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        switch switches.ipVersion {
        case .any: break  // CURL_IPRESOLVE_WHATEVER after the reset
        case .v4: options.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4))
        case .v6: options.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6))
        }
        if let tls = switches.tlsVersions.curlValue { options.set(CURLOPT_SSLVERSION, tls) }
        options.set(CURLOPT_SSL_VERIFYPEER, switches.verifyPeer ? 1 : 0)
        options.set(CURLOPT_SSL_VERIFYHOST, switches.verifyHost ? 2 : 0)
        if let caPath = switches.caPath {
            // The folder, with the request's own file if it has one: no system store, no
            // process-wide file.
            options.set(CURLOPT_CAINFO, switches.caFile)
            options.set(CURLOPT_CAPATH, caPath)
        } else if let caFile {
            // Replace the system store rather than add to it.
            options.set(CURLOPT_CAINFO, caFile)
            options.set(CURLOPT_CAPATH, nil)
        }
        if switches.hasReach {
            applyTLSIdentity(&options)
            applyRouting(&options, handle: handle)
            applyRateLimits(&options)
        }
        applyMethodAndBody(&options)
        let contentTypeLine = contentType.map { $0.isEmpty ? "Content-Type:" : "Content-Type: \($0)" }
        handle.hopContentType = contentTypeLine
        // The default User-Agent goes in the header list, formatted once: set as
        // CURLOPT_USERAGENT, libcurl 7.88 formats it twice a request, a character at a time.
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
            if waitsForMultiplexing { options.set(CURLOPT_PIPEWAIT, 1) }
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
        applyProxy(&options, handle: handle)
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
        case .multipart:
            // The transfer sets the form (CURLOPT_MIMEPOST, which makes it a POST).
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
}
