import CurlXHR
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `xhr [options] URL…`: one request, its body on standard output; or several, each to a file
/// (one after another, or at once with -Z). The options are in FetchOptions.swift.
struct Fetch {
    /// http or https URLs: one, or several with a file each (-o per URL, or -O).
    var urls: [String] = []
    /// The URL of a run with one.
    var url: String { urls[0] }

    // The request
    var method: String?
    var headers: [String] = []
    /// -d, --data-binary, --data-raw and --data-urlencode, in order (joined with '&').
    var data: [DataArgument] = []
    var json: [String] = []
    var form: [String] = []
    var uploadFile: String?
    var get = false
    var userAgent: String?
    var referer: String?
    var globOff = false

    // Authentication, proxies, TLS
    var user: String?
    var auth: String?
    var netrc = NetrcChoice.ignored
    var netrcFile: String?
    var proxy: String?
    var proxyUser: String?
    var proxyAuth: String?
    /// --socks5-gssapi: NEGOTIATE for the SOCKS5 proxy; --proxy-service-name (or
    /// --socks5-gssapi-service) its Kerberos service.
    var socks5GSSAPI = false
    var proxyServiceName: String?
    /// --proxy-header, --noproxy, --proxy-cacert, --proxy-insecure.
    var proxyHeaders: [String] = []
    var noProxy: String?
    var proxyCAFile: String?
    var proxyInsecure = false
    /// --proxy-cert (FILE[:PASSWORD]), --proxy-cert-type, --proxy-key, --proxy-key-type,
    /// --proxy-pass, --proxy-pinnedpubkey.
    var proxyCert: String?
    var proxyCertType: HttpRequest.CertificateFormat?
    var proxyKey: String?
    var proxyKeyType: HttpRequest.CertificateFormat?
    var proxyPass: String?
    var proxyPinnedPubKey: String?
    /// --proxy-pac: the PAC file that chooses the proxy (-x wins over it).
    var proxyPAC: String?
    var oauth2 = OAuth2Options()
    var cache = CacheOptions()
    var insecure = false
    var caFile: String?
    var caPath: String?
    /// --cert (with a ":PASSWORD" suffix, as curl reads it), --cert-type, --key, --key-type, --pass.
    var cert: String?
    var certType: HttpRequest.CertificateFormat?
    var key: String?
    var keyType: HttpRequest.CertificateFormat?
    var pass: String?
    var pinnedPubKey: String?
    /// --tlsv1.2, --tlsv1.3 (the last one wins) and --tls-max; nil: libcurl's.
    var tlsMinimum: HttpRequest.TLSVersion?
    var tlsMaximum: HttpRequest.TLSVersion?
    var serviceName: String?

    // Redirects and cookies
    var location = true
    /// --max-redirs: nil leaves the library's limit.
    var maxRedirs: Int?
    var locationTrusted = false
    /// --proto and --proto-redir, as given.
    var proto: String?
    var protoRedir: String?
    var cookie: String?
    var cookieJar: String?
    var noCookies = false

    // Transfer control
    var maxTime: Double = 0
    var connectTimeout: Double = 0
    var headersTimeout: Double = 0
    var idleTimeout: Double = 0
    var retry = 0
    var retryDelay = 1.0
    /// --retry-all-errors: xhr itself sends again after any failure (as curl's tool does).
    var retryAllErrors = false
    var range: String?
    var maxFilesize: String?
    /// --limit-rate: bytes a second each way (0: none).
    var limitRate: Int64 = 0
    var compressed = true
    var sync = false
    var http11 = false
    /// -4, -6: the last one given wins, as with curl.
    var ipVersion = HttpRequest.IPVersion.any
    var http2 = false
    var http2PriorKnowledge = false
    /// --resolve and --connect-to, in order; --unix-socket (a path) and --abstract-unix-socket
    /// (`@NAME`), the last one wins; --interface.
    var resolve: [String] = []
    var connectTo: [String] = []
    var unixSocket: String?
    var interface: String?

    // Output
    var outputs: [String] = []
    /// The -o of a run with one URL, in --output-dir if given.
    var output: String? { outputs.first.map(inOutputDirectory) }
    var outputDir: String?
    var createDirs = false
    var parallel = false
    var parallelMax = 50
    var continueAt: String?
    var remoteName = false
    var remoteHeaderName = false
    var include = false
    var head = false
    var dumpHeader: String?
    var writeOut: String?
    var silent = false
    var showError = false
    var progressBar = false
    var noProgressMeter = false
    var errorFile: String?
    var verbose = false
    /// --trace FILE or --trace-ascii FILE (the last given), and --trace-time.
    var trace: (path: String, style: TraceWriter.Style)?
    var traceTime = false
    var states = false
    var fail = false
    var failWithBody = false

    /// Parses `arguments` and runs: the help, or the transfers.
    static func main(_ arguments: [String]) throws {
        var fetch = Fetch()
        let parser = CommandLineParser(sections: sections)
        if try parser.parse(arguments, into: &fetch) {
            StandardStreams.write(parser.help(overview: CommandLineParser.paragraphs(XHR.overview), footer: FetchHelp.discussion), to: 1)
            return
        }
        try fetch.validate()
        try fetch.run()
    }

    /// Each URL's patterns become URLs, and an -o given for it one file name per URL (#N filled in).
    private mutating func expandGlobs() throws {
        var expandedURLs: [String] = [], expandedOutputs: [String] = []
        for (index, url) in urls.enumerated() {
            let items = try URLGlob.expand(url)
            expandedURLs += items.map(\.url)
            if index < outputs.count { expandedOutputs += items.map { URLGlob.fill(outputs[index], with: $0.values) } }
        }
        outputs = expandedOutputs + outputs.dropFirst(urls.count)
        urls = expandedURLs
    }

    mutating func validate() throws {
        if urls.isEmpty { throw ValidationError("no URL specified") }
        if !globOff { try expandGlobs() }
        try cache.validate()
        try oauth2.validate()
        if http2PriorKnowledge {
            throw ValidationError("--http2-prior-knowledge is not offered: with libcurl 7.88 the second request on such a connection fails "
                                  + "(curl issue 10634); https URLs use HTTP/2 through ALPN, and --http2 is the default")
        }
        if http11, http2 { throw ValidationError("use one of --http1.1 and --http2") }
        if !(1...300).contains(parallelMax) { throw ValidationError("--parallel-max must be 1 to 300") }
        if isBatch { try validateBatch() }
        let bodies = [!data.isEmpty, !json.isEmpty, !form.isEmpty, uploadFile != nil].filter { $0 }.count
        if bodies > 1 { throw ValidationError("use one of -d (and its kin), --json, -F and -T") }
        if get, !json.isEmpty || !form.isEmpty || uploadFile != nil {
            throw ValidationError("-G sends -d and --data-binary data in the URL; it cannot send --json, -F or -T")
        }
        if head, bodies > 0, !get { throw ValidationError("-I sends HEAD, which has no body: use -G to put -d data in the URL") }
        if fail, failWithBody { throw ValidationError("-f and --fail-with-body cannot be used together") }
        if !outputs.isEmpty, remoteName { throw ValidationError("use one of -o and -O") }
        if remoteHeaderName, !remoteName { throw ValidationError("-J needs -O") }
        if let continueAt {
            guard continueAt == "-" || Int64(continueAt).map({ $0 >= 0 }) == true else {
                throw ValidationError("-C takes an offset in bytes or '-' (continue where the file ends)")
            }
            guard output != nil else { throw ValidationError("-C needs -o FILE") }
        }
        if let maxFilesize, CacheOptions.bytes(maxFilesize) == nil {
            throw ValidationError("--max-filesize '\(maxFilesize)' is not a size of 1 byte or more (BYTES, or with a K, M or G suffix)")
        }
        if let range, Self.byteRange(range) == nil {
            throw ValidationError("-r '\(range)' is not START-END or START- (bytes, END at or after START)")
        }
        for field in form where FormPart(field) == nil {
            throw ValidationError("-F '\(field)' is not name=value, name=@FILE[;type=TYPE][;filename=NAME] or name=<FILE")
        }
        try cache.validateOffline(method: effectiveMethod, ranged: range != nil || continueAt != nil || hasHeader("Range"),
                                  fetchesToken: oauth2.tokenURL != nil)
    }

    func run() throws {
        try redirectStandardError()
        HttpRequest.usesEnvironmentProxy = true
        if let cookieJar, cookieJar != "-" { CookieStore.shared.file = cookieJar }
        let console = Console(silent: silent && !showError)
        let user = credentials(console: console)
        // Before any request of the run (an OAuth2 token's too).
        try cache.apply(console: console)
        let authorizer = oauth2.authorizer(caFile: caFile, insecure: insecure)
        // The bearer token of --oauth2-bearer or --oauth2-token-url, for every request of the run.
        var bearer = try oauth2.bearer ?? authorizer.map { try OAuth2Options.token(from: $0, refusing: nil, console: console) }
        if isBatch { return try runBatch(console: console, user: user, bearer: bearer) }
        let format = try writeOutFormat(console: console)
        let body = try requestBody(console: console)
        let target = get ? Self.url(url, withQuery: try queryData(console: console)) : uploadTarget(url)
        let resume = try resumePoint(console: console)
        let responseHead = ResponseHead()
        var sink = try output(for: target, resume: resume, head: responseHead, console: console)
        let headDump = dumpHeader.map { $0 == "-" ? Output.standardOutput() : Output.file($0) }
        if !noCookies, let cookie, !cookie.contains("=") { Cookies.load(file: cookie) }
        let tracer = try trace.map { try TraceWriter(path: $0.path, style: $0.style, withTime: traceTime) }

        func sendOnce(bearer: String?, dropsRefusedBearer: Bool) throws -> (HttpRequest, Session, Cookies.Sent?) {
            let request = HttpRequest()
            let session = Session(request: request, output: sink, headDump: headDump, console: console,
                                  include: include || head, discardErrorBody: fail, verbose: verbose,
                                  states: states, uploadTotal: body.size, progress: showsProgress)
            responseHead.request = request
            session.dropsRefusedBearer = dropsRefusedBearer
            session.resumedFrom = resume.offset
            session.continuesFile = resume.continuesFile
            // The delegate comes first: an asynchronous open already reports OPENED.
            if !sync { request.delegate = session }
            tracer?.attach(request)
            try configure(request, url: target, user: user, bearer: bearer, console: console)
            if resume.continuesFile, resume.offset > 0 { try check(request.setRange(from: resume.offset, to: nil), request, console) }
            let sentCookies = try sendCookies(request, url: target, console: console)
            if verbose { session.describeRequest(method: effectiveMethod, url: target, headers: headers) }
            do {
                try session.run(async: !sync) { send(request, body) }
                tracer?.waitForEnd(of: request)
            } catch {
                sentCookies?.restore()
                throw error
            }
            return (request, session, sentCookies)
        }
        var retries = 0
        var (request, session, outcome): (HttpRequest, Session, Outcome?)
        while true {
            var sentCookies: Cookies.Sent?
            (request, session, sentCookies) = try sendOnce(bearer: bearer, dropsRefusedBearer: authorizer != nil)
            // A token of --oauth2-token-url the server refused (401 with a Bearer challenge): that
            // response was dropped, and the request goes once more with a new token.
            if session.refusedBearer, let authorizer, let refused = bearer {
                sentCookies?.restore()
                bearer = try OAuth2Options.token(from: authorizer, refusing: refused, console: console)
                (request, session, sentCookies) = try sendOnce(bearer: bearer, dropsRefusedBearer: false)
            }
            sentCookies?.restore()
            outcome = finish(request, session: session)
            guard retryAllErrors, let failed = outcome, retries < retry else { break }
            // --retry-all-errors: any failure, -f's HTTP errors included, for any method; the
            // output file starts over (standard output cannot), as with curl.
            retries += 1
            let delay = Self.retryDelay(retries, first: retryDelay)
            if !silent {  // curl's warning, which -s hides
                let seconds = Fixed.text(delay, decimals: delay < 1 ? 1 : 0, width: 0)
                console.write("Warning: Problem (retrying all errors): \(failed.message). Will retry in \(seconds) seconds. \(retry - retries + 1) retries left.\n")
            }
            usleep(useconds_t(delay * 1_000_000))
            sink = try output(for: target, resume: resume, head: responseHead, console: console)
        }
        if let format {
            WriteOut.print(format, values: writeOutValues(request, session: session, url: target, outcome: outcome),
                           header: { request.getResponseHeader($0) }, console: console)
        }
        if let cookieJar, !noCookies { Cookies.writeJar(to: cookieJar, console: console) }
        if let outcome { throw console.exit(outcome.code, outcome.message) }
    }

    /// The schemes a --proto list leaves, as curl reads it: from all of them, each name (`all`
    /// for every one) added (`+`, the default), taken away (`-`) or made the only one (`=`), in
    /// order; names of other schemes are ignored, as curl ignores those it does not know.
    static func schemes(_ list: String?) -> [String] {
        let all = ["http", "https"]
        var chosen = Set(all)
        for item in (list ?? "").split(separator: ",") {
            var name = item.filter { $0 != " " }.lowercased()
            let operation = name.first.flatMap { "+-=".contains($0) ? $0 : nil } ?? "+"
            if "+-=".contains(name.first ?? " ") { name.removeFirst() }
            let names = name == "all" ? Set(all) : Set(all.filter { $0 == name })
            switch operation {
            case "-": chosen.subtract(names)
            case "=": chosen = names
            default: chosen.formUnion(names)
            }
        }
        return all.filter(chosen.contains)
    }

    /// --tls-max's versions, "1.0" to "1.3".
    static func tlsVersion(_ text: String) -> HttpRequest.TLSVersion? {
        HttpRequest.TLSVersion.allCases.first { "1.\($0.rawValue - 10)" == text }
    }

    /// --cert-type's and --key-type's names, case aside (curl's ENG is not offered).
    static func certificateFormat(_ text: String, option: String) throws -> HttpRequest.CertificateFormat {
        guard let format = HttpRequest.CertificateFormat(rawValue: text.uppercased()) else {
            throw ValidationError("option --\(option): '\(text)' is not PEM, DER or P12")
        }
        return format
    }

    /// --cert's FILE[:PASSWORD] as curl reads it: the first ':' not escaped as "\\:" ends the
    /// file's name; "\\\\" is a backslash.
    static func certificateAndPassword(_ argument: String) -> (path: String, password: String?) {
        var path = ""
        var index = argument.startIndex
        while index < argument.endIndex {
            let character = argument[index]
            index = argument.index(after: index)
            if character == ":" { return (path, String(argument[index...])) }
            if character == "\\", index < argument.endIndex, argument[index] == ":" || argument[index] == "\\" {
                path.append(argument[index])
                index = argument.index(after: index)
            } else {
                path.append(character)
            }
        }
        return (path, nil)
    }

    var effectiveMethod: String {
        if let method { return method }
        if head { return "HEAD" }
        if get { return "GET" }
        if uploadFile != nil { return "PUT" }
        return !data.isEmpty || !json.isEmpty || !form.isEmpty ? "POST" : "GET"
    }

    /// Whether -H gives a header of this name (then -A, -e and --json leave it alone, as curl does).
    private func hasHeader(_ name: String) -> Bool {
        headers.contains { HeaderArgument($0)?.name.lowercased() == name.lowercased() }
    }

    /// Throws the exit for a call the library refused: 26 for a file it cannot read, else 2.
    func check(_ accepted: Bool, _ request: HttpRequest, _ console: Console) throws {
        if !accepted { throw console.exit(request.lastError?.code == .fileUnreadable ? 26 : 2, request.lastError?.message ?? "refused") }
    }

    func configure(_ request: HttpRequest, url: String, user: String?, bearer: String?, console: Console) throws {
        func check(_ accepted: Bool) throws { try self.check(accepted, request, console) }
        if insecure { try check(request.disablePeerVerification()) }
        if !location { try check(request.disableFollowLocation()) }
        if let maxRedirs { try check(request.setMaxRedirects(maxRedirs)) }
        if locationTrusted { try check(request.enableLocationTrusted()) }
        if proto != nil || protoRedir != nil {
            let schemes = Self.schemes(proto), redirects = Self.schemes(protoRedir)
            // curl's failure for a URL whose scheme --proto leaves out (none left included).
            let scheme = url.prefix { $0 != ":" }.lowercased()
            guard schemes.contains(scheme) else { throw console.exit(1, "Protocol \"\(scheme)\" not supported or disabled in libcurl") }
            try check(request.setAllowedSchemes(schemes, redirects: redirects))
        }
        if let caFile { try check(request.setCACertificateFile(caFile)) }
        if let caPath { try check(request.setCACertificatePath(caPath)) }
        if let cert {
            let (path, password) = Self.certificateAndPassword(cert)
            let accepted = request.setClientCertificate(path, format: certType ?? .pem, keyPath: key, keyFormat: keyType,
                                                        password: pass ?? password)
            // curl's exit for a certificate it cannot use.
            if !accepted { throw console.exit(58, request.lastError?.message ?? "refused") }
        }
        if let pinnedPubKey, !request.setPinnedPublicKeys(pinnedPubKey) {
            throw console.exit(90, request.lastError?.message ?? "refused")
        }
        if tlsMinimum != nil || tlsMaximum != nil { try check(request.setTLSVersion(minimum: tlsMinimum, maximum: tlsMaximum)) }
        if noCookies { try check(request.disableCookieHandling()) }
        try check(request.setTimeouts(connect: connectTimeout, headers: headersTimeout, idle: idleTimeout))
        if let range, let (start, end) = Self.byteRange(range) { try check(request.setRange(from: start, to: end)) }
        if !compressed { try check(request.disableContentDecoding()) }
        if let limit = maxFilesize.flatMap(CacheOptions.bytes) { try check(request.setMaxResponseSize(limit)) }
        if limitRate > 0 { try check(request.setRateLimits(download: limitRate, upload: limitRate)) }
        if retry > 0, !retryAllErrors { try check(request.setRetries(retry, backoff: retryDelay)) }
        if http11 { request.enablePipelining = false }
        if ipVersion != .any { try check(request.setIPVersion(ipVersion)) }
        try configureRouting(request, console: console)
        try check(cache.configure(request))
        if let continueAt, continueAt == "-", let output, !Self.continuesAsCurl(output) {
            if !request.setResponseFile(output, resume: true) { throw console.exit(23, request.lastError?.message ?? "-o: cannot write") }
        }
        if let proxyPAC, proxy == nil { try check(request.setProxyAutoConfig(proxyPAC)) }
        if let proxy {
            let credentials = proxyUser.map(Self.split)
            try check(request.setProxy(proxy, user: credentials?.user, password: credentials?.password,
                                       auth: socks5GSSAPI ? "NEGOTIATE" : proxyAuth))
            if let proxyServiceName { try check(request.setProxyServiceName(proxyServiceName)) }
            for header in proxyHeaders {
                switch HeaderArgument(header) {
                case .value(let name, let value)?: try check(request.setProxyHeader(name, value: value))
                case .empty(let name)?: try check(request.setProxyHeader(name, value: ""))
                default: throw console.exit(2, "--proxy-header '\(header)' is not 'Name: value' or 'Name;'")
                }
            }
            if let noProxy { try check(request.setProxyBypass(noProxy)) }
            if let proxyCAFile { try check(request.setProxyCACertificateFile(proxyCAFile)) }
            if proxyInsecure { try check(request.disableProxyPeerVerification()) }
            if let proxyCert {
                let (path, password) = Self.certificateAndPassword(proxyCert)
                let accepted = request.setProxyClientCertificate(path, format: proxyCertType ?? .pem, keyPath: proxyKey,
                                                                 keyFormat: proxyKeyType, password: proxyPass ?? password)
                if !accepted { throw console.exit(58, request.lastError?.message ?? "refused") }
            }
            if let proxyPinnedPubKey, !request.setProxyPinnedPublicKeys(proxyPinnedPubKey) {
                throw console.exit(90, request.lastError?.message ?? "refused")
            }
        }
        let credentials = user.map(Self.split)
        guard request.open(effectiveMethod, url: url, async: !sync, user: credentials?.user, password: credentials?.password, auth: auth) else {
            // curl's 3 for a URL it cannot parse (a port out of range, no host); 2 for the rest.
            throw console.exit(URLShape.isMalformed(url) ? 3 : 2, request.lastError?.message ?? "refused")
        }
        try setHeaders(request, bearer: bearer, console: console)
        if !form.isEmpty { try check(request.sendFormAsMultipart()) }
        for case let part? in form.map(FormPart.init) {
            switch part.content {
            case .value(let value): request.setPostValue(value, forKey: part.name)
            case .fileContent(let path):
                guard let bytes = StandardStreams.read(file: path) else { throw console.exit(26, "-F: cannot read \(path)") }
                request.setPostValue(String(decoding: bytes, as: UTF8.self), forKey: part.name)
            case .file(let path, let type, let fileName):
                try check(request.addPostFile(path, forKey: part.name, fileName: fileName, contentType: type))
            }
        }
    }

    /// --resolve, --connect-to, --unix-socket, --interface, --service-name: curl's exit 49 for
    /// an entry it cannot parse, 45 for an interface it cannot use, else 2.
    private func configureRouting(_ request: HttpRequest, console: Console) throws {
        func check(_ accepted: Bool, exit code: Int32 = 2) throws {
            if !accepted { throw console.exit(code, request.lastError?.message ?? "refused") }
        }
        if !resolve.isEmpty { try check(request.setResolve(resolve), exit: 49) }
        if !connectTo.isEmpty { try check(request.setConnectTo(connectTo), exit: 49) }
        if let unixSocket { try check(request.setUnixSocket(unixSocket)) }
        if let interface { try check(request.setInterface(interface), exit: 45) }
        if let serviceName { try check(request.setServiceName(serviceName)) }
    }

    /// -H's fields as curl reads them ('Name: value'; 'Name:' keeps a field of the tool's
    /// own out; 'Name;' sends it empty; anything else is ignored), then the fields other
    /// options make unless -H gives them.
    private func setHeaders(_ request: HttpRequest, bearer: String?, console: Console) throws {
        func check(_ accepted: Bool) throws { try self.check(accepted, request, console) }
        for header in headers {
            guard let field = HeaderArgument(header) else { continue }
            switch field {
            case .value(let name, let value): try check(request.setRequestHeader(name, value: value))
            case .empty(let name): try check(request.setRequestHeader(name, value: ""))
            case .removed(let name): try check(request.removeRequestHeader(name))
            }
        }
        if let bearer, !hasHeader("Authorization") {
            try check(request.setRequestHeader("Authorization", value: "Bearer \(bearer)"))
        }
        if let userAgent, !userAgent.isEmpty, !hasHeader("User-Agent") {
            try check(request.setRequestHeader("User-Agent", value: userAgent))
        }
        if var referer, !hasHeader("Referer") {
            if referer.hasSuffix(";auto") { referer.removeLast(";auto".count) }
            if !referer.isEmpty { try check(request.setRequestHeader("Referer", value: referer)) }
        }
        if !get, !data.isEmpty, !hasHeader("Content-Type") {
            // As curl: -d and its kin send a form.
            try check(request.setRequestHeader("Content-Type", value: "application/x-www-form-urlencoded"))
        }
        if !json.isEmpty {
            if !hasHeader("Content-Type") { try check(request.setRequestHeader("Content-Type", value: "application/json")) }
            if !hasHeader("Accept") { try check(request.setRequestHeader("Accept", value: "application/json")) }
        }
    }

    /// `-b 'NAME=VALUE; …'`: a Cookie header as given, as curl sends it (libcurl sends it to
    /// the URL's host and port only). When the jar has cookies for the URL too, libcurl
    /// would send them in a second Cookie line: then the pairs join the jar for the transfer
    /// instead, as session cookies of the URL's host, and are taken out after it.
    func sendCookies(_ request: HttpRequest, url: String, console: Console) throws -> Cookies.Sent? {
        guard let cookie, cookie.contains("=") else { return nil }
        if !noCookies, !CookieStore.shared.cookies(for: url).isEmpty, let sent = Cookies.send(cookie, to: url) {
            return sent
        }
        if !request.setRequestHeader("Cookie", value: cookie) {
            throw console.exit(2, request.lastError?.message ?? "-b: the cookies cannot be sent")
        }
        return nil
    }

    /// How the run ends when it does not end well: the exit status and the error line.
    struct Outcome {
        var code: Int32
        var message: String
    }

    func finish(_ request: HttpRequest, session: Session) -> Outcome? {
        if let path = session.writeFailure { return Outcome(code: 23, message: "cannot write \(path)") }
        if session.rangeIgnored { return Outcome(code: 33, message: "the server does not seem to support byte ranges: cannot resume") }
        let status = request.getStatus()
        if status == 0 {
            // libcurl's code is curl's exit status (18 a body cut short, 52 an empty reply,
            // 60 a certificate, 63 over --max-filesize …); else the failure's kind says.
            let code = request.getFailureCode()
            return Outcome(code: code > 0 ? code : Self.exitCode(for: request.getFailureKind()),
                           message: request.getStatusText() ?? "the request failed")
        }
        if fail || failWithBody, status >= 400 {
            return Outcome(code: 22, message: "HTTP \(status) \(request.getStatusText() ?? "")")
        }
        // As curl: a complete transfer with an empty body still makes its file.
        if let path = session.finishOutputs() { return Outcome(code: 23, message: "cannot write \(path)") }
        return nil
    }

    /// Seconds before retry number `retry` of --retry-all-errors: `first` doubled for each
    /// one after the first, at most ten minutes (curl's cap).
    static func retryDelay(_ retry: Int, first: Double) -> Double {
        min(600, first * Double(1 << min(retry - 1, 20)))
    }

    /// curl's exit codes for the same failures.
    static func exitCode(for kind: FailureKind?) -> Int32 {
        switch kind {
        case .dns?: 6
        case .connection?: 7
        case .proxy?: 5
        case .timeout?: 28
        case .tls?: 35
        case .redirects?: 47
        case .response?: 8
        case .authentication?: 67
        case .aborted?: 42
        case .other?, nil: 1
        }
    }
}
