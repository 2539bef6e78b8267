import CurlXHR
@testable import CurlXHRClient
import Foundation
import Testing

/// What a person printing an ``HttpClientError`` sees: the server's text with the status, on
/// Linux too (`localizedDescription` through `LocalizedError`), safe for a terminal and short.
@Suite(.ownThreads) struct ClientErrorDescriptionTests {
    let env: TestEnvironment
    let client: HttpClient
    init() throws { (env, client) = try faultServerClient() }

    /// The failure of a call answered with `status`, a body of `type` and `body` (written in
    /// `charset`, whatever the type says).
    func failure(_ status: Int, type: String, body: String, charset: String? = nil) async -> HttpClientError? {
        var arguments: [(String, HttpClient.Argument)] = [("status", .int(status)), ("type", .string(type)), ("body", .string(body))]
        if let charset { arguments.append(("encoding", .string(charset))) }
        return await clientError { try await client.invoke("GET", path: "respond", arguments: arguments) }
    }

    /// Every way of printing gives the same sentence.
    static func printed(_ error: HttpClientError) -> String {
        let interpolated = "\(error)"
        #expect(error.localizedDescription == interpolated)
        #expect(String(describing: error) == interpolated)
        #expect(error.description == interpolated && error.errorDescription == interpolated)
        let asAnyError: any Error = error
        #expect(asAnyError.localizedDescription == interpolated, "as any Error, as a catch-all sees it")
        return interpolated
    }

    @Test(arguments: [(404, "No such item: 7"), (503, "Service down for maintenance, back at 14:00")])
    func aPlainTextErrorShowsTheServersTextWithTheStatus(status: Int, text: String) async throws {
        let error = try #require(await failure(status, type: "text/plain; charset=utf-8", body: text))
        let printed = Self.printed(error)
        #expect(printed == "HTTP status \(status): \(text)")
        #expect(!printed.contains("could not be completed"))
    }

    @Test func aHugeBodyIsCutAndSaysSo() async throws {
        let text = String(repeating: "0123456789", count: 6000)
        let error = try #require(await failure(500, type: "text/plain", body: text))
        guard case .status(500, .text(let body)) = error else { Issue.record("\(error)"); return }
        #expect(body.count == 60_000, "the error keeps the whole text")
        let printed = Self.printed(error)
        #expect(printed.count < HttpClientError.descriptionLimit + 100, "\(printed.count)")
        #expect(printed.hasPrefix("HTTP status 500: 0123456789"))
        #expect(printed.hasSuffix("… (cut: \(60_000 - HttpClientError.descriptionLimit) more bytes)"), "\(printed.suffix(60))")
    }

    @Test func controlCharactersAreEscaped() async throws {
        let text = "red \u{1B}[31malert\u{1B}[0m\u{07}\r\nForged: line\u{9B}2J\u{202E}txt.exe\tend\u{7F}"
        let error = try #require(await failure(502, type: "text/plain; charset=utf-8", body: text))
        guard case .status(502, .text(text)) = error else { Issue.record("\(error)"); return }
        let printed = Self.printed(error)
        #expect(printed == #"HTTP status 502: red \u{1B}[31malert\u{1B}[0m\u{7}\r\nForged: line\u{9B}2J\u{202E}txt.exe\tend\u{7F}"#)
        #expect(!printed.unicodeScalars.contains { DisplayText.needsEscape($0) })
    }

    @Test func invalidUTF8IsReplaced() async throws {
        // "ÿ" written in Latin-1 is the byte 0xFF, never valid UTF-8, under a type that says UTF-8.
        let error = try #require(await failure(500, type: "text/plain; charset=utf-8", body: "bad \u{FF}\u{1B} byte", charset: "latin-1"))
        guard case .status(500, .text(let body)) = error else { Issue.record("\(error)"); return }
        #expect(body == "bad \u{FFFD}\u{1B} byte", "the server's text, the bad byte replaced")
        #expect(Self.printed(error) == #"HTTP status 500: bad �\u{1B} byte"#)
    }

    @Test func otherErrorsPrintTheirSentenceToo() async throws {
        let refused = try #require(await clientError { try await HttpClient(baseURL: "http://127.0.0.1:1").invoke("GET", path: "x") })
        #expect(Self.printed(refused).hasPrefix("the transfer failed (connection)"), "\(refused)")
        let json = try #require(await failure(422, type: "application/json", body: #"{"error":"bad\u001b[2J"}"#))
        #expect(Self.printed(json) == #"HTTP status 422: {"error":"bad\u001b[2J"}"#, "JSON escapes it its way")
    }

    @Test func displayTextEscapesAndCuts() {
        #expect(DisplayText.escaped("plain ünïcödé ✓") == "plain ünïcödé ✓")
        #expect(DisplayText.escaped("a\u{0}b\u{85}c\u{2028}d\u{2066}") == #"a\u{0}b\u{85}c\u{2028}d\u{2066}"#)
        #expect(DisplayText.truncated("abcdef", limit: 6) == "abcdef")
        #expect(DisplayText.truncated("abcdéf", limit: 3) == "abc… (cut: 4 more bytes)")
        #expect(DisplayText.truncated("", limit: 0) == "")
    }
}
