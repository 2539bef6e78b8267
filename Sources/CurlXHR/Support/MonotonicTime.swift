#if canImport(Glibc)
import Glibc
#endif

/// Milliseconds of the monotonic clock, for the engine's deadlines.
enum MonotonicTime {
    static func milliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// Milliseconds from now until `deadline` (at least 1), for `curl_multi_poll`.
    static func millisecondsUntil(_ deadline: Int64) -> Int32 {
        Int32(clamping: max(1, deadline - milliseconds()))
    }
}
