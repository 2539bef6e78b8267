/// When a send is tried again (`setRetries`): a pure value, asked by the engine each time an
/// attempt ends in something a retry may mend.
///
/// - Only idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS): a POST or PATCH is tried once.
/// - Only before the request saw anything of its response: a failure to connect or a broken
///   connection, a connect, headers or idle timeout, before the head; or a 429 or 503 head,
///   whose body is dropped. (The total timeout covers every attempt and is never retried.)
/// - `Retry-After` (seconds or an HTTP date) is honoured up to ``maxRetryAfter``; a server
///   that asks for longer gets no retry, and its answer is the response. Without it the n-th
///   retry waits `backoff × 2ⁿ⁻¹`, times a jitter between 0.5 and 1.5.
///
/// Retries, like authentication rounds, are invisible to the ready states.
struct RetryPolicy: Sendable, Equatable {
    /// Attempts after the first.
    var count = 0
    /// Seconds before the first retry when the server names none.
    var backoff = 0.5

    /// The longest `Retry-After` honoured, in seconds.
    static let maxRetryAfter = 60.0

    /// What ended an attempt, as far as retrying goes.
    enum Cause: Equatable {
        /// No response yet: the connection failed or broke, or a connect, headers or idle
        /// limit ran out.
        case noResponse
        /// A head with this status, and the seconds its `Retry-After` asks for (nil: none).
        case status(Int, retryAfter: Double?)
    }

    static func problem(count: Int, backoff: Double) -> String? {
        if count < 0 { return "the retry count must be 0 or more" }
        if !backoff.isFinite || backoff < 0 { return "the retry backoff must be 0 or more seconds" }
        return nil
    }

    static func isIdempotent(_ method: String) -> Bool {
        ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(method)
    }

    /// Whether a head with `status` may be retried (before its `Retry-After` is read).
    static func mayRetry(status: Int) -> Bool { status == 429 || status == 503 }

    /// Seconds to wait before retry number `retry` (1 for the first) after `cause`, or nil
    /// when the attempt's outcome stands. `jitter` is a number in 0..<1.
    func delay(before retry: Int, after cause: Cause, method: String, jitter: Double) -> Double? {
        guard retry >= 1, retry <= count, Self.isIdempotent(method) else { return nil }
        switch cause {
        case .status(let status, let retryAfter):
            guard Self.mayRetry(status: status) else { return nil }
            if let retryAfter { return retryAfter <= Self.maxRetryAfter ? max(0, retryAfter) : nil }
        case .noResponse:
            break
        }
        let doubling = Double(1 << min(retry - 1, 30))
        return backoff * doubling * (0.5 + min(max(jitter, 0), 1))
    }

    /// A `Retry-After` value in seconds from now: delta-seconds, or an HTTP date (parsed by
    /// `parseDate`, as Unix seconds) less `now`; nil when it is neither.
    static func retryAfterSeconds(_ value: String, now: Double, parseDate: (String) -> Double?) -> Double? {
        let trimmed = value.trimmingSpaces()
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return Double(trimmed) ?? .infinity
        }
        return parseDate(trimmed).map { max(0, $0 - now) }
    }
}

private extension String {
    func trimmingSpaces() -> String {
        let bytes = utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
        return String(decoding: bytes.reversed(), as: UTF8.self)
    }
}
