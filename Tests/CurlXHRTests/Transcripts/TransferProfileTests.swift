import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import CurlXHR

/// The engine finds the kept option profile for a transfer with `Transfer.matches`, field by
/// field, without building the transfer's own profile: it must agree with comparing built
/// profiles for every kind of difference.
@Suite(.ownThreads) struct TransferProfileTests {
    /// Transfers that differ from the first in one input each.
    static func variants() -> [(String, Transfer)] {
        let request = HttpRequest()
        func message(_ change: (inout RequestMessage) -> Void = { _ in }) -> RequestMessage {
            var message = RequestMessage(method: "GET", url: "http://127.0.0.1:1/", isAsync: true)
            change(&message)
            return message
        }
        func switches(_ change: (inout TransferSwitches) -> Void) -> TransferSwitches {
            var switches = TransferSwitches()
            change(&switches)
            return switches
        }
        func transfer(_ message: RequestMessage = message(), body: RequestBody = .none,
                      switches: TransferSwitches = TransferSwitches(), timeout: Double = 0, pipelining: Bool = true) -> Transfer {
            let transfer = Transfer(owner: request)
            transfer.prepare(message: message, body: body, switches: switches, timeout: timeout, pipelining: pipelining)
            return transfer
        }
        return [
            ("plain GET", transfer()),
            ("another URL", transfer(RequestMessage(method: "GET", url: "http://127.0.0.1:2/other", isAsync: true))),
            ("POST without a body", transfer(message { $0.method = "POST" })),
            ("PATCH without a body", transfer(message { $0.method = "PATCH" })),
            ("PROPFIND", transfer(message { $0.method = "PROPFIND" })),
            ("small body", transfer(body: .bytes(Data("hi".utf8), contentType: "text/plain"))),
            ("small body, other type", transfer(body: .bytes(Data("hi".utf8), contentType: "text/html"))),
            ("small body, no type", transfer(body: .bytes(Data("hi".utf8), contentType: nil))),
            ("empty body", transfer(body: .bytes(Data(), contentType: nil))),
            ("large body", transfer(body: .bytes(Data(count: 100_000), contentType: nil))),
            ("timeout", transfer(timeout: 1.5)),
            ("another timeout", transfer(timeout: 2)),
            ("no pipelining", transfer(pipelining: false)),
            ("a header", transfer(message { $0.setHeader("Accept", value: "*/*") })),
            ("another header value", transfer(message { $0.setHeader("Accept", value: "text/html") })),
            ("Content-Type header", transfer(message { $0.setHeader("content-type", value: "a/b") }, body: .bytes(Data("x".utf8), contentType: "c/d"))),
            ("Basic credentials", transfer(message { $0.credentials = Credentials(user: "u", password: "p", scheme: .basic) })),
            ("other password", transfer(message { $0.credentials = Credentials(user: "u", password: "q", scheme: .basic) })),
            ("Negotiate credentials", transfer(message { $0.credentials = Credentials(user: "u@R", password: "p", scheme: .negotiate) })),
            ("user in the URL", transfer(message { $0.urlHasUser = true })),
            ("no peer verification", transfer(switches: switches { $0.verifyPeer = false; $0.verifyHost = false })),
            ("no redirects", transfer(switches: switches { $0.followLocation = false })),
            ("no cookies", transfer(switches: switches { $0.cookies = false })),
            ("CA file", transfer(switches: switches { $0.caFile = "/tmp/ca.pem" })),
            ("fresh connection", transfer(switches: switches { $0.freshConnection = true })),
            ("proxy", transfer(switches: switches { $0.proxy = ProxySetting(host: "127.0.0.1", port: 3128) })),
            ("a download limit", transfer(switches: switches { $0.rateLimits = RateLimits(download: 1024) })),
            ("small body, an upload limit", transfer(body: .bytes(Data("hi".utf8), contentType: "text/plain"),
                                                     switches: switches { $0.rateLimits = RateLimits(upload: 1024) })),
            ("proxy with credentials", transfer(switches: switches {
                $0.proxy = ProxySetting(host: "127.0.0.1", port: 3128, credentials: Credentials(user: "u", password: "p", scheme: .digest))
            })),
        ]
    }

    @Test func matchingAgreesWithComparingBuiltProfiles() {
        let settings = ProcessSettings(caFile: nil, environmentProxy: false, allowDelegation: false, credentialCache: "")
        // Profiles kept from before a process-wide setting changed must not match after it.
        let allSettings = [
            ("default settings", settings),
            ("a process-wide CA file", ProcessSettings(caFile: "/tmp/all.pem", environmentProxy: false, allowDelegation: false, credentialCache: "")),
            ("the proxy environment", ProcessSettings(caFile: nil, environmentProxy: true, allowDelegation: false, credentialCache: "")),
            ("delegation", ProcessSettings(caFile: nil, environmentProxy: false, allowDelegation: true, credentialCache: "")),
        ]
        let transfers = Self.variants()
        for (name, transfer) in transfers {
            for (otherName, other) in transfers {
                for (keptName, kept) in allSettings {
                    for (nowName, now) in allSettings {
                        let fields = other.profile(kept)
                        #expect(transfer.matches(EasyProfile(fields), now) == (transfer.profile(now) == fields),
                                "\(name) with \(nowName) against the profile of \(otherName) with \(keptName)")
                    }
                }
            }
        }
        // Each variant needs a profile of its own but two: the URL is set per transfer, and
        // Negotiate credentials become tickets, not options (as for a plain GET, which may
        // answer a Negotiate challenge with tickets already held).
        let distinct = transfers.map { $0.1.profile(settings) }.reduce(into: [EasyProfile.Fields]()) { kept, fields in
            if !kept.contains(fields) { kept.append(fields) }
        }
        #expect(distinct.count == transfers.count - 2)
    }

    @Test func switchesHoldingTextOrReferencesLiveBehindTheSharedReferenceAndLeaveIt() {
        var switches = TransferSwitches()
        let proxy = ProxySetting(host: "proxy", port: 3128)
        switches.proxy = proxy
        switches.caFile = "/ca/file.pem"
        switches.caPath = "/ca"
        switches.schemes = AllowedSchemes(request: ["https"], redirects: ["https"])
        #expect(switches.hasReach)
        #expect(switches.proxy == proxy && switches.caFile == "/ca/file.pem" && switches.caPath == "/ca")
        #expect(switches.schemes.request == ["https"] && !switches.schemes.allowsRedirect(to: "http://a/"))
        var other = switches
        other.caPath = nil
        #expect(other != switches && switches.caPath == "/ca", "a copy changes alone")
        switches.proxy = nil
        switches.caFile = nil
        switches.caPath = nil
        switches.schemes = AllowedSchemes()
        #expect(!switches.hasReach && switches == TransferSwitches(), "back to nothing set: no reference")
        #expect(switches.schemes.allowsRedirect(to: "http://a/") && switches.proxy == nil)
    }

    @Test func noRateLimitIsNoSwitchAndAnUploadLimitStreamsTheBody() {
        var switches = TransferSwitches()
        switches.rateLimits = RateLimits(download: 10, upload: 10)
        #expect(switches.hasReach)
        switches.rateLimits = RateLimits()
        #expect(!switches.hasReach && switches == TransferSwitches(), "a request without limits carries nothing")
        let settings = ProcessSettings(caFile: nil, environmentProxy: false, allowDelegation: false, credentialCache: "")
        let limited = Self.variants().first { $0.0 == "small body, an upload limit" }!.1
        #expect(limited.profile(settings).body == .streamed, "paced as libcurl reads it")
    }
}
