/// Why a call on ``HttpRequest`` said `false`.
///
/// Read it from ``HttpRequest/lastError`` right after the call. Codes are open-ended:
/// compare with the static members; new ones may be added.
public struct HttpRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of refusal.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The call is not allowed in the request's current ready state.
        public static let invalidState = Code("invalidState")
        /// An argument is malformed: a URL, method, header name or value, timeout, auth scheme.
        public static let invalidArgument = Code("invalidArgument")
        /// A file could not be opened or is not a regular readable file.
        public static let fileUnreadable = Code("fileUnreadable")

        public var description: String { name }
    }

    public let code: Code
    /// A sentence for people; never contains a password.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ rejection: RequestStateMachine.Rejection) {
        self.init(.invalidState, "\(rejection.call.rawValue) is not allowed in state \(rejection.state)")
    }

    public var description: String { message }
}

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
    /// The `timeout` given to `send` ran out.
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

/// How a transfer failed: the kind and the text `getStatusText()` returns.
struct TransferFailure: Sendable, Equatable {
    var kind: FailureKind
    var text: String
}
