import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HttpClient {
    /// Where a call's arguments go and how they are encoded: HTTP-RPC's encodings, chosen for
    /// a client (``HttpClient/argumentEncoding``) or a call (`encoding:` of `invoke`).
    ///
    /// ```swift
    /// // HTTP-RPC's POST: multipart/form-data, plain values too
    /// try await client.invoke("POST", path: "notes", arguments: [("title", "x")], encoding: .multipart)
    /// // PUT with the arguments as a JSON object, or in the query string
    /// try await client.invoke("PUT", path: "items/7", arguments: [("name", "y"), ("n", 2)], encoding: .json)
    /// try await client.invoke("PATCH", path: "items/7", arguments: [("name", "y")], encoding: .query)
    /// ```
    public enum ArgumentEncoding: Sendable, Equatable, CaseIterable {
        /// HTTP-RPC's rule (the default): the query string for any method but POST, PUT and
        /// PATCH; for those an `application/x-www-form-urlencoded` body, `multipart/form-data`
        /// when an argument is a file.
        case automatic
        /// An `application/x-www-form-urlencoded` body (`multipart/form-data` when an argument
        /// is a file, which a urlencoded form cannot carry).
        case form
        /// A `multipart/form-data` body, plain values included: each value a part, each file a
        /// part streamed from disk (no arguments: no body).
        case multipart
        /// An `application/json` body: one object, a member per argument in order (integers
        /// and doubles as numbers, booleans, dates as epoch milliseconds, arrays as arrays). A
        /// key given twice or a file argument fails the call with ``HttpClientError/encoding(_:)``.
        case json
        /// The query string, whatever the method (a file argument fails the call).
        case query
    }

    /// The request of a call, before the middlewares.
    func makeRequest(_ method: String, path: String, arguments: [(String, Argument)], body: RequestBody?,
                     encoding: ArgumentEncoding?, headers callHeaders: HeaderFieldList) throws(HttpClientError) -> HttpClientRequest {
        // Upper-cased only when it is not already (no copy for each call).
        let method = method == "GET" || !method.utf8.contains { $0 >= 0x61 && $0 <= 0x7A } ? method : method.uppercased()
        // The parts are made first and the request once, at the end (no copies of it on the way).
        var url = url(for: path)
        var fields = callHeaders.isEmpty ? fieldList : fieldList + callHeaders
        var made: HttpClientRequest.Body = .none
        let pairs = arguments.isEmpty ? [] : arguments.flatMap { key, argument in argument.values.map { (key, $0) } }
        let place = try ArgumentPlacement.decide(method: method, hasBody: body != nil,
                                                 hasFiles: pairs.contains { $0.1.text == nil }, call: encoding,
                                                 contentType: fields.fields[.contentType], client: argumentEncoding)
        switch place {
        case .query:
            var query: [UInt8] = []
            for (key, value) in pairs {
                guard let text = value.text else {
                    throw .encoding(ClientProblem("the file argument '\(key)' cannot go in the query string of a \(method) request\(body == nil ? "" : " with a body")"))
                }
                FormEncoding.append(key, value: text, to: &query)
            }
            if !query.isEmpty { url += (url.contains("?") ? "&" : "?") + String(decoding: query, as: UTF8.self) }
        case .multipart:
            made = .multipart(pairs.map { key, value in
                switch value {
                case .file(let path, let fileName, let contentType):
                    .file(name: key, path: path, fileName: fileName, contentType: contentType)
                default:
                    .value(name: key, value: value.text ?? "")
                }
            })
            fields.set("Content-Type", value: nil)
        case .form:
            var form: [UInt8] = []
            for (key, value) in pairs { FormEncoding.append(key, value: value.text ?? "", to: &form) }
            made = .data(Data(form))
            fields.set(.contentType, value: "application/x-www-form-urlencoded")
        case .json:
            made = .data(try ArgumentPlacement.jsonObject(arguments))
            // A JSON type of the caller's (`…+json`, a charset) stays.
            if MediaType(fields.fields[.contentType])?.isJSON != true {
                fields.set(.contentType, value: "application/json")
            }
        }
        switch body {
        case .json(let value)?:
            do {
                made = .data(try encoder.encode(value))
            } catch {
                throw .encoding(error)
            }
            fields.set(.contentType, value: "application/json")
        case .data(let data, let contentType)?:
            made = .data(data)
            fields.set("Content-Type", value: contentType)
        case nil:
            break
        }
        // A path (not an absolute URL) follows the base URL after a slash, and the query after
        // it: the URL is on the client's origin.
        return HttpClientRequest(method: method, url: url, fieldList: fields, body: made, clientBaseURL: baseURL,
                                 urlIsOnClientOrigin: !Self.isAbsolute(path))
    }
}

/// Where one call's arguments go: the decision alone, from the method, the call's and the
/// client's ``HttpClient/ArgumentEncoding`` and the call's `Content-Type`, tested without a server.
enum ArgumentPlacement: Equatable {
    case query, form, multipart, json

    /// Methods whose arguments HTTP-RPC sends in a body.
    static func sendsArgumentsInBody(_ method: String) -> Bool {
        method == "POST" || method == "PUT" || method == "PATCH"  // compared, not hashed
    }

    /// - A call's own encoding wins, for any method; with a `body:` only `.automatic` and
    ///   `.query` are possible (the arguments then go in the query string).
    /// - A call with a `body:` puts the arguments in the query string.
    /// - Any method but POST, PUT and PATCH: the query string.
    /// - POST, PUT and PATCH: the encoding a `Content-Type` among the headers names
    ///   (`multipart/form-data`, `application/x-www-form-urlencoded`, JSON), else the client's.
    /// - Files make a form multipart; a file in JSON or the query string fails the call.
    static func decide(method: String, hasBody: Bool, hasFiles: Bool, call: HttpClient.ArgumentEncoding?,
                       contentType: @autoclosure () -> String?, client: HttpClient.ArgumentEncoding) throws(HttpClientError) -> ArgumentPlacement {
        let encoding: HttpClient.ArgumentEncoding
        if let call {
            if hasBody, call != .automatic, call != .query {
                throw .encoding(ClientProblem("the arguments cannot be encoded as \(call) in a call that has a body of its own"))
            }
            encoding = hasBody ? .query : call
        } else if hasBody || !sendsArgumentsInBody(method) {
            encoding = .query
        } else {
            encoding = named(by: contentType()) ?? client
        }
        switch encoding {
        case .automatic where hasBody || !sendsArgumentsInBody(method), .query:
            return .query  // a file here fails in makeRequest, naming it
        case .automatic, .form:
            return hasFiles ? .multipart : .form
        case .multipart:
            return .multipart
        case .json:
            if hasFiles { throw .encoding(ClientProblem("a file argument cannot go in a JSON body")) }
            return .json
        }
    }

    /// The encoding a `Content-Type` value names, if any.
    static func named(by contentType: String?) -> HttpClient.ArgumentEncoding? {
        guard let type = MediaType(contentType) else { return nil }
        if type.isJSON { return .json }
        switch type.description {
        case "multipart/form-data": return .multipart
        case "application/x-www-form-urlencoded": return .form
        default: return nil
        }
    }

    /// The arguments as one JSON object, members in order.
    static func jsonObject(_ arguments: [(String, HttpClient.Argument)]) throws(HttpClientError) -> Data {
        var text = "{"
        var seen: Set<String> = []
        for (index, (key, value)) in arguments.enumerated() {
            guard seen.insert(key).inserted else {
                throw .encoding(ClientProblem("the argument '\(key)' is given twice: a JSON object holds a key once (give an array)"))
            }
            if index > 0 { text += "," }
            JSONValue.writeString(key, to: &text)
            text += ":"
            try writeJSON(value, key: key, to: &text)
        }
        return Data((text + "}").utf8)
    }

    static func writeJSON(_ argument: HttpClient.Argument, key: String, to text: inout String) throws(HttpClientError) {
        switch argument {
        case .string(let value): JSONValue.writeString(value, to: &text)
        case .int(let value): text += String(value)
        case .double(let value):
            guard value.isFinite else { throw .encoding(ClientProblem("the argument '\(key)' is \(value), which JSON cannot hold")) }
            text += String(value)
        case .bool, .date: text += argument.text ?? ""
        case .file: throw .encoding(ClientProblem("the file argument '\(key)' cannot go in a JSON body"))
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                try writeJSON(element, key: key, to: &text)
            }
            text += "]"
        }
    }
}
