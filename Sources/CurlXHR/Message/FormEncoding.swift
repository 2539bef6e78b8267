/// WHATWG `application/x-www-form-urlencoded` serialisation of UTF-8 text, for form bodies
/// and query strings alike (the client layer's too): `*-._` and alphanumerics as they are, a
/// space as `+`, every other byte as `%XX`.
package enum FormEncoding {
    package static func append(_ text: String, to body: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                body.append(byte)
            case UInt8(ascii: " "):
                body.append(UInt8(ascii: "+"))
            default:
                body.append(UInt8(ascii: "%"))
                body.append(hex[Int(byte >> 4)])
                body.append(hex[Int(byte & 0x0F)])
            }
        }
    }

    /// `key=value`, after an `&` unless `body` is empty.
    package static func append(_ key: String, value: String, to body: inout [UInt8]) {
        if !body.isEmpty { body.append(UInt8(ascii: "&")) }
        append(key, to: &body)
        body.append(UInt8(ascii: "="))
        append(value, to: &body)
    }

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
