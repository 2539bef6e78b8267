#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HttpClient {
    /// An argument of a call: a value, a file, or several values under one key.
    ///
    /// Literals make arguments: `[("q", "swift"), ("page", 2), ("exact", true), ("tag", ["a", "b"])]`.
    /// Values are sent as text: integers in decimal, doubles as Swift prints them (`2.5`),
    /// booleans as `true` and `false`, dates as HTTP-RPC sends them (milliseconds since
    /// 1970-01-01 UTC).
    public enum Argument: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
                          ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral {
        /// A text value.
        case string(String)
        /// An integer, sent in decimal.
        case int(Int)
        /// A number, sent as Swift prints it (`2.5`, `1e-05`).
        case double(Double)
        /// `true` or `false`.
        case bool(Bool)
        /// A moment, sent as the whole milliseconds since 1970-01-01 00:00 UTC (HTTP-RPC's
        /// form: `1700000000123`).
        case date(Date)
        /// A file, streamed from disk as a part of a `multipart/form-data` body: only for POST,
        /// PUT and PATCH without a body.
        /// - Parameters:
        ///   - path: the file's path.
        ///   - fileName: the part's file name; `nil`: the path's last component.
        ///   - contentType: the part's type; `nil`: guessed from the name's extension (as libcurl
        ///     does), else `application/octet-stream`.
        case file(path: String, fileName: String? = nil, contentType: String? = nil)
        /// Several values sent under the same key, one pair each, in order (none for an empty
        /// array); nested arrays are flattened.
        case array([Argument])

        /// A ``string(_:)``.
        public init(stringLiteral value: String) { self = .string(value) }
        /// An ``int(_:)``.
        public init(integerLiteral value: Int) { self = .int(value) }
        /// A ``double(_:)``.
        public init(floatLiteral value: Double) { self = .double(value) }
        /// A ``bool(_:)``.
        public init(booleanLiteral value: Bool) { self = .bool(value) }
        /// An ``array(_:)``.
        public init(arrayLiteral elements: Argument...) { self = .array(elements) }

        /// The argument as a flat list of values (one for a value, each element's for an array).
        var values: [Argument] {
            if case .array(let elements) = self { return elements.flatMap(\.values) }
            return [self]
        }

        /// The value as text; `nil` for a file.
        var text: String? {
            switch self {
            case .string(let value): value
            case .int(let value): String(value)
            case .double(let value): String(value)
            case .bool(let value): value ? "true" : "false"
            case .date(let value): String(Int64((value.timeIntervalSince1970 * 1000).rounded(.down)))
            case .file, .array: nil
            }
        }
    }

    /// A request body given explicitly to a call; the call's arguments then go in the query
    /// string. Its `Content-Type` replaces one given among the headers.
    public enum RequestBody: Sendable {
        /// A value encoded with the client's ``HttpClient/encoder``, sent as
        /// `Content-Type: application/json`.
        case json(any Encodable & Sendable)
        /// Bytes sent as they are, with this `Content-Type`.
        case data(Data, contentType: String)
    }
}
