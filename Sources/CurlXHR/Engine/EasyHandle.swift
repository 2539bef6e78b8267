import CCurlShim

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
    /// The lists of other options of `profile` (the proxy's header fields, the routing
    /// entries), owned here: libcurl does not copy them.
    @exclusivity(unchecked) var optionLists: [UnsafeMutablePointer<curl_slist>] = []
    /// The check of the proxy's key against `profile`'s proxy pins, owned here.
    @exclusivity(unchecked) var proxyPins: OpaquePointer? {
        didSet { if oldValue != proxyPins { cxhr_proxy_pins_free(oldValue) } }
    }
    /// The handshake with `profile`'s SOCKS5 proxy with GSS-API, owned here; libcurl's
    /// open-socket callback is given it (``LibcurlSockets``).
    @exclusivity(unchecked) var socksTunnel: OpaquePointer? {
        didSet { if oldValue != socksTunnel { cxhr_socks_gss_free(oldValue) } }
    }
    /// The `Content-Type` line `profile` adds to the request's own fields, for a redirect's
    /// next hop that keeps the body.
    @exclusivity(unchecked) var hopContentType: String?
    /// Where the engine lists the handle while libcurl runs a transfer on it; -1 when not.
    @exclusivity(unchecked) var runningIndex = -1
    /// The URL last set (`CURLOPT_URL`), kept by libcurl until a reset.
    private(set) var url: String?
    /// The parsed URL last set (`CURLOPT_CURLU`), which libcurl uses in place of `url` when
    /// set: kept alive here while libcurl holds it.
    private var parsedURL: ParsedURL?
    /// The transfer the handle carries, from `Transfer.configure` until the engine ends it;
    /// libcurl's callbacks find it here. The engine holds the transfer meanwhile.
    @exclusivity(unchecked) var transfer: Unmanaged<Transfer>?
    /// libcurl's text for a failure of the current attempt at the transfer (CURLOPT_ERRORBUFFER,
    /// emptied as each attempt starts: `cxhr_easy_set_error_buffer`).
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
    /// reads on large responses. libcurl 7.88 allocates it for every transfer and frees it at
    /// the end, so its size decides how the engine's heap behaves: larger sizes made glibc hand
    /// the heap back to the kernel and fault it in again (BENCHMARKS.md has the measurements).
    /// Set on a new handle and after every reset, which returns it to the default.
    static let receiveBufferSize = 64 * 1024

    private func setReceiveBufferSize() {
        _ = cxhr_easy_set_long(easy, CURLOPT_BUFFERSIZE, Self.receiveBufferSize)
    }

    deinit {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        optionLists.forEach { curl_slist_free_all($0) }
        cxhr_proxy_pins_free(proxyPins)
        cxhr_socks_gss_free(socksTunnel)
        errorBuffer.deallocate()
    }

    /// Sets the URL the next transfer starts from (libcurl starts every transfer from the URL
    /// set, not where a redirect led): its text (`CURLOPT_URL`, which libcurl 7.88 reports as
    /// the effective URL) and, when `open` parsed it, the parse (`CURLOPT_CURLU`: libcurl then
    /// copies its parts instead of parsing the text again). A URL without a parse takes the
    /// last one off, since libcurl would use its parts in place of the text. Sets only what
    /// changed.
    func setURL(_ text: String, parsed: ParsedURL?, with options: inout EasyOptions) {
        if url != text {
            options.set(CURLOPT_URL, text)
            url = text
        }
        if parsedURL !== parsed {
            options.set(CURLOPT_CURLU, pointer: parsed?.option)
            parsedURL = parsed
        }
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
        // libcurl forgets the parsed URL in the reset; let go of it only once it has.
        _ = cxhr_easy_set_pointer(easy, CURLOPT_CURLU, nil)
        curl_easy_reset(easy)
        setReceiveBufferSize()
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        optionLists.forEach { curl_slist_free_all($0) }
        optionLists.removeAll()
        proxyPins = nil
        socksTunnel = nil
        hopContentType = nil
        url = nil
        parsedURL = nil
        profile = nil
        isPristine = true
    }
}
