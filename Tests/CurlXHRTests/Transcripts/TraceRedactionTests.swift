@testable import CurlXHR
import Testing

/// ``TraceRedaction``: what a trace entry shows of each secret, entry by entry.
@Suite(.ownThreads) struct TraceRedactionTests {
    func redacted(_ kind: HttpRequest.TraceEntry.Kind, _ text: String, secrets: [String] = []) -> String {
        let bytes = Array(text.utf8)
        return String(decoding: bytes.withUnsafeBytes { TraceRedaction.redacted(kind, $0, secrets: secrets) }, as: UTF8.self)
    }

    @Test func secretFieldsLoseTheirValuesOnly() {
        let head = "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Basic YWxpY2U6cHc=\r\nproxy-authorization:NTLM TlRMTVNT\r\n"
            + "COOKIE: a=1; b=2\r\nX-Authorization-Hint: keep\r\nAccept: */*\r\n\r\n"
        #expect(redacted(.headerOut, head) == "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: [redacted]\r\nproxy-authorization:[redacted]\r\n"
            + "COOKIE: [redacted]\r\nX-Authorization-Hint: keep\r\nAccept: */*\r\n\r\n")
        #expect(redacted(.headerIn, "Set-Cookie: id=42; Path=/; HttpOnly\r\n") == "Set-Cookie: [redacted]\r\n")
        #expect(redacted(.headerIn, "set-cookie:\tid=42") == "set-cookie:\t[redacted]", "HTTP/2's lower case, no CR LF")
        #expect(redacted(.headerIn, "Set-Cookie:\r\n") == "Set-Cookie:[redacted]\r\n", "an empty value is marked too")
        #expect(redacted(.headerIn, "WWW-Authenticate: Digest realm=\"x\"\r\n") == "WWW-Authenticate: Digest realm=\"x\"\r\n")
    }

    @Test func libcurlsCookieLinesLoseTheValue() {
        #expect(redacted(.info, "Added cookie session=\"s3cr\"et\" for domain a.test, path /, expire 0\n")
                == "Added cookie session=\"[redacted]\" for domain a.test, path /, expire 0\n")
        #expect(redacted(.info, "Replaced cookie id=\"1\" for domain b, path /, expire 9\n")
                == "Replaced cookie id=\"[redacted]\" for domain b, path /, expire 9\n")
        #expect(redacted(.info, "Connected to a (127.0.0.1) port 80 (#0)\n") == "Connected to a (127.0.0.1) port 80 (#0)\n")
        #expect(redacted(.info, "Added cookie broken\n") == "Added cookie broken\n", "no value: left as it is")
    }

    @Test func passwordsGoWhereverTheyAppear() {
        #expect(redacted(.info, "Server auth using Basic with user 'alice' pw hunter2 and hunter2\n", secrets: ["hunter2"])
                == "Server auth using Basic with user 'alice' pw [redacted] and [redacted]\n")
        #expect(redacted(.headerOut, "X-Echo: hunter2\r\n", secrets: ["hunter2"]) == "X-Echo: [redacted]\r\n")
        // Bodies and TLS records stay as they came.
        #expect(redacted(.dataIn, "hunter2 Authorization: x", secrets: ["hunter2"]) == "hunter2 Authorization: x")
        #expect(redacted(.tlsOut, "hunter2", secrets: ["hunter2"]) == "hunter2")
    }

    @Test func hostileBytes() {
        // A NUL, a lone LF, a line without a colon, invalid UTF-8 and a huge value.
        let bytes: [UInt8] = Array("Cookie: a\0b\nno colon here\n".utf8) + [0xFF, 0xFE] + Array("\nAuthorization: ".utf8)
            + [UInt8](repeating: 0x41, count: 1 << 20)
        let out = bytes.withUnsafeBytes { TraceRedaction.redacted(.headerOut, $0, secrets: ["\u{0}"]) }
        #expect(out == Array("Cookie: [redacted]\nno colon here\n".utf8) + [0xFF, 0xFE] + Array("\nAuthorization: [redacted]".utf8))
        #expect(TraceRedaction.replacing([], in: [1, 2]) == [1, 2], "an empty secret replaces nothing")
    }

    @Test func theURLsPasswordAsWritten() {
        #expect(TraceRedaction.urlPassword("http://al:p%40ss@host:8/x?y=@z") == "p%40ss")
        #expect(TraceRedaction.urlPassword("https://user@host/") == nil)
        #expect(TraceRedaction.urlPassword("http://host/path@x:y") == nil, "an @ in the path is not the authority's")
        #expect(TraceRedaction.urlPassword("http://a:@host/") == nil)
        #expect(TraceRedaction.secrets(url: "http://a:b@h/", credentials: .init(user: "u", password: "pw"), proxyPassword: "")
                == ["pw", "b"])
    }
}
