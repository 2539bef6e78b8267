/// The limits of a request's phases, in seconds (0: none).
///
/// - `connect`: until the connection (and its TLS handshake) is up (libcurl's
///   `CURLOPT_CONNECTTIMEOUT_MS`);
/// - `headers`: from the request sent to the head of the response (``PhaseClock``);
/// - `idle`: the longest gap without a byte in either direction (``PhaseClock``);
/// - `total`: the whole request (libcurl's `CURLOPT_TIMEOUT_MS`).
struct Timeouts: Sendable, Equatable {
    var connect = 0.0
    var headers = 0.0
    var idle = 0.0
    var total = 0.0

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
