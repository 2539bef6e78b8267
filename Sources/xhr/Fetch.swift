import ArgumentParser
import CurlXHR
import Dispatch
import Foundation

/// `xhr [options] URL…`: one request, its body on standard output; or several, each to a file
/// (one after another, or at once with -Z).
struct Fetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch a URL (the default subcommand).",
        discussion: """
        The body goes to standard output (or -o FILE, -O); everything else (-v, --states, the \
        progress bar, errors) to standard error. Several URLs are fetched one after another, \
        or at once with -Z (at most --parallel-max at a time, one progress line for all), each \
        to its own file: -o once per URL, in order, or -O for all of them; --output-dir puts \
        those files in a folder. https requests use HTTP/2 where the server offers it (one \
        connection shared by the requests to one server); --http1.1 keeps them on HTTP/1.1. Requests are asynchronous unless --sync is \
        given. The http_proxy, https_proxy, all_proxy and no_proxy environment variables are \
        honoured as curl honours them; -x wins over them.

        With --cache DIR, responses are kept in an HTTP cache (RFC 9111's private cache) in \
        DIR, which later runs naming DIR share: a fresh stored response answers without the \
        network, a stale one is validated with the server (a 304 is never shown: the stored \
        response is). -i shows a stored response's own status line and fields, with an Age \
        field. -H Cache-Control and Pragma fields (no-cache, no-store, max-age, max-stale, \
        min-fresh, only-if-cached) steer the cache and still go to the server; only-if-cached \
        with nothing stored answers 504 without the network. A successful POST, PUT, DELETE \
        (any method but GET, HEAD, OPTIONS, TRACE) removes the stored responses of its URL. \
        xhr adds no Cache-Control or Pragma field of its own.

        DIFFERENCES FROM CURL
          Redirects are followed by default (-L is accepted and changes nothing); \
        --no-location returns them.
          Compressed bodies are asked for and decoded by default (--compressed changes \
        nothing); --no-compressed gets the body as sent.
          -r takes one range, START-END or START-.
          --data-urlencode takes name=value only and encodes a space as + (curl: %20); \
        -F name=<FILE is not supported.
          -C - (with -o FILE) continues FILE.part, which the library writes while a body \
        arrives and renames to FILE when it is complete, rather than FILE itself.
          --retry writes only the last attempt's body and retries only 429 and 503 answers \
        (curl: also 408, 500, 502, 504).
          %{size_download} counts the body bytes written (decoded), where curl counts the \
        bytes received.
          -i, -I, -D and -v show the final response's head only, not each redirect's.
          With several URLs, -O names every file from its URL (curl: --remote-name-all), \
        and -i, -I, -D, -w, -C, -v, --states and --sync are refused.
          --http2 is the default (and changes nothing): HTTP/2 through TLS's ALPN, HTTP/1.1 \
        for plain http. --http2-prior-knowledge is refused: with libcurl 7.88 the second \
        request on such a connection fails (curl issue 10634).
          Cookies: every run uses a persistent cookie jar (by default the library's store \
        file); -c FILE makes FILE that store (read at the start, kept up to date) and writes \
        every cookie to it at the end, session cookies too, as curl does. -b FILE adds the \
        cookies of a Netscape-format file to the jar. -b 'NAME=VALUE; …' is a Cookie header \
        as with curl, but when the jar has cookies for the URL too, the pairs join them for \
        the transfer (one Cookie line, in the jar's order) and leave the jar after it. \
        --no-cookies sends and stores none (a -b string still goes).
          The User-Agent is the library's (CurlXHR/VERSION libcurl/VERSION) unless -A or -H \
        sets one; -A '' keeps it. -e 'URL;auto' sends URL (no automatic referer on redirects).
          A status line without a reason phrase is shown with the standard one \
        ("HTTP/1.1 201 Created" where curl shows "HTTP/1.1 201").
          Errors are one line, "xhr: <reason>", not curl's "curl: (N) <reason>".

        EXIT STATUS
          0   the request completed (any HTTP status unless -f or --fail-with-body)
          1   another failure (also: --offline and nothing stored for the URL)
          2   the library refused an argument (a malformed URL, header or proxy, or a \
        --cache folder it cannot use)
          5   the proxy could not be reached or broke the connection
          6   the host name did not resolve
          7   the connection failed or broke
          8   the response was not valid HTTP
          22  -f or --fail-with-body, and an HTTP status of 400 or more
          23  the output file could not be written (or -O found no file name in the URL)
          26  the file to send could not be read
          28  a timeout ran out (--max-time, --connect-timeout, --headers-timeout, --idle-timeout)
          35  TLS handshake or certificate verification failed
          42  the request was aborted
          47  too many redirects
          64  the command line is wrong (usage)
          67  Kerberos tickets or an OAuth2 token could not be obtained
        """
    )

    @Argument(help: "http or https URLs: one, or several with a file each (-o per URL, or -O).")
    var urls: [String] = []

    /// The URL of a run with one.
    var url: String { urls[0] }

    // MARK: The request

    @Option(name: [.customShort("X"), .customLong("request")],
            help: ArgumentHelp("The method (default GET; POST with -d, --data-binary, --json, --data-urlencode or -F; PUT with -T; HEAD with -I).", valueName: "METHOD"))
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header 'Name: value' (repeatable).", valueName: "HEADER"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("A form body (Content-Type application/x-www-form-urlencoded unless -H sets one): DATA as given, @FILE the file without its CR and LF; repeated values are joined with '&'.", valueName: "DATA"))
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: ArgumentHelp("A body sent byte for byte (Content-Type as with -d); @FILE reads FILE.", valueName: "DATA"))
    var dataBinary: String?

    @Option(name: .customLong("json"),
            help: ArgumentHelp("A JSON body (@FILE reads FILE; repeated values are joined), POSTed with Content-Type and Accept application/json.", valueName: "DATA"))
    var json: [String] = []

    @Option(name: [.customShort("F"), .customLong("form")],
            help: ArgumentHelp("A multipart/form-data part (repeatable): name=value, or name=@FILE[;type=TYPE][;filename=NAME] for a file streamed from disk.", valueName: "NAME=VALUE|NAME=@FILE"))
    var form: [String] = []

    @Option(name: .customLong("data-urlencode"), help: ArgumentHelp("A form value name=value (repeatable), sent application/x-www-form-urlencoded.", valueName: "NAME=VALUE"))
    var dataUrlencode: [String] = []

    @Option(name: [.customShort("T"), .customLong("upload-file")], help: ArgumentHelp("Stream FILE as the body, with PUT (or the -X method if it is not GET, HEAD or POST).", valueName: "FILE"))
    var uploadFile: String?

    @Flag(name: [.customShort("G"), .customLong("get")], help: "Send the -d and --data-binary data in the URL's query, with GET.")
    var get = false

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: ArgumentHelp("The User-Agent header (default: the library's, CurlXHR/VERSION libcurl/VERSION).", valueName: "NAME"))
    var userAgent: String?

    @Option(name: [.customShort("e"), .customLong("referer")], help: ArgumentHelp("The Referer header (a ';auto' suffix is ignored).", valueName: "URL"))
    var referer: String?

    // MARK: Authentication, proxies, TLS

    @Option(name: [.customShort("u"), .customLong("user")], help: ArgumentHelp("Server credentials user:password.", valueName: "USER:PASSWORD"))
    var user: String?

    @Option(name: .customLong("auth"), help: ArgumentHelp("basic (default), digest, ntlm or negotiate.", valueName: "SCHEME"))
    var auth: String?

    @Option(name: [.customShort("x"), .customLong("proxy")], help: ArgumentHelp("An HTTP proxy host:port.", valueName: "HOST:PORT"))
    var proxy: String?

    @Option(name: .customLong("proxy-user"), help: ArgumentHelp("Proxy credentials user:password.", valueName: "USER:PASSWORD"))
    var proxyUser: String?

    @Option(name: .customLong("proxy-auth"), help: ArgumentHelp("basic (default), digest, ntlm or negotiate, for the proxy.", valueName: "SCHEME"))
    var proxyAuth: String?

    @OptionGroup(title: "OAuth2")
    var oauth2: OAuth2Options

    @OptionGroup(title: "Cache")
    var cache: CacheOptions

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Accept any certificate and host name.")
    var insecure = false

    @Option(name: .customLong("cacert"), help: ArgumentHelp("Trust only the CAs in this PEM file.", valueName: "FILE"))
    var caFile: String?

    // MARK: Redirects and cookies

    @Flag(name: [.customShort("L"), .customLong("location")], inversion: .prefixedNo, exclusivity: .chooseLast,
          help: "Follow redirects: the default here (-L changes nothing); --no-location returns them.")
    var location = true

    @Option(name: [.customShort("b"), .customLong("cookie")],
            help: ArgumentHelp("Cookies to send: 'NAME=VALUE; …', or a Netscape-format file (- for standard input) whose cookies join the jar.", valueName: "DATA|FILE"))
    var cookie: String?

    @Option(name: [.customShort("c"), .customLong("cookie-jar")],
            help: ArgumentHelp("Use FILE as the persistent cookie store and write every cookie to it at the end (- : standard output).", valueName: "FILE"))
    var cookieJar: String?

    @Flag(name: .customLong("no-cookies"), help: "Send no cookies from the jar and store none (a -b string still goes).")
    var noCookies = false

    // MARK: Output

    @Option(name: [.customShort("m"), .customLong("max-time")], help: ArgumentHelp("Seconds for the whole request (default: no limit).", valueName: "SECONDS"))
    var maxTime: Double = 0

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds until the connection (and TLS) is up (default: libcurl's 300).", valueName: "SECONDS"))
    var connectTimeout: Double = 0

    @Option(name: .customLong("headers-timeout"), help: ArgumentHelp("Seconds from the request sent to the response's head (xhr's own; default: no limit).", valueName: "SECONDS"))
    var headersTimeout: Double = 0

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Seconds without a byte sent or received (xhr's own; default: no limit).", valueName: "SECONDS"))
    var idleTimeout: Double = 0

    @Option(name: .customLong("retry"), help: ArgumentHelp("Try again up to N times after no response, a 429 or a 503 (GET, HEAD, PUT, DELETE, OPTIONS).", valueName: "N"))
    var retry = 0

    @Option(name: .customLong("retry-delay"), help: ArgumentHelp("Seconds before the first retry when the server names none, doubled each time (default 1).", valueName: "SECONDS"))
    var retryDelay = 1.0

    @Option(name: [.customShort("r"), .customLong("range")], help: ArgumentHelp("Only bytes START to END of the body (both included; START- to the end).", valueName: "START-[END]"))
    var range: String?

    @Option(name: .customLong("max-filesize"), help: ArgumentHelp(
        "Fail (exit 63) rather than take a body over BYTES (after decoding; BYTES may end in K, M or G).", valueName: "BYTES"))
    var maxFilesize: String?

    @Flag(name: .customLong("compressed"), inversion: .prefixedNo, exclusivity: .chooseLast,
          help: "Ask for a compressed body (gzip, deflate, br, zstd) and decode it: the default here; --no-compressed gets the body as sent.")
    var compressed = true

    @Flag(name: .customLong("sync"), help: "Send synchronously (default: asynchronously, with callbacks).")
    var sync = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write the body to FILE (created at the first byte; none after a failure); once per URL.", valueName: "FILE"))
    var outputs: [String] = []

    /// The -o of a run with one URL, in --output-dir if given.
    var output: String? { outputs.first.map(inOutputDirectory) }

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Write the -o and -O files in DIR (an existing folder).", valueName: "DIR"))
    var outputDir: String?

    @Flag(name: [.customShort("Z"), .customLong("parallel")], help: "Fetch the URLs at once (at most --parallel-max at a time).")
    var parallel = false

    @Option(name: .customLong("parallel-max"), help: ArgumentHelp("With -Z: how many transfers run at once (1 to 300, default 50).", valueName: "N"))
    var parallelMax = 50

    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only (no HTTP/2 multiplexing).")
    var http11 = false

    @Flag(name: .customLong("http2"), help: "Use HTTP/2 where the server offers it over TLS: the default here.")
    var http2 = false

    @Flag(name: .customLong("http2-prior-knowledge"), help: ArgumentHelp("Refused: see DIFFERENCES FROM CURL.", visibility: .hidden))
    var http2PriorKnowledge = false

    @Option(name: [.customShort("C"), .customLong("continue-at")],
            help: ArgumentHelp("With -o FILE: '-' continues FILE.part, left by an interrupted run, where it ends (the library writes FILE.part and renames it to FILE when the body is complete).", valueName: "-"))
    var continueAt: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")], help: "Write the body to a file in the current directory named as the URL's last path segment.")
    var remoteName = false

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the status line and headers.")
    var head = false

    @Option(name: [.customShort("D"), .customLong("dump-header")], help: ArgumentHelp("Write the status line and headers to FILE (- : standard output).", valueName: "FILE"))
    var dumpHeader: String?

    @Option(name: [.customShort("w"), .customLong("write-out")], help: ArgumentHelp(
        "Print FORMAT on standard output after the transfer (@FILE reads it from FILE).",
        discussion: "Variables as curl's: %{http_code} %{response_code} %{size_download} %{time_total} "
            + "%{time_connect} %{time_starttransfer} %{url_effective} %{num_redirects} %{http_version} "
            + "%{content_type} %{exitcode} %{errormsg} %header{NAME} %{stdout} %{stderr}; %% is %, "
            + "\\n \\r \\t are escapes.", valueName: "FORMAT"))
    var writeOut: String?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar and no error line.")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still print the error line.")
    var showError = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print the request and the response head on standard error.")
    var verbose = false

    @Flag(name: .customLong("states"), help: "Print each ready state with the time since the request started and the bytes so far.")
    var states = false

    @Flag(name: [.customShort("f"), .customLong("fail")], help: "For an HTTP status of 400 or more: no body, and exit 22.")
    var fail = false

    @Flag(name: .customLong("fail-with-body"), help: "For an HTTP status of 400 or more: the body, and exit 22.")
    var failWithBody = false

    mutating func validate() throws {
        if urls.isEmpty { throw ValidationError("give a URL") }
        if http2PriorKnowledge {
            throw ValidationError("--http2-prior-knowledge is not offered: with libcurl 7.88 the second request on such a connection fails "
                                  + "(curl issue 10634); https URLs use HTTP/2 through ALPN, and --http2 is the default")
        }
        if http11, http2 { throw ValidationError("use one of --http1.1 and --http2") }
        if !(1...300).contains(parallelMax) { throw ValidationError("--parallel-max must be 1 to 300") }
        if isBatch { try validateBatch() }
        let bodies = [!data.isEmpty, dataBinary != nil, !json.isEmpty, !form.isEmpty, !dataUrlencode.isEmpty, uploadFile != nil]
            .filter { $0 }.count
        if bodies > 1 { throw ValidationError("use one of -d, --data-binary, --json, --data-urlencode, -F and -T") }
        if get, !json.isEmpty || !form.isEmpty || !dataUrlencode.isEmpty || uploadFile != nil {
            throw ValidationError("-G sends -d and --data-binary data in the URL; it cannot send --json, --data-urlencode, -F or -T")
        }
        if head, bodies > 0, !get { throw ValidationError("-I sends HEAD, which has no body: use -G to put -d data in the URL") }
        if fail, failWithBody { throw ValidationError("-f and --fail-with-body cannot be used together") }
        if !outputs.isEmpty, remoteName { throw ValidationError("use one of -o and -O") }
        if let continueAt {
            guard continueAt == "-" else { throw ValidationError("-C takes only '-' here (continue where FILE.part ends)") }
            guard output != nil else { throw ValidationError("-C - needs -o FILE") }
        }
        for (name, value) in [("--max-time", maxTime), ("--connect-timeout", connectTimeout),
                              ("--headers-timeout", headersTimeout), ("--idle-timeout", idleTimeout)]
        where value < 0 || !value.isFinite {
            throw ValidationError("\(name) must be 0 or more seconds")
        }
        if retry < 0 { throw ValidationError("--retry must be 0 or more") }
        if let maxFilesize, CacheOptions.bytes(maxFilesize) == nil {
            throw ValidationError("--max-filesize '\(maxFilesize)' is not a size of 1 byte or more (BYTES, or with a K, M or G suffix)")
        }
        if retryDelay < 0 || !retryDelay.isFinite { throw ValidationError("--retry-delay must be 0 or more seconds") }
        if let range, Self.byteRange(range) == nil {
            throw ValidationError("-r '\(range)' is not START-END or START- (bytes, END at or after START)")
        }
        for header in headers where !header.contains(":") {
            throw ValidationError("-H '\(header)' is not 'Name: value'")
        }
        for field in form where FormPart(field) == nil {
            throw ValidationError("-F '\(field)' is not name=value or name=@FILE[;type=TYPE][;filename=NAME]")
        }
        for field in dataUrlencode where !field.contains("=") {
            throw ValidationError("--data-urlencode '\(field)' is not name=value")
        }
        if let proxy, ProxyAddress(proxy) == nil {
            throw ValidationError("-x '\(proxy)' is not host:port")
        }
        try cache.validateOffline(method: effectiveMethod, ranged: range != nil || continueAt != nil || hasHeader("Range"),
                                  fetchesToken: oauth2.tokenURL != nil)
    }

    func run() throws {
        HttpRequest.usesEnvironmentProxy = true
        if let cookieJar, cookieJar != "-" { CookieStore.shared.file = cookieJar }
        let console = Console(silent: silent && !showError)
        // Before any request of the run (an OAuth2 token's too).
        try cache.apply(console: console)
        let authorizer = oauth2.authorizer(caFile: caFile, insecure: insecure)
        // The bearer token of --oauth2-bearer or --oauth2-token-url, for every request of the run.
        var bearer = try oauth2.bearer ?? authorizer.map { try OAuth2Options.token(from: $0, refusing: nil, console: console) }
        if isBatch { return try runBatch(console: console, bearer: bearer) }
        let format = try writeOutFormat(console: console)
        let body = try requestBody(console: console)
        let target = get ? Self.url(url, withQuery: try queryData(console: console)) : url

        let sink: Output
        if remoteName {
            guard let name = Self.remoteFileName(target) else {
                throw console.exit(23, "-O: the URL has no file name to write to")
            }
            sink = .file(inOutputDirectory(name))
        } else if continueAt != nil {
            sink = .discard()  // the library writes the file (setResponseFile)
        } else {
            sink = output.map { .file($0) } ?? .standardOutput()
        }
        let headDump = dumpHeader.map { $0 == "-" ? Output.standardOutput() : Output.file($0) }
        if !noCookies, let cookie, !cookie.contains("=") { Cookies.load(file: cookie) }

        func sendOnce(bearer: String?, dropsRefusedBearer: Bool) throws -> (HttpRequest, Session, Cookies.Sent?) {
            let request = HttpRequest()
            let session = Session(request: request, output: sink, headDump: headDump, console: console,
                                  include: include || head, discardErrorBody: fail, verbose: verbose,
                                  states: states, uploadTotal: body.size, progress: !silent && isatty(2) != 0)
            session.dropsRefusedBearer = dropsRefusedBearer
            if continueAt != nil, let output, FileManager.default.fileExists(atPath: output + ".part.validator") {
                session.resumedFrom = (try? FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int64) ?? 0
            }
            // The delegate comes first: an asynchronous open already reports OPENED.
            if !sync { request.delegate = session }
            try configure(request, url: target, bearer: bearer, console: console)
            let sentCookies = try sendCookies(request, url: target, console: console)
            if verbose { session.describeRequest(method: effectiveMethod, url: target, headers: headers) }
            do {
                try session.run(async: !sync) { send(request, body) }
            } catch {
                sentCookies?.restore()
                throw error
            }
            return (request, session, sentCookies)
        }
        var (request, session, sentCookies) = try sendOnce(bearer: bearer, dropsRefusedBearer: authorizer != nil)
        // A token of --oauth2-token-url the server refused (401 with a Bearer challenge): that
        // response was dropped, and the request goes once more with a new token.
        if session.refusedBearer, let authorizer, let refused = bearer {
            sentCookies?.restore()
            bearer = try OAuth2Options.token(from: authorizer, refusing: refused, console: console)
            (request, session, sentCookies) = try sendOnce(bearer: bearer, dropsRefusedBearer: false)
        }
        sentCookies?.restore()
        let outcome = finish(request, session: session)
        if let format {
            WriteOut.print(format, values: writeOutValues(request, session: session, url: target, outcome: outcome),
                           header: { request.getResponseHeader($0) }, console: console)
        }
        if let cookieJar, !noCookies { Cookies.writeJar(to: cookieJar, console: console) }
        if let outcome { throw console.exit(outcome.code, outcome.message) }
    }

    var effectiveMethod: String {
        if let method { return method }
        if head { return "HEAD" }
        if get { return "GET" }
        if uploadFile != nil { return "PUT" }
        return !data.isEmpty || dataBinary != nil || !json.isEmpty || !form.isEmpty || !dataUrlencode.isEmpty ? "POST" : "GET"
    }

    /// Whether -H gives a header of this name (then -A, -e and --json leave it alone, as curl does).
    private func hasHeader(_ name: String) -> Bool {
        headers.contains { $0.split(separator: ":", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() }
    }

    func configure(_ request: HttpRequest, url: String, bearer: String?, console: Console) throws {
        func check(_ accepted: Bool) throws {
            if !accepted { throw console.exit(request.lastError?.code == .fileUnreadable ? 26 : 2, request.lastError?.message ?? "refused") }
        }
        if insecure { try check(request.disablePeerVerification()) }
        if !location { try check(request.disableFollowLocation()) }
        if let caFile { try check(request.setCACertificateFile(caFile)) }
        if noCookies { try check(request.disableCookieHandling()) }
        try check(request.setTimeouts(connect: connectTimeout, headers: headersTimeout, idle: idleTimeout))
        if let range, let (start, end) = Self.byteRange(range) { try check(request.setRange(from: start, to: end)) }
        if !compressed { try check(request.disableContentDecoding()) }
        if let limit = maxFilesize.flatMap(CacheOptions.bytes) { try check(request.setMaxResponseSize(limit)) }
        if retry > 0 { try check(request.setRetries(retry, backoff: retryDelay)) }
        if http11 { request.enablePipelining = false }
        try check(cache.configure(request))
        if continueAt != nil, let output {
            if !request.setResponseFile(output, resume: true) { throw console.exit(23, request.lastError?.message ?? "-o: cannot write") }
        }
        if let proxy, let address = ProxyAddress(proxy) {
            let credentials = proxyUser.map(Self.split)
            try check(request.enableHttpProxy(host: address.host, port: address.port, user: credentials?.user,
                                              password: credentials?.password, auth: proxyAuth))
        }
        let credentials = user.map(Self.split)
        try check(request.open(effectiveMethod, url: url, async: !sync, user: credentials?.user,
                               password: credentials?.password, auth: auth))
        for header in headers {
            let colon = header.firstIndex(of: ":")!
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            try check(request.setRequestHeader(String(header[..<colon]), value: value))
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
        if !get, !data.isEmpty || dataBinary != nil, !hasHeader("Content-Type") {
            // As curl: -d and --data-binary send a form.
            try check(request.setRequestHeader("Content-Type", value: "application/x-www-form-urlencoded"))
        }
        if !json.isEmpty {
            if !hasHeader("Content-Type") { try check(request.setRequestHeader("Content-Type", value: "application/json")) }
            if !hasHeader("Accept") { try check(request.setRequestHeader("Accept", value: "application/json")) }
        }
        for field in dataUrlencode {
            let equals = field.firstIndex(of: "=")!
            request.setPostValue(String(field[field.index(after: equals)...]), forKey: String(field[..<equals]))
        }
        if !form.isEmpty { try check(request.sendFormAsMultipart()) }
        for case let part? in form.map(FormPart.init) {
            switch part.content {
            case .value(let value): request.setPostValue(value, forKey: part.name)
            case .file(let path, let type, let fileName):
                try check(request.addPostFile(path, forKey: part.name, fileName: fileName, contentType: type))
            }
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

    private func writeOutFormat(console: Console) throws -> String? {
        guard let writeOut else { return nil }
        guard writeOut.hasPrefix("@") else { return writeOut }
        return String(decoding: try Self.contents(writeOut, console: console), as: UTF8.self)
    }

    /// How the run ends when it does not end well: the exit status and the error line.
    struct Outcome {
        var code: Int32
        var message: String
    }

    func finish(_ request: HttpRequest, session: Session) -> Outcome? {
        if let path = session.writeFailure { return Outcome(code: 23, message: "cannot write \(path)") }
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

    private func writeOutValues(_ request: HttpRequest, session: Session, url: String, outcome: Outcome?) -> [String: String] {
        let report = TransferReport(request)
        return [
            "http_code": String(format: "%03d", request.getStatus()),
            "response_code": String(format: "%03d", request.getStatus()),
            "size_download": String(session.written),
            "time_total": WriteOut.seconds(report.totalTime),
            "time_connect": WriteOut.seconds(report.connectTime),
            "time_starttransfer": WriteOut.seconds(report.startTransferTime),
            "url_effective": report.effectiveURL ?? url,
            "num_redirects": String(report.redirectCount),
            "http_version": WriteOut.version(report.httpVersion),
            "content_type": request.getResponseHeader("Content-Type") ?? "",
            "exitcode": String(outcome?.code ?? 0),
            "errormsg": outcome?.message ?? "",
        ]
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
