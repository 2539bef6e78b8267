import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTP-RPC's rules: where a call's arguments go, and how its body is serialized.
extension HttpClient {
    /// The request of a call, before the middlewares.
    func makeRequest(_ method: String, path: String, arguments: [(String, Argument)], body: RequestBody?,
                     headers callHeaders: HeaderFieldList) throws(HttpClientError) -> HttpClientRequest {
        let method = method.uppercased()
        var request = HttpClientRequest(method: method, url: url(for: path), clientBaseURL: baseURL)
        request.fieldList = fieldList + callHeaders
        let pairs = arguments.flatMap { key, argument in argument.values.map { (key, $0) } }
        let inBody = body == nil && ["POST", "PUT", "PATCH"].contains(method)
        if !inBody {
            var query: [UInt8] = []
            for (key, value) in pairs {
                guard let text = value.text else {
                    throw .encoding(ClientProblem("the file argument '\(key)' cannot go in the query string of a \(method) request\(body == nil ? "" : " with a body")"))
                }
                FormEncoding.append(key, value: text, to: &query)
            }
            if !query.isEmpty { request.url += (request.url.contains("?") ? "&" : "?") + String(decoding: query, as: UTF8.self) }
        }
        switch body {
        case .json(let value)?:
            do {
                request.body = .data(try encoder.encode(value))
            } catch {
                throw .encoding(error)
            }
            request.setHeader("Content-Type", value: "application/json")
        case .data(let data, let contentType)?:
            request.body = .data(data)
            request.setHeader("Content-Type", value: contentType)
        case nil where inBody && pairs.contains(where: { $0.1.text == nil }):
            request.body = .multipart(pairs.map { key, value in
                switch value {
                case .file(let path, let fileName, let contentType):
                    .file(name: key, path: path, fileName: fileName, contentType: contentType)
                default:
                    .value(name: key, value: value.text ?? "")
                }
            })
            request.setHeader("Content-Type", value: nil)
        case nil where inBody:
            var form: [UInt8] = []
            for (key, value) in pairs { FormEncoding.append(key, value: value.text ?? "", to: &form) }
            request.body = .data(Data(form))
            request.setHeader("Content-Type", value: "application/x-www-form-urlencoded")
        case nil:
            break
        }
        return request
    }
}
