// xhr-in-swift: curl-bench's xhr mode (xhr-in-c) written in Swift, line for line: the
// handoff's two threads and transfers, plus an XHR-style request's least duties, as lean
// Swift over libcurl (no library of its own). Each request object has a lock, a ready state
// and a queue of reports; `open` checks the URL for bytes outside ASCII and the method for a
// token, forgets the last response (keeping its buffers) and reports OPENED; `send` reports
// SENT and posts the start to the engine thread. The engine copies the header lines libcurl
// hands its header callback (Set-Cookie noted, Content-Length read), and at the head's end
// (interim 1xx heads skipped) reads the status and copies the head into the request
// (HEADERS_RECEIVED); body bytes go into the request's buffer, sized from Content-Length
// (LOADING, one report while one waits); at the end it reads the metrics CurlXHR keeps and
// reports DONE. Each round the requests with new reports go, once each, to the callback
// thread, which takes a request's reports under its lock and calls the application's callback
// for each; at DONE the callback reads the status and the body's length under the lock, then
// opens and sends the request again. The same options on each handle as curl-bench's.
//
// What it costs over xhr-in-c is what the same work costs in Swift rather than C; what
// CurlXHR costs over it is CurlXHR's own design. --mode async only. Client "xhr-in-swift".
import BenchSupport
import CCurlBench
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let options = BenchOptions.parse(client: "xhr-in-swift")
guard options.mode == .async, options.postBytes == 0 else {
    writeError("xhr-in-swift: GETs in --mode async only\n")
    exit(64)
}
let tally = Tally(options)

enum ReadyState: UInt8 { case unsent, opened, sent, headersReceived, loading, done }

/// One request object. `shared` under its lock; the rest engine thread only, but `queued`
/// (under the engine's hand-over lock) and `callbackState` (callback thread).
final class Request: @unchecked Sendable {
    struct Shared {
        var state = ReadyState.unsent
        var reports: [ReadyState] = []
        var head: [UInt8] = []
        var status = 0
        var contentLength = -1
        var body: [UInt8] = []
        var connectTime: curl_off_t = 0, firstByteTime: curl_off_t = 0, totalTime: curl_off_t = 0
        var localPort = 0, remotePort = 0

        /// The new state, and its report (a LOADING waiting takes the next).
        mutating func report(_ new: ReadyState) {
            state = new
            if new == .loading, reports.last == .loading { return }
            reports.append(new)
        }
    }

    let shared = Mutex(Shared())
    let easy: UnsafeMutableRawPointer
    unowned(unsafe) let engine: Engine
    // One thread each (see above), so without Swift's run-time exclusivity checks, as CurlXHR's.
    @exclusivity(unchecked) var lines: [UInt8] = []
    @exclusivity(unchecked) var announced = -1
    @exclusivity(unchecked) var sawSetCookie = false
    @exclusivity(unchecked) var due = false
    @exclusivity(unchecked) var queued = false
    @exclusivity(unchecked) var result = CURLE_OK
    @exclusivity(unchecked) var callbackState = ReadyState.unsent
    @exclusivity(unchecked) var callback: (Request) -> Void = { _ in }

    init(engine: Engine, easy: UnsafeMutableRawPointer) {
        self.engine = engine
        self.easy = easy
        shared.withLock { $0.reports.reserveCapacity(8) }
        lines.reserveCapacity(1024)
    }

    /// Engine thread: the request has reports to deliver once this round ends.
    func markDue() {
        guard !due else { return }
        due = true
        engine.due.append(self)
    }

    /// `open`: false when refused (a URL with bytes outside ASCII, a method that is no token).
    func open(method: String, url: String) -> Bool {
        guard Self.all(url, { $0 < 0x80 }), Self.all(method, Self.isTokenByte) else { return false }
        shared.withLock { shared in
            shared.head.removeAll(keepingCapacity: true)
            shared.body.removeAll(keepingCapacity: true)
            shared.status = 0
            shared.contentLength = -1
            shared.report(.opened)
        }
        return true
    }

    /// Whether every byte of `text` passes `test` (over its UTF-8 storage).
    private static func all(_ text: String, _ test: (UInt8) -> Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes where !test(byte) { return false }
            return true
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `send`: false unless OPENED.
    func send() -> Bool {
        let ok = shared.withLock { shared -> Bool in
            guard shared.state == .opened else { return false }
            shared.report(.sent)
            return true
        }
        if ok { engine.post(self) }
        return ok
    }

    /// Engine thread: a send starts.
    func begin() {
        lines.removeAll(keepingCapacity: true)
        announced = -1
        sawSetCookie = false
    }

    /// Engine thread, libcurl's header callback: one header line, or the empty line ending a head.
    func headerLine(_ line: UnsafeRawBufferPointer) -> Bool {
        if let first = line.first, first != UInt8(ascii: "\r"), first != UInt8(ascii: "\n") {
            if line.count > 11, first | 0x20 == UInt8(ascii: "s"), Self.hasPrefix(line, "set-cookie:") {
                sawSetCookie = true
            } else if line.count > 15, first | 0x20 == UInt8(ascii: "c"), Self.hasPrefix(line, "content-length:") {
                announced = Self.number(line, from: 15)
            }
            lines.append(contentsOf: line.assumingMemoryBound(to: UInt8.self))
            return true
        }
        // The head ended: its status ("HTTP/1.1 200 OK").
        var status = 0
        if let space = lines.firstIndex(of: UInt8(ascii: " ")), lines.count - space > 3 {
            status = Self.number(lines, from: space + 1, digits: 3)
        }
        let length = announced
        announced = -1
        guard !(100..<200).contains(status) else {
            lines.removeAll(keepingCapacity: true)
            return true
        }
        shared.withLock { shared in
            shared.head.removeAll(keepingCapacity: true)
            shared.head.append(contentsOf: lines)
            shared.status = status
            shared.contentLength = length
            shared.report(.headersReceived)
        }
        lines.removeAll(keepingCapacity: true)
        markDue()
        return true
    }

    /// Engine thread, libcurl's write callback.
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) {
        shared.withLock { shared in
            if shared.contentLength > shared.body.count + bytes.count {
                shared.body.reserveCapacity(shared.contentLength)
            }
            shared.body.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
            shared.report(.loading)
        }
        markDue()
    }

    /// Engine thread: the send ended (its handle out of the multi handle).
    func ended(_ code: CURLcode) {
        var connect: curl_off_t = 0, firstByte: curl_off_t = 0, total: curl_off_t = 0
        var local = 0, remote = 0
        _ = bench_get_offset(easy, CURLINFO_CONNECT_TIME_T, &connect)
        _ = bench_get_offset(easy, CURLINFO_STARTTRANSFER_TIME_T, &firstByte)
        _ = bench_get_offset(easy, CURLINFO_TOTAL_TIME_T, &total)
        _ = bench_get_long(easy, CURLINFO_LOCAL_PORT, &local)
        _ = bench_get_long(easy, CURLINFO_PRIMARY_PORT, &remote)
        shared.withLock { shared in
            shared.connectTime = connect
            shared.firstByteTime = firstByte
            shared.totalTime = total
            shared.localPort = local
            shared.remotePort = remote
            result = code
            if code != CURLE_OK { shared.status = 0 }
            shared.report(.done)
        }
        markDue()
    }

    /// Callback thread: the reports, taken under the lock, a callback each, until none is left.
    func deliver(into taken: inout [ReadyState]) {
        while true {
            shared.withLock { swap(&$0.reports, &taken) }
            if taken.isEmpty { return }
            for state in taken {
                callbackState = state
                callback(self)
            }
            taken.removeAll(keepingCapacity: true)
        }
    }

    private static func hasPrefix(_ line: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        strncasecmp(line.baseAddress!.assumingMemoryBound(to: CChar.self),
                    UnsafeRawPointer(prefix.utf8Start).assumingMemoryBound(to: CChar.self), prefix.utf8CodeUnitCount) == 0
    }

    private static func number<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, from offset: Int, digits: Int = .max) -> Int
    where Bytes.Index == Int {
        var index = bytes.startIndex + offset
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") { index += 1 }
        var value = 0
        var count = 0
        while index < bytes.endIndex, count < digits, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
            count += 1
        }
        return value
    }
}

/// The engine thread's multi handle and its two queues: starts posted to it, and requests with
/// reports for the callback thread.
final class Engine: @unchecked Sendable {
    struct Commands {
        var starts: [Request] = []
        var loopWaits = false
        var stopping = false
    }

    let multi: UnsafeMutableRawPointer
    let commands = Mutex(Commands())
    /// To the callback thread, under `doneLock`.
    let doneLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    let donePosted = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    @exclusivity(unchecked) var done: [Request] = []
    /// Engine thread: the requests with reports this round.
    @exclusivity(unchecked) var due: [Request] = []
    /// Callback thread: requests started and not yet retired.
    @exclusivity(unchecked) var inFlight = 0

    init(concurrency: Int) {
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        _ = bench_multi_set_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        pthread_mutex_init(doneLock, nil)
        pthread_cond_init(donePosted, nil)
        done.reserveCapacity(concurrency)
        due.reserveCapacity(concurrency)
        commands.withLock { $0.starts.reserveCapacity(concurrency) }
    }

    /// Queues a start; wakes the engine only if it waits (or is about to) in curl_multi_poll.
    func post(_ request: Request) {
        let wake = commands.withLock { commands -> Bool in
            commands.starts.append(request)
            defer { commands.loopWaits = false }
            return commands.loopWaits
        }
        if wake { curl_multi_wakeup(multi) }
    }

    func stop() {
        commands.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    func run(concurrency: Int) {
        var pending: [Request] = []
        pending.reserveCapacity(concurrency)
        while true {
            let stopping = commands.withLock { commands -> Bool in
                swap(&pending, &commands.starts)
                commands.loopWaits = false
                return commands.stopping
            }
            for request in pending {
                request.begin()
                curl_multi_add_handle(multi, request.easy)
            }
            pending.removeAll(keepingCapacity: true)
            if stopping { return }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = bench_message_result(message)
                var context: UnsafeMutableRawPointer?
                _ = bench_get_pointer(easy, CURLINFO_PRIVATE, &context)
                let request = Unmanaged<Request>.fromOpaque(context!).takeUnretainedValue()
                curl_multi_remove_handle(multi, easy)
                request.ended(code)
            }
            if !due.isEmpty {
                pthread_mutex_lock(doneLock)
                let wasEmpty = done.isEmpty
                for request in due {
                    request.due = false
                    if request.queued { continue }
                    request.queued = true
                    done.append(request)
                }
                pthread_mutex_unlock(doneLock)
                due.removeAll(keepingCapacity: true)
                if wasEmpty { pthread_cond_signal(donePosted) }
                if running == 0 { sched_yield() }
            }
            let waits = commands.withLock { commands -> Bool in
                commands.loopWaits = commands.starts.isEmpty
                return commands.loopWaits
            }
            if waits { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
    }
}

// ---- libcurl's callbacks and the handles, with curl-bench's options ----

extension Request {
    static let headerCallback: curl_write_callback = { data, size, count, context in
        let length = size * count
        let request = Unmanaged<Request>.fromOpaque(context!).takeUnretainedValue()
        return request.headerLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
    }
    static let writeCallback: curl_write_callback = { data, size, count, context in
        let length = size * count
        Unmanaged<Request>.fromOpaque(context!).takeUnretainedValue().bodyBytes(UnsafeRawBufferPointer(start: data, count: length))
        return length
    }
}

guard let parsedURL = curl_url(), curl_url_set(parsedURL, CURLUPART_URL, options.url, 0) == CURLUE_OK else {
    writeError("libcurl cannot parse the URL \(options.url)\n")
    exit(1)
}
var headerList: UnsafeMutablePointer<curl_slist>?
for (name, value) in benchRequestHeaders.prefix(options.headers) { headerList = curl_slist_append(headerList, "\(name): \(value)") }
for (name, value) in options.extraHeaders { headerList = curl_slist_append(headerList, "\(name): \(value)") }
if options.headers < 2 { headerList = curl_slist_append(headerList, "User-Agent: curl-bench/1.0 libcurl/\(String(cString: bench_version()))") }
let isHTTPS = options.url.lowercased().hasPrefix("https:")

func makeHandle(for request: Request, headers: UnsafeMutablePointer<curl_slist>?, parsedURL: OpaquePointer) {
    let easy = request.easy
    let context = Unmanaged.passUnretained(request).toOpaque()
    _ = bench_set_pointer(easy, CURLOPT_URL, options.url)
    _ = bench_set_pointer(easy, CURLOPT_CURLU, UnsafeRawPointer(parsedURL))
    _ = bench_set_long(easy, CURLOPT_NOSIGNAL, 1)
    _ = bench_set_long(easy, CURLOPT_FOLLOWLOCATION, 1)
    _ = bench_set_pointer(easy, CURLOPT_PROXY, "")
    _ = bench_set_pointer(easy, CURLOPT_ACCEPT_ENCODING, "")
    _ = bench_set_write_function(easy, CURLOPT_WRITEFUNCTION, Request.writeCallback)
    _ = bench_set_pointer(easy, CURLOPT_WRITEDATA, context)
    _ = bench_set_write_function(easy, CURLOPT_HEADERFUNCTION, Request.headerCallback)
    _ = bench_set_pointer(easy, CURLOPT_HEADERDATA, context)
    _ = bench_set_pointer(easy, CURLOPT_PRIVATE, context)
    _ = bench_set_long(easy, CURLOPT_TIMEOUT_MS, Int((options.maxSeconds + 10) * 1000))
    _ = bench_set_pointer(easy, CURLOPT_HTTPHEADER, headers)
    if isHTTPS {
        _ = bench_set_long(easy, CURLOPT_PIPEWAIT, 1)
        _ = bench_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
    }
    if let caFile = options.caCertificateFile {
        _ = bench_set_pointer(easy, CURLOPT_CAINFO, caFile)
        _ = bench_set_pointer(easy, CURLOPT_CAPATH, nil)
    }
}

// ---- The run ----

curl_global_init(Int(CURL_GLOBAL_DEFAULT))
let engine = Engine(concurrency: options.concurrency)
let requests = (0..<options.concurrency).map { _ -> Request in
    guard let easy = curl_easy_init() else { fatalError("curl_easy_init failed") }
    let request = Request(engine: engine, easy: easy)
    makeHandle(for: request, headers: headerList, parsedURL: parsedURL)
    request.callback = application
    return request
}

/// The application's callback (callback thread): at DONE it counts the response and sends the
/// next request.
func application(_ request: Request) {
    guard request.callbackState == .done else { return }
    let (status, bytes) = request.shared.withLock { ($0.status, $0.body.count) }
    tally.finish(status: request.result == CURLE_OK ? status : 0, bodyBytes: bytes,
                 problem: request.result == CURLE_OK ? nil : String(cString: curl_easy_strerror(request.result)),
                 httpVersion: options.expectHTTPVersion == nil ? nil : httpVersion(request.easy))
    if !(tally.claim() && request.open(method: "GET", url: options.url) && request.send()) { engine.inFlight -= 1 }
}

/// The protocol of the finished transfer on `easy` (only with --expect-http-version).
func httpVersion(_ easy: UnsafeMutableRawPointer) -> String? {
    var version = 0
    _ = bench_get_long(easy, CURLINFO_HTTP_VERSION, &version)
    switch version {
    case Int(CURL_HTTP_VERSION_1_1): return "HTTP/1.1"
    case Int(CURL_HTTP_VERSION_2_0): return "HTTP/2"
    default: return nil
    }
}

for request in requests where tally.claim() {
    guard request.open(method: "GET", url: options.url), request.send() else {
        writeError("xhr-in-swift: open or send refused\n")
        exit(1)
    }
    engine.inFlight += 1
}
runOnThreads(2) { index in
    if index == 0 {
        engine.run(concurrency: options.concurrency)
        return
    }
    var batch: [Request] = []
    batch.reserveCapacity(options.concurrency)
    var taken: [ReadyState] = []
    taken.reserveCapacity(8)
    while engine.inFlight > 0 {
        pthread_mutex_lock(engine.doneLock)
        while engine.done.isEmpty { pthread_cond_wait(engine.donePosted, engine.doneLock) }
        swap(&batch, &engine.done)
        for request in batch { request.queued = false }
        pthread_mutex_unlock(engine.doneLock)
        for request in batch { request.deliver(into: &taken) }
        batch.removeAll(keepingCapacity: true)
    }
    engine.stop()
}
let errors = tally.report()
exit(errors == 0 ? 0 : 1)
