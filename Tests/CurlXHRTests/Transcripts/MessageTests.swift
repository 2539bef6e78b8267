import Testing
@testable import CurlXHR

@Suite(.ownThreads) struct MessageTests {
    @Test func formEncodingEscapesUTF8AndSpaces() {
        #expect(FormEncoding.encode("a b&c=d") == "a+b%26c%3Dd")
        #expect(FormEncoding.encode("grüße €") == "gr%C3%BC%C3%9Fe+%E2%82%AC")
        #expect(FormEncoding.encode("*-._~+/") == "*-._%7E%2B%2F")
    }

    @Test func formBodyKeepsOrderAndReplacesKeys() {
        var message = RequestMessage()
        message.setFormValue("1", forKey: "a")
        message.setFormValue("x y", forKey: "b")
        message.setFormValue("2", forKey: "a")
        #expect(String(decoding: message.formBody, as: UTF8.self) == "a=2&b=x+y")
    }

    /// Found by the form fuzz target: keys compared as Strings, so one spelling of a text
    /// replaced the value of another that goes out as other bytes.
    @Test func formKeysAreTheSameOnlyWhenTheirBytesAre() {
        var message = RequestMessage()
        message.setFormValue("1", forKey: "\u{E9}")
        message.setFormValue("2", forKey: "e\u{301}")
        message.setFormValue("3", forKey: "\u{E9}")
        #expect(String(decoding: message.formBody, as: UTF8.self) == "%C3%A9=3&e%CC%81=2")
    }

    @Test func tokensAndFieldValues() {
        #expect(MessageValidation.isToken("X-Custom_1.2~"))
        for bad in ["", "Bad Name", "Bad:Name", "Bad\rName", "Bad\nName", "Bad\0Name", "Ünicode", "(x)"] {
            #expect(!MessageValidation.isToken(bad), "\(bad.debugDescription) must not be a token")
        }
        #expect(MessageValidation.isFieldValue("any text; with = signs"))
        for bad in ["a\rb", "a\nb", "a\0b", "\r\nInjected: yes"] {
            #expect(!MessageValidation.isFieldValue(bad))
        }
    }

    @Test func fieldNamesCompareWithoutCaseAndValuesLoseOuterWhiteSpace() {
        #expect(MessageValidation.sameFieldName("Content-Type".utf8, "content-TYPE".utf8))
        #expect(!MessageValidation.sameFieldName("Content-Type".utf8, "Content-Typ".utf8))
        #expect(!MessageValidation.sameFieldName("X-A".utf8, "X\rA".utf8), "only letters fold")
        #expect(!MessageValidation.sameFieldName("É".utf8, "é".utf8), "ASCII case only")
        #expect(MessageValidation.trimmedFieldValue(" \t value with  inner  spaces\t ") == "value with  inner  spaces")
        #expect(MessageValidation.trimmedFieldValue("grüße ") == "grüße")
        #expect(MessageValidation.trimmedFieldValue("untouched") == "untouched")
        #expect(MessageValidation.trimmedFieldValue("\tleading") == "leading")
        #expect(MessageValidation.trimmedFieldValue("") == "" && MessageValidation.trimmedFieldValue(" ") == "")
        #expect(MessageValidation.trimmedFieldValue(" \t ") == "")
        var message = RequestMessage()
        message.setHeader("X-Multi", value: "a")
        message.setHeader("x-multi", value: "b")
        #expect(message.headers == [HeaderField(name: "X-Multi", value: "a, b")])
        #expect(message.hasHeader("X-MULTI") && !message.hasHeader("X-Mult"))
    }

    @Test func urlsAreCheckedByLibcurlsParser() {
        #expect(MessageValidation.urlProblem("http://127.0.0.1:8080/a?b=c") == nil)
        #expect(MessageValidation.urlProblem("HTTPS://example.com") == nil)
        #expect(MessageValidation.urlProblem("ftp://example.com/")?.contains("unsupported scheme") == true)
        #expect(MessageValidation.urlProblem("") != nil)
        #expect(MessageValidation.urlProblem("http://") != nil)
        #expect(MessageValidation.urlProblem("http://exa mple.com/") != nil)
        #expect(MessageValidation.urlProblem("http://example.com/\0x") != nil)
    }

    @Test func methodsAreNormalisedLikeXMLHttpRequest() {
        #expect(MessageValidation.normalizedMethod("get") == "GET")
        #expect(MessageValidation.normalizedMethod("Delete") == "DELETE")
        #expect(MessageValidation.normalizedMethod("propfind") == "propfind")
        #expect(MessageValidation.normalizedMethod("GET /") == nil, "not a token")
        #expect(MessageValidation.normalizedMethod("") == nil)
    }

    /// Hands `parser` one header line as the header callback does.
    private static func feeder(_ parser: ResponseHeadParser) -> (String) -> ResponseHead? {
        { line in Array(line.utf8).withUnsafeBytes { parser.consume($0) } }
    }

    @Test func headParserKeepsOnlyItsOwnBlock() {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        #expect(feed("HTTP/1.1 302 Found\r\n") == nil)
        #expect(feed("Location: /next\r\n") == nil)
        #expect(feed("\r\n")?.status == 302)
        #expect(feed("HTTP/2 200 \r\n") == nil)
        #expect(feed("X-Multi: a\r\n") == nil)
        #expect(feed("x-multi: b\r\n") == nil)
        #expect(feed("X-Folded: first\r\n") == nil)
        #expect(feed("  second\r\n") == nil)
        let head = feed("\r\n")
        #expect(head?.status == 200)
        #expect(head?.reason == "OK", "HTTP/2 carries no reason phrase: the standard one is used")
        #expect(head?.value(of: "X-MULTI") == "a, b")
        #expect(head?.value(of: "x-folded") == "first second")
        #expect(head?.value(of: "Location") == nil, "fields of an earlier block do not leak")
        #expect(head?.value(of: "X-Multi-") == nil)
        #expect(head?.allFields == "X-Multi: a\nx-multi: b\nX-Folded: first second")
    }

    /// Found by the head fuzz target: a continuation of a line without a colon was joined to
    /// the field before that line.
    @Test func headParserLeavesOutWhatFoldsOntoALineThatIsNoField() {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("Content-Type: text/plain\r\n")
        _ = feed("no colon here\r\n")
        _ = feed("  folded onto it\r\n")
        _ = feed("X-After: a\r\n")
        _ = feed("\tb\r\n")
        let head = feed("\r\n")
        #expect(head?.value(of: "Content-Type") == "text/plain")
        #expect(head?.value(of: "X-After") == "a b")
        #expect(head?.allFields == "Content-Type: text/plain\nX-After: a b")
    }

    @Test func headParserKeepsLargeHeadsWholeAndStartsAfreshAfterReset() {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        _ = feed("HTTP/1.1 200 OK\r\n")
        let values = (0..<200).map { "value-\($0)-" + String(repeating: "x", count: $0) }
        for (index, value) in values.enumerated() { _ = feed("X-Field-\(index): \(value)\r\n") }
        _ = feed("X-No-Line-End: last")  // as an HTTP/2 field might come
        let head = feed("\r\n")
        #expect(head?.fields.count == 201)
        #expect(head?.value(of: "x-field-0") == values[0])
        #expect(head?.value(of: "X-Field-199") == values[199])
        #expect(head?.value(of: "X-No-Line-End") == "last")
        _ = feed("HTTP/1.1 500 Internal Server Error\r\n")
        _ = feed("X-Half: read\r\n")
        parser.reset()  // the transfer failed within its head
        #expect(feed("X-Stray: field\r\n") == nil)
        #expect(feed("\r\n") == nil, "no head without a status line")
        _ = feed("HTTP/1.1 204 No Content\r\n")
        #expect(feed("\r\n")?.allFields == "", "nothing of the reset block leaks")
    }

    @Test func headRecorderNotesSetCookieInAnyBlockUntilReset() {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        _ = feed("HTTP/1.1 302 Found\r\n")
        _ = feed("SET-COOKIE: a=1\r\n")
        _ = feed("\r\n")
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("X-Set-Cookie: not one\r\n")
        #expect(feed("\r\n")?.status == 200)
        #expect(parser.sawSetCookie, "a Set-Cookie of a redirect hop counts: the jar changed")
        parser.reset()
        #expect(!parser.sawSetCookie)
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("Set-Cookie2: old\r\n")
        _ = feed("Set-Cookie:b=2\r\n")
        #expect(feed("\r\n")?.value(of: "set-cookie") == "b=2")
        #expect(parser.sawSetCookie)
        parser.reset()
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("X-Set-Cookie: no\r\n")
        _ = feed("Set-Cookie2: no\r\n")
        _ = feed("\r\n")
        #expect(!parser.sawSetCookie, "only a field named Set-Cookie counts")
    }

    @Test func headParserTrimsAndValidatesOnBytes() {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        _ = feed("HTTP/1.1 404  Not  Found \t\r\n")
        _ = feed("X-Spaces: \t value with  inner  spaces \t\r\n")
        _ = feed("X-Empty:\r\n")
        _ = feed("X-Ünicode: grüße, 日本\r\n")
        let head = feed("\r\n")
        #expect(head?.status == 404 && head?.reason == "Not  Found")
        #expect(head?.value(of: "x-spaces") == "value with  inner  spaces")
        #expect(head?.value(of: "X-Empty") == "")
        #expect(head?.value(of: "X-Ünicode") == "grüße, 日本")
        _ = feed("HTTP/1.1 200 OK\r\n")
        _ = feed("X-A: 1\r\n")
        _ = feed("X-B: 2\r\n")
        _ = feed(" folded into X-B\r\n")
        let folded = feed("\r\n")
        #expect(folded?.value(of: "x-a") == "1", "a continuation belongs to the field before it")
        #expect(folded?.value(of: "x-b") == "2 folded into X-B")
        _ = feed("HTTP/1.1 20\r\n")
        #expect(feed("\r\n")?.status == 0, "a status needs three digits")
        _ = feed("HTTP/1.1 2000 Huge\r\n")
        #expect(feed("\r\n")?.status == 0)
        _ = feed("HTTP/1.0 503\r\n")
        #expect(feed("\r\n")?.reason == "Service Unavailable")
    }

    /// The lookup the transfer makes in every head it reads (`Transfer-Encoding`, `Location`,
    /// `Retry-After`, validators), on the recorded bytes: the first field of that name, in any
    /// case, trimmed; never a longer name, a name with space before its colon, or a line
    /// folded onto another.
    @Test func recordedHeadsFindFieldsInPlace() throws {
        let parser = ResponseHeadParser()
        for line in ["HTTP/1.1 200 OK\r\n", "Content-Length-X: 9\r\n", "Location : /not\r\n", "X-Folded: a\r\n",
                     " Location: /folded\r\n", "transfer-ENCODING:  \tgzip, chunked \t\r\n", "Location: /first\r\n",
                     "LOCATION: /second\r\n", "X-Empty:\r\n", "X-Bare: no CR\n", "X-Last:1\r\n"] {
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { parser.consume($0) }
        }
        let head = try #require(parser.finishHead())
        #expect(head.status == 200)
        #expect(head.fieldValue("Transfer-Encoding") == "gzip, chunked")
        #expect(head.fieldValue("location") == "/first")
        #expect(head.hasField("Location"))
        #expect(head.fieldValue("Content-Length") == nil, "a longer name is another field")
        #expect(head.fieldValue("X-Empty") == "")
        #expect(head.fieldValue("X-Bare") == "no CR")
        #expect(head.fieldValue("X-Last") == "1")
        #expect(!head.hasField("X-Missing") && !head.hasField("") && !head.hasField("X"))
        let empty = RecordedHead(status: 204, reason: "No Content", lines: UnsafeBufferPointer(start: nil, count: 0))
        #expect(!empty.hasField("Location"))
    }

    /// The recorder notes a `Transfer-Encoding` field as it copies a head's lines, so a head
    /// without one is not searched for it: the note is the head's own, in any case of the
    /// name, and never set by a longer name or a value that merely mentions it.
    @Test func theRecorderNotesATransferEncodingOfEachHead() throws {
        let parser = ResponseHeadParser()
        let feed = Self.feeder(parser)
        func block(_ lines: [String]) throws -> Bool {
            for line in ["HTTP/1.1 200 OK\r\n"] + lines { _ = Array(line.utf8).withUnsafeBytes { parser.consume($0) } }
            return try #require(parser.finishHead()).mayHaveTransferEncoding
        }
        #expect(try block(["Content-Length: 5\r\n", "TRANSFER-encoding: chunked\r\n"]))
        #expect(try !block(["Content-Length: 5\r\n"]), "the note of the head before is gone")
        #expect(try !block(["Transfer-Encodings: x\r\n", "X-Why: Transfer-Encoding: chunked\r\n", "Transfer-Encoding : x\r\n"]))
        _ = feed("HTTP/1.1 302 Found\r\n")
        _ = feed("Transfer-Encoding: chunked\r\n")
        let hop = try #require(feed("\r\n"))
        #expect(hop.value(of: "Transfer-Encoding") == "chunked")
        #expect(try !block([]), "a redirect hop's field is not the next head's")
        let replayed = RecordedHead(status: 200, reason: "OK", lines: UnsafeBufferPointer(start: nil, count: 0))
        #expect(replayed.mayHaveTransferEncoding, "a head not read by the recorder is searched")
    }

    /// `open` gives its request a new message by changing the old one in place: nothing of
    /// the previous open is left, and a copy taken before (a transfer's) keeps it all.
    @Test func reopeningLeavesNothingOfThePreviousMessage() {
        var message = RequestMessage(method: "POST", url: "https://a/", isAsync: true,
                                     credentials: Credentials(user: "u", password: "p", scheme: .basic))
        message.urlHasUser = true
        message.setHeader("X-A", value: "1")
        message.setFormValue("v", forKey: "k")
        message.formFiles.append(FormFile(key: "f", path: "/p"))
        message.multipartForm = true
        let kept = message
        message.reopen(method: "GET", url: "http://b/", parsedURL: nil, isAsync: false, credentials: nil)
        #expect(message.method == "GET" && message.url == "http://b/" && !message.isSecure && !message.isAsync)
        #expect(message.credentials == nil && !message.urlHasUser && !message.multipartForm)
        #expect(message.headers.isEmpty && message.formValues.isEmpty && message.formFiles.isEmpty)
        #expect(kept.method == "POST" && kept.isSecure && kept.isAsync && kept.urlHasUser && kept.credentials?.user == "u")
        #expect(kept.headers == [HeaderField(name: "X-A", value: "1")] && kept.formValues.count == 1)
        #expect(kept.formFiles.count == 1 && kept.multipartForm)
    }

    @Test func aMessageKnowsWhetherItsURLIsHTTPS() {
        #expect(RequestMessage(url: "https://example.com/").isSecure)
        #expect(RequestMessage(url: "HTTPS://example.com/").isSecure)
        #expect(!RequestMessage(url: "http://example.com/").isSecure)
        #expect(!RequestMessage(url: "https").isSecure)
        var message = RequestMessage()
        #expect(!message.isSecure)
        guard case .success(let parsed) = MessageValidation.parseURL("hTtPs://x/") else { Issue.record("parses"); return }
        message.reopen(method: "GET", url: "hTtPs://x/", parsedURL: parsed, isAsync: false, credentials: nil)
        #expect(message.isSecure, "found again when the URL changes")
    }

    @Test func theBodyLengthToExpectAfterDecoding() {
        func head(_ fields: [String]) -> ResponseHead? {
            let feed = Self.feeder(ResponseHeadParser())
            _ = feed("HTTP/1.1 200 OK\r\n")
            for field in fields { _ = feed(field + "\r\n") }
            return feed("\r\n")
        }
        #expect(head(["Content-Length: 1000"])?.expectedBodyLength(decoded: true) == 1000)
        #expect(head(["Content-Length: 300", "Content-Encoding: gzip"])?.expectedBodyLength(decoded: true) == nil,
                "the wire's length is not the decoded body's")
        #expect(head(["Content-Length: 300", "Content-Encoding: gzip"])?.expectedBodyLength(decoded: false) == 300)
        #expect(head(["Content-Length: 300", "Content-Encoding: gzip", "Content-Size: 5000"])?.expectedBodyLength(decoded: true) == 5000,
                "mesibo's Content-Size")
        #expect(head(["Transfer-Encoding: chunked", "Content-Size: 42"])?.expectedBodyLength(decoded: true) == 42)
        #expect(head(["Transfer-Encoding: chunked"])?.expectedBodyLength(decoded: true) == nil)
        #expect(head(["Content-Length: 10", "Content-Encoding: identity"])?.expectedBodyLength(decoded: true) == 10)
        #expect(head(["Content-Size: -1"])?.expectedBodyLength(decoded: true) == nil)
    }
}
