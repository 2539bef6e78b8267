/// Why a call on ``HttpRequest`` said `false`, or what an `async` one threw.
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
        /// A file to write (a response file) cannot be created in the folder named.
        public static let fileUnwritable = Code("fileUnwritable")
        /// The request's ``RequestQueue`` already holds as many waiting requests as it allows.
        public static let queueFull = Code("queueFull")
        /// The transfer of an `async` response failed (``HttpRequestError/failureKind`` says
        /// how; the message is what ``HttpRequest/getStatusText()`` would say).
        public static let transferFailed = Code("transferFailed")
        /// A body is larger than the limit it was collected to.
        public static let tooLarge = Code("tooLarge")

        /// Internal: a send's plan needs the jar's cookies for the URL in the message, read
        /// without the request's lock (``HttpRequestError/jarNeeded(for:)``); never reported.
        static let jarNeeded = Code("jarNeeded")

        public var description: String { name }
    }

    /// What kind of refusal or failure it is; compare with the static members of ``Code``.
    public let code: Code
    /// A sentence for people; never contains a password.
    public let message: String
    /// For ``Code/transferFailed``: how the transfer failed.
    public let failureKind: FailureKind?

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        failureKind = nil
    }

    init(_ failure: TransferFailure) {
        code = .transferFailed
        message = failure.text
        failureKind = failure.kind
    }

    init(_ rejection: RequestStateMachine.Rejection) {
        self.init(.invalidState, rejection.waiting
                  ? "\(rejection.call.rawValue) is not allowed while the request waits in its queue"
                  : "\(rejection.call.rawValue) is not allowed in state \(rejection.state)")
    }

    public var description: String { message }

    /// The send is planned again once the jar's cookies for `url` are read (``JarCookies``).
    static func jarNeeded(for url: String) -> HttpRequestError { HttpRequestError(.jarNeeded, url) }
}
