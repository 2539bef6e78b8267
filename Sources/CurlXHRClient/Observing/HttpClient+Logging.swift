#if Logging
import CurlXHR
import Logging

extension HttpClient {
    /// Where the client's calls log (package trait `Logging`): by default
    /// ``HttpClient/silentLogger``, which discards everything, so a client logs only once it is
    /// given a logger.
    ///
    /// Each call logs with its own request id as metadata (`http.request.id`): a `.debug`
    /// line for each `HttpRequest.Event` of each send (`http.event` names it), and one line
    /// at its end with the method, the URL (its password and signatures `REDACTED`), the
    /// status and the duration — `.debug` for a 2xx response, `.warning` for any other status
    /// and for a failed transfer (the caller gets the error too, and decides whether it is an
    /// error for the application). No line holds the value of an `Authorization`,
    /// `Proxy-Authorization` or `Cookie` field, a token, or a password. With a level above
    /// `.debug` the events are not even observed; with one above `.warning` nothing is.
    ///
    /// A call's own logger, such as the one of the server request it serves: ``logging(to:)``.
    public var logger: Logger {
        get { observability.logger }
        set { observability.logger = newValue }
    }

    /// This client with `logger` for its calls instead of ``logger``: the logger of one call,
    /// such as the one of the server request it serves, whose metadata its lines then carry.
    ///
    /// ```swift
    /// let item: Item = try await client.logging(to: request.logger).invoke("GET", path: "items/7")
    /// ```
    public func logging(to logger: Logger) -> HttpClient {
        var client = self
        client.logger = logger
        return client
    }

    /// The logger of a client that was given none: labelled `CurlXHRClient`, it discards
    /// every line (whatever `LoggingSystem` was bootstrapped with).
    public static let silentLogger = Logger(label: "CurlXHRClient") { _ in SwiftLogNoOpLogHandler() }
}

/// The log of one call: its logger with the request id, and its lines.
struct CallLog: Sendable {
    let logger: Logger
    let secrets: CallSecrets
    /// Whether the events of its sends are logged (`.debug` is on).
    let logsEvents: Bool

    /// The log of a call through `logger`; nil when the logger would drop every line.
    init?(_ logger: Logger, secrets: CallSecrets) {
        guard logger.logLevel <= .warning else { return nil }
        var logger = logger
        logger[metadataKey: "http.request.id"] = "\(Self.newRequestID())"
        self.logger = logger
        self.secrets = secrets
        logsEvents = logger.logLevel <= .debug
    }

    /// Twelve hex digits (48 random bits): short enough to read, and unique among the calls
    /// of a log.
    static func newRequestID() -> String {
        let digits = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        return String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// Logs `http`'s events, after those of an `onEvent` already set (by `configure`).
    func watch(_ http: HttpRequest) {
        guard logsEvents else { return }
        let earlier = http.onEvent
        let log = self
        http.onEvent = { request, event in
            earlier?(request, event)
            log.log(event)
        }
    }

    func log(_ event: HttpRequest.Event) {
        let name: String
        let text: String
        var metadata: Logger.Metadata = [:]
        switch event {
        case .queued: (name, text) = ("queued", "waits in its queue")
        case .started: (name, text) = ("started", "started")
        case .connected(let address, let port, let reused):
            (name, text) = ("connected", "connected to \(address) port \(port)\(reused ? " (reused)" : "")")
            metadata = ["network.peer.address": "\(address)", "network.peer.port": "\(port)"]
        case .tlsEstablished(let version): (name, text) = ("tlsEstablished", "TLS established: \(version)")
        case .requestSent: (name, text) = ("requestSent", "request sent")
        case .interimResponse(let status): (name, text) = ("interimResponse", "interim response \(status)")
        case .authenticationRound(let status, let scheme):
            (name, text) = ("authenticationRound", "authentication asked for (\(status) \(scheme))")
        case .redirect(let status, let location):
            (name, text) = ("redirect", "redirect \(status) to \(secrets.scrub(Redaction.url(location)))")
        case .retry(let attempt, let delay, let reason):
            (name, text) = ("retry", "retry \(attempt) in \(delay) s: \(secrets.scrub(reason))")
        case .cache(let outcome): (name, text) = ("cache", "cache \(outcome.rawValue)")
        case .done(let metrics):
            (name, text) = ("done", "done in \(metrics.totalTime.map { "\($0)" } ?? "?") s")
            if let version = metrics.httpVersion { metadata["network.protocol.version"] = "\(version)" }
            if let received = metrics.bytesReceived { metadata["http.response.body.size"] = "\(received)" }
        }
        metadata["http.event"] = "\(name)"
        logger.debug("\(text)", metadata: metadata)
    }

    /// The call's last line: its method, URL, status and duration, or its failure.
    func ended(_ request: HttpClientRequest, _ outcome: Result<HttpClientResponse, HttpClientError>, seconds: Double) {
        let url = secrets.scrub(Redaction.url(request.url))
        var metadata: Logger.Metadata = ["http.request.method": "\(request.method)", "url.full": "\(url)",
                                         "http.client.duration": "\(seconds)"]
        switch outcome {
        case .success(let response):
            metadata["http.response.status_code"] = "\(response.status)"
            let level: Logger.Level = (200..<300).contains(response.status) ? .debug : .warning
            logger.log(level: level, "\(request.method) \(url): \(response.status) in \(seconds) s", metadata: metadata)
        case .failure(let error):
            metadata["error.type"] = "\(CallOutcome.errorType(error))"
            logger.warning("\(request.method) \(url) failed: \(secrets.scrub(error.description))", metadata: metadata)
        }
    }
}
#endif
