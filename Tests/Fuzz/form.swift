// libFuzzer target: form encoding (RequestMessage.setFormValue and formBody, FormEncoding).
//
// The input is a sequence of texts separated by 0xFF bytes (a byte UTF-8 never has; other bytes
// that are not UTF-8 become U+FFFD), read as key, value, key, value, …; an empty key with an
// empty value clears the form (clearPostValues). Checked:
// - the form keeps one value per key (keys compared byte for byte), the last one set, in the
//   order keys were first set;
// - the body holds only the bytes application/x-www-form-urlencoded allows: letters, digits,
//   "*-._", "+" for a space, "%" with two upper-case hex digits for any other byte, and the
//   "=" and "&" that separate;
// - the body, parsed as the WHATWG URL standard parses application/x-www-form-urlencoded,
//   gives back exactly the pairs set, byte for byte;
// - FormEncoding.encode of each text decodes back to it, and escapes exactly the bytes
//   outside letters, digits and "*-._" (and the space).
@testable import CurlXHR

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property violated: \(message())") }
}

private func isKept(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"): true
    default: false
    }
}

private func isUpperHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) }

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}

/// The WHATWG URL standard's percent-decode, after "+" became a space.
private func decoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    let bytes = Array(bytes.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 })
    var result: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == 0x25, index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
            result.append(high << 4 | low)
            index += 3
        } else {
            result.append(bytes[index])
            index += 1
        }
    }
    return result
}

/// The WHATWG URL standard's application/x-www-form-urlencoded parser.
private func parsedForm(_ body: [UInt8]) -> [(key: [UInt8], value: [UInt8])] {
    body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { sequence in
        let equals = sequence.firstIndex(of: UInt8(ascii: "="))
        let name = equals.map { sequence[..<$0] } ?? sequence
        let value = equals.map { sequence[($0 + 1)...] } ?? []
        return (decoded(name), decoded(value))
    }
}

private func checkAllowedBytes(_ body: [UInt8], separators: Bool) {
    var index = 0
    while index < body.count {
        let byte = body[index]
        if byte == 0x25 {
            check(index + 2 < body.count && isUpperHex(body[index + 1]) && isUpperHex(body[index + 2]),
                  "a % without two upper-case hex digits at \(index)")
            index += 3
            continue
        }
        check(isKept(byte) || byte == UInt8(ascii: "+") || (separators && (byte == UInt8(ascii: "=") || byte == UInt8(ascii: "&"))),
              "byte \(byte) in the body")
        index += 1
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForm(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let texts = UnsafeBufferPointer(start: data, count: size).split(separator: 0xFF, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    var message = RequestMessage()
    var expected: [(key: String, value: String)] = []
    var index = 0
    while index + 1 < texts.count {
        let key = texts[index], value = texts[index + 1]
        index += 2
        if key.isEmpty && value.isEmpty {
            message.formValues.removeAll()
            expected.removeAll()
            continue
        }
        message.setFormValue(value, forKey: key)
        // Keys are the same when their bytes are: the server compares bytes.
        if let existing = expected.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
            expected[existing].value = value
        } else {
            expected.append((key, value))
        }
    }

    check(message.formValues.count == expected.count
          && zip(message.formValues, expected).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && $0.value.utf8.elementsEqual($1.value.utf8) },
          "the form holds \(message.formValues), expected \(expected)")
    let body = message.formBody
    checkAllowedBytes(body, separators: true)
    let parsed = parsedForm(body)
    check(parsed.count == expected.count
          && zip(parsed, expected).allSatisfy { $0.key == Array($1.key.utf8) && $0.value == Array($1.value.utf8) },
          "the body \(String(decoding: body, as: UTF8.self).debugDescription) does not give back \(expected)")

    for text in texts {
        let encoded = Array(FormEncoding.encode(text).utf8)
        checkAllowedBytes(encoded, separators: false)
        check(decoded(encoded[...]) == Array(text.utf8), "encode(\(text.debugDescription)) does not decode back")
        let length = text.utf8.reduce(0) { $0 + (isKept($1) || $1 == 0x20 ? 1 : 3) }
        check(encoded.count == length, "encode(\(text.debugDescription)) escapes other bytes")
    }
    return 0
}
