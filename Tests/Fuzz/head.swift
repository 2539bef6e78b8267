// libFuzzer target: the response-head parser.
//
// The input is a sequence of header lines, as libcurl hands them to the header callback (each
// up to and including its LF; a line that starts with CR or LF ends a block). Every line goes
// through two paths: the C recorder (cxhr_head_callback, calling back when a block ends, as
// a transfer uses it) and ResponseHeadParser.consume. A line starting with NUL resets both
// parsers instead (a transfer starting over). Checked, for every head:
// - both paths give the same heads (status, reason, fields, protocol);
// - the status and reason are what the status line says (an independent reading of it);
// - the fields are what an independent reading of the lines gives: arrival order, values
//   without outer white space, obs-fold lines joined with a space to the field they follow,
//   lines without a colon left out;
// - value(of:) joins the values of the fields of that name (ASCII case-insensitive) with ", ",
//   nil when there is none; allFields is "Name: value" lines joined by "\n";
// - a copy into a reused buffer, and a copy through withRecorded, equal the head;
// - the recorder keeps its lines LF-terminated, and notes Set-Cookie exactly when a
//   "Set-Cookie:" line (ASCII case-insensitive, with something after the colon) arrived since
//   the last reset.
import CCurlShim
@testable import CurlXHR

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property violated: \(message())") }
}

/// What the C path collects: the callback copies each head that ends.
private final class Sink {
    let parser: ResponseHeadParser
    var heads: [(head: ResponseHead, version: String?)] = []
    var storage: [UInt8] = []

    init(parser: ResponseHeadParser) { self.parser = parser }
}

private let headEnded: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
    let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
    guard let recorded = sink.parser.finishHead() else { return 1 }
    // Copied twice: into a buffer kept from head to head (as a request does), and afresh.
    var reused = ResponseHead(recorded, reusing: &sink.storage)
    let fresh = ResponseHead(recorded)
    check(reused == fresh, "a head copied into a reused buffer differs")
    check(fresh.withRecorded { ResponseHead($0) } == fresh, "withRecorded gives another head")
    reused.giveUpStorage(to: &sink.storage)
    sink.heads.append((fresh, recorded.httpVersion))
    return 1
}

// MARK: An independent reading of a head

private func isOWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, isOWS(first) { slice.removeFirst() }
    while let last = slice.last, isOWS(last) { slice.removeLast() }
    return slice
}

private func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

private func lowered<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
    bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
}

/// The block's status line (without CR) and field lines (without CR).
private struct Block {
    var lines: [ArraySlice<UInt8>] = []

    var status: (Int, String?) {
        let line = lines[0]
        var rest = line.drop { $0 != 0x20 }
        rest = rest.drop { $0 == 0x20 }
        let digits = rest.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              rest.count == 3 || rest[rest.startIndex + 3] == 0x20 else { return (0, nil) }
        let status = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        let reason = text(trimmed(rest.dropFirst(3)))
        return (status, reason.isEmpty ? ReasonPhrase.standard(for: status) : reason)
    }

    /// The name as received (a lookup compares bytes), and as text.
    var fields: [(bytes: ArraySlice<UInt8>, name: String, value: String)] {
        var fields: [(bytes: ArraySlice<UInt8>, name: String, value: String)] = []
        var continues = false  // the previous line was a field (or a continuation of one)
        for line in lines.dropFirst() {
            guard let first = line.first else { continue }
            if isOWS(first) {
                if continues { fields[fields.count - 1].value += " " + text(trimmed(line)) }
            } else if let colon = line.firstIndex(of: 0x3A) {
                fields.append((line[..<colon], text(line[..<colon]), text(trimmed(line[(colon + 1)...]))))
                continues = true
            } else {
                continues = false
            }
        }
        return fields
    }
}

private func checkHead(_ head: ResponseHead, version: String?, against block: Block) {
    let (status, reason) = block.status
    check(head.status == status, "status \(head.status), expected \(status)")
    if let reason { check(head.reason == reason, "reason \(head.reason.debugDescription), expected \(reason.debugDescription)") }
    check(head.reason.utf8.first.map { !isOWS($0) } ?? true && head.reason.utf8.last.map { !isOWS($0) } ?? true,
          "reason with outer white space")
    let statusLine = block.lines[0]
    if let version {
        check(["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3"].contains(version), "protocol \(version)")
        check(statusLine.count > 5 && statusLine[statusLine.startIndex + 5] == version.utf8.dropFirst(5).first,
              "protocol \(version) for \(text(statusLine).debugDescription)")
    }

    let expected = block.fields
    let fields = head.fields
    check(fields.count == expected.count, "\(fields.count) fields, expected \(expected.count)")
    for (field, reference) in zip(fields, expected) {
        check(field.name == reference.name && field.value == reference.value,
              "field \(field.name.debugDescription): \(field.value.debugDescription), expected \(reference.name.debugDescription): \(reference.value.debugDescription)")
    }
    check(head.allFields == expected.map { "\($0.name): \($0.value)" }.joined(separator: "\n"), "allFields")
    var names = expected.map(\.name)
    names += ["set-cookie", "Content-Type", "", "X-Absent"]
    for name in names {
        let values = expected.filter { lowered($0.bytes) == lowered(name.utf8) }.map(\.value)
        let value = head.value(of: name)
        check(value == (values.isEmpty ? nil : values.joined(separator: ", ")),
              "value(of: \(name.debugDescription)) = \(value.debugDescription)")
    }
}

// MARK: The target

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let swiftParser = ResponseHeadParser()
    let sink = Sink(parser: ResponseHeadParser(headEnded: headEnded))
    let recorder = sink.parser.recorder
    recorder.pointee.context = Unmanaged.passUnretained(sink).toOpaque()

    var swiftHeads: [ResponseHead] = []
    var blocks: [Block] = []  // the blocks that started with a status line
    var block = Block()
    var sawSetCookie = false
    var start = 0
    while start < input.count {
        let end = input[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? input.count
        var line = input[start..<end]
        start = end
        if line.first == 0 {
            swiftParser.reset()
            sink.parser.reset()
            if case .nothing = sink.parser.takeLeftover(afterHead: true) {} else { check(false, "reset leaves a block") }
            check(!sink.parser.sawSetCookie, "reset leaves a note")
            block = Block()
            sawSetCookie = false
            continue
        }
        if line.first == 0x0D || line.first == 0x0A {
            if block.lines.first.map({ $0.starts(with: "HTTP/".utf8) }) ?? false { blocks.append(block) }
            block = Block()
        } else {
            if line.count > 11, line.prefix(11).elementsEqual("set-cookie:".utf8, by: { lowered($0) == $1 }) {
                sawSetCookie = true
            }
            let content = line.last == 0x0A ? line.dropLast() : line
            block.lines.append(content.last == 0x0D ? content.dropLast() : content)
        }
        let count = line.count
        let written = line.withUnsafeMutableBytes { bytes in
            cxhr_head_callback(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), 1, count, UnsafeMutableRawPointer(recorder))
        }
        check(written == count, "the header callback took \(written) of \(count) bytes")
        let stored = recorder.pointee
        check(stored.count <= stored.capacity && (stored.count == 0 || stored.bytes[stored.count - 1] == 0x0A),
              "the recorder's lines do not end in LF")
        if let head = line.withUnsafeBytes({ swiftParser.consume($0) }) { swiftHeads.append(head) }
    }

    check(sink.parser.sawSetCookie == sawSetCookie && swiftParser.sawSetCookie == sawSetCookie,
          "sawSetCookie \(sink.parser.sawSetCookie)/\(swiftParser.sawSetCookie), expected \(sawSetCookie)")
    // What a transfer's end finds: nothing, trailer fields after a head, or a head cut off.
    switch sink.parser.takeLeftover(afterHead: !blocks.isEmpty) {
    case .nothing:
        check(block.lines.isEmpty, "an unfinished block was not found")
    case .cutHead:
        check(!block.lines.isEmpty && (blocks.isEmpty || block.lines[0].starts(with: "HTTP/".utf8)), "a cut head that is none")
    case .trailers(let fields):
        check(!blocks.isEmpty && !block.lines.isEmpty && !block.lines[0].starts(with: "HTTP/".utf8), "trailers that are none")
        check(fields.status == 0, "trailers with a status")
    }
    check(sink.heads.count == blocks.count && swiftHeads.count == blocks.count,
          "\(sink.heads.count)/\(swiftHeads.count) heads, expected \(blocks.count)")
    for ((recorded, swiftHead), block) in zip(zip(sink.heads, swiftHeads), blocks) {
        check(recorded.head == swiftHead, "the C recorder and consume(_:) read different heads")
        checkHead(recorded.head, version: recorded.version, against: block)
    }
    return 0
}

/// ASCII lower case of a byte; other bytes as they are (OR-ing 0x20 into every byte took 0x1A
/// for ':').
private func lowered(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}
