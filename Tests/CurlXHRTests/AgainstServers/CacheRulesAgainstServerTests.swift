@testable import CurlXHR
import Foundation
import Testing

/// RFC 9111's rules, case by case, against the fault server's `/cache` resource, which serves
/// the headers each case needs and logs every request it sees: a hit must send nothing, a
/// revalidation exactly one conditional request.
@Suite(.ownThreads) struct CacheRulesAgainstServerTests {
    enum Sent: Sendable { case nothing, plain, conditional }

    struct Step: Sendable {
        var method = "GET"
        var headers: [(String, String)] = []
        var policy = HttpRequest.CachePolicy.default
        /// The resource changes before this step (its version goes up, and its ETag).
        var bump = false
        /// The answer's query for this step, when not the case's.
        var query: String?
        var status = 200
        var fromCache: Bool
        var sent: Sent
        /// The body names this version of the resource (nil: no check; -1: no body).
        var version: Int?
        /// A field the response must carry (name, value), or whose absence (value nil).
        var field: (String, String?)?
        /// The response carries an `Age` no greater than the seconds the case has taken so far,
        /// plus one: `Date` counts whole seconds, so a response a moment old may be a second old.
        var ageSinceTheCaseBegan = false
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let query: String
        let steps: [Step]
        var testDescription: String { name }
    }

    static func h(_ name: String, _ value: String) -> String { CacheFixture.h(name, value) }
    static let etag = "etag=" + CacheFixture.encoded("\"e\"")
    static let fresh = h("Cache-Control", "max-age=600")
    /// Stale from the start: its Date is 700 s old.
    static let staleDate = "date=offset:-700"

    static let cases: [Case] = [
        Case(name: "max-age: a fresh hit sends nothing", query: "\(fresh)&\(etag)", steps: [
            Step(fromCache: false, sent: .plain, version: 0),
            Step(fromCache: true, sent: .nothing, version: 0, ageSinceTheCaseBegan: true),
        ]),
        Case(name: "stale by Date: one conditional request, the 304 is invisible", query: "\(fresh)&\(etag)&\(staleDate)", steps: [
            Step(fromCache: false, sent: .plain, version: 0),
            Step(fromCache: true, sent: .conditional, version: 0),
        ]),
        Case(name: "stale by Age: revalidated; a changed resource comes whole and is stored", query: "\(fresh)&\(etag)&\(h("Age", "700"))", steps: [
            Step(fromCache: false, sent: .plain, version: 0),
            Step(bump: true, fromCache: false, sent: .conditional, version: 1),
            Step(fromCache: true, sent: .conditional, version: 1),  // the new one is stale too (Age 700)
        ]),
        Case(name: "a 304 updates the stored fields", query: "\(fresh)&\(etag)&\(staleDate)&h304=\(CacheFixture.encoded("X-Checked:yes"))", steps: [
            Step(fromCache: false, sent: .plain, version: 0, field: ("X-Checked", nil)),
            Step(fromCache: true, sent: .conditional, version: 0, field: ("X-Checked", "yes")),
        ]),
        Case(name: "Last-Modified validates with If-Modified-Since", query: "\(h("Cache-Control", "max-age=0"))&last_modified=offset:-100", steps: [
            Step(fromCache: false, sent: .plain, version: 0),
            Step(fromCache: true, sent: .conditional, version: 0),
        ]),
        Case(name: "Expires ahead of Date: fresh", query: "expires=offset:600&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "Expires not a date: stale at once", query: "\(h("Expires", "0"))&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .conditional),
        ]),
        Case(name: "max-age wins over Expires", query: "\(h("Cache-Control", "max-age=0"))&expires=offset:600&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .conditional),
        ]),
        Case(name: "heuristic freshness from Last-Modified for a 200", query: "last_modified=offset:-864000", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "no heuristic freshness for a 500", query: "status=500&last_modified=offset:-864000", steps: [
            Step(status: 500, fromCache: false, sent: .plain),
            Step(status: 500, fromCache: false, sent: .plain),
        ]),
        Case(name: "a 404 is heuristically fresh, a 404 with max-age=0 is not", query: "status=404&last_modified=offset:-864000", steps: [
            Step(status: 404, fromCache: false, sent: .plain),
            Step(status: 404, fromCache: true, sent: .nothing),
            Step(query: "status=404&\(h("Cache-Control", "max-age=0"))&tag=b", status: 404, fromCache: false, sent: .plain),
            Step(query: "status=404&\(h("Cache-Control", "max-age=0"))&tag=b", status: 404, fromCache: false, sent: .plain),
        ]),
        Case(name: "no-store: never stored", query: "\(h("Cache-Control", "no-store, max-age=600"))", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
        ]),
        Case(name: "response no-cache: validated every time", query: "\(h("Cache-Control", "no-cache, max-age=600"))&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .conditional),
            Step(fromCache: true, sent: .conditional),
        ]),
        Case(name: "must-revalidate: max-stale cannot serve it stale", query: "\(h("Cache-Control", "max-age=1, must-revalidate"))&\(etag)&\(staleDate)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Cache-Control", "max-stale")], fromCache: true, sent: .conditional),
        ]),
        Case(name: "request max-stale serves a stale response", query: "\(h("Cache-Control", "max-age=1"))&\(etag)&\(staleDate)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Cache-Control", "max-stale=3600")], fromCache: true, sent: .nothing),
            Step(headers: [("Cache-Control", "max-stale=10")], fromCache: true, sent: .conditional),
        ]),
        Case(name: "request no-cache and Pragma: no-cache validate a fresh response", query: "\(fresh)&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Cache-Control", "no-cache")], fromCache: true, sent: .conditional),
            Step(headers: [("Pragma", "no-cache")], fromCache: true, sent: .conditional),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "request max-age and min-fresh", query: "\(h("Cache-Control", "max-age=100"))&\(etag)&\(h("Age", "50"))", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Cache-Control", "max-age=10")], fromCache: true, sent: .conditional),
            Step(headers: [("Cache-Control", "min-fresh=80")], fromCache: true, sent: .conditional),
            Step(headers: [("Cache-Control", "min-fresh=10")], fromCache: true, sent: .nothing),
        ]),
        Case(name: "request no-store: not stored", query: "\(fresh)", steps: [
            Step(headers: [("Cache-Control", "no-store")], fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "only-if-cached: 504 with nothing stored, the stored response otherwise", query: "\(fresh)", steps: [
            Step(headers: [("Cache-Control", "only-if-cached")], status: 504, fromCache: true, sent: .nothing, version: -1),
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Cache-Control", "only-if-cached")], fromCache: true, sent: .nothing, version: 0),
        ]),
        Case(name: "private and public are stored", query: "\(h("Cache-Control", "private, max-age=600"))", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "Authorization: stored only when the response allows it", query: "\(fresh)", steps: [
            Step(headers: [("Authorization", "Basic dTpw")], fromCache: false, sent: .plain),
            Step(headers: [("Authorization", "Basic dTpw")], fromCache: false, sent: .plain),
            Step(headers: [("Authorization", "Basic dTpw")], query: "\(h("Cache-Control", "public, max-age=600"))", fromCache: false, sent: .plain),
            Step(headers: [("Authorization", "Basic dTpw")], query: "\(h("Cache-Control", "public, max-age=600"))", fromCache: true, sent: .nothing),
        ]),
        Case(name: "Vary: each variant apart", query: "\(fresh)&\(h("Vary", "Accept-Language"))&echo=Accept-Language", steps: [
            Step(headers: [("Accept-Language", "fr")], fromCache: false, sent: .plain),
            Step(headers: [("Accept-Language", "en")], fromCache: false, sent: .plain),
            Step(headers: [("Accept-Language", "fr")], fromCache: true, sent: .nothing),
            Step(headers: [("Accept-Language", "en")], fromCache: true, sent: .nothing),
            Step(fromCache: false, sent: .plain),
        ]),
        Case(name: "Vary: * is never stored", query: "\(fresh)&\(h("Vary", "*"))", steps: [
            Step(fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
        ]),
        Case(name: "HEAD is answered from a stored GET", query: "\(fresh)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(method: "HEAD", fromCache: true, sent: .nothing, version: -1),
        ]),
        Case(name: "POST's success invalidates", query: "\(fresh)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(method: "POST", fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "PUT, DELETE and an unknown method invalidate; a failed POST does not", query: "\(fresh)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(method: "POST", query: "status=500", status: 500, fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
            Step(method: "PUT", fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(method: "DELETE", fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(method: "PURGEX", fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
        ]),
        Case(name: "the caller's own If-None-Match gets a 304 from a fresh stored response", query: "\(fresh)&\(etag)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("If-None-Match", "\"e\"")], status: 304, fromCache: true, sent: .nothing, version: -1),
            Step(headers: [("If-None-Match", "\"other\"")], fromCache: true, sent: .nothing, version: 0),
        ]),
        Case(name: "readForced answers stale without the network; update off stores nothing", query: "\(h("Cache-Control", "max-age=1"))&\(etag)&\(staleDate)", steps: [
            Step(policy: [.read], fromCache: false, sent: .plain),
            Step(policy: [.readForced], status: 0, fromCache: false, sent: .nothing, version: -1),
            Step(fromCache: false, sent: .plain),
            Step(policy: [.readForced], bump: true, fromCache: true, sent: .nothing, version: 0),
        ]),
        Case(name: "updateForced stores even no-store, for readForced", query: "\(h("Cache-Control", "no-store"))", steps: [
            Step(policy: [.read, .updateForced], fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(policy: [.readForced], fromCache: true, sent: .nothing, version: 0),
        ]),
        Case(name: "an empty policy leaves the cache out", query: "\(fresh)", steps: [
            Step(policy: [], fromCache: false, sent: .plain),
            Step(policy: [], fromCache: false, sent: .plain),
            Step(fromCache: false, sent: .plain),
            Step(policy: [], fromCache: false, sent: .plain),
            Step(fromCache: true, sent: .nothing),
        ]),
        Case(name: "a Range of a fresh stored response is answered from it", query: "\(fresh)&size=11", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Range", "bytes=2-4")], status: 206, fromCache: true, sent: .nothing, field: ("Content-Range", "bytes 2-4/11")),
            Step(headers: [("Range", "bytes=-3")], status: 206, fromCache: true, sent: .nothing, field: ("Content-Length", "3")),
            // Several ranges, or one with If-Range, go to the server (which sends it all).
            Step(headers: [("Range", "bytes=0-1,4-5")], fromCache: false, sent: .plain, field: ("Content-Range", nil)),
            Step(headers: [("Range", "bytes=0-1"), ("If-Range", "\"e\"")], fromCache: false, sent: .plain),
        ]),
        Case(name: "a Range of a stale stored response goes to the server", query: "\(fresh)&\(etag)&\(staleDate)", steps: [
            Step(fromCache: false, sent: .plain),
            Step(headers: [("Range", "bytes=0-3")], fromCache: false, sent: .plain, version: 0),
        ]),
    ]

    @Test(arguments: cases)
    func eachRuleAsTheServerSeesIt(_ testCase: Case) throws {
        CacheFixture.on()
        let key = "rules-\(UUID().uuidString)"
        let began = Date()
        for (index, step) in testCase.steps.enumerated() {
            let label = "\(testCase.name), step \(index + 1)"
            if step.bump { try CacheFixture.bump(key) }
            let before = try CacheFixture.log(key).count
            let (request, body) = fetchSync(step.method, try CacheFixture.url(key, step.query ?? testCase.query)) { request in
                for (name, value) in step.headers { request.setRequestHeader(name, value: value) }
                request.setCachePolicy(step.policy)
            }
            #expect(request.getStatus() == step.status, "\(label): \(request.getStatusText() ?? "")")
            #expect(request.isResponseFromCache() == step.fromCache, "\(label)")
            let seen = Array(try CacheFixture.log(key).dropFirst(before))
            switch step.sent {
            case .nothing: #expect(seen.isEmpty, "\(label): the server saw \(seen.map(\.method))")
            case .plain: #expect(seen.count == 1 && !seen[0].isConditional, "\(label): \(seen.map(\.headers))")
            case .conditional: #expect(seen.count == 1 && seen[0].isConditional, "\(label): \(seen.map(\.headers))")
            }
            let text = String(decoding: body, as: UTF8.self)
            if let version = step.version {
                if version < 0 {
                    #expect(body.isEmpty, "\(label): \(text)")
                } else {
                    #expect(text.hasPrefix("body of \(key), version \(version)"), "\(label): \(text)")
                }
            }
            if let (name, value) = step.field {
                #expect(request.getResponseHeader(name) == value, "\(label): \(request.getAllResponseHeaders() ?? "")")
            }
            if step.ageSinceTheCaseBegan {
                let age = request.getResponseHeader("Age").flatMap { Int($0) }
                let most = Int(Date().timeIntervalSince(began).rounded(.up)) + 1
                #expect(age.map { (0...most).contains($0) } == true, "\(label): Age \(age.map(String.init) ?? "missing"), at most \(most)")
            }
        }
    }
}
