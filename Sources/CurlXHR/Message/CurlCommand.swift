#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request as a `curl` command line (``HttpRequest/curlCommand()``): a pure value of the
/// request's message, switches and last body, rendered as one line of POSIX shell.
///
/// Every argument is single-quoted where it is not plain (`'` written `'\''`); secrets are
/// `[redacted]`: the values of `Authorization`, `Proxy-Authorization` and `Cookie` fields
/// (an `Authorization` keeps its scheme word), the URL's password, and every password of
/// credentials, the proxy and a key. A body that is not printable UTF-8 on one line comes
/// from `printf` through a pipe (`--data-binary @-`), octal escapes for every byte but
/// letters and digits; part of a file, from `tail -c` and `head -c`. What curl cannot be told
/// is named in a trailing `# not expressible: …` comment, never left out silently.
struct CurlCommand {
    /// A send's body as the command replays it, kept by the request from its last send.
    enum Body: Sendable {
        case none
        /// The bytes and the `Content-Type` the library adds unless the request sets one (nil: none).
        case bytes(Data, contentType: String?)
        /// Bytes over ``keptLimit``: not kept, only counted.
        case unkept(count: Int, contentType: String?)
        /// `length` bytes of the file from `offset` on (nil: to its end).
        case file(path: String, offset: Int64, length: Int64?)

        /// The largest body kept for the command (libcurl copies bodies up to this size anyway).
        static let keptLimit = 64 * 1024

        /// What a send of `body` (a file's `fileSize` bytes) leaves for the command. A form's
        /// body is the message's form, rendered from it: none here.
        init(_ body: RequestBody, fileSize: Int64) {
            switch body {
            case .none, .multipart:
                self = .none
            case .bytes(let data, let type):
                self = data.count <= Self.keptLimit ? .bytes(data, contentType: type) : .unkept(count: data.count, contentType: type)
            case .file(let path, let offset):
                self = .file(path: path, offset: offset, length: fileSize)
            }
        }
    }

    /// What replaces a secret.
    static let redacted = "[redacted]"

    var message: RequestMessage
    var switches: TransferSwitches
    var body = Body.none
    /// `enablePipelining` is off: HTTP/1.1 only.
    var http1Only = false
    /// The process's trusted CAs (``HttpRequest/caCertificateFile``), for a request naming none.
    var processCAFile: String?
    /// The PAC file the send follows (``TransferSwitches/effectiveProxyAutoConfig``).
    var proxyAutoConfig: PACLocation?

    /// The words after `curl`, each quoted; what goes into curl's standard input; the notes.
    private var words: [String] = []
    private var input: String?
    private var notes: [String] = []

    init(message: RequestMessage, switches: TransferSwitches, body: Body = .none, http1Only: Bool = false,
         processCAFile: String? = nil, proxyAutoConfig: PACLocation? = nil) {
        self.message = message
        self.switches = switches
        self.body = body
        self.http1Only = http1Only
        self.processCAFile = processCAFile
        self.proxyAutoConfig = proxyAutoConfig
    }

    /// The command line.
    func rendered() -> String {
        var command = self  // gathers the words; `self` keeps none
        command.addMethodAndBody()
        command.addCredentials()
        command.addTransferSwitches()
        command.addTLS()
        command.addProxy()
        command.addRouting()
        let url = Self.redactingPassword(message.url)
        if url.contains(where: { "[]{}".contains($0) }) { command.add("-g") }
        command.add(nil, url, naming: "the URL")
        var line = (command.input.map { $0 + " | " } ?? "") + "curl " + command.words.joined(separator: " ")
        if !command.notes.isEmpty { line += " # not expressible: " + command.notes.joined(separator: "; ") }
        return line
    }

    // MARK: Parts

    private mutating func addMethodAndBody() {
        let method = message.method
        let hasForm = !message.formValues.isEmpty || !message.formFiles.isEmpty
        // The Content-Type the library adds when the request sets none: a type, "" for none
        // (where curl would add its own for data), nil for what curl adds too.
        var contentType: String?
        var sendsData = true
        let start = words.count
        if hasForm, message.formFiles.isEmpty, !message.multipartForm {
            var encoded: [UInt8] = []
            for pair in message.formValues {
                encoded.removeAll(keepingCapacity: true)
                FormEncoding.append(pair.key, value: pair.value, to: &encoded)
                add("-d", String(decoding: encoded, as: UTF8.self))
            }
        } else if hasForm {
            addMultipartForm()
        } else {
            switch body {
            case .none:
                // POST, PUT and PATCH send an empty body with no type; other methods none.
                sendsData = ["POST", "PUT", "PATCH"].contains(method)
                if sendsData {
                    add("--data-binary", "")
                    contentType = ""
                }
            case .bytes(let data, let type):
                addBytes(Array(data))
                contentType = type ?? ""
            case .unkept(let count, let type):
                note("the \(count)-byte body (bodies over \(Body.keptLimit) bytes are not kept)")
                contentType = type ?? ""
                sendsData = false
            case .file(let path, let offset, let length):
                addFile(path, offset: offset, length: length)
                contentType = ""
            }
        }
        // The data's words go after the method and the headers.
        let data = words[start...]
        words.removeSubrange(start...)
        let sent: String = if case .file = body, !hasForm, Transfer.sendsFileWithPut(method) { "PUT" } else { method }
        if method == "HEAD", !sendsData {
            add("-I")
        } else if sendsData ? sent != "POST" : sent != "GET" {
            add("-X", sent)
        }
        addHeaders()
        if let contentType, !message.hasHeader("Content-Type") {
            add("-H", contentType.isEmpty ? "Content-Type:" : "Content-Type: \(contentType)")
        }
        words += data
    }

    private mutating func addHeaders() {
        for field in message.headers {
            add("-H", Self.line(field), naming: "a header")
        }
    }

    private mutating func addMultipartForm() {
        for (key, value) in message.formValues {
            if key.contains("=") { note("the form name '\(key)' holds '='") }
            // -F reads @, < and " at the start and ;type= in the value: --form-string does not.
            let plain = !value.hasPrefix("@") && !value.hasPrefix("<") && !value.hasPrefix("\"") && !value.contains(";")
            add(plain ? "-F" : "--form-string", "\(key)=\(value)", naming: "a form value")
        }
        for file in message.formFiles {
            var part = "\(file.key)=@\(Self.formWord(file.path))"
            if let name = file.fileName { part += ";filename=\(Self.formWord(name))" }
            if let type = file.contentType { part += ";type=\(Self.formWord(type))" }
            add("-F", part, naming: "a form file")
        }
    }

    /// Text on one printable line goes as it is; other bytes from `printf` through the pipe.
    private mutating func addBytes(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if Array(text.utf8) == bytes, !text.unicodeScalars.contains(where: Self.isControl) {
            add(text.hasPrefix("@") ? "--data-raw" : "--data-binary", text)
            return
        }
        var format = "printf '"
        for byte in bytes {
            let isPlain = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            if isPlain {
                format.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let octal = String(byte, radix: 8)
                format += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        input = format + "'"
        add("--data-binary", "@-")
    }

    private mutating func addFile(_ path: String, offset: Int64, length: Int64?) {
        guard offset > 0 || length != nil else {
            add("--data-binary", "@" + path, naming: "the file's path")
            return
        }
        var pipe = offset > 0 ? "tail -c +\(offset + 1) \(quoted(path, naming: "the file's path"))" : ""
        if let length { pipe += pipe.isEmpty ? "head -c \(length) \(quoted(path, naming: "the file's path"))" : " | head -c \(length)" }
        input = pipe
        add("--data-binary", "@-")
    }

    private mutating func addCredentials() {
        guard let credentials = message.credentials else { return }
        switch credentials.scheme {
        case .basic: break  // curl's default
        case .digest: add("--digest")
        case .ntlm: add("--ntlm")
        case .any: add("--anyauth")
        case .negotiate:
            add("--negotiate")
            add("-u", ":")
            if !credentials.user.isEmpty {
                note("Kerberos tickets for '\(credentials.user)', which the library gets with its password (kinit first)")
            }
            return
        }
        add("-u", userAndPassword(credentials))
    }

    private mutating func addTransferSwitches() {
        if switches.followLocation {
            add("-L")
            // curl's own limit is 50.
            if switches.maxRedirects != 50 { add("--max-redirs", String(switches.maxRedirects)) }
        }
        if switches.locationTrusted { add("--location-trusted") }
        if switches.contentDecoding { add("--compressed") }
        if http1Only { add("--http1.1") }
        if let range = switches.range { add("-r", range.curlValue) }
        let timeouts = switches.timeouts
        if timeouts.connect > 0 { add("--connect-timeout", "\(timeouts.connect)") }
        if timeouts.total > 0 { add("-m", "\(timeouts.total)") }
        if timeouts.headers > 0 { note("a headers timeout of \(timeouts.headers) s (xhr: --headers-timeout)") }
        if timeouts.idle > 0 { note("an idle timeout of \(timeouts.idle) s (xhr: --idle-timeout)") }
        if switches.retries.count > 0 { add("--retry", String(switches.retries.count)) }
        if switches.maxResponseSize > 0 { add("--max-filesize", String(switches.maxResponseSize)) }
        let rates = switches.rateLimits
        if rates.download > 0 || rates.upload > 0 {
            add("--limit-rate", String(max(rates.download, rates.upload)))
            if rates.download != rates.upload {
                note("a download limit of \(rates.download) and an upload limit of \(rates.upload) bytes/s (--limit-rate sets both)")
            }
        }
        switch switches.ipVersion {
        case .any: break
        case .v4: add("-4")
        case .v6: add("-6")
        }
        if switches.schemes.request != AllowedSchemes.all { add("--proto", "=" + switches.schemes.request.joined(separator: ",")) }
        if switches.schemes.redirects != AllowedSchemes.all { add("--proto-redir", "=" + switches.schemes.redirects.joined(separator: ",")) }
    }

    private mutating func addTLS() {
        if !switches.verifyPeer {
            add("-k")
        } else if !switches.verifyHost {
            note("the certificate's host name is not checked (curl's -k also skips the chain)")
        }
        if let caPath = switches.caPath {
            if let caFile = switches.caFile { add("--cacert", caFile, naming: "a path") }
            add("--capath", caPath, naming: "a path")
        } else if let caFile = switches.caFile ?? processCAFile {
            add("--cacert", caFile, naming: "a path")
        }
        if let minimum = switches.tlsVersions.minimum { add("--tlsv1.\(minimum.rawValue - 10)") }
        if let maximum = switches.tlsVersions.maximum { add("--tls-max", "1.\(maximum.rawValue - 10)") }
        addIdentity(switches.clientIdentity, prefix: "--")
        if let pins = switches.pinnedPublicKeys { add("--pinnedpubkey", pins, naming: "the pins") }
    }

    /// A client certificate's options: `--cert` and its kin, or `--proxy-cert` and its kin.
    private mutating func addIdentity(_ identity: ClientIdentity?, prefix: String) {
        guard let identity else { return }
        switch identity.source {
        case .file(let path): add(prefix + "cert", path, naming: "a path")
        case .pkcs12: note("the PKCS#12 client certificate given in memory (\(prefix)cert takes a file)")
        }
        if identity.format != .pem { add(prefix + "cert-type", identity.format.rawValue) }
        if let keyPath = identity.keyPath {
            add(prefix + "key", keyPath, naming: "a path")
            if identity.keyFormat != .pem { add(prefix + "key-type", identity.keyFormat.rawValue) }
        }
        if !identity.password.isEmpty { add(prefix + "pass", Self.redacted) }
    }

    private mutating func addProxy() {
        if let proxy = switches.proxy {
            add("-x", proxy.url, naming: "the proxy")
            if let credentials = proxy.credentials {
                if proxy.usesGSSAPI {
                    // curl 7.88 ends this handshake (xhr runs it): the command says what was asked.
                    add("--socks5-gssapi")
                    if !credentials.user.isEmpty { add("--proxy-user", userAndPassword(credentials)) }
                    return addProxyDetails()
                }
                if !proxy.scheme.isSOCKS {
                    switch credentials.scheme {
                    case .basic: break
                    case .digest: add("--proxy-digest")
                    case .ntlm: add("--proxy-ntlm")
                    case .negotiate: add("--proxy-negotiate")
                    case .any: add("--proxy-anyauth")
                    }
                }
                add("--proxy-user", userAndPassword(credentials))
            }
        } else if let pac = proxyAutoConfig {
            note("the proxy the PAC file '\(pac.name)' chooses (xhr: --proxy-pac)")
        } else if switches.proxyChosen {
            add("--noproxy", "*")
        }
        addProxyDetails()
    }

    /// The proxy's bypass list, own fields, TLS and Kerberos service.
    private mutating func addProxyDetails() {
        if let service = switches.routing.proxyServiceName { add("--proxy-service-name", service, naming: "the proxy's service name") }
        if let bypass = switches.proxyBypass { add("--noproxy", bypass, naming: "the bypass list") }
        for field in switches.proxyHeaders { add("--proxy-header", Self.line(field), naming: "a proxy header") }
        let tls = switches.proxyTLS
        if let caFile = tls.caFile { add("--proxy-cacert", caFile, naming: "a path") }
        if !tls.verifyPeer { add("--proxy-insecure") }
        addIdentity(tls.clientIdentity, prefix: "--proxy-")
        if let pins = tls.pins { add("--proxy-pinnedpubkey", pins.text, naming: "the pins") }
    }

    private mutating func addRouting() {
        let routing = switches.routing
        for entry in routing.resolve {
            let addresses = entry.addresses.map { $0.contains(":") ? "[\($0)]" : $0 }
            add("--resolve", "\(entry.host ?? "*"):\(entry.port):\(addresses.joined(separator: ","))", naming: "a --resolve entry")
        }
        for entry in routing.connectTo {
            let fields = [entry.host ?? "", entry.port.map(String.init) ?? "", entry.target ?? "", entry.targetPort.map(String.init) ?? ""]
            add("--connect-to", fields.joined(separator: ":"), naming: "a --connect-to entry")
        }
        if let socket = routing.unixSocket {
            if socket.hasPrefix("@") {
                add("--abstract-unix-socket", String(socket.dropFirst()), naming: "the socket")
            } else {
                add("--unix-socket", socket, naming: "the socket")
            }
        }
        if let interface = routing.interface { add("--interface", interface, naming: "the interface") }
        if let service = routing.serviceName { add("--service-name", service, naming: "the service name") }
    }

    // MARK: Words

    /// Adds an option (nil: none, for the URL) and its value, quoted.
    private mutating func add(_ option: String?, _ value: String? = nil, naming what: String = "a value") {
        if let option { words.append(option) }
        if let value { words.append(quoted(value, naming: what)) }
    }

    private mutating func note(_ text: String) {
        notes.append(MessageValidation.escaped(text))
    }

    /// `text` as one shell word: as it is when plain, else in single quotes. Control
    /// characters (CR, LF and NUL among them, which no argument can carry) are written as
    /// escapes, with a note.
    private mutating func quoted(_ text: String, naming what: String) -> String {
        var text = text
        if text.unicodeScalars.contains(where: Self.isControl) {
            note("control characters in \(what), shown as escapes")
            text = MessageValidation.escaped(text)
        }
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./:=,+@%".unicodeScalars.contains($0)
        }
        return plain ? text : "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    /// `user:[redacted]`, or `user:` for an empty password.
    private mutating func userAndPassword(_ credentials: Credentials) -> String {
        if credentials.user.contains(":") { note("the user name '\(credentials.user)' holds ':', which curl reads as the password's start") }
        return credentials.user + ":" + (credentials.password.isEmpty ? "" : Self.redacted)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    /// A header line as curl's `-H` takes it, the value of a secret field redacted.
    static func line(_ field: HeaderField) -> String {
        let secret = ["Authorization", "Proxy-Authorization", "Cookie"].contains { MessageValidation.sameFieldName($0.utf8, field.name.utf8) }
        guard secret, !field.removes, !field.value.isEmpty else { return field.curlLine }
        // An Authorization keeps its scheme (`Bearer [redacted]`).
        let scheme = field.name.lowercased().hasSuffix("authorization") ? field.value.prefix { $0 != " " } : ""
        return "\(field.name): " + (scheme.isEmpty || scheme.count == field.value.count ? "" : scheme + " ") + redacted
    }

    /// A `-F` file part's path, name or type: in double quotes (with `\"` and `\\`) where curl
    /// would read `;` or `,` in it as the next parameter.
    private static func formWord(_ text: String) -> String {
        guard text.contains(where: { ";,\"\\".contains($0) }) else { return text }
        return "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// `url` with the password of its user information replaced by ``redacted``.
    static func redactingPassword(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let authorityEnd = url[schemeEnd.upperBound...].firstIndex { "/?#".contains($0) } ?? url.endIndex
        let authority = url[schemeEnd.upperBound..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + redacted + String(url[at...])
    }
}
