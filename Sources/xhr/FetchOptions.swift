import CurlXHR

/// The options of `xhr fetch`, by curl's names, in the sections of the help and the man page.
extension Fetch {
    /// One -d, --data-binary, --data-raw or --data-urlencode argument.
    struct DataArgument: Equatable {
        enum Kind { case ascii, binary, raw, urlencode }
        let kind: Kind
        let text: String
    }

    /// --netrc (required), --netrc-optional, or neither.
    enum NetrcChoice { case ignored, optional, required }

    static var sections: [OptionSection] {
        [request, authentication, OAuth2Options.section, redirects, transfer, CacheOptions.section, output]
    }

    private static func data(_ long: String, _ short: Character?, _ kind: DataArgument.Kind, _ help: String) -> OptionSpec {
        OptionSpec(short: short, long: long, valueName: "DATA", help: help) { $0.data.append(DataArgument(kind: kind, text: $1)) }
    }

    /// --basic, --digest, --ntlm, --negotiate, --anyauth: the --auth `scheme` (the option's name unless given).
    private static func authScheme(_ long: String, scheme: String? = nil, _ help: String) -> OptionSpec {
        let name = scheme ?? long
        return OptionSpec(short: nil, long: long, valueName: nil, help: help) { fetch, value in
            if value != "no" { fetch.auth = name } else if fetch.auth == name { fetch.auth = nil }
        }
    }

    private static var request: OptionSection {
        OptionSection(title: "The request", options: [
        .text("X", "request", "METHOD", "The method (default GET; POST with -d, --data-binary, --data-raw, --json, --data-urlencode or -F; PUT with -T; HEAD with -I).", { $0.method = $1 }),
        .list("H", "header", "HEADER", "A request header 'Name: value' (repeatable); 'Name:' removes a header the tool would send, 'Name;' sends it empty.", { $0.headers.append($1) }),
        data("data", "d", .ascii, "A form body (Content-Type application/x-www-form-urlencoded unless -H sets one): DATA as given, @FILE the file without its CR and LF; repeated values are joined with '&'."),
        data("data-binary", nil, .binary, "Data sent byte for byte (Content-Type as with -d); @FILE reads FILE."),
        data("data-raw", nil, .raw, "Data as -d, without the meaning of @."),
        data("data-urlencode", nil, .urlencode, "Data URL-encoded as curl does: CONTENT, =CONTENT, NAME=CONTENT, @FILE or NAME@FILE."),
        .list(nil, "json", "DATA", "A JSON body (@FILE reads FILE; repeated values are joined), POSTed with Content-Type and Accept application/json.", { $0.json.append($1) }),
        .list("F", "form", "NAME=VALUE|NAME=@FILE|NAME=<FILE", "A multipart/form-data part (repeatable): name=value, name=@FILE[;type=TYPE][;filename=NAME] for a file streamed from disk, or name=<FILE for a value read from FILE.", { $0.form.append($1) }),
        .text("T", "upload-file", "FILE", "Stream FILE (- : standard input) as the body, with PUT (or the -X method if it is not GET, HEAD or POST); a URL ending in / gets FILE's name.", { $0.uploadFile = $1 }),
        .flag("G", "get", "Send the -d and --data-binary data in the URL's query, with GET.", { $0.get = $1 }),
        .text("A", "user-agent", "NAME", "The User-Agent header (default: the library's, CurlXHR/VERSION libcurl/VERSION).", { $0.userAgent = $1 }),
        .text("e", "referer", "URL", "The Referer header (a ';auto' suffix is ignored).", { $0.referer = $1 }),
        OptionSpec(short: nil, long: "url", valueName: "URL", help: "A URL to fetch, as one given without an option.") { $0.urls.append($1) },
        .flag("g", "globoff", "Take {} and [] in URLs as they are (default: {a,b} and [1-3] make several URLs, #N in -o names their parts).", { $0.globOff = $1 }),
    ]) }

    private static var authentication: OptionSection {
        OptionSection(title: "Authentication, proxies, TLS", options: [
        .text("u", "user", "USER:PASSWORD", "Server credentials user:password.", { $0.user = $1 }),
        .text(nil, "auth", "SCHEME", "basic (default), digest, ntlm, negotiate or any.", { $0.auth = $1 }),
        authScheme("basic", "Basic authentication with -u (the default)."),
        authScheme("digest", "Digest authentication with -u."),
        authScheme("ntlm", "NTLM authentication with -u."),
        authScheme("negotiate", "Negotiate (Kerberos) authentication; -u : uses the tickets of the credential cache."),
        authScheme("anyauth", scheme: "any", "With -u, the strongest of NTLM, Digest and Basic the server offers (--auth any; not Negotiate)."),
        .text(nil, "service-name", "NAME", "The Kerberos service --negotiate asks a ticket for (default HTTP: HTTP/host).", { $0.serviceName = $1 }),
        OptionSpec(short: "n", long: "netrc", valueName: nil, help: "Take -u's credentials for the URL's host (or the default entry) from ~/.netrc (or --netrc-file); a file that cannot be read gives none.") {
            $0.netrc = $1 == "no" ? .ignored : .required
        },
        OptionSpec(short: nil, long: "netrc-optional", valueName: nil, help: "As --netrc (curl's name for letting a URL's own user name win; xhr takes -u's only).") {
            $0.netrc = $1 == "no" ? .ignored : .optional
        },
        OptionSpec(short: nil, long: "netrc-file", valueName: "FILE", help: "The netrc file to read (implies --netrc).") {
            $0.netrcFile = $1
            if $0.netrc == .ignored { $0.netrc = .required }
        },
        .text("x", "proxy", "[SCHEME://]HOST[:PORT]", "The proxy: http:// (the default), https:// (TLS to the proxy), socks4://, socks4a://, socks5:// or socks5h:// (names resolved by the proxy); port 1080 (443 for https) unless given.", { $0.proxy = $1 }),
        .text(nil, "socks4", "HOST[:PORT]", "A SOCKS4 proxy (as -x socks4://HOST[:PORT]).", { $0.proxy = "socks4://" + $1 }),
        .text(nil, "socks4a", "HOST[:PORT]", "A SOCKS4a proxy, which resolves names (as -x socks4a://HOST[:PORT]).", { $0.proxy = "socks4a://" + $1 }),
        .text(nil, "socks5", "HOST[:PORT]", "A SOCKS5 proxy (as -x socks5://HOST[:PORT]).", { $0.proxy = "socks5://" + $1 }),
        .text(nil, "socks5-hostname", "HOST[:PORT]", "A SOCKS5 proxy, which resolves names (as -x socks5h://HOST[:PORT]).", { $0.proxy = "socks5h://" + $1 }),
        .text(nil, "proxy-user", "USER:PASSWORD", "Proxy credentials user:password (a SOCKS5 login; SOCKS4's user id without a password).", { $0.proxyUser = $1 }),
        .text(nil, "proxy-auth", "SCHEME", "basic (default), digest, ntlm, negotiate or any, for an HTTP or HTTPS proxy.", { $0.proxyAuth = $1 }),
        .flag(nil, "socks5-gssapi", "Kerberos (GSS-API, RFC 1961) with a SOCKS5 proxy: the credential cache's tickets, or --proxy-user PRINCIPAL:PASSWORD's (a failed handshake exits 97).", { $0.socks5GSSAPI = $1 }),
        .text(nil, "socks5-gssapi-service", "NAME", "The Kerberos service of a SOCKS5 proxy's GSS-API (default rcmd: rcmd/proxyhost); as --proxy-service-name.", { $0.proxyServiceName = $1 }),
        .text(nil, "proxy-service-name", "NAME", "The Kerberos service of the proxy (default rcmd for SOCKS5's GSS-API, HTTP for --proxy-auth negotiate).", { $0.proxyServiceName = $1 }),
        .list(nil, "proxy-header", "HEADER", "A header 'Name: value' sent to the proxy only (repeatable); the request then has a proxy connection of its own.", { $0.proxyHeaders.append($1) }),
        .text(nil, "noproxy", "HOSTS", "Reach these hosts without the proxy: names or addresses separated by commas, each with its subdomains; * for all.", { $0.noProxy = $1 }),
        .text(nil, "proxy-cacert", "FILE", "Trust only the CAs in this PEM file for an https:// proxy's certificate.", { $0.proxyCAFile = $1 }),
        .text(nil, "proxy-pac", "LOCATION", "Choose the proxy with this proxy auto-config (PAC) file: a path, file://, http:// or https:// URL; FindProxyForURL's routes are tried in order (-x wins).", { $0.proxyPAC = $1 }),
        .flag(nil, "proxy-insecure", "Accept any certificate from an https:// proxy (the server's is still verified).", { $0.proxyInsecure = $1 }),
        .text(nil, "proxy-cert", "FILE[:PASSWORD]", "Show this client certificate to an https:// proxy that asks (as --cert, for the proxy).", { $0.proxyCert = $1 }),
        .certificateFormat("proxy-cert-type", of: "proxy-cert", isKey: false) { $0.proxyCertType = $1 },
        .text(nil, "proxy-key", "FILE", "The proxy client certificate's private key.", { $0.proxyKey = $1 }),
        .certificateFormat("proxy-key-type", of: "proxy-key", isKey: true) { $0.proxyKeyType = $1 },
        .text(nil, "proxy-pass", "PASSWORD", "The password of --proxy-key, or of a P12 --proxy-cert.", { $0.proxyPass = $1 }),
        .text(nil, "proxy-pinnedpubkey", "HASHES|FILE", "Accept only an https:// proxy whose public key is one of these (as --pinnedpubkey; else exit 90).", { $0.proxyPinnedPubKey = $1 }),
        .flag("k", "insecure", "Accept any certificate and host name.", { $0.insecure = $1 }),
        .text(nil, "cacert", "FILE", "Trust only the CAs in this PEM file.", { $0.caFile = $1 }),
        .text(nil, "capath", "DIR", "Trust only the CAs in this folder (named by hash: openssl rehash DIR), and --cacert's.", { $0.caPath = $1 }),
        .text("E", "cert", "FILE[:PASSWORD]", "Show this client certificate to a server that asks (':' in FILE as '\\:'); its key is --key's, or in FILE.", { $0.cert = $1 }),
        .certificateFormat("cert-type", of: "cert", isKey: false) { $0.certType = $1 },
        .text(nil, "key", "FILE", "The client certificate's private key.", { $0.key = $1 }),
        .certificateFormat("key-type", of: "key", isKey: true) { $0.keyType = $1 },
        .text(nil, "pass", "PASSWORD", "The password of --key, or of a P12 --cert; an encrypted key without it fails (exit 58), never prompts.", { $0.pass = $1 }),
        .text(nil, "pinnedpubkey", "HASHES|FILE", "Accept only a server whose public key is one of these: sha256//BASE64[;sha256//BASE64...], or a PEM or DER key file (else exit 90).", { $0.pinnedPubKey = $1 }),
        .flag(nil, "tlsv1.2", "Use TLS 1.2 or later.", { $0.tlsMinimum = $1 ? .v1_2 : nil }),
        .flag(nil, "tlsv1.3", "Use TLS 1.3 or later.", { $0.tlsMinimum = $1 ? .v1_3 : nil }),
        OptionSpec(short: nil, long: "tls-max", valueName: "VERSION", help: "Use at most this TLS version: 1.0, 1.1, 1.2, 1.3 or default.") { fetch, value in
            guard value == "default" || Fetch.tlsVersion(value) != nil else {
                throw ValidationError("option --tls-max: '\(value)' is not 1.0, 1.1, 1.2, 1.3 or default")
            }
            fetch.tlsMaximum = Fetch.tlsVersion(value)
        },
    ]) }

    private static var redirects: OptionSection {
        OptionSection(title: "Redirects and cookies", options: [
        .flag("L", "location", "Follow redirects: the default here (-L changes nothing); --no-location returns them.",
              showsNegation: true) { $0.location = $1 },
        .flag(nil, "location-trusted", "Send -u's credentials, and -H's Authorization and Cookie, on to redirect targets on other hosts too.", { $0.locationTrusted = $1 }),
        .text(nil, "proto", "PROTOCOLS", "The schemes the request may use, as curl reads them: [+|-|=]NAME,... of http, https and all (default: all).", { $0.proto = $1 }),
        .text(nil, "proto-redir", "PROTOCOLS", "The schemes a redirect may lead to, within --proto's, in the same form.", { $0.protoRedir = $1 }),
        OptionSpec(short: nil, long: "max-redirs", valueName: "N", help: "Follow at most N redirects (default 20, up to 10000; -1: no limit); one more fails with exit 47.") { fetch, value in
            guard let count = Int(value), count >= -1 else { throw ValidationError("option --max-redirs: expected a proper numerical parameter") }
            fetch.maxRedirs = count
        },
        .text("b", "cookie", "DATA|FILE", "Cookies to send: 'NAME=VALUE; …', or a Netscape-format file (- for standard input) whose cookies join the jar.", { $0.cookie = $1 }),
        .text("c", "cookie-jar", "FILE", "Use FILE as the persistent cookie store and write every cookie to it at the end (- : standard output).", { $0.cookieJar = $1 }),
        .flag(nil, "no-cookies", "Send no cookies from the jar and store none (a -b string still goes).", { $0.noCookies = $1 }),
    ]) }

    private static var transfer: OptionSection {
        OptionSection(title: "Transfer control", options: [
        .seconds("m", "max-time", "Seconds for the whole request (default: no limit).", { $0.maxTime = $1 }),
        .seconds(nil, "connect-timeout", "Seconds until the connection (and TLS) is up (default: libcurl's 300).", { $0.connectTimeout = $1 }),
        .seconds(nil, "headers-timeout", "Seconds from the request sent to the response's head (xhr's own; default: no limit).", { $0.headersTimeout = $1 }),
        .seconds(nil, "idle-timeout", "Seconds without a byte sent or received (xhr's own; default: no limit).", { $0.idleTimeout = $1 }),
        .count("retry", "Try again up to N times after no response, a 429 or a 503 (GET, HEAD, PUT, DELETE, OPTIONS).", { $0.retry = $1 }),
        .seconds(nil, "retry-delay", "Seconds before the first retry when the server names none, doubled each time (default 1).", { $0.retryDelay = $1 }),
        .flag(nil, "retry-all-errors", "With --retry N: send again after any failure (-f's HTTP errors too), for any method, starting the output file over.", { $0.retryAllErrors = $1 }),
        .text("r", "range", "START-[END]", "Only bytes START to END of the body (both included; START- to the end).", { $0.range = $1 }),
        .text(nil, "max-filesize", "BYTES", "Fail (exit 63) rather than take a body over BYTES (after decoding; BYTES may end in K, M or G).", { $0.maxFilesize = $1 }),
        OptionSpec(short: nil, long: "limit-rate", valueName: "RATE", help: "Move the body at most RATE bytes a second, each way, on average (RATE may end in K, M or G, 1024 each; 0: no limit).") { fetch, value in
            guard let rate = Fetch.rate(value) else { throw ValidationError("option --limit-rate: '\(value)' is not a rate (bytes a second, or with a K, M or G suffix)") }
            fetch.limitRate = rate
        },
        .flag(nil, "compressed", "Ask for a compressed body (gzip, deflate, br, zstd) and decode it: the default here; --no-compressed gets the body as sent.",
              showsNegation: true) { $0.compressed = $1 },
        .flag(nil, "sync", "Send synchronously (default: asynchronously, with callbacks).", { $0.sync = $1 }),
        .flag("4", "ipv4", "Connect to IPv4 addresses only.", { $0.ipVersion = $1 ? .v4 : .any }),
        .flag("6", "ipv6", "Connect to IPv6 addresses only.", { $0.ipVersion = $1 ? .v6 : .any }),
        .list(nil, "resolve", "HOST:PORT:ADDR[,ADDR]", "Connect to ADDR (tried in order) for HOST (* for any) on PORT, keeping the URL's name for Host and TLS (repeatable; -HOST:PORT takes one out).", { $0.resolve.append($1) }),
        .list(nil, "connect-to", "HOST:PORT:HOST2:PORT2", "Connect to HOST2:PORT2 for HOST:PORT, keeping the URL's name for Host and TLS (repeatable; empty parts: any, or the URL's own).", { $0.connectTo.append($1) }),
        .text(nil, "unix-socket", "PATH", "Connect through the Unix socket at PATH instead of TCP.", { $0.unixSocket = $1.hasPrefix("@") ? "./" + $1 : $1 }),
        .text(nil, "abstract-unix-socket", "NAME", "Connect through the Unix socket NAME in the abstract namespace instead of TCP.", { $0.unixSocket = "@" + $1 }),
        .text(nil, "interface", "NAME|ADDRESS", "Send from this network interface (lo, eth0, if!NAME) or local address; exit 45 when it cannot be used.", { $0.interface = $1 }),
        .flag(nil, "http1.1", "Use HTTP/1.1 only (no HTTP/2 multiplexing).", { $0.http11 = $1 }),
        .flag(nil, "http2", "Use HTTP/2 where the server offers it over TLS: the default here.", { $0.http2 = $1 }),
        .flag(nil, "http2-prior-knowledge", "Refused: see DIFFERENCES FROM CURL.", hidden: true) { $0.http2PriorKnowledge = $1 },
    ]) }

    private static var output: OptionSection {
        OptionSection(title: "Output", options: [
        .list("o", "output", "FILE", "Write the body to FILE (created at the first byte; none after a failure); once per URL.", { $0.outputs.append($1) }),
        .text(nil, "output-dir", "DIR", "Write the -o and -O files in DIR (an existing folder, unless --create-dirs).", { $0.outputDir = $1 }),
        .flag(nil, "create-dirs", "Make the folders -o and --output-dir name when they are missing.", { $0.createDirs = $1 }),
        .flag("Z", "parallel", "Fetch the URLs at once (at most --parallel-max at a time).", { $0.parallel = $1 }),
        .count("parallel-max", "With -Z: how many transfers run at once (1 to 300, default 50).", { $0.parallelMax = $1 }),
        .text("C", "continue-at", "OFFSET|-", "With -o FILE: continue FILE from its size (-) or from OFFSET, appending what the server sends from there.", { $0.continueAt = $1 }),
        .flag("O", "remote-name", "Write the body to a file in the current directory named as the URL's last path segment.", { $0.remoteName = $1 }),
        .flag("J", "remote-header-name", "With -O: name the file as the response's Content-Disposition says (its last path segment only; never outside the folder, never over a file).", { $0.remoteHeaderName = $1 }),
        .flag("i", "include", "Print the status line and headers before the body.", { $0.include = $1 }),
        .flag("I", "head", "Send HEAD and print the status line and headers.", { $0.head = $1 }),
        .text("D", "dump-header", "FILE", "Write the status line and headers to FILE (- : standard output).", { $0.dumpHeader = $1 }),
        .text("w", "write-out", "FORMAT", "Print FORMAT on standard output after the transfer (@FILE reads it from FILE, @- from standard input). "
              + "Variables as curl's: %{http_code} %{response_code} %{http_version} %{content_type} %{method} %{scheme} "
              + "%{url} %{url_effective} %{num_redirects} %{num_retries} %{num_connects} %{exitcode} %{errormsg} "
              + "%{time_namelookup} %{time_connect} %{time_appconnect} %{time_pretransfer} %{time_starttransfer} %{time_redirect} "
              + "%{time_total} %{time_queue} %{remote_ip} %{remote_port} %{local_ip} %{local_port} "
              + "%{size_download} %{size_upload} %{size_header} %{speed_download} %{speed_upload} %{json} %header{NAME} "
              + "%{stdout} %{stderr}; %% is %, \\n \\r \\t are escapes.", { $0.writeOut = $1 }),
        .flag("s", "silent", "No progress bar and no error line.", { $0.silent = $1 }),
        .flag("S", "show-error", "With -s, still print the error line.", { $0.showError = $1 }),
        .flag("#", "progress-bar", "Draw the progress bar (on a terminal: the default here).", { $0.progressBar = $1 }),
        .flag(nil, "no-progress-meter", "No progress bar, but the error line.", { $0.noProgressMeter = $1 }),
        .text(nil, "stderr", "FILE", "Write what goes to standard error to FILE instead (- : standard output).", { $0.errorFile = $1 }),
        .flag("v", "verbose", "Print the request and the response head on standard error.", { $0.verbose = $1 }),
        .text(nil, "trace", "FILE", "Write the wire as libcurl sees it to FILE (- : standard output, % : standard error) as curl's --trace does: "
              + "hex and text; Authorization, Proxy-Authorization, Cookie, Set-Cookie and passwords as [redacted].", { $0.trace = ($1, .hex) }),
        .text(nil, "trace-ascii", "FILE", "As --trace, text only.", { $0.trace = ($1, .ascii) }),
        .flag(nil, "trace-time", "Start each --trace and --trace-ascii entry with the time of day.", { $0.traceTime = $1 }),
        .flag(nil, "states", "Print each ready state with the time since the request started and the bytes so far.", { $0.states = $1 }),
        .flag("f", "fail", "For an HTTP status of 400 or more: no body, and exit 22.", { $0.fail = $1 }),
        .flag(nil, "fail-with-body", "For an HTTP status of 400 or more: the body, and exit 22.", { $0.failWithBody = $1 }),
    ]) }
}

extension OptionSpec {
    /// A certificate's or key's format (--cert-type, --key-type and the proxy's): PEM, DER or
    /// P12, case aside; a key is PEM or DER.
    static func certificateFormat(_ long: String, of subject: String, isKey: Bool,
                                  _ set: @escaping (inout Fetch, HttpRequest.CertificateFormat) -> Void) -> OptionSpec {
        let help = isKey ? "--\(subject)'s format: PEM (default) or DER." : "--\(subject)'s format: PEM (default), DER or P12."
        return OptionSpec(short: nil, long: long, valueName: "TYPE", help: help) { fetch, value in
            let format = try Fetch.certificateFormat(value, option: long)
            guard !isKey || format != .pkcs12 else { throw ValidationError("option --\(long): a key is PEM or DER") }
            set(&fetch, format)
        }
    }
}
