/// Seeing a request without a debugger: the events of each send and the wire as libcurl
/// sees it, both on the ``HttpRequest/callbackQueue``.
extension HttpRequest {
    /// What happened during a send, reported to ``HttpRequest/onEvent`` in order, each once.
    ///
    /// A send reports `.started` (queued or not; `.queued` before it when it waits in a
    /// ``RequestQueue``), then for each connection it uses `.connected` (and
    /// `.tlsEstablished` for a new TLS connection), `.requestSent` for each request it makes
    /// (an authentication round or a redirect makes another), interim responses,
    /// authentication rounds, redirects, retries and the cache's part, and last `.done`:
    /// nothing comes after it. New cases may come: switch over it with a `default:`.
    public enum Event: Sendable, Equatable {
        /// The send waits in its ``RequestQueue`` for a slot.
        case queued
        /// The send began: it left its queue, or had none.
        case started
        /// A connection is ready for the request: the server's (or the proxy's) address and
        /// port, and whether it is one kept from an earlier request (`reused`).
        case connected(address: String, port: Int, reused: Bool)
        /// A new connection's TLS handshake ended: its protocol version, such as `"TLSv1.3"`.
        case tlsEstablished(version: String)
        /// The request went out in full (its head, and its body if it has one).
        case requestSent
        /// An interim response arrived: 100 Continue or 103 Early Hints.
        case interimResponse(status: Int)
        /// The server (401) or the proxy (407) asked for credentials, offering `scheme`
        /// (`"Basic"`, `"Digest"`, `"NTLM"`, `"Negotiate"`): libcurl answers with the next
        /// request when the request has credentials for it.
        case authenticationRound(status: Int, scheme: String)
        /// A redirect is followed: its status and where it leads.
        case redirect(status: Int, location: String)
        /// The send is tried again after `delay` seconds; `attempt` counts retries from 1.
        case retry(attempt: Int, delay: Double, reason: String)
        /// What the cache did for the send (``HttpRequest/CacheOutcome``).
        case cache(CacheOutcome)
        /// The send ended (with a response, a failure or an abort): what it measured.
        case done(Metrics)
    }

    /// The cache's part in a send (``Event/cache(_:)``).
    public enum CacheOutcome: String, Sendable, Equatable {
        /// A stored response answered, with no request to the network.
        case hit
        /// Nothing stored could answer: the request went to the network.
        case miss
        /// A stored response was validated with the server (a 304) and answered.
        case validated
        /// The response was stored for later sends.
        case stored
    }

    /// One piece of the wire as libcurl sees it (``HttpRequest/onTrace``), with the values of
    /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` and the URL's password
    /// replaced by `[redacted]`, in libcurl's own informational lines too.
    public struct TraceEntry: Sendable, Equatable {
        /// What a trace entry holds, as curl's `--trace` names them.
        public enum Kind: Int, Sendable, Equatable {
            /// libcurl's informational text ("Connected to …").
            case info
            /// Header lines sent.
            case headerOut
            /// Header lines received.
            case headerIn
            /// Body bytes sent.
            case dataOut
            /// Body bytes received (as they came, before any decoding).
            case dataIn
            /// TLS bytes received.
            case tlsIn
            /// TLS bytes sent.
            case tlsOut
        }

        /// What the entry holds.
        public var kind: Kind
        /// The bytes, redacted.
        public var bytes: [UInt8]
        /// When libcurl traced it: seconds since 1970 (the system clock).
        public var time: Double

        /// An entry as given.
        public init(kind: Kind, bytes: [UInt8], time: Double) {
            self.kind = kind
            self.bytes = bytes
            self.time = time
        }
    }

    /// Called on the ``callbackQueue`` with each ``Event`` of a send, in order: for
    /// synchronous and asynchronous sends alike (a synchronous send may return before its
    /// last events are delivered). Taken when a send starts: setting it affects the next
    /// send. Costs nothing when nil.
    public var onEvent: (@Sendable (HttpRequest, Event) -> Void)? {
        get { withCore { $0.observers.event } }
        set { withCore { $0.observers.event = newValue } }
    }

    /// Called on the ``callbackQueue`` with the wire as libcurl sees it (curl's `--trace`), in
    /// order with ``onEvent``'s events, secrets redacted (``TraceEntry``). Taken when a send
    /// starts. Nothing is traced while it is nil: it costs nothing then.
    public var onTrace: (@Sendable (HttpRequest, TraceEntry) -> Void)? {
        get { withCore { $0.observers.trace } }
        set { withCore { $0.observers.trace = newValue } }
    }
}

/// The receivers of events and trace entries a request has (taken by each send).
struct Observers {
    var event: (@Sendable (HttpRequest, HttpRequest.Event) -> Void)?
    var trace: (@Sendable (HttpRequest, HttpRequest.TraceEntry) -> Void)?

    var isEmpty: Bool { event == nil && trace == nil }
}
