// CurlXHR as a benchmark client, used the way an application would use it.
//
// --mode async (client "curlxhr"): `concurrency` HttpRequest objects opened with
//     async: true. Each one's onStatusChange drains getReceiveBuffer() on LOADING and DONE
//     (counting the bytes, keeping none) and, on DONE, records the outcome and re-opens and
//     re-sends the same object. Callbacks run on the library's default callback queue.
// --mode async --await (client "curlxhr-await"): `concurrency` tasks, each with one HttpRequest
//     that it opens and sends with `try await response()` in a loop, reading the body as an
//     AsyncSequence (counting the bytes, keeping none). --header "NAME: VALUE" (repeatable): a
//     field every request carries (client-bearer-c16's token).
// --mode threads (client "curlxhr-sync"): `concurrency` threads, each with one HttpRequest
//     opened with async: false, calling send() (which blocks until DONE) in a loop and then
//     taking the whole body with getReceiveBuffer().
//
// --response-file PATH (this client's own option; --concurrency 1 only): every request calls
//     setResponseFile(PATH) after open, so a 2xx body is streamed into PATH.part and renamed
//     to PATH when complete, and the receive buffer stays empty (async: LOADING is still
//     reported and drained as above). A request then counts as good when its status is 200
//     and, after DONE, `stat` finds PATH with exactly --expect-bytes bytes (the file is never
//     read); those are the body bytes it counts. PATH (and a .part left by a failure) is
//     removed before the first request and after the last.
//
// --post-file PATH (this client's own option, repeatable; instead of --post-bytes): every
//     request is a POST of a multipart/form-data form of those files, built after each open
//     with addPostFile(PATH, forKey: "fileN") (N = 0, 1, … in order; the library streams
//     each file from disk with libcurl's MIME API) and sent with send(). The request body
//     bytes counted are the sum of the files' sizes (stat'ed once at the start; they become
//     --post-bytes for the tally), not the multipart framing around them, as curl-bench's
//     --mime-file counts them.
//
// --cache-folder PATH (this client's own option; the cache-hit-* workloads): turns on the
//     library's HTTP cache in PATH (HttpRequest.setCacheFolder, 1 GiB) before anything else,
//     then sends one request by the run's own consumer (mode) before the timed ones, not
//     counted: a miss stores the response, a hit leaves it (the response must be 200 with
//     --expect-bytes bytes, or the run stops). Every timed response must then come from the
//     cache (isResponseFromCache() read after DONE; with --await, HttpResponse.isFromCache
//     after the body): one that did not counts as an error. With --requests 0 the run is that
//     one request: run.sh warms a cache folder so.
//
// --cacert PATH: HttpRequest.caCertificateFile, set once for the process before the first
//     request (the library's process-wide trust roots, in place of the system's).
// --expect-http-version V: each request's protocol is read at DONE from getMetrics().httpVersion
//     ("HTTP/1.1", "HTTP/2") and checked by the tally; without it getMetrics() is never called.
//     Over https the library's defaults multiplex: its multi handle has CURLPIPE_MULTIPLEX
//     (enablePipelining) and each https request CURLOPT_PIPEWAIT, so requests in flight share
//     one HTTP/2 connection (libcurl 7.88 offers h2 by ALPN for https by default).
//
// Library defaults throughout (enablePipelining, cookies, redirects).
import BenchSupport
import CurlXHR
import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The size of the file at `path` (nil: none), from `stat`: the file is not read.
func fileSize(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
}

/// --response-file, --post-file, --cache-folder and --await, taken out of the arguments before
/// BenchOptions reads the shared ones.
let (responseFile, postFiles, cacheFolder, usesAwait, sharedArguments): (String?, [String], String?, Bool, [String]) = {
    var file: String?
    var postFiles: [String] = []
    var cacheFolder: String?
    var usesAwait = false
    var rest: [String] = []
    var arguments = CommandLine.arguments[...]
    while let argument = arguments.popFirst() {
        if argument == "--await" {
            usesAwait = true
            continue
        }
        guard ["--response-file", "--post-file", "--cache-folder"].contains(argument) else { rest.append(argument); continue }
        guard let path = arguments.popFirst(), !path.isEmpty else {
            writeError("\(argument) needs a path\n")
            exit(64)
        }
        switch argument {
        case "--post-file": postFiles.append(path)
        case "--cache-folder": cacheFolder = path
        default: file = path
        }
    }
    return (file, postFiles, cacheFolder, usesAwait, rest)
}()
let options = {
    var options = BenchOptions.parse(client: "curlxhr", sharedArguments, extraHeaders: true)
    if options.mode == .threads && options.client == "curlxhr" { options.client = "curlxhr-sync" }
    if usesAwait && options.client == "curlxhr" { options.client = "curlxhr-await" }
    if !options.extraHeaders.isEmpty && !(usesAwait && options.mode == .async) {
        writeError("--header is for --mode async --await\n")
        exit(64)
    }
    if !postFiles.isEmpty {
        guard options.postBytes == 0 else {
            writeError("--post-file and --post-bytes exclude each other (the form is the body)\n")
            exit(64)
        }
        // The files' bytes are the request body bytes the tally counts (and make it a POST).
        for path in postFiles {
            guard let size = fileSize(path) else {
                writeError("\(path) is not a readable file\n")
                exit(64)
            }
            options.postBytes += size
        }
    }
    return options
}()
if usesAwait && (options.mode != .async || responseFile != nil || !postFiles.isEmpty || options.postBytes > 0) {
    writeError("--await is for GETs in --mode async\n")
    exit(64)
}
if cacheFolder != nil && (responseFile != nil || !postFiles.isEmpty || options.postBytes > 0) {
    writeError("--cache-folder is for GETs into memory (no --response-file, --post-file or --post-bytes)\n")
    exit(64)
}
if responseFile != nil && options.concurrency != 1 {
    writeError("--response-file needs --concurrency 1 (one file, one request at a time)\n")
    exit(64)
}

/// Removes the response file and what a failed send may leave beside it.
func removeResponseFile() {
    guard let responseFile else { return }
    for path in [responseFile, responseFile + ".part", responseFile + ".part.validator"] { unlink(path) }
}
removeResponseFile()
if let caFile = options.caCertificateFile { HttpRequest.caCertificateFile = caFile }

/// A request object with --cert/--key and --pinnedpubkey, which stay set across its sends.
func newRequest() -> HttpRequest {
    let request = HttpRequest()
    if let (certificate, key) = options.clientCertificate, !request.setClientCertificate(certificate, keyPath: key) {
        writeError("setClientCertificate refused: \(request.lastError.map { "\($0)" } ?? "?")\n")
        exit(1)
    }
    if let pins = options.pinnedPublicKeys, !request.setPinnedPublicKeys(pins) {
        writeError("setPinnedPublicKeys refused: \(request.lastError.map { "\($0)" } ?? "?")\n")
        exit(1)
    }
    return request
}
if let cacheFolder, !HttpRequest.setCacheFolder(cacheFolder, maxBytes: 1 << 30) {
    writeError("setCacheFolder(\(cacheFolder)) refused: \(HttpRequest.cacheFolderError ?? "?")\n")
    exit(1)
}
/// The --post-bytes body (none with --post-file: the form is the body).
let body = postFiles.isEmpty ? Data(bodyBytes(options.postBytes)) : Data()

/// Opens and sends `request`; returns the reason when the library refused.
func openAndSend(_ request: HttpRequest, async: Bool) -> String? {
    guard request.open(options.method, url: options.url, async: async) else {
        return "open refused: \(request.lastError.map { "\($0)" } ?? "?")"
    }
    for (name, value) in benchRequestHeaders.prefix(options.headers) {
        guard request.setRequestHeader(name, value: value) else { return "setRequestHeader refused \(name)" }
    }
    if let responseFile, !request.setResponseFile(responseFile) {
        return "setResponseFile refused: \(request.lastError.map { "\($0)" } ?? "?")"
    }
    for (index, path) in postFiles.enumerated() where !request.addPostFile(path, forKey: "file\(index)") {
        return "addPostFile refused \(path): \(request.lastError.map { "\($0)" } ?? "?")"
    }
    let sent = postFiles.isEmpty && options.postBytes > 0 ? request.sendData(body) : request.send()
    return sent ? nil : "send refused: \(request.lastError.map { "\($0)" } ?? "?")"
}

/// Why a request that reached DONE failed, if the library said; with --cache-folder, also a
/// response that did not come from the cache.
func failure(_ request: HttpRequest) -> String? {
    if request.getStatus() == 0 { return "status 0: \(request.getStatusText() ?? "no text")" }
    return cacheFolder != nil && !request.isResponseFromCache() ? notFromCache : nil
}
let notFromCache = "the response came from the network, not the cache"

/// --cache-folder: one request by the run's consumer before the timed ones (not counted), so
/// the cache holds the response; what was wrong with it, or nil.
func warmUpCache() -> String? {
    let request = HttpRequest()
    let outcome = Mutex<(status: Int, bytes: Int, problem: String?)>((0, 0, nil))
    let done = DispatchSemaphore(value: 0)
    switch options.mode {
    case .threads:
        if let refusal = openAndSend(request, async: false) { return refusal }
        outcome.withLock { $0 = (request.getStatus(), request.getReceiveBuffer().count, nil) }
    case .async where usesAwait:
        guard request.open(options.method, url: options.url) else {
            return "open refused: \(request.lastError.map { "\($0)" } ?? "?")"
        }
        Task.detached {
            do {
                // The response is let go of before the next request starts (signal): a stream
                // still held when the next `response()` looks is not reused.
                let (status, bytes) = try await { () async throws -> (Int, Int) in
                    let response = try await request.response()
                    var bytes = 0
                    for try await chunk in response.body { bytes += chunk.count }
                    return (response.status, bytes)
                }()
                outcome.withLock { $0 = (status, bytes, nil) }
            } catch {
                outcome.withLock { $0.problem = "\(error)" }
            }
            done.signal()
        }
        done.wait()
    case .async:
        request.onStatusChange = { request in
            switch request.getState() {
            case .loading: outcome.withLock { $0.bytes += request.getReceiveBuffer().count }
            case .done:
                outcome.withLock { $0.bytes += request.getReceiveBuffer().count; $0.status = request.getStatus() }
                done.signal()
            default: break
            }
        }
        if let refusal = openAndSend(request, async: true) { return refusal }
        done.wait()
    }
    let (status, bytes, problem) = outcome.withLock { $0 }
    if let problem { return problem }
    return status == 200 && bytes == options.expectBytes
        ? nil : "status \(status), \(bytes) body bytes (expected 200, \(options.expectBytes))"
}
if cacheFolder != nil, let problem = warmUpCache() {
    writeError("the cache's warm-up request failed: \(problem)\n")
    exit(1)
}
let tally = Tally(options)

/// Records a request that reached DONE with `buffered` bytes taken from its receive buffer.
/// With --response-file the body bytes are the file's size after a 200 (the buffer must
/// have stayed empty); a response other than 200 has its body in the buffer, and the
/// tally reports its status.
func finish(_ request: HttpRequest, buffered: Int) {
    let status = request.getStatus()
    var bytes = buffered
    var problem = failure(request)
    if let responseFile, problem == nil, status == 200 {
        if let size = fileSize(responseFile) {
            bytes = size
            if buffered != 0 { problem = "\(buffered) bytes in the receive buffer with a response file" }
        } else {
            bytes = 0
            problem = "no file at \(responseFile) after DONE"
        }
    }
    let httpVersion = options.expectHTTPVersion == nil ? nil : request.getMetrics().httpVersion
    tally.finish(status: status, bodyBytes: bytes, problem: problem, httpVersion: httpVersion)
}

switch options.mode {
case .async where usesAwait:
    let allDone = DispatchSemaphore(value: 0)
    Task.detached {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<options.concurrency {
                group.addTask {
                    let request = newRequest()
                    while tally.claim() {
                        guard request.open(options.method, url: options.url) else {
                            tally.finish(status: 0, bodyBytes: 0, problem: "open refused: \(request.lastError.map { "\($0)" } ?? "?")")
                            continue
                        }
                        for (name, value) in benchRequestHeaders.prefix(options.headers) { request.setRequestHeader(name, value: value) }
                        for (name, value) in options.extraHeaders { request.setRequestHeader(name, value: value) }
                        do {
                            let response = try await request.response()
                            var bytes = 0
                            for try await chunk in response.body { bytes += chunk.count }
                            let problem = cacheFolder != nil && !response.isFromCache ? notFromCache : nil
                            tally.finish(status: response.status, bodyBytes: bytes, problem: problem,
                                         httpVersion: options.expectHTTPVersion == nil ? nil : response.httpVersion)
                        } catch {
                            tally.finish(status: 0, bodyBytes: 0, problem: "\(error)")
                        }
                    }
                }
            }
        }
        allDone.signal()
    }
    allDone.wait()

case .async:
    /// One request object and the body bytes counted for its current request. Touched by the
    /// thread that sends and then only by its callbacks, which run one at a time.
    final class Slot: @unchecked Sendable {
        let request = newRequest()
        var received = 0
    }
    let allDone = DispatchSemaphore(value: 0)
    let busySlots = Mutex(options.concurrency)

    /// Starts the slot's next request, or retires the slot when the run is over.
    @Sendable func issue(_ slot: Slot) {
        while tally.claim() {
            slot.received = 0
            guard let refusal = openAndSend(slot.request, async: true) else { return }
            tally.finish(status: 0, bodyBytes: 0, problem: refusal)
        }
        if busySlots.withLock({ busy -> Int in busy -= 1; return busy }) == 0 { allDone.signal() }
    }

    let slots = (0..<options.concurrency).map { _ in Slot() }
    for slot in slots {
        slot.request.onStatusChange = { request in
            switch request.getState() {
            case .loading:
                slot.received += request.getReceiveBuffer().count
            case .done:
                slot.received += request.getReceiveBuffer().count
                finish(request, buffered: slot.received)
                issue(slot)
            default:
                break
            }
        }
    }
    for slot in slots { issue(slot) }
    allDone.wait()

case .threads:
    runOnThreads(options.concurrency) { _ in
        let request = newRequest()
        while tally.claim() {
            if let refusal = openAndSend(request, async: false) {
                tally.finish(status: 0, bodyBytes: 0, problem: refusal)
                continue
            }
            finish(request, buffered: request.getReceiveBuffer().count)
        }
    }
}
tally.report()
removeResponseFile()
