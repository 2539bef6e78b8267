extension HttpRequest {
    /// The limits of a request's phases, in seconds; 0 is no limit. Set with
    /// ``setTimeouts(_:)`` (or ``setTimeouts(connect:headers:idle:total:)``): a limit that runs
    /// out ends the request in DONE with status 0 and ``FailureKind/timeout``.
    public struct Timeouts: Sendable, Equatable {
        /// Until the connection (and its TLS handshake) is up (libcurl's `CURLOPT_CONNECTTIMEOUT_MS`).
        public var connect: Double
        /// From the request sent to the response's head.
        public var headers: Double
        /// The longest time without a byte sent or received.
        public var idle: Double
        /// The whole request, body included (libcurl's `CURLOPT_TIMEOUT_MS`).
        public var total: Double

        /// Limits in seconds; 0 (the default of each) is none.
        /// - Parameters:
        ///   - connect: until the connection is up.
        ///   - headers: from the request sent to the response's head.
        ///   - idle: the longest time without a byte sent or received.
        ///   - total: the whole request.
        public init(connect: Double = 0, headers: Double = 0, idle: Double = 0, total: Double = 0) {
            self.connect = connect
            self.headers = headers
            self.idle = idle
            self.total = total
        }
    }
}

typealias Timeouts = HttpRequest.Timeouts

/// How the engine reads the limits: the headers and idle clocks are the library's
/// (``PhaseClock``), connect and total libcurl's.
extension HttpRequest.Timeouts {
    /// The phases, by the word a timeout's text names them with.
    enum Phase: String, Sendable {
        case connect, header, idle, total
    }

    /// Why the values make no timeouts, or nil.
    static func problem(connect: Double, headers: Double, idle: Double, total: Double) -> String? {
        for (name, value) in [("connect", connect), ("headers", headers), ("idle", idle), ("total", total)]
        where !value.isFinite || value < 0 {
            return "the \(name) timeout must be 0 or more seconds"
        }
        return nil
    }

    /// Whether the engine watches the transfer's clocks (libcurl has no such limits).
    var needsPhaseClock: Bool { headers > 0 || idle > 0 }

    /// `seconds` as whole milliseconds for libcurl (0 stays 0: none).
    static func milliseconds(_ seconds: Double) -> Int {
        seconds > 0 ? max(1, Int(min(seconds * 1000, Double(Int32.max)).rounded(.up))) : 0
    }

    /// The text of a timeout that ended a transfer: names the phase and the limit.
    static func text(_ phase: Phase, after seconds: Double) -> String {
        let limit = "\(seconds.formatted()) s"
        return switch phase {
        case .connect: "connect timeout: no connection within \(limit)"
        case .header: "header timeout: no response head within \(limit) of sending the request"
        case .idle: "idle timeout: no byte sent or received for \(limit)"
        case .total: "total timeout: the request took longer than \(limit)"
        }
    }
}

private extension Double {
    /// "1.5", "2", "0.25": no trailing ".0".
    func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
