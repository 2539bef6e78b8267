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
    /// The limits of each phase (`setTimeouts`).
    var timeouts = Timeouts()
    /// The bytes of the body asked for (`setRange`), or nil for all of it.
    var range: ByteRange?
    /// Asks for compressed bodies and decodes them (`disableContentDecoding` turns it off).
    var contentDecoding = true
    /// When a send is tried again (`setRetries`).
    var retries = RetryPolicy()
    /// The most body bytes (after decoding) a response may have; 0: no limit (`setMaxResponseSize`).
    var maxResponseSize: Int64 = 0
    /// The most redirects one send follows; -1: no limit (`setMaxRedirects`).
    var maxRedirects = RedirectStep.maxRedirects
    /// The addresses connected to (`setIPVersion`).
    var ipVersion = HttpRequest.IPVersion.any
}

/// A request's byte range (`Range: bytes=start-end`, end inclusive; nil: to the end).
struct ByteRange: Sendable, Equatable {
    var start: Int64
    var end: Int64?

    /// libcurl's form of it (`CURLOPT_RANGE`).
    var curlValue: String { "\(start)-" + (end.map { String($0) } ?? "") }

    /// Why `start` and `end` make no range, or nil.
    static func problem(start: Int64, end: Int64?) -> String? {
        if start < 0 { return "the range must start at byte 0 or later" }
        if let end, end < start { return "the range must end at or after its start (\(end) < \(start))" }
        return nil
    }
}
