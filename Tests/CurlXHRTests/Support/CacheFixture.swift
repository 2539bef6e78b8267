@testable import CurlXHR
import Foundation
import Testing

/// The process's cache for the cache tests: one folder for the run, and only URLs of the
/// fault server's `/cache` resource take part (the other suites, running at the same time,
/// must not meet a cache).
enum CacheFixture {
    static let folder: String = {
        let environment = try! TestEnvironment.get()
        let folder = try! environment.scratchPath("cache")
        HttpCache.scope.withLock { $0 = ["/cache?", "/cache/"] }
        precondition(HttpRequest.setCacheFolder(folder, maxBytes: 1 << 30), HttpRequest.cacheFolderError ?? "")
        return folder
    }()

    /// Turns the cache on (once).
    static func on() { _ = folder }

    /// The fault server's `/cache` resource for `key`, answering as `query` says.
    static func url(_ key: String, _ query: String = "") throws -> String {
        try TestEnvironment.get().faultURL + "/cache?key=\(key)" + (query.isEmpty ? "" : "&" + query)
    }

    /// `h=Name:Value`, encoded for the query.
    static func h(_ name: String, _ value: String) -> String {
        "h=" + encoded("\(name):\(value)")
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:")) ?? text
    }

    struct Logged {
        let method: String
        let headers: [[String]]
        let status: Int
        func header(_ name: String) -> String? {
            headers.first { $0[0].lowercased() == name.lowercased() }?[1]
        }
        var isConditional: Bool { header("If-None-Match") != nil || header("If-Modified-Since") != nil }
    }

    /// What the server saw for `key`, in order.
    static func log(_ key: String) throws -> [Logged] {
        let (request, body) = fetchSync("GET", try TestEnvironment.get().faultURL + "/cache-log?key=\(key)")
        try #require(request.getStatus() == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let requests = try #require(json["requests"] as? [[String: Any]])
        return requests.map {
            Logged(method: $0["method"] as? String ?? "", headers: $0["headers"] as? [[String]] ?? [], status: $0["status"] as? Int ?? 0)
        }
    }

    static func bump(_ key: String) throws {
        let (request, _) = fetchSync("GET", try TestEnvironment.get().faultURL + "/cache-bump?key=\(key)")
        try #require(request.getStatus() == 200)
    }
}
