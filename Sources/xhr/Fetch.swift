import ArgumentParser
import CurlXHR
import Dispatch
import Foundation

/// `xhr [options] URL`: one request, its body on standard output.
struct Fetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch a URL (the default subcommand).",
        discussion: """
        The body goes to standard output (or -o FILE); everything else (-v, --states, the \
        progress bar, errors) to standard error. Requests are asynchronous unless --sync is \
        given. The http_proxy, https_proxy, all_proxy and no_proxy environment variables are \
        honoured as curl honours them; -x wins over them.

        EXIT STATUS
          0   the request completed (any HTTP status unless --fail)
          1   another failure
          2   the library refused an argument (a malformed URL, header or proxy)
          5   the proxy could not be reached or broke the connection
          6   the host name did not resolve
          7   the connection failed or broke
          8   the response was not valid HTTP
          22  --fail and an HTTP status of 400 or more
          23  the -o file could not be written
          26  the file to send could not be read
          28  the --max-time ran out
          35  TLS handshake or certificate verification failed
          42  the request was aborted
          47  too many redirects
          64  the command line is wrong (usage)
          67  Kerberos tickets could not be obtained
        """
    )

    @Argument(help: "An http or https URL.")
    var url: String

    @Option(name: [.customShort("X"), .customLong("request")], help: "The method (default GET, or POST with -d/-F).")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "A body sent as given; repeated values are joined with '&'.")
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: "A body sent byte for byte; @FILE reads FILE.")
    var dataBinary: String?

    @Option(name: [.customShort("F"), .customLong("form")], help: "A form value key=value (repeatable), sent urlencoded.")
    var form: [String] = []

    @Option(name: [.customShort("T"), .customLong("upload-file")], help: "Stream FILE as the body, with PUT (or the -X method if it is not GET, HEAD or POST).")
    var uploadFile: String?

    @Option(name: [.customShort("u"), .customLong("user")], help: "Server credentials user:password.")
    var user: String?

    @Option(name: .customLong("auth"), help: "basic (default), digest, ntlm or negotiate.")
    var auth: String?

    @Option(name: [.customShort("x"), .customLong("proxy")], help: "An HTTP proxy host:port.")
    var proxy: String?

    @Option(name: .customLong("proxy-user"), help: "Proxy credentials user:password.")
    var proxyUser: String?

    @Option(name: .customLong("proxy-auth"), help: "basic (default), digest, ntlm or negotiate, for the proxy.")
    var proxyAuth: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Accept any certificate and host name.")
    var insecure = false

    @Option(name: .customLong("cacert"), help: "Trust only the CAs in this PEM file.")
    var caFile: String?

    @Flag(name: .customLong("no-location"), help: "Return redirects instead of following them.")
    var noLocation = false

    @Flag(name: .customLong("no-cookies"), help: "Send no cookies and store none.")
    var noCookies = false

    @Option(name: .customLong("cookie-jar"), help: "The persistent cookie store file to use instead of the default.")
    var cookieJar: String?

    @Option(name: [.customShort("m"), .customLong("max-time")], help: "Seconds for the whole request (default: no limit).")
    var maxTime: Double = 0

    @Flag(name: .customLong("sync"), help: "Send synchronously (default: asynchronously, with callbacks).")
    var sync = false

    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the body to FILE.")
    var output: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar and no error line.")
    var silent = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print the request and the response head on standard error.")
    var verbose = false

    @Flag(name: .customLong("states"), help: "Print each ready state with the time since the request started and the bytes so far.")
    var states = false

    @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 for an HTTP status of 400 or more.")
    var fail = false

    mutating func validate() throws {
        let bodies = [!data.isEmpty, dataBinary != nil, !form.isEmpty, uploadFile != nil].filter { $0 }.count
        if bodies > 1 { throw ValidationError("use one of -d, --data-binary, -F and -T") }
        if maxTime < 0 || !maxTime.isFinite { throw ValidationError("--max-time must be 0 or more seconds") }
        for header in headers where !header.contains(":") {
            throw ValidationError("-H '\(header)' is not 'Name: value'")
        }
        for field in form where !field.contains("=") {
            throw ValidationError("-F '\(field)' is not key=value")
        }
        if let proxy, ProxyAddress(proxy) == nil {
            throw ValidationError("-x '\(proxy)' is not host:port")
        }
    }

    func run() throws {
        HttpRequest.usesEnvironmentProxy = true
        if let cookieJar { CookieStore.shared.file = cookieJar }
        let console = Console(silent: silent)
        let request = HttpRequest()
        let body = try requestBody(console: console)

        let sink: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) , let handle = FileHandle(forWritingAtPath: output) else {
                throw console.exit(23, "cannot write \(output)")
            }
            sink = handle
        } else {
            sink = FileHandle.standardOutput
        }
        let session = Session(request: request, sink: sink, console: console, include: include, verbose: verbose,
                              states: states, uploadTotal: body.size,
                              progress: !silent && isatty(2) != 0)
        // The delegate comes first: an asynchronous open already reports OPENED.
        if !sync { request.delegate = session }
        try configure(request, console: console)
        if verbose { session.describeRequest(method: effectiveMethod, url: url, headers: headers) }
        try session.run(async: !sync) {
            switch body.kind {
            case .none: request.send(timeout: maxTime)
            case .text(let text): request.send(text, timeout: maxTime)
            case .bytes(let data): request.sendData(data, timeout: maxTime)
            case .file(let path): request.sendWithFile(path, timeout: maxTime)
            }
        }
        try? sink.synchronize()
        try finish(request, console: console)
    }

    private var effectiveMethod: String {
        method ?? (uploadFile != nil ? "PUT" : (!data.isEmpty || dataBinary != nil || !form.isEmpty) ? "POST" : "GET")
    }

    private func configure(_ request: HttpRequest, console: Console) throws {
        func check(_ accepted: Bool) throws {
            if !accepted { throw console.exit(request.lastError?.code == .fileUnreadable ? 26 : 2, request.lastError?.message ?? "refused") }
        }
        if insecure { try check(request.disablePeerVerification()) }
        if noLocation { try check(request.disableFollowLocation()) }
        if let caFile { try check(request.setCACertificateFile(caFile)) }
        if noCookies { try check(request.disableCookieHandling()) }
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
        for field in form {
            let equals = field.firstIndex(of: "=")!
            request.setPostValue(String(field[field.index(after: equals)...]), forKey: String(field[..<equals]))
        }
    }

    /// `user:password` → its parts (no colon: an empty password).
    static func split(_ credentials: String) -> (user: String, password: String) {
        guard let colon = credentials.firstIndex(of: ":") else { return (credentials, "") }
        return (String(credentials[..<colon]), String(credentials[credentials.index(after: colon)...]))
    }

    struct Body {
        enum Kind {
            case none
            case text(String)
            case bytes(Data)
            case file(String)
        }
        var kind: Kind
        /// Bytes to upload, for the progress bar; nil without a body.
        var size: Int64?
    }

    private func requestBody(console: Console) throws -> Body {
        if !data.isEmpty {
            let text = data.joined(separator: "&")
            return Body(kind: .bytes(Data(text.utf8)), size: Int64(text.utf8.count))
        }
        if let dataBinary {
            guard dataBinary.hasPrefix("@") else {
                return Body(kind: .bytes(Data(dataBinary.utf8)), size: Int64(dataBinary.utf8.count))
            }
            let path = String(dataBinary.dropFirst())
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw console.exit(26, "cannot read \(path)")
            }
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if let uploadFile {
            let size = (try? FileManager.default.attributesOfItem(atPath: uploadFile)[.size] as? Int64) ?? nil
            return Body(kind: .file(uploadFile), size: size)
        }
        return Body(kind: .none, size: nil)
    }

    private func finish(_ request: HttpRequest, console: Console) throws {
        let status = request.getStatus()
        if status == 0 {
            let text = request.getStatusText() ?? "the request failed"
            throw console.exit(Self.exitCode(for: request.getFailureKind()), text)
        }
        if fail, status >= 400 {
            throw console.exit(22, "HTTP \(status) \(request.getStatusText() ?? "")")
        }
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

/// `-x host:port`, with an IPv6 address in brackets.
struct ProxyAddress {
    let host: String
    let port: Int

    init?(_ text: String) {
        var rest = Substring(text)
        if rest.hasPrefix("http://") { rest = rest.dropFirst("http://".count) }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return nil }
        var host = rest[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }
}
