import CCurlShim

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
        /// The method of the final request (a 303 turns a POST into a GET), as curl's
        /// `%{method}`; nil before a send ends.
        public var effectiveMethod: String?
        /// Seconds from the send to the name being resolved, as curl's `time_namelookup`; nil
        /// before a send ends. Each time below counts from the send (the first hop's start),
        /// includes the hops before the last (redirects), and is 0 for a phase the last hop
        /// did not go through (a reused connection, no TLS), as curl's are.
        public var nameLookupTime: Double?
        /// Seconds from the send to the connection being up (TCP; 0 for a reused connection
        /// on the last hop), as curl's `time_connect`; nil before a send ends.
        public var connectTime: Double?
        /// Seconds from the send to the TLS handshake's end (0 without one), as curl's
        /// `time_appconnect`.
        public var tlsTime: Double?
        /// Seconds from the send to the request being about to go out, as curl's
        /// `time_pretransfer`.
        public var preTransferTime: Double?
        /// Seconds from the send to the first byte of the final response, as curl's
        /// `time_starttransfer`; nil before a send ends.
        public var startTransferTime: Double?
        /// Seconds the redirects before the final hop took, as curl's `time_redirect`: 0
        /// without redirects.
        public var redirectTime: Double?
        /// Seconds from the send to its end, redirects included, as curl's `time_total`; nil
        /// before a send ends.
        public var totalTime: Double?
        /// Seconds the send waited in its ``RequestQueue`` before it started: 0 when it did
        /// not wait.
        public var queueTime: Double?
        /// Times the send was tried again (``HttpRequest/setRetries(_:backoff:)``).
        public var retryCount = 0
        /// The address and port of the last connection's other end (the server, or the
        /// proxy), as curl's `remote_ip` and `remote_port`; nil when it never connected.
        public var remoteAddress: String?
        /// The port of the last connection's other end (``remoteAddress``).
        public var remotePort: Int?
        /// This end's address and port of the last connection, as curl's `local_ip` and
        /// `local_port`; nil when it never connected.
        public var localAddress: String?
        /// This end's port of the last connection (``localAddress``).
        public var localPort: Int?
        /// Whether the last hop ran on a connection kept from an earlier request.
        public var reusedConnection: Bool?
        /// Connections the send opened, all hops together, as curl's `num_connects`.
        public var connectionsOpened = 0
        /// Body bytes the last hop sent, as curl's `size_upload` counts them.
        public var bytesSent: Int64?
        /// Body bytes the last hop received as they came (before decoding), as curl's
        /// `size_download` counts them.
        public var bytesReceived: Int64?
        /// Bytes of the response heads received, all hops together, as curl's `size_header`.
        public var headerBytes: Int64?

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

        /// The metrics of a send of `method` to `url` (``RequestMessage``) that ended (`record`,
        /// and what else libcurl measured of its last hop: `facts`).
        init(_ record: borrowing SendRecord, facts: borrowing cxhr_send_facts, url: String, method: String) {
            func seconds(_ microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }
            let earlier = record.earlier
            let offset = earlier.offset
            let lastConnected = record.connect > 0
            // The setup phases of the last hop that made a connection (a reused one skips them).
            var setup = earlier.setup
            if lastConnected || earlier.newConnections == 0 {
                setup.keepNonZero(nameLookup: Int64(facts.namelookup), connect: record.connect, tls: Int64(facts.appconnect), after: offset)
            }
            // Each property set in place: delegating to the public init built a second value
            // and copied it over this one.
            httpVersion = record.httpVersion
            effectiveURL = record.redirectedURL ?? url
            redirectCount = record.redirectCount
            connectTime = seconds(setup.connect)
            startTransferTime = seconds(offset + record.startTransfer)
            totalTime = seconds(offset + record.total)
            effectiveMethod = record.methodBecameGET ? "GET" : method
            nameLookupTime = seconds(setup.nameLookup)
            tlsTime = seconds(setup.tls)
            preTransferTime = seconds(offset + Int64(facts.pretransfer))
            redirectTime = seconds(offset)
            queueTime = seconds(record.queueMicroseconds)
            retryCount = record.retryCount
            connectionsOpened = earlier.newConnections + (lastConnected ? 1 : 0)
            if record.remotePort > 0 {
                remoteAddress = Self.text(facts.primary_ip)
                remotePort = record.remotePort
                localAddress = Self.text(facts.local_ip)
                localPort = record.localPort
                reusedConnection = !lastConnected
            }
            bytesSent = Int64(facts.size_upload)
            bytesReceived = Int64(facts.size_download)
            headerBytes = earlier.headerBytes + record.headerBytes
        }

        /// The text of an address libcurl gave (``cxhr_send_facts``).
        private static func text<Tuple>(_ address: Tuple) -> String {
            withUnsafeBytes(of: address) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
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
/// is made of it only when asked for): plain values, but for the strings it had before.
struct SendRecord {
    var ended = false
    /// Static strings, never allocated.
    var httpVersion: String?
    /// Where the redirects led; nil without redirects (the URL given to `open`).
    var redirectedURL: String?
    var redirectCount = 0
    /// The last hop's connect, first-byte and total times, microseconds from its start (the
    /// engine reads these for every transfer; the rest libcurl measured stays with the
    /// transfer, ``Transfer/facts``, until asked for).
    var connect: Int64 = 0
    var startTransfer: Int64 = 0
    var total: Int64 = 0
    /// Bytes of the last hop's response heads.
    var headerBytes: Int64 = 0
    /// The ports of the last hop's connection; 0 when it never connected.
    var remotePort = 0
    var localPort = 0
    /// What the hops before the last (redirects) measured.
    var earlier = EarlierHops()
    var retryCount = 0
    var queueMicroseconds: Int64 = 0
    /// A redirect turned the method into GET.
    var methodBecameGET = false
    /// The trailer fields after the body (``HttpRequest/getResponseTrailer(_:)``).
    var trailers: ResponseHead?
}

/// What the hops of a send before its last one measured: the time they took, the setup
/// phases they last went through, their head bytes and the connections they opened.
struct EarlierHops {
    var offset: Int64 = 0
    var setup = SendTimes()
    var headerBytes: Int64 = 0
    var newConnections = 0
}

/// The setup phases of a send, microseconds from its start (``HttpRequest/Metrics``).
struct SendTimes: Equatable {
    var nameLookup: Int64 = 0
    var connect: Int64 = 0
    var tls: Int64 = 0

    /// Keeps the setup phases a hop that started `offset` microseconds into the send went
    /// through (those it skipped, as on a reused connection, are 0 and leave the earlier ones).
    mutating func keepNonZero(nameLookup: Int64, connect: Int64, tls: Int64, after offset: Int64) {
        if nameLookup > 0 { self.nameLookup = offset + nameLookup }
        if connect > 0 { self.connect = offset + connect }
        if tls > 0 { self.tls = offset + tls }
    }
}
