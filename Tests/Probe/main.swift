// curlxhr-probe: runs one big transfer in a process of its own and reports, as one JSON
// line, what arrived and how much the process's peak memory grew while it ran. The tests
// use it because memory growth can only be measured in a process doing nothing else.
//
//   curlxhr-probe download URL [zeros]  GET, draining the body in LOADING callbacks and
//                                       checking it against the pattern byte i = i % 251 (with
//                                       "zeros": that every byte is 0, the callbacks slow, 2 ms
//                                       each, as a consumer behind a fast decoder)
//   curlxhr-probe upload URL FILE       PUT of FILE with sendWithFile
//   curlxhr-probe multipart URL FILE…   POST of a multipart form with the FILEs (addPostFile)
//   curlxhr-probe download-file URL FILE
//                                       a synchronous GET with setResponseFile(FILE), then
//                                       checks FILE against the pattern, 1 MiB at a time
//   curlxhr-probe get URL USER PASSWORD AUTH
//                                       one synchronous authenticated GET, for tests that
//                                       need a process with an environment of its own
//   curlxhr-probe env-proxy URL on|off one synchronous GET with HttpRequest.usesEnvironmentProxy
//                                       set as given, for tests of http_proxy and no_proxy
//   curlxhr-probe cookies URL STORE [kill|clear-memory|clear-all]
//                                       one synchronous GET with the cookie store in the file
//                                       STORE, printing the body; "kill" SIGKILLs the process
//                                       as soon as the request is DONE, "clear-…" calls
//                                       clearCookies(includePersistentStore:) before it
//   curlxhr-probe soak URL N            N requests to the fault server at URL (sync and async
//                                       from 8 threads; GETs, POSTs, aborts, closes, async
//                                       responses read or let go of at the head), then reports descriptors,
//                                       threads, RSS and transfers in flight before and after
//   curlxhr-probe cache-fill FOLDER PREFIX N
//                                       stores N entries PREFIX-0… (each body its key
//                                       repeated) in the cache folder, for tests of processes
//                                       sharing one; reports how many were stored
//   curlxhr-probe cache-get FOLDER URL [POLICY [URL…]]
//                                       HttpRequest.setCacheFolder(FOLDER), then one
//                                       synchronous GET of each URL under POLICY ("default",
//                                       or "offline": [.readForced]); for each: status, status
//                                       text, fromCache, body length, SHA-256 and whether it is
//                                       the pattern (several URLs: under "results"). A folder
//                                       that does not open is reported as "cacheError", the
//                                       GETs still made without the cache, and the exit is 1
//   curlxhr-probe cache-check FOLDER    opens a CacheStore on FOLDER (which removes what
//                                       crashed writers left), then reports its rows (key,
//                                       body name and size, read from index.sqlite), the index's
//                                       integrity check, the files in bodies/ and their sizes,
//                                       and the .part files left
//   curlxhr-probe connection-limits URL TOTAL PER-HOST N CAFILE
//                                       HttpRequest.setConnectionLimits(total:perHost:), then
//                                       N asynchronous HTTP/1.1 GETs of URL at once; prints
//                                       their statuses (a process of its own: the limits are
//                                       process-wide)
//   curlxhr-probe stream URL [zeros]    GET with `response()`, reading the body as an
//                                       AsyncSequence slowly (a pause after each MiB) and
//                                       checking it against the pattern (or that it is all 0)
//   curlxhr-probe exit-in-flight URL N  starts N asynchronous GETs of URL (the Nth to an
//                                       HTTPS URL given as a fourth argument, if any) and
//                                       exits at once, with them in flight
import CSQLite
import CurlXHR
import Dispatch
import Foundation
import Synchronization

/// VmHWM, the process's peak resident set, in KiB.
func peakKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

final class Drain: HttpRequestDelegate {
    struct Progress {
        var bytes = 0
        var patternOK = true
        var loadingReports = 0
        /// The first KiB of the body, for small answers such as an upload's.
        var head = Data()
    }
    let progress = Mutex(Progress())

    /// 64 periods of the pattern, to compare received bytes against with memcmp.
    static let periods = (0..<251 * 64).map { UInt8($0 % 251) }

    /// Whether `data` is the pattern from byte `offset` on.
    static func continuesPattern(_ data: Data, at offset: Int) -> Bool {
        data.withUnsafeBytes { received in
            periods.withUnsafeBytes { expected in
                var position = 0
                while position < received.count {
                    let start = (offset + position) % 251
                    let length = min(received.count - position, expected.count - start)
                    if memcmp(received.baseAddress! + position, expected.baseAddress! + start, length) != 0 { return false }
                    position += length
                }
                return true
            }
        }
    }
    /// Whether `data` is all zero bytes.
    static func isZeros(_ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            var seen: UInt8 = 0
            for byte in bytes { seen |= byte }
            return seen == 0
        }
    }

    let done = DispatchSemaphore(value: 0)
    /// The body is all zeros, and the callbacks are slow.
    let zeros: Bool

    init(zeros: Bool = false) {
        self.zeros = zeros
    }

    func onStatusChange(_ request: HttpRequest) {
        let state = request.getState()
        if state == .loading || state == .done {
            let data = request.getReceiveBuffer()
            if zeros, state == .loading { usleep(2000) }
            progress.withLock { progress in
                if state == .loading { progress.loadingReports += 1 }
                if !(zeros ? Self.isZeros(data) : Self.continuesPattern(data, at: progress.bytes)) { progress.patternOK = false }
                progress.bytes += data.count
                if progress.head.count < 1024 { progress.head.append(data.prefix(1024 - progress.head.count)) }
            }
        }
        if state == .done { done.signal() }
    }
}

func report(_ fields: [String: Any]) -> Never {
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    exit(0)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: curlxhr-probe download URL | upload URL FILE | multipart URL FILE… | download-file URL FILE\n".utf8))
    exit(2)
}
let mode = arguments[1], url = arguments[2]

if mode == "cache-fill", arguments.count == 5, let count = Int(arguments[4]) {
    let prefix = arguments[3]
    do {
        let store = try CacheStore(folder: url, maxBytes: 1 << 30)
        var stored = 0
        for index in 0..<count {
            let key = "\(prefix)-\(index)"
            let body = try store.beginBody()
            let bytes = Array(String(repeating: key, count: 100).utf8)
            _ = bytes.withUnsafeBytes { write(body.descriptor, $0.baseAddress, $0.count) }
            let entry = CacheStore.Entry(key: key, stored: CacheRules.Stored(status: 200, fields: [("Cache-Control", "max-age=60")],
                                                                             requestTime: 1, responseTime: 1))
            try store.store(entry, body: body, now: Double(index))
            stored += 1
        }
        report(["stored": stored])
    } catch {
        report(["error": "\(error)"])
    }
}

/// The SHA-256 of `data` in hex, from sha256sum (the probe links no digest of its own).
func sha256(_ data: Data) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    guard (try? process.run()) != nil else { return "" }
    input.fileHandleForWriting.write(data)
    try? input.fileHandleForWriting.close()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(String(decoding: printed, as: UTF8.self).prefix(64))
}

if mode == "cache-get", arguments.count >= 4 {
    let policies: [String: HttpRequest.CachePolicy] = ["default": .default, "offline": [.readForced]]
    let policyName = arguments.count >= 5 ? arguments[4] : "default"
    guard let policy = policies[policyName] else {
        FileHandle.standardError.write(Data("cache-get: POLICY is default or offline, not \(policyName)\n".utf8))
        exit(2)
    }
    let cacheError = HttpRequest.setCacheFolder(url, maxBytes: 1 << 32) ? nil : HttpRequest.cacheFolderError ?? "(no reason)"
    let results = ([arguments[3]] + arguments.dropFirst(5)).map { target -> [String: Any] in
        let request = HttpRequest()
        request.setCachePolicy(policy)
        guard request.open("GET", url: target) else { return ["url": target, "error": request.lastError?.message ?? "open refused"] }
        let started = Date()
        request.send(timeout: 120)
        let body = request.getReceiveBuffer()
        return ["url": target, "status": request.getStatus(), "status_text": request.getStatusText() ?? "",
                "from_cache": request.isResponseFromCache(), "bytes": body.count, "sha256": sha256(body),
                "pattern_ok": Drain.continuesPattern(body, at: 0), "seconds": Date().timeIntervalSince(started)]
    }
    var fields = results.count == 1 ? results[0] : ["results": results]
    if let cacheError { fields["cacheError"] = cacheError }
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    exit(cacheError == nil ? 0 : 1)
}

if mode == "cache-check", arguments.count == 3 {
    let store: CacheStore
    do {
        store = try CacheStore(folder: url, maxBytes: 1 << 32)
    } catch {
        report(["error": "\(error)"])
    }
    // The rows and the integrity check through a connection of its own (the store shows no
    // count), read-only, while the store is open.
    var rows: [[String: Any]] = []
    var integrity: [String] = []
    var database: OpaquePointer?
    if sqlite3_open_v2(url + "/index.sqlite", &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let database {
        func each(_ sql: String, _ row: (OpaquePointer) -> Void) {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                integrity.append("\(sql): \(String(cString: sqlite3_errmsg(database)))")
                return
            }
            while sqlite3_step(statement) == SQLITE_ROW { row(statement) }
            sqlite3_finalize(statement)
        }
        func text(_ statement: OpaquePointer, _ column: Int32) -> String {
            sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
        }
        each("PRAGMA integrity_check") { integrity.append(text($0, 0)) }
        each("SELECT key, body_name, body_size FROM entries ORDER BY id") {
            rows.append(["key": text($0, 0), "body": text($0, 1), "size": sqlite3_column_int64($0, 2)])
        }
    } else {
        integrity.append("cannot open the index: " + (database.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"))
    }
    sqlite3_close(database)
    var bodies: [String: Int] = [:]
    var parts: [String] = []
    for name in (try? FileManager.default.contentsOfDirectory(atPath: url + "/bodies")) ?? [] {
        if name.hasSuffix(".part") { parts.append(name) }
        let size = (try? FileManager.default.attributesOfItem(atPath: url + "/bodies/" + name)[.size] as? Int) ?? -1
        bodies[name] = size
    }
    report(["entries": rows, "integrity": integrity, "body_files": bodies, "parts": parts, "total_bytes": store.totalBytes])
}

if mode == "get", arguments.count == 6 {
    let request = HttpRequest()
    guard request.open("GET", url: url, user: arguments[3], password: arguments[4], auth: arguments[5]) else {
        report(["error": request.lastError?.message ?? "open refused"])
    }
    request.send(timeout: 20)
    report(["status": request.getStatus(), "status_text": request.getStatusText() ?? ""])
}

if mode == "env-proxy", arguments.count == 4 {
    HttpRequest.usesEnvironmentProxy = arguments[3] == "on"
    let request = HttpRequest()
    request.open("GET", url: url)
    request.send(timeout: 20)
    report(["status": request.getStatus(), "status_text": request.getStatusText() ?? ""])
}

if mode == "connection-limits", arguments.count == 7, let total = Int(arguments[3]), let perHost = Int(arguments[4]),
   let count = Int(arguments[5]) {
    guard HttpRequest.setConnectionLimits(total: total, perHost: perHost) else { report(["error": "limits refused"]) }
    let statuses = Mutex([Int]())
    let group = DispatchGroup()
    var requests: [HttpRequest] = []
    for _ in 0..<count {
        let request = HttpRequest()
        request.enablePipelining = false
        request.setCACertificateFile(arguments[6])
        group.enter()
        request.onStatusChange = { request in
            guard request.getState() == .done else { return }
            statuses.withLock { $0.append(request.getStatus()) }
            group.leave()
        }
        request.open("GET", url: url, async: true)
        requests.append(request)
    }
    for request in requests { request.send(timeout: 30) }
    group.wait()
    report(["statuses": statuses.withLock { $0 }])
}

/// What the process holds: open descriptors, threads, resident KiB.
func holdings() -> (descriptors: Int, threads: Int, rssKiB: Int) {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Int {
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
        return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
    }
    return (descriptors, field("Threads"), field("VmRSS"))
}

/// One round of every kind of request, so every path has run before the baseline.
@Sendable func soakRound(_ index: Int, _ url: String) {
    let request = HttpRequest()
    switch index % 7 {
    case 0:
        request.open("GET", url: url + "/bytes?n=\(index % 5000)")
        request.send()
        _ = request.getReceiveBuffer()
    case 1:
        request.open("POST", url: url + "/sink")
        request.sendData(Data(repeating: UInt8(index & 0xFF), count: index % 70_000))
    case 2:
        let done = DispatchSemaphore(value: 0)
        request.onStatusChange = { if $0.getState() == .done { done.signal() } else { _ = $0.getReceiveBuffer() } }
        request.open("GET", url: url + "/drip?chunks=3&size=100&interval_ms=1", async: true)
        request.send()
        done.wait()
    case 3:
        request.open("GET", url: url + "/delay?ms=50", async: true)
        request.send()
        request.abort()
    case 4:
        request.open("GET", url: url + "/redirect/chain?n=2")
        request.send()
        request.close()
    case 5:
        // An async response: read whole, or let go of at its head (its body may still come).
        request.open("GET", url: url + "/bytes?n=\(index % 5000)")
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            if let response = try? await request.response(), index % 2 == 0 { _ = try? await response.body.collect(upTo: 1 << 20) }
            done.signal()
        }
        done.wait()
    default:
        request.open("GET", url: url + "/status?code=404")
        request.setRequestHeader("X-Soak", value: "\(index)")
        request.send(timeout: 10)
    }
}
if mode == "soak", arguments.count == 4, let total = Int(arguments[3]) {
    let base = url
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
        for index in stride(from: thread, to: 600, by: 8) { soakRound(index, base) }
    }
    Thread.sleep(forTimeInterval: 1)
    let before = holdings()
    let started = Date()
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
        for index in stride(from: thread, to: total, by: 8) { soakRound(index, base) }
    }
    // Aborted transfers and closed connections settle.
    Thread.sleep(forTimeInterval: 1)
    let settled = Date().addingTimeInterval(10)
    while HttpRequest.transfersInFlight != 0, Date() < settled { Thread.sleep(forTimeInterval: 0.05) }
    let after = holdings()
    report(["requests": total, "seconds": Date().timeIntervalSince(started),
            "descriptors_before": before.descriptors, "descriptors_after": after.descriptors,
            "threads_before": before.threads, "threads_after": after.threads,
            "rss_kib_before": before.rssKiB, "rss_kib_after": after.rssKiB,
            "transfers_in_flight_after": HttpRequest.transfersInFlight])
}

if mode == "exit-in-flight", arguments.count >= 4, let count = Int(arguments[3]) {
    var requests: [HttpRequest] = []
    for index in 0..<count {
        let request = HttpRequest()
        let target = index == count - 1 && arguments.count == 5 ? arguments[4] : url
        request.open("GET", url: target, async: true)
        if target.hasPrefix("https:") { request.disablePeerVerification() }
        request.send()
        requests.append(request)
    }
    exit(0)
}

if mode == "cookies", arguments.count >= 4 {
    CookieStore.shared.file = arguments[3]
    let action = arguments.count == 5 ? arguments[4] : ""
    let request = HttpRequest()
    if action.hasPrefix("clear-") { request.clearCookies(includePersistentStore: action == "clear-all") }
    request.open("GET", url: url)
    request.send(timeout: 20)
    if action == "kill" { kill(getpid(), SIGKILL) }
    report(["status": request.getStatus(), "body": String(decoding: request.getReceiveBuffer(), as: UTF8.self)])
}

// Warm up the engine and libcurl with a small request to the same server, so the baseline
// includes them.
var warmupURL = URLComponents(string: url)!
warmupURL.path = "/delay"
warmupURL.query = "ms=0"
let warmup = HttpRequest()
warmup.open("GET", url: warmupURL.string!)
warmup.send()
let baseline = peakKiB()

if mode == "download-file", arguments.count == 4 {
    let request = HttpRequest()
    request.setResponseFile(arguments[3])
    request.open("GET", url: url)
    let started = Date()
    request.send()
    let seconds = Date().timeIntervalSince(started)
    let peak = peakKiB()  // before the check reads the file
    var bytes = 0, patternOK = true
    if let file = FileHandle(forReadingAtPath: arguments[3]) {
        while let chunk = try? file.read(upToCount: 1 << 20), !chunk.isEmpty {
            if !Drain.continuesPattern(chunk, at: bytes) { patternOK = false }
            bytes += chunk.count
        }
    }
    report(["status": request.getStatus(), "status_text": request.getStatusText() ?? "", "bytes": bytes,
            "pattern_ok": patternOK, "buffered": request.getReceiveBuffer().count,
            "baseline_kib": baseline, "peak_kib": peak, "seconds": seconds])
}

let zeros = arguments.count == 4 && arguments[3] == "zeros"

if mode == "stream" {
    struct Outcome: Sendable {
        var status = 0, bytes = 0, patternOK = true, error = ""
    }
    let outcome = Mutex(Outcome())
    let done = DispatchSemaphore(value: 0)
    let started = Date()
    // Detached: top-level code runs on the main actor, which `done.wait()` blocks.
    Task.detached {
        defer { done.signal() }
        let request = HttpRequest()
        request.open("GET", url: url)
        do {
            let response = try await request.response()
            outcome.withLock { $0.status = response.status }
            var bytes = 0, patternOK = true, nextPause = 1 << 20
            for try await chunk in response.body {
                if !(zeros ? Drain.isZeros(chunk) : Drain.continuesPattern(chunk, at: bytes)) { patternOK = false }
                bytes += chunk.count
                if bytes >= nextPause {
                    // Slower than the server: the transfer must wait for the reader.
                    try await Task.sleep(for: .milliseconds(2))
                    nextPause += 1 << 20
                }
            }
            outcome.withLock { $0.bytes = bytes; $0.patternOK = patternOK }
        } catch {
            outcome.withLock { $0.error = "\(error)" }
        }
    }
    done.wait()
    let result = outcome.withLock { $0 }
    report(["status": result.status, "bytes": result.bytes, "pattern_ok": result.patternOK, "error": result.error,
            "baseline_kib": baseline, "peak_kib": peakKiB(), "seconds": Date().timeIntervalSince(started)])
}

let request = HttpRequest()
let drain = Drain(zeros: zeros && mode == "download")
request.delegate = drain
request.open(mode == "upload" ? "PUT" : mode == "multipart" ? "POST" : "GET", url: url, async: true)
if mode == "multipart" {
    for (index, path) in arguments.dropFirst(3).enumerated() { request.addPostFile(path, forKey: "file\(index)") }
}
let started = Date()
let sent = mode == "upload" ? request.sendWithFile(arguments[3]) : request.send()
guard sent else { report(["error": request.lastError?.message ?? "send refused"]) }
drain.done.wait()
let progress = drain.progress.withLock { $0 }
var fields: [String: Any] = [
    "status": request.getStatus(),
    "status_text": request.getStatusText() ?? "",
    "bytes": progress.bytes,
    "loading_reports": progress.loadingReports,
    "baseline_kib": baseline,
    "peak_kib": peakKiB(),
    "seconds": Date().timeIntervalSince(started),
]
if mode == "download" {
    fields["pattern_ok"] = progress.patternOK
} else {
    fields["response"] = String(decoding: progress.head, as: UTF8.self)
}
report(fields)
