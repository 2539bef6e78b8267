extension HttpRequest {
    /// What the last send measured and where it ended (``HttpRequest/getMetrics()``), as the
    /// curl tool's `--write-out` variables report them.
    public struct Metrics: Sendable, Equatable {
        /// The final response's protocol: `"HTTP/1.0"`, `"HTTP/1.1"` or `"HTTP/2"`; nil before
        /// a response head (and after a failure before one).
        public var httpVersion: String?
        /// The URL the final response came from: the URL given to `open`, or where the
        /// redirects led. nil before a send ends.
        public var effectiveURL: String?
        /// Redirects followed.
        public var redirectCount = 0
        /// Seconds from the send to the connection being up (TCP; 0 for a reused connection
        /// on the last hop), as curl's `time_connect`; nil before a send ends.
        public var connectTime: Double?
        /// Seconds from the send to the first byte of the final response, as curl's
        /// `time_starttransfer`; nil before a send ends.
        public var startTransferTime: Double?
        /// Seconds from the send to its end, redirects included, as curl's `time_total`; nil
        /// before a send ends.
        public var totalTime: Double?

        /// Metrics as given; by default all unknown and no redirects (as before a send).
        public init(httpVersion: String? = nil, effectiveURL: String? = nil, redirectCount: Int = 0,
                    connectTime: Double? = nil, startTransferTime: Double? = nil, totalTime: Double? = nil) {
            self.httpVersion = httpVersion
            self.effectiveURL = effectiveURL
            self.redirectCount = redirectCount
            self.connectTime = connectTime
            self.startTransferTime = startTransferTime
            self.totalTime = totalTime
        }

        /// The protocol named by a status line's first bytes (`HTTP/1.1 …`, `HTTP/2 …`).
        static func httpVersion(statusLine bytes: UnsafeBufferPointer<UInt8>) -> String? {
            guard bytes.count >= 6 else { return nil }
            switch (bytes[5], bytes.count >= 8 ? bytes[7] : 0) {
            case (UInt8(ascii: "1"), UInt8(ascii: "0")): return "HTTP/1.0"
            case (UInt8(ascii: "1"), UInt8(ascii: "1")): return "HTTP/1.1"
            case (UInt8(ascii: "2"), _): return "HTTP/2"
            case (UInt8(ascii: "3"), _): return "HTTP/3"
            default: return nil
            }
        }
    }
}

/// What a send measured, as compact as a request keeps it for every send (a ``HttpRequest/Metrics``
/// is made of it only when asked for).
struct SendRecord {
    var ended = false
    /// Static strings, never allocated.
    var httpVersion: String?
    /// Where the redirects led; nil without redirects (the URL given to `open`).
    var redirectedURL: String?
    var redirectCount = 0
    var connectMicroseconds: Int64 = 0
    var startTransferMicroseconds: Int64 = 0
    var totalMicroseconds: Int64 = 0
    /// The trailer fields after the body (``HttpRequest/getResponseTrailer(_:)``).
    var trailers: ResponseHead?
}
