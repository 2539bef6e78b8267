// The parts every Swift benchmark client shares (the C client has its own copy of the same
// rules in curl-bench.c):
//
//   <client> --workload NAME --url URL [--mode async|threads] [--concurrency N]
//            [--requests N] [--expect-bytes N] [--post-bytes N] [--headers N] [--max-seconds S]
//            [--cacert PATH] [--expect-http-version 1.1|2] [--collect] [--json-items N]
//            [--header "NAME: VALUE"]... [--client NAME]
//
// A run issues at most --requests requests, and none after --max-seconds; it then prints
// one JSON line on stdout:
//   {"client","workload","requests","seconds","req_per_s","bytes_per_s","cpu_user_s",
//    "cpu_sys_s","context_switches","peak_rss_kib","errors","timed_out"[,"http_version"]
//    [,"first_error"]}
// A response counts as an error unless its status is 200 and its body has exactly
// --expect-bytes bytes, and, with --expect-http-version, unless it came over that protocol
// ("http_version" then names the protocols the responses came over, e.g. "HTTP/2").
// `requests` counts finished requests, errors included. --cacert PATH: the PEM file of the
// CAs to trust for https (the client's only trust roots). --json-items N (the clients that
// decode JSON: curlxhr-client-bench, ahc-bench --json): each body is a JSON array of N
// ``JSONItem``s; a response that does not decode into one, or holds another count, is an error.
// --header "NAME: VALUE" (repeatable; the clients that take it: curlxhr-client-bench, ahc-bench;
// the others refuse it as an unknown argument): a request header every request carries, after
// the --headers ones (the client-bearer-* workloads: `Authorization: Bearer <token>`).
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public struct BenchOptions: Sendable {
    public enum Mode: String, Sendable {
        /// `concurrency` requests in flight from one thread, through the client's async API.
        case async
        /// `concurrency` threads, each doing blocking requests in a loop.
        case threads
    }

    public var client: String
    public var workload = ""
    public var url = ""
    public var mode = Mode.async
    public var concurrency = 1
    public var requests = 1000
    public var expectBytes = 100
    /// Bytes of request body; 0 sends a GET, more a POST of that many bytes.
    public var postBytes = 0
    /// How many of ``benchRequestHeaders`` every request carries (0 to 8).
    public var headers = 0
    public var maxSeconds = 60.0
    /// Collect each response body whole instead of streaming it (clients that can do both).
    public var collect = false
    /// `--cacert`: the PEM file of the CAs to trust for https, instead of the system's.
    public var caCertificateFile: String?
    /// `--cert` and `--key`: a client certificate and its key in PEM (curlxhr-bench).
    public var clientCertificate: (certificate: String, key: String)?
    /// `--pinnedpubkey`: the server's public key pinned (curlxhr-bench).
    public var pinnedPublicKeys: String?
    /// `--expect-http-version`: the protocol every response must come over ("HTTP/1.1",
    /// "HTTP/2"), or nil for no check. The clients then also learn each response's protocol.
    public var expectHTTPVersion: String?
    /// `--json-items`: the number of ``JSONItem``s the JSON array of each response holds (the
    /// clients that decode JSON), or nil.
    public var jsonItems: Int?
    /// `--header "NAME: VALUE"`: fields every request carries after the first ``headers`` of
    /// ``benchRequestHeaders``, in order (only for clients that parse with `extraHeaders: true`).
    public var extraHeaders: [(name: String, value: String)] = []

    public var method: String { postBytes > 0 ? "POST" : "GET" }

    /// The options in `arguments`; `extraHeaders`: whether the client sends `--header` fields
    /// (else `--header` is an unknown argument).
    public static func parse(client: String, _ arguments: [String] = CommandLine.arguments,
                             extraHeaders: Bool = false) -> BenchOptions {
        var options = BenchOptions(client: client)
        var rest = arguments.dropFirst()
        func value(_ name: String) -> String {
            guard let value = rest.popFirst() else { usage("\(name) needs a value") }
            return value
        }
        func number(_ name: String) -> Int {
            guard let number = Int(value(name)), number >= 0 else { usage("\(name) needs a whole number") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--client": options.client = value(argument)
            case "--workload": options.workload = value(argument)
            case "--url": options.url = value(argument)
            case "--mode":
                guard let mode = Mode(rawValue: value(argument)) else { usage("--mode is async or threads") }
                options.mode = mode
            case "--concurrency": options.concurrency = max(1, number(argument))
            case "--requests": options.requests = number(argument)
            case "--expect-bytes": options.expectBytes = number(argument)
            case "--post-bytes": options.postBytes = number(argument)
            case "--headers":
                options.headers = number(argument)
                guard options.headers <= benchRequestHeaders.count else { usage("--headers is 0 to \(benchRequestHeaders.count)") }
            case "--max-seconds":
                guard let seconds = Double(value(argument)), seconds > 0 else { usage("--max-seconds needs a positive number") }
                options.maxSeconds = seconds
            case "--collect": options.collect = true
            case "--json-items": options.jsonItems = number(argument)
            case "--header" where extraHeaders:
                let field = value(argument)
                guard let colon = field.firstIndex(of: ":"), colon != field.startIndex else {
                    usage("--header needs \"NAME: VALUE\"")
                }
                options.extraHeaders.append((name: String(field[..<colon]),
                                             value: String(field[field.index(after: colon)...].drop { $0 == " " })))
            case "--cacert":
                let path = value(argument)
                guard access(path, R_OK) == 0 else { usage("--cacert: cannot read \(path)") }
                options.caCertificateFile = path
            case "--cert", "--key":
                let path = value(argument)
                guard access(path, R_OK) == 0 else { usage("\(argument): cannot read \(path)") }
                var pair = options.clientCertificate ?? (certificate: "", key: "")
                if argument == "--cert" { pair.certificate = path } else { pair.key = path }
                options.clientCertificate = pair
            case "--pinnedpubkey":
                options.pinnedPublicKeys = value(argument)
            case "--expect-http-version":
                switch value(argument) {
                case "1.1": options.expectHTTPVersion = "HTTP/1.1"
                case "2": options.expectHTTPVersion = "HTTP/2"
                default: usage("--expect-http-version is 1.1 or 2")
                }
            default: usage("unknown argument \(argument)")
            }
        }
        if options.url.isEmpty || options.workload.isEmpty { usage("--url and --workload are required") }
        return options
    }

    private static func usage(_ problem: String) -> Never {
        writeError("""
            \(problem)
            usage: \(CommandLine.arguments.first ?? "bench") --workload NAME --url URL [--mode async|threads]
                   [--concurrency N] [--requests N] [--expect-bytes N] [--post-bytes N] [--headers N] [--max-seconds S]
                   [--cacert PATH] [--expect-http-version 1.1|2] [--collect] [--json-items N]
                   [--header "NAME: VALUE"]... (curlxhr-client-bench, ahc-bench) [--client NAME]
                   [--cert PATH --key PATH] [--pinnedpubkey PINS] (curlxhr-bench)

            """)
        exit(64)
    }
}

/// Seconds on the monotonic clock.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Counts requests against the run's two bounds, and their outcomes. Thread-safe.
public final class Tally: Sendable {
    private struct State {
        var issued = 0
        var finished = 0
        var errors = 0
        var bytes = 0
        var firstError: String?
        /// The protocols the responses came over, in the order first seen.
        var httpVersions: [String] = []
    }

    public let options: BenchOptions
    private let state = Mutex(State())
    private let start = monotonicSeconds()
    private let startUsage = ResourceUsage.now()
    private let deadline: Double
    private let reported = Mutex(false)

    public init(_ options: BenchOptions) {
        self.options = options
        deadline = start + options.maxSeconds
        startWatchdog()
    }

    /// Takes the right to issue one more request; `false` once the count is reached or the
    /// time is up.
    public func claim() -> Bool {
        let now = monotonicSeconds()
        return state.withLock { state in
            guard state.issued < options.requests, now < deadline else { return false }
            state.issued += 1
            return true
        }
    }

    /// Records a finished request. `bodyBytes` is the response body size; `problem` describes
    /// what went wrong (the client's own failure). `httpVersion` is the protocol the response
    /// came over ("HTTP/1.1", "HTTP/2"; nil: none, or not asked): with --expect-http-version,
    /// a response over another one (or none) is an error.
    public func finish(status: Int, bodyBytes: Int, problem: String? = nil, httpVersion: String? = nil) {
        let answered = problem == nil && status == 200 && bodyBytes == options.expectBytes
        let expected = options.expectHTTPVersion
        let rightProtocol = expected == nil || httpVersion == expected
        state.withLock { state in
            state.finished += 1
            state.bytes += bodyBytes + options.postBytes
            if let httpVersion, !state.httpVersions.contains(httpVersion) { state.httpVersions.append(httpVersion) }
            if !answered || !rightProtocol {
                state.errors += 1
                if state.firstError == nil {
                    if !answered {
                        state.firstError = problem ?? "status \(status), \(bodyBytes) body bytes (expected 200, \(options.expectBytes))"
                    } else {
                        state.firstError = "response over \(httpVersion ?? "an unknown protocol"), expected \(expected ?? "?")"
                    }
                }
            }
        }
    }

    /// Prints the JSON line once (later calls do nothing) and returns the error count.
    @discardableResult
    public func report(extraErrors: Int = 0, note: String? = nil) -> Int {
        let seconds = monotonicSeconds() - start
        let usage = ResourceUsage.now()
        let snapshot = state.withLock { $0 }
        let first = reported.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return snapshot.errors }
        let errors = snapshot.errors + extraErrors
        var fields: [(String, String)] = [
            ("client", json(options.client)),
            ("workload", json(options.workload)),
            ("requests", "\(snapshot.finished)"),
            ("seconds", json(seconds)),
            ("req_per_s", json(Double(snapshot.finished) / seconds)),
            ("bytes_per_s", json(Double(snapshot.bytes) / seconds)),
            ("cpu_user_s", json(usage.user - startUsage.user)),
            ("cpu_sys_s", json(usage.system - startUsage.system)),
            ("context_switches", "\(usage.contextSwitches - startUsage.contextSwitches)"),
            ("peak_rss_kib", "\(usage.maxRSSKiB)"),
            ("errors", "\(errors)"),
            ("timed_out", snapshot.issued < options.requests || note != nil ? "true" : "false"),
        ]
        if !snapshot.httpVersions.isEmpty {
            fields.append(("http_version", json(snapshot.httpVersions.joined(separator: ","))))
        }
        if let problem = note ?? snapshot.firstError {
            fields.append(("first_error", json(problem)))
            writeError("\(options.client) \(options.workload): \(problem)\n")
        }
        print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        fflush(nil)
        return errors
    }

    /// A last resort against a hung client: 30 s after the deadline, report the requests
    /// still in flight as errors and exit.
    private func startWatchdog() {
        let grace = options.maxSeconds + 30
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [self] in
            let stuck = state.withLock { $0.issued - $0.finished }
            report(extraErrors: stuck, note: "watchdog: \(stuck) request(s) still in flight \(Int(grace)) s after the start")
            exit(2)
        }
    }
}

/// CPU time, context switches and peak memory of this process.
public struct ResourceUsage: Sendable {
    public var user: Double
    public var system: Double
    /// Voluntary and involuntary context switches of all threads.
    public var contextSwitches: Int
    public var maxRSSKiB: Int

    public static func now() -> ResourceUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ResourceUsage(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime),
                             contextSwitches: usage.ru_nvcsw + usage.ru_nivcsw, maxRSSKiB: usage.ru_maxrss)
    }
}

/// Runs `body(index)` on `count` new threads and returns when all have returned.
public func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Job {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    var threads: [pthread_t] = []
    for index in 0..<count {
        let job = Unmanaged.passRetained(Job { body(index) }).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            job.run()
            return nil
        }, job)
        precondition(result == 0, "pthread_create failed: \(result)")
        threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// Writes `text` to standard error.
public func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Request headers of a typical API client, the first `--headers` of which every request
/// carries (curl-bench.c has the same list).
public let benchRequestHeaders: [(name: String, value: String)] = [
    ("Accept", "application/json"),
    ("User-Agent", "CurlXHR-bench/1.0 (Linux x86_64)"),
    ("X-Request-Id", "3f2a9c1e-7b44-4d1a-9e2f-0c8d5b6a7e91"),
    ("Accept-Language", "en-GB,en;q=0.9"),
    ("Cache-Control", "no-cache"),
    ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl"),
    ("X-Client-Version", "5.4.2"),
    ("If-None-Match", "\"5f1d-2a3b4c5d\""),
]

/// A request body of `count` bytes.
public func bodyBytes(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
}

/// One element of the JSON array the json-* workloads fetch (run.sh writes it:
/// `{"id":0,"name":"item-0","price":0.5,"tags":["a","b"],"active":false}`, …), decoded the same
/// way by every client that decodes (the same type, its synthesized `Decodable`).
public struct JSONItem: Decodable, Sendable {
    public var id: Int
    public var name: String
    public var price: Double
    public var tags: [String]
    public var active: Bool
}

/// What is wrong with `items` decoded from a response of the json-* workloads (nil: nothing):
/// they must be the `expected` items run.sh wrote, ids 0, 1, … (the first and last checked).
public func jsonItemsProblem(_ items: [JSONItem], expected: Int) -> String? {
    guard items.count == expected else { return "decoded \(items.count) items, expected \(expected)" }
    guard items.first.map({ $0.id == 0 && $0.name == "item-0" }) ?? true,
          items.last.map({ $0.id == expected - 1 }) ?? true else {
        return "decoded items with unexpected ids (first \(items.first?.id ?? -1), last \(items.last?.id ?? -1))"
    }
    return nil
}

private func json(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

private func json(_ number: Double) -> String {
    number.isFinite ? "\(number)" : "null"
}
