/// How the logs, spans and metrics of a call name its outcome.
enum CallOutcome {
    /// The methods OpenTelemetry's HTTP conventions name as they are; another is `_OTHER`.
    static let knownMethods: Set<String> = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"]

    /// `method`, or `_OTHER` when it is none of ``knownMethods`` (a metric's dimension takes
    /// no method a caller makes up).
    static func method(_ method: String) -> String {
        knownMethods.contains(method) ? method : "_OTHER"
    }

    /// OpenTelemetry's `error.type` of a failed call: the status code of a response that is
    /// not 2xx, else what failed (`timeout`, `connection`, `tls`, … for a transfer, the
    /// refusal's code such as `invalidArgument` for a request `HttpRequest` refused;
    /// `cancelled`, `encoding`, `decoding`, `authorization`, `middleware`).
    static func errorType(_ error: HttpClientError) -> String {
        switch error {
        case .status(let code, _): "\(code)"
        case .transfer(let error): error.failureKind?.rawValue ?? error.code.description
        case .decoding: "decoding"
        case .encoding: "encoding"
        case .cancelled: "cancelled"
        case .authorization: "authorization"
        case .middleware: "middleware"
        }
    }

    /// The status class of a response, `1xx` to `5xx` (`error` outside 100...599), or `error`
    /// for a call that got none.
    static func statusClass(_ outcome: Result<HttpClientResponse, HttpClientError>) -> String {
        guard case .success(let response) = outcome, (100...599).contains(response.status) else { return "error" }
        return "\(response.status / 100)xx"
    }
}
