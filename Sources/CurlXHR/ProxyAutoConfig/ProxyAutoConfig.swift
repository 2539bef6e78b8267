import CCurlShim
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process's PAC files and the one JavaScript context libpacparser keeps for them: the
/// scripts as last read or fetched (``PACSource`` decides when again), the process-wide
/// default (``HttpRequest/proxyAutoConfig``), and FindProxyForURL evaluated under one lock,
/// from whichever thread sends.
enum ProxyAutoConfig {
    // MARK: The process-wide default

    /// Whether a default is set: the one check a send without PAC pays.
    private static let hasDefault = Atomic<Bool>(false)
    private static let defaultLocation = Locked<PACLocation?>(nil)

    /// The default for requests without a proxy choice of their own, or nil.
    static var processDefault: PACLocation? {
        hasDefault.load(ordering: .acquiring) ? defaultLocation.withLock { $0 } : nil
    }

    static func setDefault(_ location: PACLocation?) {
        defaultLocation.withLock { $0 = location }
        hasDefault.store(location != nil, ordering: .releasing)
    }

    // MARK: Scripts

    /// One lock per location, held while its file is read or fetched: senders of the same
    /// location wait for one fetch instead of making their own.
    private final class Entry: Sendable {
        let source: Locked<PACSource>
        init(_ location: PACLocation) { source = Locked(PACSource(location)) }
    }
    private static let entries = Locked<[PACLocation: Entry]>([:])
    private static let serials = Atomic<Int>(0)

    /// The failure of a send whose PAC file fails it, naming the file.
    static func failure(_ location: PACLocation, _ why: String) -> TransferFailure {
        TransferFailure(kind: .proxy, text: "Proxy auto-config '\(MessageValidation.escaped(location.name))' failed: \(why)")
    }

    /// The current script of `location`: read or fetched when ``PACSource`` says so. Blocks
    /// for a fetch: never on the engine thread.
    static func script(for location: PACLocation) -> Result<PACScript, TransferFailure> {
        let entry = entries.withLock { entries in
            if let entry = entries[location] { return entry }
            let entry = Entry(location)
            entries[location] = entry
            return entry
        }
        return entry.source.withLock { source in
            let now = Double(MonotonicTime.milliseconds()) / 1000
            var stamp: PACSource.FileStamp?
            if case .file(let path) = location {
                var info = stat()
                guard stat(path, &info) == 0 else {
                    return .failure(failure(location, "cannot read it: \(String(cString: strerror(errno)))"))
                }
                stamp = PACSource.FileStamp(modified: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: info.st_mtim.tv_nsec,
                                            size: Int64(info.st_size), inode: UInt64(info.st_ino))
            }
            switch source.need(now: now, stamp: stamp) {
            case .use(let script):
                return .success(script)
            case .read:
                guard case .file(let path) = location, let stamp else { preconditionFailure("only a file is read") }
                switch readText(path) {
                case .failure(let problem): return .failure(failure(location, problem.message))
                case .success(let text): return .success(source.read(text, stamp: stamp, serial: nextSerial()))
                }
            case .fetch(let etag, let lastModified):
                guard case .url(let url) = location else { preconditionFailure("only a URL is fetched") }
                switch fetch(url, ifNoneMatch: etag, ifModifiedSince: lastModified) {
                case .failure(let problem): return .failure(failure(location, problem.message))
                case .success(let fetched):
                    return source.fetched(fetched, now: now, serial: nextSerial()).mapError { failure(location, $0.message) }
                }
            }
        }
    }

    private static func nextSerial() -> Int {
        serials.add(1, ordering: .relaxed).newValue
    }

    /// The text of the file at `path` (a regular file, at most ``PACSource/maxSize`` bytes,
    /// without NUL).
    private static func readText(_ path: String) -> Result<String, ReadableFile.Problem> {
        let descriptor: Int32, size: Int64
        switch ReadableFile.open(path) {
        case .failure(let problem): return .failure(problem)
        case .success(let file): (descriptor, size) = file
        }
        defer { _ = Glibc.close(descriptor) }
        guard size <= PACSource.maxSize else { return .failure(tooLarge) }
        var bytes = [UInt8](repeating: 0, count: PACSource.maxSize + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { return .failure(ReadableFile.Problem(message: "cannot read it: \(String(cString: strerror(errno)))")) }
            if read == 0 { break }
            count += read
        }
        guard count <= PACSource.maxSize else { return .failure(tooLarge) }
        return text(bytes[..<count])
    }

    private static var tooLarge: ReadableFile.Problem {
        ReadableFile.Problem(message: "it is larger than \(PACSource.maxSize) bytes")
    }

    /// A PAC file's bytes as the script's text: UTF-8 (other bytes replaced), without NUL.
    private static func text(_ bytes: some Collection<UInt8>) -> Result<String, ReadableFile.Problem> {
        guard !bytes.contains(0) else { return .failure(ReadableFile.Problem(message: "it contains a NUL byte: it is no script")) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// Fetches the PAC file at `url` with a request of its own: direct (never through a
    /// proxy or PAC), without cookies or the HTTP cache, with its validators when revalidating.
    private static func fetch(_ url: String, ifNoneMatch: String?, ifModifiedSince: String?) -> Result<PACSource.Fetched, ReadableFile.Problem> {
        let request = HttpRequest()
        guard request.open("GET", url: url, async: false) else {
            return .failure(ReadableFile.Problem(message: request.lastError?.message ?? "it cannot be fetched"))
        }
        request.disableHttpProxy()
        request.disableCookieHandling()
        request.setCachePolicy([])
        request.setMaxResponseSize(Int64(PACSource.maxSize))
        request.setTimeouts(connect: 10, total: 30)
        if let ifNoneMatch { request.setRequestHeader("If-None-Match", value: ifNoneMatch) }
        if let ifModifiedSince { request.setRequestHeader("If-Modified-Since", value: ifModifiedSince) }
        guard request.send() else {
            return .failure(ReadableFile.Problem(message: request.lastError?.message ?? "it cannot be fetched"))
        }
        let status = request.getStatus()
        guard status != 0 else {
            return .failure(ReadableFile.Problem(message: "it cannot be fetched: \(request.getStatusText() ?? "no response")"))
        }
        var fetched = PACSource.Fetched(status: status, etag: request.getResponseHeader("ETag"),
                                        lastModified: request.getResponseHeader("Last-Modified"))
        if let value = request.getResponseHeader("Cache-Control") {
            let control = CacheControl(parsing: value)
            if control.has("no-cache") || control.has("no-store") {
                fetched.maxAge = 0
            } else {
                switch control.seconds("max-age") {
                case .absent: break
                case .valid(let seconds): fetched.maxAge = Double(seconds)
                case .invalid: fetched.maxAge = 0
                }
            }
        }
        if status == 200 {
            switch text(request.getReceiveBuffer()) {
            case .failure(let problem): return .failure(problem)
            case .success(let text): fetched.text = text
            }
        }
        return .success(fetched)
    }

    // MARK: Evaluation

    /// The serial of the script in libpacparser's one context (0: none).
    private static let evaluator = Locked<Int>(0)

    /// FindProxyForURL(url, host) of `script` for `url`, read into routes; or why the send
    /// fails. Any thread (the engine's for a redirect's hop): no I/O but the script's own
    /// (its `dnsResolve`).
    static func routes(_ script: PACScript, for url: String) -> Result<[PACRoute], TransferFailure> {
        guard let parsed = HTTPURL(url) else { return .failure(failure(script.location, "'\(MessageValidation.escaped(url))' is no URL to find a proxy for")) }
        // As browsers do, an https URL is given without its path and query (they are secret),
        // and without the scheme's default port.
        let shown = parsed.scheme == "https" ? "https://\(parsed.host)\(parsed.port == 443 ? "" : ":\(parsed.port)")/" : parsed.cacheKey
        // libpacparser puts the URL between single quotes in a script: it encodes a quote
        // itself, a backslash is encoded here; a host with either is refused.
        let pacURL = String(shown.flatMap { $0 == "\\" ? Array("%5C") : [$0] })
        var host = parsed.host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let answer = evaluator.withLock { loaded -> Result<String, TransferFailure> in
            if loaded != script.serial {
                loaded = 0
                guard cxhr_pac_use_script(script.text) else {
                    return .failure(failure(script.location, "the script does not run: \(String(cString: cxhr_pac_error()))"))
                }
                loaded = script.serial
            }
            guard let answer = cxhr_pac_find_proxy(pacURL, host) else {
                return .failure(failure(script.location, "FindProxyForURL failed: \(String(cString: cxhr_pac_error()))"))
            }
            return .success(String(cString: answer))
        }
        return answer.flatMap { text in
            PACAnswer.parse(text).mapError { failure(script.location, $0.message) }
        }
    }

    /// The routes for `url` of the current script of `location`: read or fetched first when
    /// due. Blocks for a fetch: never on the engine thread.
    static func routes(_ location: PACLocation, for url: String) -> Result<(PACScript, [PACRoute]), TransferFailure> {
        script(for: location).flatMap { script in routes(script, for: url).map { (script, $0) } }
    }
}

/// A send's failure as the error of a `Result`.
extension TransferFailure: Error {}
