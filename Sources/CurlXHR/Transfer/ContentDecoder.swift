import CCurlShim
import CDecode
#if canImport(Glibc)
import Glibc
#endif

/// The decoding stage of a response body: the codings a head names (`Content-Encoding`, and
/// compressions in `Transfer-Encoding`), undone in the library rather than in libcurl, so that
/// back-pressure holds whatever the compression ratio.
///
/// libcurl's own decoding hands a paused transfer's whole decoded chunk back to its pause
/// buffer (a 1 MiB gzip run of zeros decodes to a gigabyte). Here the output is pulled a
/// buffer at a time (``next(from:)``), each stage taking only the input that buffer needs:
/// when the consumer pauses, what is held is one output buffer per stage and the network
/// bytes libcurl keeps for the paused call (``takenOfPausedCall`` of which were already
/// taken, as libcurl hands them again).
///
/// A class: the transfer keeps one for a response, and the C decoders it owns are freed with it.
final class ContentDecoder {
    /// The `Accept-Encoding` libcurl sends when asked for every content coding it knows
    /// (`CURLOPT_ACCEPT_ENCODING` ""), as it writes it: the codings this stage decodes.
    static let acceptedEncodings: String = {
        var names: [String] = []
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "g"))) != 0 { names += ["deflate", "gzip"] }
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "b"))) != 0 { names.append("br") }
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "z"))) != 0 { names.append("zstd") }
        return names.joined(separator: ", ")
    }()

    /// Each stage's output buffer size: the most one pull gives.
    static let bufferSize = 64 * 1024

    private struct Stage {
        let decoder: OpaquePointer
        let name: String
        let buffer: UnsafeMutableRawBufferPointer
        /// The part of `buffer` decoded and not yet taken by the next stage (or the consumer).
        var pending: Range<Int> = 0..<0
        var ended = false
    }

    /// In decoding order: the coding applied last comes first.
    private var stages: [Stage] = []

    /// Network bytes of the write call the consumer paused that were already taken: libcurl
    /// hands the same bytes again when the transfer resumes.
    var takenOfPausedCall = 0

    /// Why decoding failed.
    struct Failure: Error {
        let text: String
    }

    /// A decoder for a body under `codings`, in the order they were applied (as the head lists
    /// them: `Content-Encoding`'s, then `Transfer-Encoding`'s); `chunked` and `identity` are
    /// no codings here. Nil when nothing is to be decoded, or a coding is unknown (the body is
    /// then delivered as it came).
    init?(codings: [Substring]) {
        var kinds: [(cxhr_coding, String)] = []
        for coding in codings {
            let name = HeaderFieldNames.trimmed(coding.split(separator: ";").first ?? "").lowercased()
            switch name {
            case "", "identity", "chunked": continue
            case "gzip", "x-gzip": kinds.append((CXHR_CODING_GZIP, name))
            case "deflate": kinds.append((CXHR_CODING_DEFLATE, name))
            case "br": kinds.append((CXHR_CODING_BROTLI, name))
            case "zstd": kinds.append((CXHR_CODING_ZSTD, name))
            default: return nil
            }
        }
        guard !kinds.isEmpty, kinds.count <= 5 else { return nil }
        for (kind, name) in kinds.reversed() {
            guard let decoder = cxhr_decoder_new(kind) else { return nil }
            stages.append(Stage(decoder: decoder, name: name,
                                buffer: .allocate(byteCount: Self.bufferSize, alignment: 16)))
        }
    }

    /// The decoder for a response with `head`'s fields, or nil (see ``init(codings:)``). A
    /// function, not an initializer: a head without codings (most) allocates nothing.
    static func forBody(of head: RecordedHead) -> ContentDecoder? {
        guard head.mayHaveContentEncoding || head.mayHaveTransferEncoding else { return nil }
        // Repeated fields joined: every coding, in the order applied.
        let fields = ResponseHead(head)
        let codings = (fields.value(of: "Content-Encoding") ?? "").split(separator: ",")
            + (fields.value(of: "Transfer-Encoding") ?? "").split(separator: ",")
        return ContentDecoder(codings: codings)
    }

    deinit {
        for stage in stages {
            cxhr_decoder_free(stage.decoder)
            stage.buffer.deallocate()
        }
    }

    /// The next decoded bytes (at most ``bufferSize``), taking from `network` what producing
    /// them needs; empty when all of `network` is taken and nothing more comes out without
    /// more. The same bytes come again until ``taken()`` says the consumer took them.
    func next(from network: inout UnsafeRawBufferPointer) throws(Failure) -> UnsafeRawBufferPointer {
        let last = stages.count - 1
        guard try fill(last, from: &network) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: stages[last].buffer[stages[last].pending])
    }

    /// The consumer took the bytes ``next(from:)`` returned last.
    func taken() {
        stages[stages.count - 1].pending = 0..<0
    }

    /// Makes stage `index` hold output, decoding as much input as that takes; false when it
    /// cannot without more network bytes (or its stream ended).
    private func fill(_ index: Int, from network: inout UnsafeRawBufferPointer) throws(Failure) -> Bool {
        if !stages[index].pending.isEmpty { return true }
        while !stages[index].ended {
            // The input: the network's bytes, or what the stage before holds (an empty input
            // still lets a stage give out what it keeps inside).
            var input: UnsafeRawBufferPointer
            if index == 0 {
                input = network
            } else {
                _ = try fill(index - 1, from: &network)
                input = UnsafeRawBufferPointer(rebasing: stages[index - 1].buffer[stages[index - 1].pending])
            }
            var next: UnsafePointer<UInt8>? = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var left = input.count
            var produced = 0
            let result = cxhr_decoder_step(stages[index].decoder, &next, &left,
                                           stages[index].buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Self.bufferSize, &produced)
            let used = input.count - left
            if index == 0 {
                network = UnsafeRawBufferPointer(rebasing: network[(network.startIndex + used)...])
            } else {
                stages[index - 1].pending = (stages[index - 1].pending.lowerBound + used)..<stages[index - 1].pending.upperBound
            }
            switch result {
            case CXHR_DECODE_ERROR:
                let reason = String(cString: cxhr_decoder_error(stages[index].decoder))
                throw Failure(text: "The response body could not be decoded (\(stages[index].name)): \(reason)")
            case CXHR_DECODE_END:
                stages[index].ended = true
            default:
                break
            }
            if produced > 0 {
                stages[index].pending = 0..<produced
                return true
            }
            if used == 0 { return false }
        }
        return false
    }
}
