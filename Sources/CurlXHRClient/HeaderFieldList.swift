import CurlXHR
import HTTPTypes

/// The header fields of a client or a call: `HTTPFields`, and beside them the fields given as
/// text (the deprecated `headers:` spellings, ``HttpClientRequest/setHeader(_:value:)``) that no
/// `HTTPFields` can hold as given (a name that is no token, a value with CR, LF or NUL, which
/// `HTTPFields` would turn into spaces). Those are kept as given, and the call is refused naming
/// the first, as `HttpRequest.setRequestHeader(_:value:)` refuses it.
struct HeaderFieldList: Sendable {
    var fields = HTTPFields()
    var refused: [(name: String, value: String)] = []

    init(_ fields: HTTPFields) {
        self.fields = fields
    }

    init(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs { append(name, value: value) }
    }

    /// No field at all.
    var isEmpty: Bool { fields.isEmpty && refused.isEmpty }

    /// Every field as name and value pairs: those `HTTPFields` holds, in order, then the refused.
    var pairs: [(name: String, value: String)] {
        fields.map { ($0.name.rawName, $0.value) } + refused
    }

    mutating func append(_ name: String, value: String) {
        guard let fieldName = HTTPField.Name(name), let field = Self.field(fieldName, value) else {
            refused.append((name, value))
            return
        }
        fields.append(field)
    }

    /// Replaces every field named `name` (case aside) with one of `value`; `nil` removes them.
    mutating func set(_ name: String, value: String?) {
        refused.removeAll { HeaderFieldNames.same($0.name, name) }
        if let fieldName = HTTPField.Name(name) { fields[fields: fieldName] = [] }
        if let value { append(name, value: value) }
    }

    /// Replaces every field named `name` with one of `value` (kept apart, as a refused field,
    /// when `HTTPFields` cannot hold the value).
    mutating func set(_ name: HTTPField.Name, value: String) {
        set(Entry(name, value))
    }

    /// Replaces every field of `entry`'s name with it.
    mutating func set(_ entry: Entry) {
        if !refused.isEmpty { refused.removeAll { HeaderFieldNames.same($0.name, entry.name.rawName) } }
        if !fields.isEmpty, fields[entry.name] != nil { fields[fields: entry.name] = [] }
        if !entry.fields.isEmpty { fields.append(contentsOf: entry.fields) } else { refused.append((entry.name.rawName, entry.value)) }
    }

    /// `name: value` checked once, to be set on many requests' lists (an OAuth2 token's
    /// `Authorization`): `fields` holds the field, or nothing when `HTTPFields` cannot hold the
    /// value. A class: handing it to a call retains one object, and its `fields` one more.
    final class Entry: Sendable {
        let name: HTTPField.Name
        let value: String
        let fields: HTTPFields

        init(_ name: HTTPField.Name, _ value: String) {
            self.name = name
            self.value = value
            fields = HeaderFieldList.field(name, value).map { HTTPFields([$0]) } ?? [:]
        }
    }

    /// `name: value` as `HTTPFields` holds it, or nil for a value with bytes no field may hold
    /// (which `HTTPField` would make into another): checked once, by `HTTPField` itself.
    private static func field(_ name: HTTPField.Name, _ value: String) -> HTTPField? {
        let field = HTTPField(name: name, value: value)
        return field.value == value ? field : nil
    }

    /// These fields, then `other`'s.
    static func + (list: HeaderFieldList, other: HeaderFieldList) -> HeaderFieldList {
        var joined = list
        joined.fields.append(contentsOf: other.fields)
        joined.refused += other.refused
        return joined
    }
}
