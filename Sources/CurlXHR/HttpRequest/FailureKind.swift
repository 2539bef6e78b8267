
/// Why a request ended in DONE with status 0, for programs that act on the kind of failure
/// (``HttpRequest/getFailureKind()``); ``HttpRequest/getStatusText()`` has the details.
public enum FailureKind: String, Sendable, CaseIterable {
    /// `abort()`, `close()` or a re-`open` stopped it.
    case aborted
    /// The host name did not resolve.
    case dns
    /// No connection, or the connection broke (refused, reset, closed early).
    case connection
    /// The TLS handshake or the certificate check failed.
    case tls
    /// A timeout ran out: the `timeout` given to `send`, or one of
    /// ``HttpRequest/setTimeouts(connect:headers:idle:total:)``'s (the text names the phase:
    /// `connect`, `header`, `idle` or `total`).
    case timeout
    /// More than 20 redirects.
    case redirects
    /// The proxy could not be reached or broke the connection.
    case proxy
    /// The server's answer was not valid HTTP (or too large a header).
    case response
    /// Kerberos tickets could not be obtained.
    case authentication
    /// Anything else (a file that could not be read while sending, out of memory).
    case other
}
