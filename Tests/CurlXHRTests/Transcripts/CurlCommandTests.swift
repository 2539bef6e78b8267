@testable import CurlXHR
import Foundation
import Testing

/// ``CurlCommand``, the pure renderer behind ``HttpRequest/curlCommand()``: what a request
/// and its switches become, word for word; and what `sh` makes of the line: the words curl
/// would get and the bytes on its standard input, hostile input included.
@Suite(.ownThreads) struct CurlCommandTests {
    private func message(_ method: String = "GET", _ url: String = "https://example.com/a?b=c",
                         credentials: Credentials? = nil, headers: [(String, String)] = []) -> RequestMessage {
        var message = RequestMessage(method: method, url: url, credentials: credentials)
        for (name, value) in headers { message.setHeader(name, value: value) }
        return message
    }

    private func render(_ message: RequestMessage, _ switches: TransferSwitches = TransferSwitches(),
                        body: CurlCommand.Body = .none) -> String {
        CurlCommand(message: message, switches: switches, body: body).rendered()
    }

    /// What `sh` runs for `line`, with `curl` a shell function: its words, and the bytes on
    /// its standard input when it reads `@-`.
    private func shell(_ line: String) throws -> (words: [String], input: [UInt8]) {
        let fake = #"curl() { for word in "$@"; do printf '%s\n' "$word" | od -An -tx1 | tr -d ' \n'; printf '\n'; done; "#
            + #"case " $* " in *" @- "*) printf 'stdin '; od -An -tx1 -v | tr -d ' \n'; printf '\n';; esac; }; "#
        let result = try Shell.run("/bin/sh", ["-c", fake + line])
        #expect(result.status == 0, "\(result.output)")
        var words: [String] = []
        var input: [UInt8] = []
        for row in result.output.split(separator: "\n") {
            if row.hasPrefix("stdin ") {
                input = Self.bytes(row.dropFirst(6))
            } else {
                // printf '%s\n' added the last byte.
                words.append(String(decoding: Self.bytes(row).dropLast(), as: UTF8.self))
            }
        }
        return (words, input)
    }

    private static func bytes(_ hex: Substring) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test func aPlainGETIsTheURLWithTheLibrarysDefaults() {
        #expect(render(message()) == "curl -L --max-redirs 20 --compressed 'https://example.com/a?b=c'")
        var switches = TransferSwitches()
        switches.followLocation = false
        switches.contentDecoding = false
        #expect(render(message(), switches) == "curl 'https://example.com/a?b=c'")
        #expect(render(message("HEAD"), switches) == "curl -I 'https://example.com/a?b=c'")
        #expect(render(message("DELETE"), switches) == "curl -X DELETE 'https://example.com/a?b=c'")
    }

    @Test func bodiesHeadersAndCredentials() {
        var switches = TransferSwitches()
        switches.followLocation = false
        switches.contentDecoding = false
        let post = message("POST", "http://h.example/p", credentials: Credentials(user: "alice", password: "s3cret"),
                           headers: [("X-Test", "1"), ("Accept", "application/json")])
        #expect(render(post, switches, body: .bytes(Data("{\"a\": 1}".utf8), contentType: "text/plain;charset=UTF-8"))
            == #"curl -H 'X-Test: 1' -H 'Accept: application/json' -H 'Content-Type: text/plain;charset=UTF-8' --data-binary '{"a": 1}' -u 'alice:[redacted]' http://h.example/p"#)
        // sendData: no type of the library's, so curl's is taken away; PUT is named.
        #expect(render(message("PUT", "http://h.example/p"), switches, body: .bytes(Data("x".utf8), contentType: nil))
            == "curl -X PUT -H Content-Type: --data-binary x http://h.example/p")
        // A POST without a body sends an empty one, typeless; a body starting with @ is no file.
        #expect(render(message("POST", "http://h.example/p"), switches) == "curl -H Content-Type: --data-binary '' http://h.example/p")
        #expect(render(message("POST", "http://h.example/p"), switches, body: .bytes(Data("@etc".utf8), contentType: nil))
            == "curl -H Content-Type: --data-raw @etc http://h.example/p")
        // A field left out, one sent empty; the request's own Content-Type wins.
        var fields = message("POST", "http://h.example/p", headers: [("Content-Type", "application/json"), ("X-Empty", "")])
        fields.removeHeader("Accept")
        #expect(render(fields, switches, body: .bytes(Data("[]".utf8), contentType: nil))
            == "curl -H 'Content-Type: application/json' -H 'X-Empty;' -H Accept: --data-binary '[]' http://h.example/p")
        for (scheme, option) in [(AuthScheme.digest, "--digest"), (.ntlm, "--ntlm"), (.any, "--anyauth")] {
            #expect(render(message(credentials: Credentials(user: "DOM\\bob", password: "pw", scheme: scheme)), switches)
                == #"curl \#(option) -u 'DOM\bob:[redacted]' 'https://example.com/a?b=c'"#)
        }
        #expect(render(message(credentials: Credentials(user: "", password: "", scheme: .negotiate)), switches)
            == "curl --negotiate -u : 'https://example.com/a?b=c'")
        #expect(render(message(credentials: Credentials(user: "alice@EXAMPLE.TEST", password: "pw", scheme: .negotiate)), switches)
            == "curl --negotiate -u : 'https://example.com/a?b=c' # not expressible: Kerberos tickets for 'alice@EXAMPLE.TEST', which the library gets with its password (kinit first)")
    }

    @Test func formsAsTheRequestSendsThem() {
        var switches = TransferSwitches()
        switches.followLocation = false
        switches.contentDecoding = false
        var form = message("POST", "http://h.example/f")
        form.setFormValue("Ada Lovelace", forKey: "name")
        form.setFormValue("a&b=c/ü", forKey: "q")
        #expect(render(form, switches) == "curl -d name=Ada+Lovelace -d q=a%26b%3Dc%2F%C3%BC http://h.example/f")
        form.multipartForm = true
        form.setFormValue("@not-a-file;type=x", forKey: "note")
        form.formFiles.append(FormFile(key: "doc", path: "dir;x/r.pdf", fileName: "report.pdf", contentType: "application/pdf"))
        #expect(render(form, switches) == #"curl -F 'name=Ada Lovelace' -F 'q=a&b=c/ü' --form-string 'note=@not-a-file;type=x' -F 'doc=@"dir;x/r.pdf";filename=report.pdf;type=application/pdf' http://h.example/f"#)
        form.method = "PUT"
        #expect(render(form, switches).hasPrefix("curl -X PUT -F "))
    }

    @Test func filesAndBinaryBodiesComeThroughThePipe() throws {
        var switches = TransferSwitches()
        switches.followLocation = false
        switches.contentDecoding = false
        let post = message("POST", "http://h.example/u")
        #expect(render(post, switches, body: .file(path: "my file's.bin", offset: 0, length: nil))
            == #"curl -X PUT -H Content-Type: --data-binary '@my file'\''s.bin' http://h.example/u"#)
        #expect(render(message("PATCH", "http://h.example/u"), switches, body: .file(path: "f", offset: 10, length: 5))
            == "tail -c +11 f | head -c 5 | curl -X PATCH -H Content-Type: --data-binary @- http://h.example/u")
        #expect(render(post, switches, body: .file(path: "f", offset: 0, length: 5))
            == "head -c 5 f | curl -X PUT -H Content-Type: --data-binary @- http://h.example/u")
        #expect(render(post, switches, body: .unkept(count: 100_000, contentType: nil))
            == "curl -X POST -H Content-Type: http://h.example/u # not expressible: the 100000-byte body (bodies over 65536 bytes are not kept)")
        let binary: [UInt8] = [0x00, 0x0D, 0x0A, 0x27, 0x25, 0x5C, 0x24, 0x60, 0xFF, 0x41, 0x7A, 0x30] + Array("ünï\r\n".utf8)
        let line = render(post, switches, body: .bytes(Data(binary), contentType: nil))
        #expect(line == #"printf '\000\015\012\047\045\134\044\140\377Az0\303\274n\303\257\015\012' | curl -H Content-Type: --data-binary @- http://h.example/u"#)
        let run = try shell(line)
        #expect(run.input == binary, "printf gives the body byte for byte")
        #expect(run.words == ["-H", "Content-Type:", "--data-binary", "@-", "http://h.example/u"])
    }

    @Test func everySwitchByCurlsName() throws {
        var switches = TransferSwitches()
        switches.verifyPeer = false
        switches.verifyHost = false
        switches.maxRedirects = 5
        switches.locationTrusted = true
        switches.caFile = "ca.pem"
        switches.caPath = "certs"
        switches.tlsVersions = TLSVersions(minimum: .v1_2, maximum: .v1_3)
        switches.clientIdentity = ClientIdentity(source: .file("c.der"), format: .der, keyPath: "k.pem", keyFormat: .pem, password: "keypass")
        switches.pinnedPublicKeys = "sha256//AAAA"
        switches.range = ByteRange(start: 10, end: 99)
        switches.timeouts = Timeouts(connect: 2.5, headers: 3, idle: 4, total: 30)
        switches.retries = RetryPolicy(count: 2, backoff: 1)
        switches.maxResponseSize = 1000
        switches.rateLimits = RateLimits(download: 2048, upload: 2048)
        switches.ipVersion = .v4
        switches.schemes = AllowedSchemes(request: ["https"], redirects: ["https"])
        switches.routing.resolve = [ResolveEntry(host: "h.example", port: 443, addresses: ["127.0.0.1", "::1"]),
                                    ResolveEntry(host: nil, port: 80, addresses: ["10.0.0.1"])]
        switches.routing.connectTo = [ConnectToEntry(host: "a.example", port: nil, target: "[::1]", targetPort: 8443)]
        switches.routing.unixSocket = "@abstract"
        switches.routing.interface = "if!lo"
        switches.routing.serviceName = "HTTP2"
        switches.proxy = ProxySetting(scheme: .https, host: "proxy.example", port: 3129,
                                      credentials: Credentials(user: "pu", password: "proxypass", scheme: .ntlm))
        switches.proxyBypass = "localhost,.corp"
        switches.proxyHeaders = [HeaderField(name: "X-Proxy", value: "1"), HeaderField(name: "Proxy-Authorization", value: "Basic cHU6cHJveHlwYXNz")]
        switches.proxyTLS = ProxyTLS(caFile: "pca.pem", verifyPeer: false,
                                     clientIdentity: try ClientIdentity.pkcs12([0x30, 0x01], password: "p12pass").get(), pins: nil)
        let line = CurlCommand(message: message(), switches: switches, http1Only: true).rendered()
        #expect(line == "curl -L --max-redirs 5 --location-trusted --compressed --http1.1 -r 10-99 --connect-timeout 2.5 -m 30.0 "
            + "--retry 2 --max-filesize 1000 --limit-rate 2048 -4 --proto =https --proto-redir =https -k --cacert ca.pem --capath certs "
            + "--tlsv1.2 --tls-max 1.3 --cert c.der --cert-type DER --key k.pem --pass '[redacted]' --pinnedpubkey sha256//AAAA "
            + "-x https://proxy.example:3129 --proxy-ntlm --proxy-user 'pu:[redacted]' --noproxy localhost,.corp --proxy-header 'X-Proxy: 1' "
            + "--proxy-header 'Proxy-Authorization: Basic [redacted]' --proxy-cacert pca.pem --proxy-insecure --proxy-cert-type P12 --proxy-pass '[redacted]' "
            + "--resolve 'h.example:443:127.0.0.1,[::1]' --resolve '*:80:10.0.0.1' --connect-to 'a.example::[::1]:8443' "
            + "--abstract-unix-socket abstract --interface 'if!lo' --service-name HTTP2 'https://example.com/a?b=c' "
            + "# not expressible: a headers timeout of 3.0 s (xhr: --headers-timeout); an idle timeout of 4.0 s (xhr: --idle-timeout); "
            + "the PKCS#12 client certificate given in memory (--proxy-cert takes a file)")
    }

    @Test func whatCurlCannotBeToldIsNamed() {
        var switches = TransferSwitches()
        switches.followLocation = false
        switches.contentDecoding = false
        switches.verifyHost = false
        switches.rateLimits = RateLimits(download: 100, upload: 0)
        #expect(CurlCommand(message: message(), switches: switches, proxyAutoConfig: .url("http://wpad/wpad.dat")).rendered()
            == "curl --limit-rate 100 'https://example.com/a?b=c' # not expressible: a download limit of 100 and an upload limit of 0 bytes/s "
            + "(--limit-rate sets both); the certificate's host name is not checked (curl's -k also skips the chain); "
            + "the proxy the PAC file 'http://wpad/wpad.dat' chooses (xhr: --proxy-pac)")
        switches = TransferSwitches()
        switches.proxyChosen = true
        #expect(render(message(), switches) == "curl -L --max-redirs 20 --compressed --noproxy '*' 'https://example.com/a?b=c'")
    }

    @Test func hostileTextStaysOneWordOnOneLineAndSecretsNeverShow() throws {
        let secrets = ["pa'ss$(id)`w`", "url'pw", "tok'en", "c=o'k", "proxy'pw", "key'pw", "prox-auth'x"]
        let hostile = "it's $HOME `id` $(id) \\ \" ;|&<>*?#~!{}[]"
        let huge = String(repeating: "0123456789", count: 10_000)  // sh -c takes one argument of at most 128 KiB
        var message = message("POST", "https://user:\(secrets[1])@example.com/p'q?$x=`y`",
                              credentials: Credentials(user: "o'brien", password: secrets[0]),
                              headers: [("X-Hostile", hostile), ("X-Huge", huge), ("Authorization", "Bearer \(secrets[2])"),
                                        ("Cookie", secrets[3]), ("X-Lines", "a\r\nInjected: 1\u{0}b")])
        message.setHeader("X-Quote", value: "'")
        var switches = TransferSwitches()
        switches.proxy = ProxySetting(host: "proxy.example", port: 8080, credentials: Credentials(user: "pu", password: secrets[4]))
        switches.clientIdentity = ClientIdentity(source: .file("c.pem"), format: .pem, keyPath: nil, keyFormat: .pem, password: secrets[5])
        switches.proxyHeaders = [HeaderField(name: "proxy-authorization", value: secrets[6])]
        let line = render(message, switches, body: .bytes(Data(hostile.utf8), contentType: nil))
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{0}"))
        for secret in secrets {
            #expect(line.utf8.firstRange(of: secret.utf8) == nil, "\(secret) shows")
        }
        #expect(line.hasSuffix("# not expressible: control characters in a header, shown as escapes"))
        let run = try shell(line)
        #expect(run.words == [
            "-H", "X-Hostile: \(hostile)", "-H", "X-Huge: \(huge)", "-H", "Authorization: Bearer [redacted]",
            "-H", "Cookie: [redacted]", "-H", #"X-Lines: a\r\nInjected: 1\0b"#, "-H", "X-Quote: '",
            "-H", "Content-Type:", "--data-binary", hostile, "-u", "o'brien:[redacted]", "-L", "--max-redirs", "20", "--compressed",
            "--cert", "c.pem", "--pass", "[redacted]", "-x", "http://proxy.example:8080", "--proxy-user", "pu:[redacted]",
            "--proxy-header", "proxy-authorization: [redacted]", "-g", "https://user:[redacted]@example.com/p'q?$x=`y`",
        ])
    }

    @Test func theURLsPasswordAloneIsRedacted() {
        #expect(CurlCommand.redactingPassword("http://u:p@h/x") == "http://u:[redacted]@h/x")
        #expect(CurlCommand.redactingPassword("http://u:p:q@r@h:81/x@y:z") == "http://u:[redacted]@h:81/x@y:z")
        #expect(CurlCommand.redactingPassword("http://u@h/x:y@z") == "http://u@h/x:y@z")
        #expect(CurlCommand.redactingPassword("http://h:80/?a=b:c@d") == "http://h:80/?a=b:c@d")
        #expect(CurlCommand.redactingPassword("http://[::1]:80/") == "http://[::1]:80/")
    }
}
