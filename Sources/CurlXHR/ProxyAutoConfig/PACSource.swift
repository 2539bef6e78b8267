import CCurlShim

/// Where a PAC file is: a path (or `file://` URL) on this machine, or an `http(s)://` URL.
enum PACLocation: Hashable, Sendable {
    case file(path: String)
    case url(String)

    /// The location as the caller gave it, for texts.
    var name: String {
        switch self {
        case .file(let path): path
        case .url(let url): url
        }
    }

    /// The location `text` names, checked as ``HttpRequest/setProxyAutoConfig(_:)`` does: no
    /// CR, LF or NUL, not empty; a file must be a regular file that can be read now (a
    /// `file://` URL's path percent-decoded); a URL is only checked for its scheme.
    static func parse(_ text: String) -> Result<PACLocation, ReadableFile.Problem> {
        func refused(_ why: String) -> Result<PACLocation, ReadableFile.Problem> {
            .failure(ReadableFile.Problem(message: "'\(MessageValidation.escaped(text))' is no proxy auto-config file: \(why)"))
        }
        guard !text.isEmpty else { return refused("it is empty") }
        guard MessageValidation.isFieldValue(text) else { return refused("it contains CR, LF or NUL") }
        let lower = text.lowercased()
        var path = text
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard HTTPURL(text) != nil else { return refused("it is not an http or https URL libcurl reads") }
            return .success(.url(text))
        } else if lower.hasPrefix("file://") {
            let rest = text.dropFirst("file://".count)
            guard rest.hasPrefix("/") || rest.lowercased().hasPrefix("localhost/") else {
                return refused("a file:// URL names a file on this machine (file:///path)")
            }
            guard let decoded = percentDecoded(rest.hasPrefix("/") ? String(rest) : String(rest.dropFirst("localhost".count))),
                  MessageValidation.isFieldValue(decoded) else { return refused("its path is not percent-encoded text") }
            path = decoded
        } else if lower.contains("://") {
            return refused("use a path, or a file://, http:// or https:// URL")
        }
        if let problem = ReadableFile.problem(path) { return refused(problem) }
        return .success(.file(path: path))
    }

    private static func percentDecoded(_ text: String) -> String? {
        var length: Int32 = 0
        guard let decoded = curl_easy_unescape(nil, text, Int32(text.utf8.count), &length) else { return nil }
        defer { curl_free(decoded) }
        let bytes = UnsafeRawBufferPointer(start: decoded, count: Int(length))
        guard !bytes.contains(0) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A PAC file's text as read or fetched once; `serial` tells it apart from every other text
/// (the evaluator parses a script again only when another one was used meanwhile).
final class PACScript: Sendable, Equatable {
    let text: String
    let serial: Int
    let location: PACLocation

    init(text: String, serial: Int, location: PACLocation) {
        self.text = text
        self.serial = serial
        self.location = location
    }

    static func == (lhs: PACScript, rhs: PACScript) -> Bool { lhs === rhs }
}

/// When a PAC file is read or fetched again, as a pure value (PACSourceTests): a file when
/// its modification time (or size, or inode) changed; a URL after its `Cache-Control:
/// max-age` (``defaultMaxAge`` without one), then revalidated with its `ETag` and
/// `Last-Modified`: a 304 keeps the script. The caller does the reading and fetching and
/// brings the clock.
struct PACSource: Sendable {
    /// Seconds a fetched PAC file stays fresh without `max-age`.
    static let defaultMaxAge = 300.0
    /// A PAC file longer than this is refused.
    static let maxSize = 4 * 1024 * 1024

    /// What `stat` says of a file, to know it changed.
    struct FileStamp: Equatable, Sendable {
        var modified: Int64
        var modifiedNanoseconds: Int
        var size: Int64
        var inode: UInt64
    }

    /// What a fetch brought back.
    struct Fetched: Equatable, Sendable {
        var status: Int
        var text: String = ""
        /// `Cache-Control: max-age` in seconds, nil without one (`no-cache`, `no-store`: 0).
        var maxAge: Double?
        var etag: String?
        var lastModified: String?
    }

    enum Need: Equatable {
        /// The script at hand is current.
        case use(PACScript)
        /// Read the file (then ``read(_:stamp:serial:)``).
        case read
        /// Fetch the URL with these validators (then ``fetched(_:now:serial:)``).
        case fetch(ifNoneMatch: String?, ifModifiedSince: String?)
    }

    let location: PACLocation
    private(set) var script: PACScript?
    private var stamp: FileStamp?
    private var freshUntil = -Double.infinity
    private var etag: String?
    private var lastModified: String?

    init(_ location: PACLocation) { self.location = location }

    /// What a send needs now: `now` in seconds (monotonic), `stamp` the file's (nil for a URL).
    func need(now: Double, stamp current: FileStamp?) -> Need {
        switch location {
        case .file:
            if let script, current == stamp { return .use(script) }
            return .read
        case .url:
            if let script, now < freshUntil { return .use(script) }
            if script == nil { return .fetch(ifNoneMatch: nil, ifModifiedSince: nil) }
            return .fetch(ifNoneMatch: etag, ifModifiedSince: lastModified)
        }
    }

    /// The file was read: its text is the script until the file changes.
    mutating func read(_ text: String, stamp: FileStamp, serial: Int) -> PACScript {
        let script = PACScript(text: text, serial: serial, location: location)
        self.script = script
        self.stamp = stamp
        return script
    }

    /// The URL answered: a 200 brings a new script, a 304 keeps the one at hand; either is
    /// fresh for its `max-age`. Any other answer is refused and changes nothing.
    mutating func fetched(_ answer: Fetched, now: Double, serial: Int) -> Result<PACScript, ReadableFile.Problem> {
        switch answer.status {
        case 200:
            let script = PACScript(text: answer.text, serial: serial, location: location)
            self.script = script
            etag = answer.etag
            lastModified = answer.lastModified
            freshUntil = now + (answer.maxAge ?? Self.defaultMaxAge)
            return .success(script)
        case 304 where script != nil:
            if let etag = answer.etag { self.etag = etag }
            if let lastModified = answer.lastModified { self.lastModified = lastModified }
            freshUntil = now + (answer.maxAge ?? Self.defaultMaxAge)
            return .success(script!)
        default:
            return .failure(ReadableFile.Problem(message: "it answered HTTP \(answer.status)"))
        }
    }
}

/// Which route of FindProxyForURL's answer a hop takes, as a pure value kept by
/// ``TransferHops``: the first; after a failure to reach its proxy (it cannot be resolved or
/// connected to, or its handshake fails: SOCKS, or an https proxy's TLS), the next; when none is left, the last failure
/// stands. A DIRECT route that fails is the origin's failure: nothing else is tried.
struct ProxyFallback: Sendable, Equatable {
    private(set) var routes: [PACRoute]
    private(set) var index = 0

    init(_ routes: [PACRoute]) {
        precondition(!routes.isEmpty, "an answer has a route")
        self.routes = routes
    }

    /// The route the hop takes now.
    var current: PACRoute { routes[index] }

    /// A retry of the hop begins: from the first route again.
    mutating func restart() {
        index = 0
    }

    /// The current route's proxy could not be reached: the next route, or nil when none is left.
    mutating func unreachable() -> PACRoute? {
        guard current != .direct, index + 1 < routes.count else { return nil }
        index += 1
        return current
    }
}

extension PACLocation {
    /// `text` as a location, checked as ``parse(_:)`` does where it can be; what cannot be
    /// used (a file missing now, CR or LF) is kept as given, for each send to fail naming it.
    static func unchecked(_ text: String) -> PACLocation {
        if case .success(let location) = parse(text) { return location }
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://") ? .url(text) : .file(path: text)
    }
}

/// A send's part in PAC: the file it follows, and once the send starts, the script it was
/// given and the first hop's routes.
struct PACPlan: Sendable {
    let location: PACLocation
    var script: PACScript?
    var routes: [PACRoute] = []

    init(location: PACLocation) { self.location = location }
}
