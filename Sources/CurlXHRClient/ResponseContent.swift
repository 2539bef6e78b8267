#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response body decoded by its `Content-Type`, as the non-generic
/// ``HttpClient/invoke(_:path:arguments:body:encoding:headerFields:progress:)`` returns it and
/// ``HttpClientError/status(code:body:)`` carries it.
public enum ResponseContent: Sendable, Equatable, CustomStringConvertible {
    /// An `application/json` or `…+json` body.
    case json(JSONValue)
    /// A `text/*` body, decoded in its charset (UTF-8 unless the type names another).
    case text(String)
    /// A body of any other type, or of none, as it came.
    case data(Data)
    /// No body (204, HEAD, or a length of 0).
    case empty

    /// The JSON as compact text, the text itself, `<N bytes>` for data, `""` when empty.
    public var description: String {
        switch self {
        case .json(let value): value.description
        case .text(let text): text
        case .data(let data): "<\(data.count) bytes>"
        case .empty: ""
        }
    }
}

/// Any JSON value: what a JSON body decodes into when no type of its own describes it.
///
/// ```swift
/// if case .json(let error) = body, let message = error["message"]?.stringValue { … }
/// let value: JSONValue = ["name": "Ada", "tags": ["a", "b"], "age": 36, "admin": false, "boss": nil]
/// ```
///
/// Numbers are `Double`s, so integers beyond ±2⁵³ lose precision.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible,
                       ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
                       ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
                       ExpressibleByDictionaryLiteral {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// A ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A ``number(_:)``.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A ``number(_:)``.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An ``object(_:)``; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the JSON it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object; `nil` when absent or not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array; `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string of a ``string(_:)``, else `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number of a ``number(_:)``, else `nil`.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number of a ``number(_:)`` that is a whole number within `Int`'s range, else `nil`.
    public var intValue: Int? {
        if case .number(let value) = self { return Int(exactly: value) }
        return nil
    }

    /// The value of a ``bool(_:)``, else `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Compact JSON text, object members sorted by key.
    public var description: String {
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value):
            if let integer = Int64(exactly: value), abs(integer) < 1 << 53 { text += String(integer) } else { text += String(value) }
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, to: &text)
                text += ":"
                members[key]!.write(to: &text)
            }
            text += "}"
        }
    }

    static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

extension HttpClient {
    /// A result type for calls whose answer does not matter: it accepts any body, or none.
    ///
    /// ```swift
    /// _ = try await client.invoke("DELETE", path: "items/7", as: HttpClient.Empty.self)
    /// ```
    public struct Empty: Decodable, Sendable, Equatable {
        /// The empty result.
        public init() {}
        /// Ignores whatever `decoder` holds.
        public init(from decoder: any Decoder) throws {}
    }
}

/// Types that stand for an empty body: `Optional` (`nil`), `String` (`""`), `Data` (no bytes)
/// and ``HttpClient/Empty``.
protocol EmptyBodyDecodable {
    static var emptyBodyValue: Self { get }
}

extension Optional: EmptyBodyDecodable {
    static var emptyBodyValue: Self { nil }
}

extension String: EmptyBodyDecodable {
    static var emptyBodyValue: Self { "" }
}

extension Data: EmptyBodyDecodable {
    static var emptyBodyValue: Self { Data() }
}

extension HttpClient.Empty: EmptyBodyDecodable {
    static var emptyBodyValue: Self { Self() }
}

/// `Optional`, for `String?` and `Data?` results.
protocol RawOptional {
    /// Whether the wrapped type is `String` or `Data`, which any body decodes into.
    static var wrapsRawType: Bool { get }
    /// The body decoded as the wrapped type.
    static func wrapping(_ response: HttpClientResponse, decoder: JSONDecoder) throws(HttpClientError) -> Self
}

extension Optional: RawOptional where Wrapped: Decodable {
    static var wrapsRawType: Bool { Wrapped.self == String.self || Wrapped.self == Data.self }

    static func wrapping(_ response: HttpClientResponse, decoder: JSONDecoder) throws(HttpClientError) -> Self {
        .some(try ResponseDecoding.value(Wrapped.self, from: response, decoder: decoder))
    }
}

/// A `Content-Type` value: `type/subtype; name=value…`, names lower-cased.
struct MediaType: CustomStringConvertible {
    let type: String
    let subtype: String
    let parameters: [String: String]

    init?(_ value: String?) {
        guard let value else { return nil }
        var pieces = value.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        let essence = pieces.removeFirst().lowercased().split(separator: "/", maxSplits: 1)
        guard essence.count == 2, !essence[0].isEmpty, !essence[1].isEmpty else { return nil }
        type = String(essence[0]).trimmingSpaces
        subtype = String(essence[1]).trimmingSpaces
        var parameters: [String: String] = [:]
        for piece in pieces {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingSpaces.lowercased()
            var value = piece[piece.index(after: equals)...].trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            if parameters[name] == nil { parameters[name] = value }
        }
        self.parameters = parameters
    }

    var isJSON: Bool { (type == "application" && subtype == "json") || subtype.hasSuffix("+json") }
    var isText: Bool { type == "text" }
    var charset: String? { parameters["charset"] }
    var description: String { "\(type)/\(subtype)" }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// Turns responses into results: the status check, then the body by its `Content-Type`.
enum ResponseDecoding {
    /// The body of a 2xx `response` as `Result`; ``HttpClientError/status(code:body:)`` for
    /// any other status.
    static func result<Result: Decodable>(_ type: Result.Type, from response: HttpClientResponse,
                                          decoder: JSONDecoder) throws(HttpClientError) -> Result {
        try checkStatus(of: response, decoder: decoder)
        return try value(Result.self, from: response, decoder: decoder)
    }

    /// The body of `response` as `Value`, whatever the status.
    static func value<Value: Decodable>(_ type: Value.Type, from response: HttpClientResponse,
                                        decoder: JSONDecoder) throws(HttpClientError) -> Value {
        if Value.self == HttpClient.Empty.self { return HttpClient.Empty() as! Value }
        let body = response.body
        if Value.self == Data.self { return body as! Value }
        if body.isEmpty {
            if let empty = Value.self as? any EmptyBodyDecodable.Type { return empty.emptyBodyValue as! Value }
            throw .decoding(ClientProblem("the response has no body to decode as \(Value.self)"), body: body)
        }
        let mediaType = MediaType(response.header("Content-Type"))
        if Value.self == String.self { return try text(body, charset: mediaType?.charset) as! Value }
        // `String?` and `Data?` as `String` and `Data`; other optionals through the JSON
        // decoder, for which `null` is `nil`.
        if let optional = Value.self as? any RawOptional.Type, optional.wrapsRawType {
            return try optional.wrapping(response, decoder: decoder) as! Value
        }
        if let mediaType, !mediaType.isJSON {
            throw .decoding(ClientProblem("a \(mediaType) body cannot be decoded as \(Value.self)"), body: body)
        }
        return try json(Value.self, from: body, decoder: decoder)
    }

    /// The body of a 2xx `response` by its type; ``HttpClientError/status(code:body:)`` for any
    /// other status.
    static func content(from response: HttpClientResponse, decoder: JSONDecoder) throws(HttpClientError) -> ResponseContent {
        try checkStatus(of: response, decoder: decoder)
        return try content(of: response, decoder: decoder)
    }

    static func checkStatus(of response: HttpClientResponse, decoder: JSONDecoder) throws(HttpClientError) {
        guard !(200..<300).contains(response.status) else { return }
        var body = (try? content(of: response, decoder: decoder)) ?? .data(response.body)
        // Text that is not valid in its charset is still the server's word: U+FFFD for the bad bytes.
        if case .data = body, MediaType(response.header("Content-Type"))?.isText == true {
            body = .text(String(decoding: response.body, as: UTF8.self))
        }
        throw .status(code: response.status, body: body)
    }

    static func content(of response: HttpClientResponse, decoder: JSONDecoder) throws(HttpClientError) -> ResponseContent {
        let body = response.body
        if body.isEmpty { return .empty }
        let mediaType = MediaType(response.header("Content-Type"))
        if mediaType?.isJSON == true { return .json(try json(JSONValue.self, from: body, decoder: decoder)) }
        if mediaType?.isText == true { return .text(try text(body, charset: mediaType?.charset)) }
        return .data(body)
    }

    static func json<Value: Decodable>(_ type: Value.Type, from body: Data, decoder: JSONDecoder) throws(HttpClientError) -> Value {
        do {
            return try decoder.decode(Value.self, from: body)
        } catch {
            throw .decoding(error, body: body)
        }
    }

    /// `body` decoded in `charset` (UTF-8 when `nil`).
    static func text(_ body: Data, charset: String?) throws(HttpClientError) -> String {
        let encoding: String.Encoding
        switch (charset ?? "utf-8").lowercased() {
        case "utf-8", "utf8": encoding = .utf8
        case "us-ascii", "ascii": encoding = .ascii
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1": encoding = .isoLatin1
        case "utf-16": encoding = .utf16
        case "utf-16be": encoding = .utf16BigEndian
        case "utf-16le": encoding = .utf16LittleEndian
        default: throw .decoding(ClientProblem("the charset \(charset ?? "") is not supported"), body: body)
        }
        guard let text = String(data: body, encoding: encoding) else {
            throw .decoding(ClientProblem("the body is not valid \(charset ?? "UTF-8") text"), body: body)
        }
        return text
    }
}
